"""``lbctl compare``'s outputs, case by case (the cases no golden file pins): how each ended, each
strategy's figures (final spread, unloads, bundles moved, bounce-backs, settling) against the stored
facts (``tests/data/outputs/compare.json``), and the same in every format: YAML equal to JSON, CSV
one row per strategy, the table's rows.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.output_checks import (
    cases,
    check_document,
    joined,
    ran,
    read_csv,
    same_list,
    same_rows,
    table_with,
)

TITLE = "compare"
KEYS = ["format", "cluster", "startedAt", "intervalMinutes", "traceSnapshots", "band",
        "bounceWindowMinutes", "hosts", "truthHosts", "cycles", "runs"]
TOTALS = ("unloads", "bundlesMoved", "throughputMoved", "bounceBacks", "aboveAveragePlacements",
          "settledAtCycle", "settleMinutes")


def check_shape(name: str, data: dict[str, Any]) -> None:
    assert list(data) == KEYS, f"{name}: keys {list(data)}"
    assert data["format"] == "lbctl/comparison@1", name
    for r in data["runs"]:
        assert len(r["unloads"]) == len(r["std"]) == len(r["range"]) == data["cycles"], name


@pytest.mark.parametrize("name", cases(TITLE, "json") + cases(TITLE, "yaml"))
def test_document(name: str) -> None:
    """-o json and -o yaml: the document's shape and the stored facts."""
    check_document(name, TITLE, check_shape)


def run_rows(want: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows -o csv must hold: one per strategy run, from the expected facts."""
    rows = []
    for r in want["runs"]:
        shedding, placement = r["strategy"].split(" + ")
        s = r["summary"]
        rows.append({"shedding": shedding, "placement": placement, "cycles": s["cycles"],
                     "finalStd": s["final"]["std"], "finalRange": s["final"]["range"],
                     "finalCov": s["final"]["cov"], **{k: s[k] for k in TOTALS}})
    return rows


@pytest.mark.parametrize("name", cases(TITLE, "csv"))
def test_csv(name: str) -> None:
    out, want = ran(name)
    if out.exit_code:
        return
    same_rows(name, read_csv(name, out.stdout, TITLE), run_rows(want), from_csv=True)


@pytest.mark.parametrize("name", cases(TITLE, "table"))
def test_table(name: str) -> None:
    """The table: one row per strategy with its final std and range (percent) and unloads."""
    out, want = ran(name)
    if out.exit_code:
        return
    table = table_with(name, out.stdout, "shedding", "unloads")
    assert table is not None, f"{name}: no table"
    got = [(joined(r["shedding"]), joined(r["placement"]), r["final std"], r["final range"],
            r["unloads"]) for r in table.rows("unloads")]
    exp = [(*r["strategy"].split(" + "), f"{r['summary']['final']['std'] * 100:.1f}%",
            f"{r['summary']['final']['range'] * 100:.1f}%", str(r["summary"]["unloads"]))
           for r in want["runs"]]
    same_list(name, "strategy rows", got, exp)
