"""The four tables are committed as one unit: kill -9 anywhere loses nothing, duplicates nothing.

The recovery rules are checked directly on staging directories (no Spark); then real ingests are
killed with SIGKILL at the two dangerous moments — after the first table is written, and in the
middle of publishing — and the next run must leave exactly the rows a clean ingest gives.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pandas as pd  # noqa: TID253 - the tables are read back with pandas
import pytest

from lbctl.errors import UsageError
from lbctl.fleet import commit
from lbctl.fleet.files import MANIFEST, read_manifest, write_manifest
from tests.fleet.independent import CORPUS, bundles_frame, load_snapshots

SNAPS = load_snapshots(CORPUS)


def _stage(out: Path, name: str, files: dict[str, bytes], plan: bool) -> Path:
    run = out / commit.STAGING / name
    for rel, data in files.items():
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_bytes(data)
    if plan:
        moves = [r for r in files if r.endswith(".parquet")]
        (run / commit.PLAN).write_bytes(orjson.dumps(
            {"format": commit.PLAN_FORMAT, "moves": moves, "manifest": {"/in/a.json": [1, 2]}}))
    return run


def test_a_run_with_a_plan_is_published_and_one_without_is_discarded(tmp_path) -> None:
    write_manifest(tmp_path, {"/in/old.json": [5, 6]})
    part = "bundles/cluster=c/date=2026-01-01/part-1.parquet"
    done = _stage(tmp_path, "a", {part: b"P", "bundles/_SUCCESS": b"",
                                  "bundles/cluster=c/date=2026-01-01/.part-1.parquet.crc": b""},
                  plan=True)
    # interrupted mid-publish: one file already moved
    moved = "snapshots/cluster=c/date=2026-01-01/part-2.parquet"
    (tmp_path / moved).parent.mkdir(parents=True)
    (tmp_path / moved).write_bytes(b"S")
    (done / commit.PLAN).write_bytes(orjson.dumps(
        {"format": commit.PLAN_FORMAT, "moves": [part, moved], "manifest": {"/in/a.json": [1, 2]}}))
    half = _stage(tmp_path, "b", {"brokers/cluster=c/date=2026-01-01/part-3.parquet": b"B"},
                  plan=False)
    notes = commit.recover(tmp_path)
    assert notes == ["published the interrupted run a", "discarded the unfinished run b"]
    assert (tmp_path / part).read_bytes() == b"P" and (tmp_path / moved).read_bytes() == b"S"
    assert not (tmp_path / "brokers").exists()
    assert not done.exists() and not half.exists() and not (tmp_path / commit.STAGING).exists()
    assert read_manifest(tmp_path) == {"/in/old.json": [5, 6], "/in/a.json": [1, 2]}
    assert commit.recover(tmp_path) == []  # idempotent


def test_a_writer_excludes_other_writers_and_readers(tmp_path) -> None:
    with commit.locked(tmp_path, write=True):
        with (pytest.raises(UsageError, match="busy: another `lbctl fleet ingest` is writing it"),
              commit.locked(tmp_path, write=True)):
            pass
        with (pytest.raises(UsageError, match="busy: an `lbctl fleet ingest` is writing it"),
              commit.locked(tmp_path, write=False)):
            pass
    with commit.locked(tmp_path, write=False), commit.locked(tmp_path, write=False):
        pass  # readers share


@pytest.mark.spark  # run_fleet starts the tests' Spark session (tests/fleet/conftest.py)
def test_a_busy_output_is_a_usage_error_before_spark_starts(tmp_path, run_fleet) -> None:
    with commit.locked(tmp_path / "out", write=True):
        r = run_fleet("ingest", str(CORPUS), "--out", str(tmp_path / "out"), "-q")
    assert r.exit_code == 2
    assert "busy: another `lbctl fleet ingest` is writing it" in r.stderr


_KILLER = textwrap.dedent("""
    import os, signal, sys
    point = sys.argv[1]
    import lbctl.fleet.progress as progress
    import lbctl.fleet.commit as commit
    original = progress.Progress.phase
    def phase(self, text):
        if point == "after-first-table" and text.startswith("writing") and "brokers" in text:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, text)
    progress.Progress.phase = phase
    real_replace = os.replace
    moved = []
    def replace(src, dst):
        real_replace(src, dst)
        if point == "mid-publish" and str(dst).endswith(".parquet"):
            moved.append(dst)
            if len(moved) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
    commit.os.replace = replace
    from lbctl.cli.app import main
    sys.argv = ["lbctl", "fleet", "ingest", *sys.argv[2:]]
    main()
""")


def _killed_ingest(point: str, out: Path) -> None:
    p = subprocess.run([sys.executable, "-c", _KILLER, point, str(CORPUS), "--out", str(out),
                        "-q", "--conf", "spark.sql.shuffle.partitions=2",
                        # the Spark readers, as the clean ingest it is compared with (a small
                        # run's `raw` is lbctl's compact JSON, the native path's the file's text)
                        "--conf", "spark.lbctl.fleet.smallInputBytes=0"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == -signal.SIGKILL, p.stderr[-2000:]


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    return {t: pd.read_parquet(out / t) for t in ("snapshots", "brokers", "bundles", "topics")}


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("point", ["after-first-table", "mid-publish"])
def test_kill_9_then_rerun_gives_exactly_the_rows_of_a_clean_ingest(point, tmp_path, run_fleet,
                                                                     ingested) -> None:
    clean, _ = ingested
    out = tmp_path / "out"
    _killed_ingest(point, out)
    staged = list((out / commit.STAGING).iterdir())
    assert len(staged) == 1
    if point == "after-first-table":  # staged, never published: the tables do not exist yet
        assert not (staged[0] / commit.PLAN).exists()
        assert not (out / "snapshots").exists() and not (out / MANIFEST).exists()
    else:  # the plan was written and two files were already moved
        assert (staged[0] / commit.PLAN).exists()
    again = run_fleet("ingest", str(CORPUS), "--out", str(out), "-o", "json", "-q")
    assert again.exit_code == 1, again.output  # broken.json, skipped again
    summary = json.loads(again.stdout)
    if point == "after-first-table":  # everything is read again and stored once
        assert summary["snapshots"]["added"] == len(SNAPS)
    else:  # recovery finished the publish, manifest included: nothing left to read
        assert summary["files"]["unchanged"] == summary["files"]["found"] - 1  # broken.json
        assert summary["snapshots"]["added"] == 0
    assert not (out / commit.STAGING).exists()
    got, want = _tables(out), _tables(clean)
    for table in want:
        cols = sorted(want[table].columns)
        a = got[table][cols].astype(str).sort_values(cols).reset_index(drop=True)
        b = want[table][cols].astype(str).sort_values(cols).reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, obj=table)
    assert len(got["bundles"]) == len(bundles_frame(SNAPS))
    assert sorted(os.listdir(out)) == sorted(["_lbctl_fleet.lock", MANIFEST, "snapshots",
                                              "brokers", "bundles", "topics"])
