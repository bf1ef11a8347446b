"""``lbctl monitor-brokers --snapshot … --once``'s outputs, case by case (the cases no golden file
pins): how each ended, each broker's state, view, load and overloaded flag against the stored facts
(``tests/data/outputs/monitor-brokers.json``), and the same in every format: YAML equal to JSON,
CSV/JSONL one row per broker then TOTAL, the table's summary rows.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli_cases import CASES, output_format
from tests.output_checks import (
    cases,
    check_document,
    documented_columns,
    json_of,
    ran,
    read_csv,
    read_jsonl,
    same_list,
    same_rows,
    shortener,
    table_with,
)

TITLE = "monitor-brokers"
KEYS = ["cluster", "at", "overloadedThresholdPercentage", "averages", "brokers", "total"]


def check_shape(name: str, data: dict[str, Any]) -> None:
    """The JSON document: its keys, and broker rows with the documented columns."""
    assert list(data) == KEYS, f"{name}: keys {list(data)}"
    columns = [c for c in documented_columns(TITLE) if c not in ("cluster", "at")]
    for row in [*data["brokers"], data["total"]]:
        assert list(row) == columns, f"{name}: broker row {row.get('broker')} keys {list(row)}"
    assert data["total"]["broker"] == "TOTAL", name


@pytest.mark.parametrize("name", cases(TITLE, "json") + cases(TITLE, "yaml"))
def test_document(name: str) -> None:
    """-o json and -o yaml: the document's shape and the stored facts."""
    check_document(name, TITLE, check_shape)


def broker_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"cluster": data["cluster"], "at": data["at"], **row}
            for row in [*data["brokers"], data["total"]]]


@pytest.mark.parametrize("name", cases(TITLE, "csv") + cases(TITLE, "jsonl"))
def test_rows(name: str) -> None:
    """-o csv and -o jsonl: the documented columns, one row per broker then TOTAL, each equal to
    its JSON row (numbers to 6 decimals)."""
    out, want = ran(name)
    csv = output_format(CASES[name]) == "csv"
    rows = (read_csv if csv else read_jsonl)(name, out.stdout, TITLE)
    same_rows(name, rows, broker_rows(json_of(name)), from_csv=csv)
    got = [r["broker"] for r in rows]
    same_list(name, "broker rows", got, [*want["brokers"], "TOTAL"])


def _cell(value: Any, form: str) -> str:
    return "-" if value is None else form.format(value)


@pytest.mark.parametrize("name", cases(TITLE, "table"))
def test_table(name: str) -> None:
    """The summary table: one row per broker then TOTAL, with its bundles, its load (LOAD %, the
    usage the load manager compares) and ``overloaded`` exactly for the overloaded brokers."""
    out, want = ran(name)
    short = shortener(out.stdout)
    table = table_with(name, out.stdout, "BROKER", "BUNDLE", "LOAD %")
    assert table is not None, f"{name}: no summary table"
    rows = table.rows("BROKER")
    exp = {short(b): f for b, f in want["brokers"].items()} | {"TOTAL": want["total"]}
    same_list(name, "summary rows", [r["BROKER"] for r in rows], list(exp))
    for r in rows:
        f = exp[r["BROKER"]]
        where = f"{name}: {r['BROKER']}"
        assert r["BUNDLE"] == _cell(f["bundles"], "{}"), f"{where}: bundles {r['BUNDLE']}"
        assert r["LOAD %"] == _cell(f["weightedMax"], "{:.2f}"), f"{where}: LOAD % {r['LOAD %']}"
        if r["BROKER"] != "TOTAL":
            state = r.get("STATE", "")
            assert (state == "overloaded") == f["overloaded"], f"{where}: state {state!r}"
