"""`lbctl compare` end to end: the same start through several strategies."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from lbctl.cli.app import app
from tests.paths import EXAMPLES, example_files

PAIRS = ["--strategy", "ThresholdShedder", "--strategy", "AvgShedder:AvgShedder",
         "--strategy", "UniformLoadShedder"]


@pytest.mark.parametrize("example", example_files(), ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["table", "json", "yaml", "csv"])
def test_every_example_every_format(runner, example: Path, fmt: str) -> None:
    res = runner.invoke(app, ["compare", str(example), *PAIRS, "--cycles", "10", "-o", fmt])
    assert res.exit_code == 0, res.output
    out = res.stdout
    if fmt in ("json", "yaml"):
        doc = json.loads(out) if fmt == "json" else yaml.safe_load(out)
        assert doc["format"] == "lbctl/comparison@1" and doc["cycles"] == 10
        assert [(r["shedding"], r["placement"]) for r in doc["runs"]][:2] == \
            [("ThresholdShedder", doc["runs"][0]["placement"]), ("AvgShedder", "AvgShedder")]
        for r in doc["runs"]:
            assert len(r["range"]) == 10 and r["summary"]["unloads"] == sum(r["unloads"])
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert [r["shedding"] for r in rows] == ["ThresholdShedder", "AvgShedder",
                                                 "UniformLoadShedder"]
    else:
        assert "ThresholdShedder" in out and "AvgShedder" in out and "settled" in out


def test_pip364_side_by_side_with_plot(runner, tmp_path: Path) -> None:
    png = tmp_path / "cmp.png"
    res = runner.invoke(app, ["compare", str(EXAMPLES / "pip364-90-10.json"),
                              "--strategy", "ThresholdShedder", "--strategy", "AvgShedder:AvgShedder",
                              "--set", "maxUnloadPercentage=0.5", "--plot", str(png), "-o", "json"])
    assert res.exit_code == 0, res.output
    ts, avg = json.loads(res.stdout)["runs"]
    assert ts["summary"]["unloads"] > 1 and ts["summary"]["settledAtCycle"] is None
    assert avg["summary"]["unloads"] == 1 and avg["summary"]["settledAtCycle"] == 3
    assert ts["range"][:2] == [0.8, 0.0] and ts["range"][2] == pytest.approx(0.4)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_placement_applies_to_strategies_without_one(runner) -> None:
    res = runner.invoke(app, ["compare", str(EXAMPLES / "hot-broker.json"), "--strategy",
                              "ThresholdShedder", "--strategy", "OverloadShedder:RoundRobinBrokerSelector",
                              "--placement", "LeastResourceUsageWithWeight", "--cycles", "3",
                              "-o", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [(r["shedding"], r["placement"]) for r in rows] == [
        ("ThresholdShedder", "LeastResourceUsageWithWeight"),
        ("OverloadShedder", "RoundRobinBrokerSelector")]


@pytest.mark.parametrize("args, message", [
    (["--strategy", "ThresholdShedder", "--strategy", "ThresholdShedder"], "given twice"),
    (["--strategy", "AvgShedder:"], "NAME or NAME:PLACEMENT"),
    (["--strategy", "ThresholdShedder:AvgShedder"], "needs the AvgShedder shedding strategy"),
])
def test_bad_strategy_lists_are_one_line_errors(runner, args: list[str], message: str) -> None:
    res = runner.invoke(app, ["compare", str(EXAMPLES / "balanced.json"), *args])
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("lbctl: error: ") and message in res.stderr


@pytest.mark.parametrize("args", [[str(EXAMPLES / "balanced.json")], []])
def test_no_strategy_is_one_line_with_an_example_and_the_names(runner, args: list[str]) -> None:
    """walk25: Typer's bare "Missing option '--strategy'" named neither an example nor the
    strategies; the line does both, before any file is read."""
    from lbctl.strategies.builtin import SHEDDING

    res = runner.invoke(app, ["compare", *args])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lbctl: error: "), res.stderr
    assert "--strategy ThresholdShedder --strategy AvgShedder" in lines[0]
    assert lines[0].endswith(" (try 'lbctl compare -h')"), lines[0]
    names = lines[0].rsplit("strategies: ", 1)[1].removesuffix(" (try 'lbctl compare -h')") \
        .split(", ")
    assert names == [*sorted(SHEDDING.names()), "lbctl"]
    assert "Traceback" not in res.output


def test_prediction_error_per_strategy_on_mixed_hosts(runner) -> None:
    """Each run's row says how far its predicted usage after landed from the truth; Pulsar's
    strategies predict nothing, and their row says so rather than show an error of zero."""
    args = ["compare", str(EXAMPLES / "pip364-90-10.json"), "--cycles", "3", "--strategy",
            "ThresholdShedder", "--strategy", "lbctl", "--hosts", "mixed", "--host-seed", "3"]
    res = runner.invoke(app, [*args, "-o", "csv"])
    assert res.exit_code == 0, res.output
    rows = {r["shedding"]: r for r in csv.DictReader(io.StringIO(res.stdout))}
    assert rows["ThresholdShedder"]["prediction"] == "none"
    assert rows["ThresholdShedder"]["predictionP95"] == ""
    assert rows["lbctl"]["prediction"] == "lbctl's load model"
    assert float(rows["lbctl"]["predictionP95"]) > 0.005
    assert rows["lbctl"]["predictionWorstBroker"].startswith("broker-")
    table = runner.invoke(app, args)
    assert table.exit_code == 0
    assert "truth: mixed hosts" in table.stdout
    assert "predicts no usage after" in table.stdout and "absolute error p50" in table.stdout
