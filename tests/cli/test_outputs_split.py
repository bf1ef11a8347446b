"""``lbctl split-bundle --snapshot``'s outputs, case by case (the cases no golden file pins): how
each ended, the split decision (bundle chosen, algorithm, boundaries, children, who keeps them)
against the stored facts (``tests/data/outputs/split-bundle.json``), and the same in every format:
YAML equal to JSON, CSV one row per child, the table's children.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.test_outputs_recommend import contract
from tests.output_checks import (
    cases,
    check_document,
    flat,
    joined,
    json_of,
    ran,
    read_csv,
    same_list,
    same_rows,
    shortener,
    table_with,
)

TITLE = "split-bundle"


@pytest.mark.parametrize("name", cases(TITLE, "json") + cases(TITLE, "yaml"))
def test_document(name: str) -> None:
    """-o json and -o yaml: the document's shape and the stored facts."""
    check_document(name, TITLE, contract)


def child_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows -o csv must hold: one per child of the split."""
    v = data["preview"]
    return [{"parent": v["bundle"], "bundle": c["bundle"], "lower": c["lower"],
             "upper": c["upper"], "topics": len(c["topics"]), "msgRate": c["msgRate"],
             "throughput": c["throughput"], "broker": c["broker"], "unload": c["unloaded"],
             "algorithm": v["algorithm"]} for c in v["children"]]


def _children(want: dict[str, Any]) -> list[str]:
    children: list[str] = want["preview"]["children"]
    return children


@pytest.mark.parametrize("name", cases(TITLE, "csv"))
def test_csv(name: str) -> None:
    out, want = ran(name)
    rows = read_csv(name, out.stdout, TITLE)
    same_rows(name, rows, child_rows(json_of(name)), from_csv=True)
    got = [f"{r['bundle']} on {r['broker']}" + (" unloaded" if r["unload"] == "true" else "")
           for r in rows]
    same_list(name, "children", got, _children(want))


@pytest.mark.parametrize("name", cases(TITLE, "table"))
def test_table(name: str) -> None:
    """The table: the boundaries, and one row per child with the broker that keeps it."""
    out, want = ran(name)
    short = shortener(out.stdout)
    words = flat(out.stdout)
    for b in want["preview"]["boundaries"]:
        assert b in words, f"{name}: boundary {b} not shown"
    table = table_with(name, out.stdout, "bundle", "topics", "broker")
    assert table is not None, f"{name}: no children table"
    # the rows after the children sum them up: what is not attributed, then the parent
    got = [f"{joined(r['bundle'])} on {r['broker']}" for r in table.rows("bundle")
           if not joined(r["bundle"]).startswith(("=parent", "notattributed"))]
    exp = []
    for child in _children(want):
        bundle, _, rest = child.partition(" on ")
        broker, _, unloaded = rest.partition(" ")
        exp.append(f"{bundle} on {short(broker)}" + (" (unloaded)" if unloaded else ""))
    same_list(name, "children rows", got, exp)
