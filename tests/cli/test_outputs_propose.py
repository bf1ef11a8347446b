"""``lbctl propose --solver greedy``'s outputs, case by case (the cases no golden file pins): how
each ended, lbctl's planner's moves, each broker's verdict and estimated usage after, the goals'
statuses and the cost against the stored facts (``tests/data/outputs/propose.json``), and the same
in the ``--explain`` table: the move rows, the brokers after the whole plan, the goals.

The table speaks the planner's words (issue 28 item 9): no Pulsar label (``Success/…``,
``Overloaded``) anywhere, each move with its destination's usage before → after *that* move (the
last move's "after" is its destination's final figure), the final state in its own table.
"""

from __future__ import annotations

from typing import Any

import pytest

from lbctl.units import pct
from tests.cli.test_outputs_recommend import contract, plans
from tests.output_checks import (
    cases,
    check_document,
    joined,
    ran,
    same_list,
    shortener,
    table_with,
)

TITLE = "propose"


@pytest.mark.parametrize("name", cases(TITLE, "json"))
def test_document(name: str) -> None:
    """-o json: the document's shape and the stored facts."""
    check_document(name, TITLE, contract)


@pytest.mark.parametrize("name", cases(TITLE, "table"))
def test_explain_table(name: str) -> None:
    out, want = ran(name)
    check_propose_table(name, out.stdout, want)
    goals = table_with(name, out.stdout, "goal", "status")
    assert goals is not None, f"{name}: no goals table"
    got = {joined(r["goal"]): r["status"] for r in goals.rows("kind")}
    exp = {g.replace(" ", ""): status for g, status in want["goals"].items()}
    assert got == exp, f"{name}: goals {got}, expected {exp}"


def check_propose_table(name: str, text: str, want: dict[str, Any]) -> None:
    short = shortener(text)
    f = plans(want)[0]
    assert "Success/" not in text and "Overloaded" not in text and "Underloaded" not in text, \
        f"{name}: a Pulsar label where Pulsar decided nothing"
    moves = table_with(name, text, "#", "bundle", "to: before → after")
    got = [] if moves is None else [(joined(r["bundle"]), r["from"], r["to"])
                                    for r in moves.rows("#")]
    exp = [(a["bundle"], short(a["broker"]), short(a.get("to"))) for a in f["actions"]
           if a["action"] != "split"]
    same_list(name, "move rows", got, exp)
    brokers = table_with(name, text, "broker", "now", "after plan")
    assert brokers is not None, f"{name}: no table of the brokers after the plan"
    assert "decision" not in brokers.headers
    final = {r["broker"]: r["after plan"] for r in brokers.rows("broker")}
    assert final == {short(b): pct(v["after"]) for b, v in f["brokers"].items()}, name
    if moves is not None and got:
        rows = moves.rows("#")
        last = rows[-1]
        after = last["to: before → after"].rstrip("%").split("→")[1]
        assert final[last["to"]] == f"{after}%", (
            f"{name}: the last move's destination ends at {after}% in the moves, "
            f"{final[last['to']]} in the brokers table")
