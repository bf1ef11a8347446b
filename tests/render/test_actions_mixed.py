"""The actions table of a plan that mixes unloads and splits keeps its action column at 80
columns: the simple load manager's brokers split their hot bundles after writing their reports
(``doNamespaceBundleSplit``), so the bundled simple example's plan holds four splits and the
leader's failed unload, and rows without the column read as five bare bundle rows."""

from __future__ import annotations

from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.paths import EXAMPLES


def _recommend(name: str) -> str:
    r = CliRunner().invoke(app, ["recommend", str(EXAMPLES / name)], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    return r.output.split("Actions:", 1)[1].split("Brokers:", 1)[0]


def test_a_mixed_plan_says_each_rows_action() -> None:
    actions = _recommend("simple-overloaded.json")
    rows = [ln for ln in actions.splitlines() if "acme/orders/" in ln]
    assert len(rows) == 5
    assert "left out to fit 80 columns" not in actions or "action" not in actions.split(
        "left out to fit 80 columns", 1)[1]
    said = actions.count("split") - actions.count("split this bundle")
    assert said >= 4  # each split row says so
    assert "unload" in actions


def test_a_uniform_plan_still_says_the_action_once() -> None:
    actions = _recommend("hot-broker.json")
    assert "(every row: action unload" in actions
