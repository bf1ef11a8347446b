"""The fleet jobs on a real local Spark session, checked against an independent pandas reading.

One Spark session serves every test here (``tests/fleet/conftest.py``); the corpus is ingested once
through the CLI and the report and whatif run on that output.
"""

from __future__ import annotations

import gzip
import json
import shutil
import struct

import orjson
import pandas as pd  # noqa: TID253 - Spark tests need pandas anyway
import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app as lbctl_app
from tests.fleet.independent import CORPUS, brokers_frame, bundles_frame, epoch_ms, load_snapshots
from tests.fleet.independent import report as expected_report

pytestmark = pytest.mark.spark

SNAPS = load_snapshots(CORPUS)
CLUSTERS = sorted({s["cluster"] for s in SNAPS})


def test_ingest_writes_every_row_and_reports_the_malformed_file(ingested) -> None:
    out, result = ingested
    assert result.exit_code == 1, result.output  # a file was skipped: the run says so, last
    assert result.stderr.endswith("lbctl: error: skipped 1 file(s) that could not be read (each is named in the summary); everything else was ingested\n")
    summary = json.loads(result.stdout)
    assert summary["files"] == {"found": 12, "unchanged": 0, "read": 11, "skipped": 1}
    assert [s["file"] for s in summary["skipped"]] == [str(CORPUS / "lab" / "broken.json")]
    assert "msgRateIn: expected a number >= 0, got -5" in summary["skipped"][0]["reason"]
    assert summary["snapshots"] == {"read": len(SNAPS), "added": len(SNAPS), "alreadyStored": 0}
    b, u = brokers_frame(SNAPS), bundles_frame(SNAPS)
    assert summary["rows"] == {"snapshots": len(SNAPS), "brokers": len(b), "bundles": len(u),
                               "topics": sum(len(s.get("topics", {})) for s in SNAPS)}

    got = pd.read_parquet(out / "brokers").sort_values(["cluster", "captured_at", "broker"])
    exp = b.sort_values(["cluster", "captured_at", "broker"])
    assert list(got["cluster"].astype(str)) == list(exp["cluster"])
    assert list(got["captured_at"]) == list(exp["captured_at"])
    assert got["weighted_max_usage"].to_numpy() == pytest.approx(exp["usage"].to_numpy(), rel=1e-6)
    assert (got["msg_rate_in"] + got["msg_rate_out"]).to_numpy() == pytest.approx(exp["rate"].to_numpy())
    assert list(got["num_bundles"]) == list(exp["num_bundles"])
    bundles = pd.read_parquet(out / "bundles").sort_values(["cluster", "captured_at", "bundle"])
    exp_u = u.sort_values(["cluster", "captured_at", "bundle"])
    assert list(bundles["broker"]) == list(exp_u["broker"])
    assert list(bundles["topics"]) == list(exp_u["topics"])
    # partitioned by cluster and UTC day
    assert sorted(p.name for p in (out / "bundles").iterdir() if p.is_dir()) == \
        [f"cluster={c}" for c in CLUSTERS]
    assert (out / "bundles" / "cluster=east" / "date=2026-03-14").is_dir()


