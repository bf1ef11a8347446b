"""``lbctl propose --solver greedy``'s outputs, case by case (the cases no golden file pins): how
each ended, lbctl's planner's moves, each broker's verdict and estimated usage after, the goals'
statuses and the cost against the stored facts (``tests/data/outputs/propose.json``), and the same
in the ``--explain`` table: the action rows, the broker verdicts, the goals.
"""

from __future__ import annotations

import pytest

from tests.cli.test_outputs_recommend import check_plan_table, contract
from tests.output_checks import cases, check_document, joined, ran, table_with

TITLE = "propose"


@pytest.mark.parametrize("name", cases(TITLE, "json"))
def test_document(name: str) -> None:
    """-o json: the document's shape and the stored facts."""
    check_document(name, TITLE, contract)


@pytest.mark.parametrize("name", cases(TITLE, "table"))
def test_explain_table(name: str) -> None:
    out, want = ran(name)
    check_plan_table(name, out.stdout, want, many=False)
    goals = table_with(name, out.stdout, "goal", "status")
    assert goals is not None, f"{name}: no goals table"
    got = {joined(r["goal"]): r["status"] for r in goals.rows("kind")}
    exp = {g.replace(" ", ""): status for g, status in want["goals"].items()}
    assert got == exp, f"{name}: goals {got}, expected {exp}"
