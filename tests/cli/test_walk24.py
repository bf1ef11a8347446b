"""walk24 (operator experience): what a newcomer met walking doctor, explain, recommend, compare
and the watcher's history commands at 80 columns."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app

HISTORY_COMMANDS = [["plans", "list"], ["plans", "show", "p-x"], ["watch", "--status"]]


@pytest.mark.parametrize("args", HISTORY_COMMANDS, ids=" ".join)
def test_no_history_at_the_default_says_where_it_looked_and_how_to_point_elsewhere(
        tmp_path: Path, args: list[str]) -> None:
    """Without --history, `plans list` and `watch --status` said "…/history: no watcher history
    here (lbctl watch --history DIR)": not that this was the default place, where that comes
    from, nor that --history points them elsewhere."""
    state = tmp_path / "state"
    env = {"XDG_STATE_HOME": str(state), "LBCTL_JOURNAL": ""}
    r = CliRunner().invoke(app, args, env=env)
    assert r.exit_code == 2 and r.stdout == ""
    default = state / "lbctl" / "history"
    err = r.stderr
    assert err.startswith(f"lbctl: error: {default}: no watcher history here")
    assert "default" in err and "LBCTL_JOURNAL" in err and "XDG_STATE_HOME" in err
    assert "give --history" in err
    assert len(err.splitlines()) == 1
    assert not default.exists()  # nothing created by looking


def test_the_default_follows_the_journal(tmp_path: Path) -> None:
    journal = tmp_path / "j" / "journal.jsonl"
    r = CliRunner().invoke(app, ["plans", "list"], env={"LBCTL_JOURNAL": str(journal)})
    assert r.exit_code == 2
    assert r.stderr.startswith(f"lbctl: error: {journal.parent / 'history'}: no watcher history")


@pytest.mark.parametrize("args", HISTORY_COMMANDS, ids=" ".join)
def test_a_given_history_that_is_not_there_is_not_called_the_default(
        tmp_path: Path, args: list[str]) -> None:
    missing = tmp_path / "watch-histroy"
    r = CliRunner().invoke(app, [*args, "--history", str(missing)])
    assert r.exit_code == 2
    assert r.stderr.startswith(f"lbctl: error: {missing}: no watcher history here; ")
    assert "default" not in r.stderr and "give --history" in r.stderr


@pytest.mark.parametrize("window", [None, "5"])
def test_compare_says_what_bounce_and_above_avg_count(window: str | None) -> None:
    """compare at 80 columns printed "(every row: bounce 0)" and "left out to fit 80 columns:
    above avg, …" with no word on what either counts; the legend says it, with the window."""
    from tests.paths import EXAMPLES

    args = ["compare", str(EXAMPLES / "hot-broker.json"), "--strategy", "ThresholdShedder",
            "--strategy", "AvgShedder", "--cycles", "10"]
    if window:
        args += ["--bounce-window", window]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.stderr
    text = " ".join(r.stdout.split())
    minutes = 30 if window is None else int(window)  # the example's cycles are 1 min apart
    assert (f"bounce = moves back to a broker the bundle left in the last {minutes} min"
            in text)
    assert "above avg = moves onto a broker above the mean load" in text