def test_rerun_reads_only_new_files_and_a_grown_jsonl_adds_only_new_lines(run_fleet, tmp_path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(CORPUS / "lab" / "lab.jsonl", src / "lab.jsonl")
    out = tmp_path / "out"
    first = json.loads(run_fleet("ingest", str(src), "--out", str(out), "-o", "json", "-q").stdout)
    assert first["snapshots"]["added"] == 8
    again = json.loads(run_fleet("ingest", str(src), "--out", str(out), "-o", "json", "-q").stdout)
    assert again["files"]["unchanged"] == 1 and again["rows"]["brokers"] == 0
    # the history grows by one snapshot, and an exact copy of an old one shows up in a new file
    lines = (src / "lab.jsonl").read_text().splitlines()
    new = json.loads(lines[-1])
    new["capturedAt"] = "2026-03-14T10:08:00Z"
    with open(src / "lab.jsonl", "a") as f:
        f.write(json.dumps(new) + "\n")
    (src / "copy.json.gz").write_bytes(gzip.compress(lines[0].encode()))
    grown = json.loads(run_fleet("ingest", str(src), "--out", str(out), "-o", "json", "-q").stdout)
    assert grown["files"] == {"found": 2, "unchanged": 0, "read": 2, "skipped": 0}
    assert grown["snapshots"] == {"read": 10, "added": 1, "alreadyStored": 9}
    assert grown["rows"]["brokers"] == 4
    assert len(pd.read_parquet(out / "snapshots")) == 9


@pytest.fixture(scope="module")
def reported(ingested, run_fleet, tmp_path_factory):
    out, _ = ingested
    dest = tmp_path_factory.mktemp("report")
    result = run_fleet("report", str(out), "--out", str(dest), "-o", "json", "-q")
    assert result.exit_code == 0, result.output
    return dest, json.loads(result.stdout)


def test_every_cluster_figure_matches_an_independent_pandas_computation(reported) -> None:
    _, data = reported
    expected = expected_report(SNAPS)
    got = {c["cluster"]: c for c in data["clusters"]}
    assert sorted(got) == CLUSTERS
    for cluster, exp in expected.items():
        for key, value in exp.items():
            assert got[cluster][key] == pytest.approx(value, rel=1e-9, abs=1e-12), (cluster, key)
    # the corpus was made with observed moves and bounce-backs in east and lab, none in west
    assert (got["east"]["moves"], got["east"]["bounces"]) == (3, 1)
    assert (got["lab"]["moves"], got["lab"]["bounces"]) == (5, 3)
    assert got["west"]["moves"] == 0
    # rankings: 1 = worst
    by_cv = sorted(CLUSTERS, key=lambda c: -expected[c]["tput_cv"])
    assert [got[c]["imbalance_rank"] for c in by_cv] == [1, 2, 3]
    by_churn = sorted(CLUSTERS, key=lambda c: (-expected[c]["churn"], -expected[c]["bounces"], c))
    assert [got[c]["churn_rank"] for c in by_churn] == [1, 2, 3]


def test_report_files_hold_the_per_sample_table_moves_and_hot_bundles(reported) -> None:
    dest, data = reported
    samples = pd.read_csv(dest / "samples.csv")
    assert len(samples) == len(SNAPS)
    assert set(samples.columns) >= {"cluster", "time", "tput_cv", "rate_ratio", "moves", "bounces"}
    moves = pd.read_parquet(dest / "moves.parquet")
    east = moves[moves["cluster"] == "east"]
    first = east.iloc[0]
    assert (first["bundle"], first["from_broker"], first["to_broker"]) == (
        "acme/orders/0x40000000_0x80000000", "broker-2.east.svc:8080", "broker-3.east.svc:8080")
    assert first["captured_at"] == epoch_ms("2026-03-14T10:02:00Z")
    assert list(east["bounced"]) == [False, True, False]
    hot = pd.read_csv(dest / "hot_bundles.csv")
    # the single-topic ~140 MiB/s bundle of every cluster: over the bandwidth threshold, unsplittable
    unsplittable = hot[hot["unsplittable"] > 0]
    assert sorted(unsplittable["cluster"]) == CLUSTERS
    assert (unsplittable["max_topics"] == 1).all()
    assert sorted(data["files"]) == sorted(str(p) for p in dest.iterdir())


@pytest.mark.parametrize("name", ["spread.png", "churn.png"])
def test_plots_are_valid_non_trivial_pngs(reported, name) -> None:
    dest, _ = reported
    data = (dest / name).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 400 and height >= 300
    assert len(data) > 10_000  # lines, bars and labels, not a blank canvas
    import matplotlib.image as mpimg

    pixels = mpimg.imread(dest / name)
    assert pixels.reshape(-1, pixels.shape[-1]).std(axis=0).max() > 0.05


def test_whatif_counts_equal_recommend_all_cycles(ingested, run_fleet) -> None:
    out, _ = ingested
    strategies = ["ThresholdShedder", "UniformLoadShedder"]
    args = [a for s in strategies for a in ("--strategy", s)]
    result = run_fleet("whatif", str(out), *args, "-o", "json", "-q")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["results"]
    assert len(rows) == len(CLUSTERS) * len(strategies)
    runner = CliRunner()
    total = 0
    for row in rows:
        files = [str(p) for p in sorted((CORPUS / row["cluster"]).iterdir()) if p.name != "broken.json"]
        rec = runner.invoke(lbctl_app, ["recommend", *files, "--all-cycles", "--strategy",
                                        row["strategy"], "-o", "json"])
        assert rec.exit_code == 0, rec.output
        cycles = orjson.loads(rec.stdout)["cycles"]
        assert row["cycles"] == len(cycles)
        assert row["unloads"] == sum(c["summary"]["unloads"] for c in cycles), row
        assert row["error"] is None
        assert 0 <= row["moved_soon_after"] <= row["unloads"]
        assert 0 <= row["repeats"] <= row["unloads"]
        total += row["unloads"]
    assert total > 0  # the corpus makes the strategies act


def test_whatif_unknown_strategy_is_a_usage_error_before_spark(run_fleet, ingested) -> None:
    out, _ = ingested
    result = run_fleet("whatif", str(out), "--strategy", "ThresholdShedd", "-q")
    assert result.exit_code == 2
    assert "did you mean ThresholdShedder" in result.stderr


def test_without_matplotlib_the_report_is_printed_and_says_the_plots_were_skipped(
        ingested, run_fleet, tmp_path, monkeypatch) -> None:
    """The ``fleet`` extra alone: a warning before Spark's work, the tables all the same."""
    import sys

    out, _ = ingested
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib → ImportError
    result = run_fleet("report", str(out), "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "Clusters by imbalance" in result.stdout
    assert "Plots skipped: matplotlib is not installed: pip install 'lbctl[plot]'." in result.stdout
    err = result.stderr
    warning = err.index("lbctl: warning: the report's plots will be skipped")
    assert warning < err.index("lbctl: reading the tables in")  # said before Spark's work
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "clusters.csv", "hot_bundles.csv", "moves.csv", "moves.parquet", "samples.csv",
        "samples.parquet"]


def test_no_plot_writes_tables_only_and_says_so_in_json(ingested, run_fleet, tmp_path) -> None:
    out, _ = ingested
    result = run_fleet("report", str(out), "--out", str(tmp_path), "--no-plot", "-o", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # progress went to stderr: stdout is the JSON alone
    assert data["plotsSkipped"] == "--no-plot"
    assert "warning" not in result.stderr  # asked for: nothing to warn about
    assert not list(tmp_path.glob("*.png"))


def test_the_report_is_the_same_whatever_the_stretch(spark, ingested, monkeypatch) -> None:
    """The report sums each bundle's samples per stretch of the cluster's samples and reads a
    stretch sample by sample (its masks) only where an owner comes back in it: stretches of 2
    samples (most moves and bounce-backs cut by a stretch's edge, Spark's ``bit_or`` masks on
    every path) give the same tables as the default."""
    from lbctl.fleet import report as R
    from lbctl.fleet.progress import Progress

    out, _ = ingested
    opts = R.ReportOptions(bounce_window=3)
    wide = R.compute(spark, out, opts, Progress(enabled=False))
    monkeypatch.setattr(R, "STRETCH", 2)
    narrow = R.compute(spark, out, opts, Progress(enabled=False))
    assert len(wide.moves) > 0 and wide.moves["bounced"].any()
    for name in ("clusters", "samples", "hot_bundles", "moves"):
        pd.testing.assert_frame_equal(getattr(narrow, name), getattr(wide, name))


def test_ingest_then_report_in_one_session_prints_the_report_and_the_summary_on_stderr(
        run_fleet, tmp_path, monkeypatch) -> None:
    """``ingest --report``: one Spark session for both (one JVM start); stdout is the report
    alone, its figures the independent computation's, the ingest's summary on stderr. The
    session is sized for the store the report reads, not only the few files added to it."""
    import os

    from lbctl.fleet import files

    out = tmp_path / "tables"
    store = 2 << 30  # a large store already there: its report must not get a tiny input's sizes
    monkeypatch.setattr(files, "tree_size", lambda root: store if root == out else 0)
    result = run_fleet("--debug", "ingest", str(CORPUS / "lab"), "--out", str(out), "--report",
                       "-o", "json", "-q")
    assert result.exit_code == 1, result.output  # broken.json skipped; the report was made
    assert result.stderr.endswith("lbctl: error: skipped 1 file(s) that could not be read (each is named in the summary); everything else was ingested\n")
    data = json.loads(result.stdout)
    assert [c["cluster"] for c in data["clusters"]] == ["lab"]
    lab = data["clusters"][0]
    for key, value in expected_report([s for s in SNAPS if s["cluster"] == "lab"])["lab"].items():
        assert lab[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    assert sorted(data["files"]) == sorted(str(p) for p in (out / "report").iterdir())
    assert "Ingested into" in result.stderr and "1 skipped (malformed)" in result.stderr
    assert "msgRateIn: expected a number >= 0, got -5" in result.stderr
    partitions = max(8, 2 * (os.cpu_count() or 2))  # not a tiny input's one per core
    assert f"spark spark.sql.shuffle.partitions={partitions} (lbctl default)" in result.stderr


@pytest.mark.parametrize("small", [False, True], ids=["native", "small-run"])
def test_a_bad_line_loses_no_good_line_and_the_fixed_file_adds_only_the_missing_one(
        run_fleet, spark, tmp_path, small) -> None:
    """A ``.jsonl`` of 3 snapshots whose middle line is broken: the good lines are ingested and
    the bad one is reported with ``lbctl snapshot validate``'s message (both paths: Spark's JSON
    reader hands the file to lbctl's reader; a small run reads it there directly). The file is
    not recorded as done, so once fixed the next run adds the missing snapshot and no other."""
    from lbctl.fleet.files import read_manifest
    from lbctl.fleet.session import SMALL_INPUT_CONF
    from lbctl.sources.snapshot import read_snapshot_file
    from tests.paths import DATA

    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    seq = src / "seq.jsonl"
    shutil.copy(DATA / "malformed" / "bad_line.jsonl", seq)
    with pytest.raises(Exception) as refused:
        read_snapshot_file(seq)
    spark.conf.set(SMALL_INPUT_CONF, str(1 << 40) if small else "0")
    try:
        first = run_fleet("ingest", str(src), "--out", str(out), "-o", "json", "-q")
        assert first.exit_code == 1, first.output
        assert first.stderr.endswith("lbctl: error: skipped 1 line(s) that could not be read "
                                     "(each is named in the summary); everything else was "
                                     "ingested\n")
        data = json.loads(first.stdout)
        assert data["skipped"] == [{"file": str(seq), "reason": str(refused.value), "line": 2}]
        assert data["files"] == {"found": 1, "unchanged": 0, "read": 1, "skipped": 0}
        assert data["linesSkipped"] == 1
        assert data["snapshots"] == {"read": 2, "added": 2, "alreadyStored": 0}
        assert data["readers"] == {"spark": 0, "lbctl": 1}
        times = sorted(pd.read_parquet(out / "snapshots")["captured_at"])
        assert times == [epoch_ms("2026-11-21T22:00:00Z"), epoch_ms("2026-11-21T22:02:00Z")]
        assert str(seq) not in read_manifest(out)  # read again until it is fixed
        lines = seq.read_text().splitlines()
        fixed = json.loads(lines[0])
        fixed["capturedAt"] = "2026-11-21T22:01:00Z"
        seq.write_text("\n".join([lines[0], json.dumps(fixed), lines[2]]) + "\n")
        again = json.loads(run_fleet("ingest", str(src), "--out", str(out), "-o", "json",
                                     "-q").stdout)
    finally:
        spark.conf.set(SMALL_INPUT_CONF, "0")
    assert again["skipped"] == [] and again["linesSkipped"] == 0
    assert again["snapshots"] == {"read": 3, "added": 1, "alreadyStored": 2}
    snaps = pd.read_parquet(out / "snapshots")
    assert sorted(snaps["captured_at"]) == [epoch_ms(f"2026-11-21T22:0{m}:00Z") for m in range(3)]
    assert len(pd.read_parquet(out / "brokers")) == sum(
        len(json.loads(line)["brokers"]) for line in seq.read_text().splitlines())
    assert str(seq) in read_manifest(out)
