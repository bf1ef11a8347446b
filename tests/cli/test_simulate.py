"""`lbctl simulate` end to end on the bundled examples, in every output format, with plots."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from lbctl.cli.app import app
from tests.paths import EXAMPLES, example_files

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def check_simulation(doc: dict, cycles: int) -> None:
    assert doc["format"] == "lbctl/simulation@1"
    assert {"cluster", "startedAt", "shedding", "placement", "intervalMinutes", "settings",
            "model", "summary", "cycles", "final"} <= set(doc)
    assert len(doc["cycles"]) == cycles == doc["summary"]["cycles"]
    assert doc["summary"]["unloads"] == sum(c["unloads"] for c in doc["cycles"])
    for c in doc["cycles"]:
        assert c["unloads"] == len(c["moves"])
        assert {b["broker"] for b in c["brokers"]}
        for m in c["moves"]:
            assert m["from"] != m["to"]


def check_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 10_000  # a drawn figure, not an empty canvas


@pytest.mark.parametrize("example", example_files(), ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["table", "json", "yaml", "csv"])
def test_every_example_every_format(runner, example: Path, fmt: str) -> None:
    res = runner.invoke(app, ["simulate", str(example), "--cycles", "12", "-o", fmt])
    assert res.exit_code == 0, res.output
    out = res.stdout
    if fmt == "json":
        check_simulation(json.loads(out), 12)
    elif fmt == "yaml":
        check_simulation(yaml.safe_load(out), 12)
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert sorted({int(r["cycle"]) for r in rows}) == list(range(1, 13))
        brokers = {r["broker"] for r in rows}
        assert len(rows) == 12 * len(brokers)  # one row per cycle and broker
        assert all(float(r["load"]) >= 0 for r in rows)
    else:
        assert "cycles of" in out and "unload(s)" in out and "range" in out


def test_plot_is_a_png(runner, tmp_path: Path) -> None:
    png = tmp_path / "sim.png"
    res = runner.invoke(app, ["simulate", str(EXAMPLES / "pip364-90-10.json"), "--cycles", "40",
                              "--plot", str(png), "-o", "json"])
    assert res.exit_code == 0, res.output
    check_png(png)


def test_pip364_table_tells_the_story(runner) -> None:
    res = runner.invoke(app, ["simulate", str(EXAMPLES / "pip364-90-10.json"), "--cycles", "40",
                              "--bounce-window", "60"])
    assert res.exit_code == 0, res.output
    assert "10 unload(s)" in res.stdout and "3 bounce-back(s)" in res.stdout
    assert "did not settle" in res.stdout
    res = runner.invoke(app, ["simulate", str(EXAMPLES / "pip364-90-10.json"), "--strategy",
                              "AvgShedder", "--placement", "AvgShedder", "--set",
                              "maxUnloadPercentage=0.5", "-o", "json"])
    doc = json.loads(res.stdout)
    assert doc["summary"]["unloads"] == 1 and doc["summary"]["settledAtCycle"] == 3
    assert doc["shedding"] == "AvgShedder" and doc["settings"]["maxUnloadPercentage"] == 0.5


def test_long_runs_elide_quiet_cycles_in_the_table(runner) -> None:
    res = runner.invoke(app, ["simulate", str(EXAMPLES / "balanced.json"), "--cycles", "100"])
    assert res.exit_code == 0
    assert "98 cycles without unloads not shown" in res.stdout


@pytest.mark.parametrize("args, message", [
    (["--cycles", "0"], "--cycles must be at least 1"),
    (["--band", "-1"], "--band must be"),
    (["--bounce-window", "-2"], "--bounce-window must be"),
    (["--strategy", "Treshold"], "unknown shedding strategy"),
    (["--set", "nope=1"], "unknown setting"),
])
def test_bad_flags_are_one_line_errors(runner, args: list[str], message: str) -> None:
    res = runner.invoke(app, ["simulate", str(EXAMPLES / "balanced.json"), *args])
    assert res.exit_code == 2
    assert res.stderr.startswith("lbctl: error: ") and message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output


def test_unwritable_plot_is_a_one_line_error(runner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["simulate", str(EXAMPLES / "balanced.json"), "--cycles", "2",
                              "--plot", str(tmp_path / "missing" / "x.png")])
    assert res.exit_code == 1
    assert res.stderr.startswith("lbctl: error: ") and "cannot write the plot" in res.stderr


@pytest.mark.parametrize("command", [["simulate"], ["compare", "--strategy", "ThresholdShedder"]])
def test_a_plot_name_matplotlib_would_guess_is_refused_before_the_run(runner, tmp_path: Path,
                                                                      command: list[str]) -> None:
    target = tmp_path / "x.jpg"
    res = runner.invoke(app, [*command, str(EXAMPLES / "balanced.json"), "--cycles", "2",
                              "--plot", str(target)])
    assert res.exit_code == 2 and not target.exists() and res.stdout == ""
    assert res.stderr.startswith("lbctl: error: --plot ") and "must end in .png or .svg" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
