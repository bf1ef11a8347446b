"""``lbctl simulate``'s outputs, case by case (the cases no golden file pins): how each ended, the
run's figures, each cycle's moves and the final loads against the stored facts
(``tests/data/outputs/simulate.json``), and the same in every format: YAML equal to JSON, CSV one
row per cycle and broker, the table's cycle rows and final loads.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tests.output_checks import (
    cases,
    check_document,
    flat,
    json_of,
    ran,
    read_csv,
    same_list,
    same_rows,
    shortener,
    table_with,
)

TITLE = "simulate"
KEYS = ["format", "cluster", "startedAt", "shedding", "placement", "intervalMinutes",
        "traceSnapshots", "band", "bounceWindowMinutes", "hosts", "truthHosts", "settings", "model", "summary", "cycles",
        "final"]
BROKER = ("broker", "load", "reported", "predicted", "predictionError", "score", "bundles",
          "throughput", "msgRate")
SPREAD = ("mean", "std", "cov", "min", "max", "range")
CYCLE = ("unloads", "skipped", "throughputMoved", "msgRateMoved", "bounceBacks",
         "aboveAveragePlacements", "reportsWritten")


def check_shape(name: str, data: dict[str, Any]) -> None:
    assert list(data) == KEYS, f"{name}: keys {list(data)}"
    assert data["format"] == "lbctl/simulation@1", name
    assert [c["cycle"] for c in data["cycles"]] == list(range(1, len(data["cycles"]) + 1)), name
    assert data["summary"]["cycles"] == len(data["cycles"]), name


@pytest.mark.parametrize("name", cases(TITLE, "json") + cases(TITLE, "yaml"))
def test_document(name: str) -> None:
    """-o json and -o yaml: the document's shape and the stored facts."""
    check_document(name, TITLE, check_shape)


def _minutes(start: str, at: str) -> float:
    def t(s: str) -> datetime:
        return datetime.fromisoformat(s.replace("Z", "+00:00"))
    return (t(at) - t(start)).total_seconds() / 60


def cycle_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows -o csv must hold: one per cycle and broker, the cycle's figures repeated."""
    rows = []
    for c in data["cycles"]:
        for b in c["brokers"]:
            rows.append({"cycle": c["cycle"], "at": c["at"],
                         "minute": _minutes(data["startedAt"], c["at"]),
                         **{k: b[k] for k in BROKER}, **{k: c["spread"][k] for k in SPREAD},
                         "nonFinite": c["spread"].get("nonFinite"), **{k: c[k] for k in CYCLE}})
    return rows


@pytest.mark.parametrize("name", cases(TITLE, "csv"))
def test_csv(name: str) -> None:
    out, want = ran(name)
    if out.exit_code:
        return
    rows = read_csv(name, out.stdout, TITLE)
    same_rows(name, rows, cycle_rows(json_of(name)), from_csv=True)
    unloads = {int(r["cycle"]): int(r["unloads"]) for r in rows}
    same_list(name, "cycles' unloads", list(unloads.values()),
              [c["unloads"] for c in want["cycles"]])


@pytest.mark.parametrize("name", cases(TITLE, "table"))
def test_table(name: str) -> None:
    """The table: one row per cycle with its unloads; the final load of each broker."""
    out, want = ran(name)
    if out.exit_code:
        return
    # a narrow column folds its header mid-word ("unload" over "s": wide figures such as a
    # 139.1 % max take the width), which the header reader joins with a space
    unloads = next((h for h in ("unloads", "unload s")
                    if table_with(name, out.stdout, "cycle", h) is not None), "unloads")
    table = table_with(name, out.stdout, "cycle", unloads)
    assert table is not None, f"{name}: no cycle table"
    rows = table.rows("cycle")
    same_list(name, "cycle rows", [(r["cycle"], r[unloads]) for r in rows],
              [(str(i), str(c["unloads"])) for i, c in enumerate(want["cycles"], 1)])
    short, words = shortener(out.stdout), flat(out.stdout)
    for broker, load in want["final"].items():
        shown = f"{short(broker)} {load * 100:.1f}%"
        assert shown in words, f"{name}: final load {shown!r} not shown"
