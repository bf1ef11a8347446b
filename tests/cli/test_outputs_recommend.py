"""``lbctl recommend``'s outputs, case by case (the cases no golden file pins).

Each case runs once; its test checks how it ended (exit code, stderr), the plan@1 contract, the
decisions it records against the stored facts (``tests/data/outputs/recommend.json``), and that its
format carries them: YAML equal to JSON, CSV/JSONL rows equal to the JSON actions, the table's
decision, action rows and broker verdicts.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.cli_cases import CASES, output_format
from tests.output_checks import (
    cases,
    check_document,
    joined,
    json_of,
    ran,
    read_csv,
    read_jsonl,
    same_list,
    same_rows,
    sections,
    shortener,
    table_with,
)
from tests.plan_contract import check_plan

ACTION_COLUMNS = ("action", "bundle", "broker", "destinationBroker", "reason", "msgRate",
                  "throughput", "skipped", "algorithm", "boundaries", "children", "unload",
                  "detail")


def plans(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The plans of an output: one, or one per cycle with --all-cycles."""
    plans: list[dict[str, Any]] = data.get("cycles", [data])
    return plans


def contract(name: str, data: dict[str, Any]) -> None:
    for i, plan in enumerate(plans(data)):
        try:
            check_plan(plan)
        except AssertionError as e:
            raise AssertionError(f"{name}: plan {i + 1} breaks plan@1: {e}") from e


def action_rows(data: dict[str, Any], many: bool) -> list[dict[str, Any]]:
    """The rows -o csv / -o jsonl must hold: one per action (of every cycle with --all-cycles;
    the cycle number is checked then only, the JSON of one plan does not say it)."""
    rows = []
    for i, plan in enumerate(plans(data), 1):
        for a in plan["actions"]:
            row = {"capturedAt": plan["capturedAt"], **{k: a.get(k) for k in ACTION_COLUMNS}}
            if many:
                row["cycle"] = i
            rows.append(row)
    return rows


def fact_actions(want: dict[str, Any]) -> list[tuple[str, ...]]:
    """Each expected action as (action, bundle, broker, destination, reason)."""
    return [(a["action"], a["bundle"], a["broker"], a.get("to") or "", a["reason"])
            for plan in plans(want) for a in plan["actions"]]


@pytest.mark.parametrize("name", cases("recommend", "json") + cases("recommend", "yaml"))
def test_document(name: str) -> None:
    """-o json and -o yaml: the document's shape and the stored facts."""
    check_document(name, "recommend", contract)


@pytest.mark.parametrize("name", cases("recommend", "csv") + cases("recommend", "jsonl"))
def test_rows(name: str) -> None:
    """-o csv and -o jsonl: the documented columns, one row per action, each equal to its JSON."""
    out, want = ran(name)
    many = "--all-cycles" in CASES[name]
    csv = output_format(CASES[name]) == "csv"
    rows = (read_csv if csv else read_jsonl)(name, out.stdout, "recommend")
    same_rows(name, rows, action_rows(json_of(name), many), from_csv=csv)
    got = [(r["action"], r["bundle"], r["broker"], r["destinationBroker"] or "", r["reason"])
           for r in rows]
    same_list(name, "action rows", got, fact_actions(want))


def check_plan_table(name: str, text: str, want: dict[str, Any], many: bool) -> None:
    """A plan's table view (recommend, propose): per cycle, the decision line, one action row per
    action (kind, bundle, from, to, reason) and each broker's verdict."""
    short = shortener(text)
    parts = sections(text, many)
    expected = plans(want)
    assert len(parts) == len(expected), f"{name}: {len(parts)} cycle section(s)"
    for k, (part, f) in enumerate(zip(parts, expected, strict=True)):
        where = f"{name}: cycle {k + 1}" if many else name
        if "decision" in f:
            m = re.search(r"^Decision: (\S+/\S+) ", part, re.M)
            assert m and m.group(1) == f["decision"], f"{where}: decision line {m and m.group(0)}"
        table = table_with(name, part, "action", "bundle")
        got = [] if table is None else [
            (r["action"], joined(r["bundle"]), r["from"], r["to"], r["reason"])
            for r in table.rows("action")]
        exp = [(a["action"], a["bundle"], short(a["broker"]), short(a.get("to")), a["reason"])
               for a in f["actions"]]
        same_list(where, "action rows", got, exp)
        brokers = table_with(name, part, "broker", "usage", "after")
        assert brokers is not None, f"{where}: no broker table"
        # no decision column when no broker has one
        verdicts = {r["broker"]: r.get("decision") or "-" for r in brokers.rows("broker")}
        exp_verdicts = {short(b): v["verdict"] for b, v in f["brokers"].items()}
        assert verdicts == exp_verdicts, f"{where}: broker verdicts {verdicts}"


@pytest.mark.parametrize("name", cases("recommend", "table"))
def test_table(name: str) -> None:
    out, want = ran(name)
    if out.exit_code:
        return
    check_plan_table(name, out.stdout, want, "--all-cycles" in CASES[name])
