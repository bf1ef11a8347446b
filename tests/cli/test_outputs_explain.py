"""``lbctl explain``'s outputs, case by case (the cases no golden file pins).

Each case runs once; its test checks how it ended, the plan@1 contract, the decisions against the
stored facts (``tests/data/outputs/explain.json``: recommend's facts plus the candidates the
shedder looked at, its figures, the extensible shedder's outcome), and that its format carries
them: YAML equal to JSON, CSV/JSONL one row per broker equal to the JSON broker rows, the table's
decision line, each move and each broker's verdict.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.cli.test_outputs_recommend import contract, plans
from tests.cli_cases import CASES, output_format
from tests.output_checks import (
    cases,
    check_document,
    flat,
    json_of,
    ran,
    read_csv,
    read_jsonl,
    same_list,
    same_rows,
    sections,
    shortener,
)

RESOURCES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")


@pytest.mark.parametrize("name", cases("explain", "json") + cases("explain", "yaml"))
def test_document(name: str) -> None:
    """-o json and -o yaml: the document's shape and the stored facts."""
    check_document(name, "explain", contract)


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else percent / 100


def broker_rows(data: dict[str, Any], many: bool) -> list[dict[str, Any]]:
    """The rows -o csv / -o jsonl must hold: one per broker (of every cycle with --all-cycles);
    resources as fractions."""
    rows = []
    for i, plan in enumerate(plans(data), 1):
        for b in plan["brokers"]:
            row = {"capturedAt": plan["capturedAt"], "broker": b["broker"], "usage": b["usage"],
                   "score": b["score"], "usageAfter": b["usageAfter"], "label": b.get("label"),
                   "reason": b.get("reason"), "why": b["why"],
                   **{r: _fraction(b["resources"].get(r)) for r in RESOURCES}}
            if many:
                row["cycle"] = i
            rows.append(row)
    return rows


@pytest.mark.parametrize("name", cases("explain", "csv") + cases("explain", "jsonl"))
def test_rows(name: str) -> None:
    """-o csv and -o jsonl: the documented columns, one row per broker, each equal to its JSON."""
    out, want = ran(name)
    many = "--all-cycles" in CASES[name]
    csv = output_format(CASES[name]) == "csv"
    rows = (read_csv if csv else read_jsonl)(name, out.stdout, "explain")
    same_rows(name, rows, broker_rows(json_of(name), many), from_csv=csv)
    got = [(r["broker"], f"{r['label']}/{r['reason']}" if r["label"] else "-") for r in rows]
    exp = [(b, v["verdict"]) for plan in plans(want) for b, v in plan["brokers"].items()]
    same_list(name, "broker verdicts", got, exp)


def stated_verdicts(text: str) -> dict[str, str]:
    """The verdicts a modular explanation states: ``-> Label/Reason`` under a broker's line."""
    found: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        if m := re.match(r"  (\S+): (?:usage|load) ", line):
            current = m.group(1)
        elif (m := re.match(r"\s+-> (\w+/\w+)", line)) and current:
            found[current] = m.group(1)
            current = None
        elif not line.startswith(" "):
            current = None
    return found


def check_explain_table(name: str, text: str, want: dict[str, Any], many: bool,
                        bundle: str | None) -> None:
    """Per cycle: the decision line; each move as ``bundle: from -> to`` (the one bundle's only,
    with --bundle); each verdict stated under a broker (``-> Label/Reason``, modular)."""
    short = shortener(text)
    parts = sections(text, many)
    expected = plans(want)
    assert len(parts) == len(expected), f"{name}: {len(parts)} cycle section(s)"
    for k, (part, f) in enumerate(zip(parts, expected, strict=True)):
        where = f"{name}: cycle {k + 1}" if many else name
        m = re.search(r"^Decision: (\S+/\S+)", part, re.M)
        assert m and m.group(1) == f["decision"], f"{where}: decision line {m and m.group(0)}"
        words = flat(part)
        for a in f["actions"]:
            if a["action"] == "split":  # today's explanation does not walk through splits
                continue
            if bundle is not None and a["bundle"] != bundle:  # --bundle: that bundle only
                continue
            move = f"{a['bundle']}: {short(a['broker'])} -> {short(a['to'])}"
            assert move in words, f"{where}: move {move!r} not shown"
        if not f["strategy"].startswith("TransferShedder"):  # it states its rounds instead
            stated = stated_verdicts(part)
            exp = {short(b): v["verdict"] for b, v in f["brokers"].items() if v["verdict"] != "-"}
            assert stated == exp, f"{where}: verdicts stated {stated}, expected {exp}"


@pytest.mark.parametrize("name", cases("explain", "table"))
def test_table(name: str) -> None:
    out, want = ran(name)
    if out.exit_code:
        return
    args = CASES[name]
    bundle = args[args.index("--bundle") + 1] if "--bundle" in args else None
    check_explain_table(name, out.stdout, want, "--all-cycles" in args, bundle)
