"""`lbctl propose` end to end: every output format, --explain, bad input as one line, the missing
extra as a hint."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.plan_contract import check_plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PIP364 = str(EXAMPLES / "pip364-90-10.json")
HOT = str(EXAMPLES / "hot-broker.json")


def test_json_is_a_plan_with_the_planner_explanation(runner: CliRunner) -> None:
    res = runner.invoke(app, ["propose", PIP364, "--solver", "greedy", "-o", "json"])
    assert res.exit_code == 0, res.stderr
    plan = json.loads(res.stdout)
    check_plan(plan)
    assert plan["shedding"] == "lbctl" and len(plan["actions"]) == 1
    e = plan["explanation"]
    assert e["planner"]["solver"] == "greedy" and e["balancedness"] == {"before": 0.0,
                                                                       "after": 100.0}
    assert [g["status"] for g in e["goals"][:2]] == ["FIXED", "FIXED"]
    assert plan["brokers"][0]["usageAfter"] == pytest.approx(0.5)
    assert yaml.safe_load(runner.invoke(app, ["propose", PIP364, "--solver", "greedy", "-o",
                                              "yaml"]).stdout) == plan


def test_table_and_explain(runner: CliRunner) -> None:
    res = runner.invoke(app, ["propose", HOT, "--solver", "greedy"])
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    assert "lbctl's planner (range <= 10 points, max usage 85 %)" in out
    assert "Goals:" in out and "Balancedness:" in out and "Solver: greedy" in out
    assert "Moves:" not in out
    detailed = runner.invoke(app, ["propose", HOT, "--solver", "greedy", "--explain"]).stdout
    assert "Moves:" in detailed and "     not " in detailed
    assert "Constraints enforced:" in detailed


def test_csv_lists_the_actions(runner: CliRunner) -> None:
    res = runner.invoke(app, ["propose", HOT, "--solver", "greedy", "-o", "csv",
                              "--max-moves", "2"])
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert len(rows) == 2 and {r["action"] for r in rows} == {"unload"}
    assert all(r["destinationBroker"] for r in rows)


def test_caps_and_targets_from_the_command_line(runner: CliRunner) -> None:
    res = runner.invoke(app, ["propose", HOT, "--solver", "greedy", "-o", "json",
                              "--target-range", "20", "--max-usage", "70",
                              "--max-throughput", "100"])
    plan = json.loads(res.stdout)
    t = plan["explanation"]["targets"]
    assert t["targetRange"] == pytest.approx(0.2) and t["maxUsage"] == pytest.approx(0.7)
    moved = sum(a["throughput"] for a in plan["actions"])
    assert 0 < moved <= 100 * 1048576


@pytest.mark.parametrize("args, words", [
    (["--target-range", "5", "--target-std", "2"], "not both"),
    (["--solver", "magic"], "--solver"),
    (["--max-moves", "-1"], "--max-moves"),
    (["--set", "loadBalancerNope=1"], "unknown setting"),
    # named in MB/s as typed (it said "got -1.04858e+06", the bytes it became)
    (["--max-throughput", "-1"], "--max-throughput must be a number >= 0, got -1\n"),
])
def test_bad_flags_are_one_line(runner: CliRunner, args: list[str], words: str) -> None:
    res = runner.invoke(app, ["propose", HOT, *args])
    assert res.exit_code == 2
    assert res.stderr.startswith("lbctl: error:") and words in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_bad_file_is_one_line(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    res = runner.invoke(app, ["propose", str(bad)])
    assert res.exit_code == 1 and res.stderr.startswith("lbctl: error:")
    assert len(res.stderr.strip().splitlines()) == 1


def test_missing_extra_is_a_hint_not_a_traceback(runner: CliRunner,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from lbctl.planner import milp

    monkeypatch.setattr(milp, "available", lambda: False)
    res = runner.invoke(app, ["propose", HOT, "-o", "json"])
    assert res.exit_code == 0
    assert res.stderr.strip().splitlines() == [
        "lbctl: scipy is not installed: greedy solver only (pip install 'lbctl[propose]' for "
        "the exact solver)"]
    assert json.loads(res.stdout)["explanation"]["planner"]["solver"] == "greedy"


def test_simulate_and_compare_take_the_planner(runner: CliRunner) -> None:
    res = runner.invoke(app, ["simulate", PIP364, "--strategy", "lbctl", "--cycles", "5",
                              "-o", "json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["shedding"] == "lbctl" and data["summary"]["unloads"] == 1
    res = runner.invoke(app, ["compare", PIP364, "--strategy", "lbctl", "--strategy",
                              "ThresholdShedder", "--cycles", "5"])
    assert res.exit_code == 0 and "lbctl" in res.stdout
    res = runner.invoke(app, ["compare", PIP364, "--strategy", "lbctl:AvgShedder"])
    assert res.exit_code == 2 and res.stderr.startswith("lbctl: error:")


# --- issue 28 item 9: propose speaks its own words --------------------------------------------------
def test_propose_table_own_words_steps_and_warnings_with_why(monkeypatch) -> None:
    from typer.testing import CliRunner

    from lbctl.cli.app import app
    from lbctl.planner import milp
    from tests.paths import EXAMPLES

    monkeypatch.setattr(milp, "available", lambda: False)  # the note of a missing scipy
    r = CliRunner().invoke(app, ["propose", str(EXAMPLES / "policies.json"), "--solver", "auto"])
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert "Success/" not in out and "Overloaded" not in out
    # every note once, in the report (not again on stderr)
    assert (out + r.stderr).count("scipy is not installed") == 1
    assert "Moves, in order" in out and "Brokers after the whole plan" in out
    # a plan that trips lbctl's own sanity warning says why
    section = out[out.index("Warnings"):out.index("Goals:")]
    warnings = [" ".join(w.split()) for w in section.split(" ! ")[1:]]
    assert warnings and all(" — " in w for w in warnings), warnings
    from lbctl.render.propose_view import BY_DESIGN

    assert any(BY_DESIGN[code].split(":")[0] in " ".join(warnings) for code in BY_DESIGN)
    j = CliRunner().invoke(app, ["propose", str(EXAMPLES / "policies.json"), "-o", "json"])
    assert j.stderr.count("scipy is not installed") == 1  # machine output: the note on stderr


def test_each_move_before_after_replays_to_the_final_state() -> None:
    from lbctl.config import Settings
    from lbctl.planner.propose import ProposeOptions, propose
    from lbctl.render.propose_view import steps
    from lbctl.sources.files import snapshot_files
    from tests.paths import EXAMPLES

    state = snapshot_files([EXAMPLES / "hot-broker.json"]).read().last
    p = propose(state, Settings.defaults(), ProposeOptions(solver="greedy"))
    figures = steps(p)
    assert len(figures) == len(p.moves) > 1
    last_seen: dict[int, float] = {}
    for (i, dst), (s0, s1, d0, d1) in zip(p.moves, figures, strict=True):
        src = p.view.owner[i]
        assert s1 < s0 and d1 > d0  # a move takes load off its source onto its destination
        assert d0 == last_seen.get(dst, d0) and s0 == last_seen.get(src, s0)  # chained
        last_seen[src], last_seen[dst] = s1, d1
    after = p.usages_after()
    for j, u in last_seen.items():
        assert abs(after[j] - u) < 1e-12  # the last move of each broker is its final state


def test_a_plan_with_no_move_says_why_on_its_own_line(runner: CliRunner) -> None:
    """hot-broker.json with every bundle unloaded a minute before (tests/data/planner): the table
    said "Moves: none" and left the why to the goals table and --explain; it now gives the
    solver's word and how many bundles may not move on that line."""
    f = Path(__file__).resolve().parents[1] / "data" / "planner" / "all-in-grace.json"
    res = runner.invoke(app, ["propose", str(f)])
    assert res.exit_code == 0, res.output
    line = " ".join(res.stdout.split("Moves: none")[1].split("\n\n")[0].split())
    assert line.startswith("— the goals cannot be met")
    assert "44 of 44 bundles may not move, as --explain lists" in line
