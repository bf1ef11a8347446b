"""The behaviour an output records, as plain data: what the CLI output tests compare.

``facts(command, data)`` reads a command's JSON output and keeps the decisions, not the words:
the cycle's decision (label/reason), each action's bundle, source broker, destination and reason,
the split decisions, each broker's verdict and score, the simulator's moves and spread, compare's
per-strategy figures, the planner's moves and goals. Sentences (``why``, ``detail``, notes) are left
out, so rewording an explanation does not touch them; a changed decision does, and
:func:`first_difference` names the field.

The expected facts of every case that has no golden file are stored in
``tests/data/outputs/<command>.json``, written from today's outputs by
``python -m tests.make_output_facts``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli_cases import ROOT

FACTS_DIR = ROOT / "tests" / "data" / "outputs"


def _verdict(row: dict[str, Any]) -> str:
    """A broker row's decision, ``Label/Reason``, or ``-`` when the strategy gave it none."""
    return f"{row['label']}/{row['reason']}" if row.get("label") else "-"


def _action(a: dict[str, Any]) -> dict[str, Any]:
    out = {"action": a["action"], "bundle": a["bundle"], "broker": a["broker"],
           "reason": a["reason"]}
    if a["action"] == "split":
        out |= {"algorithm": a["algorithm"], "boundaries": a["boundaries"],
                "children": a["children"], "unload": a["unload"]}
    else:
        out["to"] = a["destinationBroker"]
    if "skipped" in a:
        out["skipped"] = True
    return out


def _broker(b: dict[str, Any]) -> dict[str, Any]:
    out = {"verdict": _verdict(b), "score": b["score"]}
    if "usageAfter" in b:
        out["after"] = b["usageAfter"]
    return out


def plan_facts(p: dict[str, Any]) -> dict[str, Any]:
    """One plan@1 (recommend, explain, propose, split-bundle)."""
    f: dict[str, Any] = {"loadManager": p["loadManager"],
                         "strategy": f"{p['shedding']} + {p['placement']}"}
    if "decision" in p:
        f["decision"] = f"{p['decision']['label']}/{p['decision']['reason']}"
    if "history" in p:
        f["history"] = p["history"]
    if "pulsarVersion" in p:
        f["pulsar"] = f"{p['pulsarVersion']['version']} ({p['pulsarVersion']['origin']})"
    f["actions"] = [_action(a) for a in p["actions"]]
    f["brokers"] = {b["broker"]: _broker(b) for b in p["brokers"]}
    s = p["summary"]
    f["summary"] = {k: s[k] for k in ("bundles", "unloads", "splits", "skipped", "after")}
    f["warnings"] = [f"{w['code']}: {' '.join(w['brokers'] + w['bundles'])}"
                     for w in p.get("warnings", [])]
    e = p.get("explanation")
    if e is not None and "candidates" in e:  # the modular shedders: what each looked at
        f["numbers"] = e["numbers"]
        f["candidates"] = [[c["bundle"], c["chosen"]] for c in e["candidates"]]
    if e is not None and "shedding" in e:  # the extensible load manager's TransferShedder
        sh = e["shedding"]
        f["shedding"] = {k: sh.get(k) for k in ("outcome", "stdAfter", "hitCount")}
    if e is not None and "planner" in e:  # lbctl's planner
        f["goals"] = {g["goal"]: g["status"] for g in e["goals"]}
        f["balancedness"] = e["balancedness"]
        f["cost"] = {k: e["cost"][k] for k in ("moves", "topics", "connections")}
    if "preview" in p:
        v = p["preview"]
        f["preview"] = {"selectedBy": v["selectedBy"], "algorithm": v["algorithm"],
                        "algorithmFrom": v["algorithmFrom"], "boundaries": v["boundaries"],
                        "namespaceBundles": v["namespaceBundles"],
                        "children": [f"{c['bundle']} on {c['broker']}"
                                     + (" unloaded" if c["unloaded"] else "")
                                     for c in v["children"]]}
    return f


def _plans(data: dict[str, Any]) -> dict[str, Any]:
    if "cycles" in data:  # --all-cycles
        return {"cycles": [plan_facts(p) for p in data["cycles"]]}
    return plan_facts(data)


def _monitor(data: dict[str, Any]) -> dict[str, Any]:
    def row(b: dict[str, Any]) -> dict[str, Any]:
        return {k: b[k] for k in ("state", "view", "weightedMax", "overloaded", "bundles",
                                  "topics")}
    return {"cluster": data["cluster"], "at": data["at"],
            "brokers": {b["broker"]: row(b) for b in data["brokers"]},
            "total": row(data["total"])}


def _move(m: dict[str, Any]) -> str:
    return f"{m['bundle']}: {m['from']} -> {m['to']} ({m['reason']})"


def _simulate(data: dict[str, Any]) -> dict[str, Any]:
    return {"strategy": f"{data['shedding']} + {data['placement']}",
            "summary": data["summary"],
            "cycles": [{"unloads": c["unloads"], "skipped": c["skipped"],
                        "moves": [_move(m) for m in c["moves"]]} for c in data["cycles"]],
            "final": data["final"]["brokers"]}


def _compare(data: dict[str, Any]) -> dict[str, Any]:
    return {"cycles": data["cycles"],
            "runs": [{"strategy": f"{r['shedding']} + {r['placement']}",
                      "summary": r["summary"], "unloads": r["unloads"]} for r in data["runs"]]}


def facts(command: str, data: Any) -> dict[str, Any]:
    """The behaviour ``command``'s JSON output ``data`` records."""
    if command in ("recommend", "explain", "propose", "split-bundle"):
        return _plans(data)
    if command == "monitor-brokers":
        return _monitor(data)
    if command == "simulate":
        return _simulate(data)
    if command == "compare":
        return _compare(data)
    if command == "snapshot-validate":
        return {"snapshots": data}
    raise ValueError(f"no facts for {command}")


def first_difference(want: Any, got: Any, path: str = "") -> str | None:
    """Where ``got`` first departs from ``want``, as ``path: expected …, got …``; None if equal."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in want:
            if k not in got:
                return f"{path}.{k}: missing (expected {want[k]!r})"
            d = first_difference(want[k], got[k], f"{path}.{k}")
            if d:
                return d
        extra = [k for k in got if k not in want]
        return f"{path}: unexpected {extra}" if extra else None
    if isinstance(want, list) and isinstance(got, list):
        for i, (w, g) in enumerate(zip(want, got, strict=False)):
            d = first_difference(w, g, f"{path}[{i}]")
            if d:
                return d
        if len(want) != len(got):
            return f"{path}: {len(got)} item(s), expected {len(want)}"
        return None
    if want != got or type(want) is not type(got):
        return f"{path or '.'}: expected {want!r}, got {got!r}"
    return None


def expected(command: str) -> dict[str, Any]:
    """The stored facts of ``command``'s scenarios, by scenario name."""
    stored: dict[str, Any] = json.loads(facts_path(command).read_text())
    return stored


def facts_path(command: str) -> Path:
    """Where ``command``'s expected facts are stored (read here, written by make_output_facts)."""
    return FACTS_DIR / f"{command}.json"
