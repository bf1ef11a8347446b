"""The plan@1 contract as a checker: every plan lbctl writes must pass it.

Keys in order, types, names that resolve (bundles, brokers, settings, reasons, split algorithms),
figures that are finite, and a summary that counts what the actions say.
"""

from __future__ import annotations

import math
import re
from typing import Any

from lbctl.config import SETTINGS_BY_NAME
from lbctl.model.bundle import BundleName
from lbctl.model.decision import Label, Reason
from lbctl.strategies.builtin import SPLIT

KEYS = ["format", "cluster", "capturedAt", "loadManager", "shedding", "placement", "settings",
        "actions", "brokers", "summary"]
OPTIONAL = ["decision", "history", "pulsarVersion", "warnings", "explanation", "preview"]
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z")
_HEX = re.compile(r"0x[0-9a-f]{8}")
REASONS = {str(r) for r in Reason}
LABELS = {str(lb) for lb in Label}


def _figure(x: Any, where: str) -> None:
    assert x is None or (isinstance(x, int | float) and not isinstance(x, bool)
                         and math.isfinite(x)), f"{where}: {x!r} is not a finite number or null"


def check_plan(plan: dict[str, Any]) -> None:
    """Raise AssertionError naming the first part of ``plan`` that breaks plan@1."""
    keys = list(plan)
    assert keys[:len(KEYS)] == KEYS, f"keys {keys}"
    assert set(keys[len(KEYS):]) <= set(OPTIONAL), f"unknown keys {keys[len(KEYS):]}"
    assert plan["format"] == "lbctl/plan@1"
    assert isinstance(plan["cluster"], str) and plan["cluster"]
    assert _TIME.fullmatch(plan["capturedAt"]), plan["capturedAt"]
    assert plan["loadManager"] in ("modular", "extensible", "simple")
    assert isinstance(plan["shedding"], str) and isinstance(plan["placement"], str)
    assert isinstance(plan["settings"], dict)
    assert set(plan["settings"]) <= set(SETTINGS_BY_NAME), set(plan["settings"]) - set(SETTINGS_BY_NAME)

    brokers = plan["brokers"]
    names = [b["broker"] for b in brokers]
    assert len(names) == len(set(names)), "a broker listed twice"
    for b in brokers:
        where = f"brokers[{b['broker']}]"
        assert list(b)[:6] == ["broker", "usage", "score", "msgRate", "throughput", "bundles"], where
        for k in ("usage", "score", "msgRate", "throughput"):
            _figure(b[k], f"{where}.{k}")
        assert isinstance(b["bundles"], int) and b["bundles"] >= 0, where
        assert b.get("label") in (None, *LABELS), where
        assert b.get("reason") in (None, *REASONS), where

    for i, a in enumerate(plan["actions"]):
        where = f"actions[{i}]"
        assert a["action"] in ("unload", "transfer", "split"), where
        BundleName.parse(a["bundle"])
        assert a["broker"] in names or a["action"] == "split" and a["broker"] == "", where
        assert a["reason"] in REASONS, f"{where}: reason {a['reason']!r}"
        _figure(a["msgRate"], f"{where}.msgRate")
        _figure(a["throughput"], f"{where}.throughput")
        assert a.get("skipped") is None or isinstance(a["skipped"], str), where
        if a["action"] == "split":
            assert a["algorithm"] in SPLIT.names(), where
            rng = BundleName.parse(a["bundle"]).range
            bounds = [int(x, 16) for x in a["boundaries"]]
            assert all(_HEX.fullmatch(x) for x in a["boundaries"]), where
            assert bounds == sorted(bounds) and all(rng.lower < x < rng.upper for x in bounds), where
            if a.get("skipped") is None:
                assert len(a["children"]) == len(bounds) + 1, where
            for c in a["children"]:
                BundleName.parse(c)
            assert isinstance(a["unload"], bool), where
        else:
            dest = a["destinationBroker"]
            assert dest is None or dest in names, f"{where}: destination {dest!r}"
            if a.get("skipped") is None and a["action"] == "transfer":
                assert dest is not None and dest != a["broker"], where
            if a.get("skipped") is None and dest is not None:
                assert dest != a["broker"], f"{where}: moved to its own owner"

    if "decision" in plan:
        dec = plan["decision"]
        assert list(dec) == ["label", "reason", "detail"], dec
        assert dec["label"] in LABELS and dec["reason"] in REASONS, dec
        assert isinstance(dec["detail"], str) and dec["detail"], dec
        moved = any(a["action"] in ("unload", "transfer") and "skipped" not in a
                    for a in plan["actions"])
        assert (dec["label"] == "Success") == moved, f"decision {dec} vs actions"
    if "warnings" in plan:
        for w in plan["warnings"]:
            assert set(w) == {"code", "message", "brokers", "bundles"}, w
            assert isinstance(w["code"], str) and isinstance(w["message"], str) and w["message"]

    s = plan["summary"]
    assert s["brokers"] == len(brokers)
    assert s["unloads"] == sum(1 for a in plan["actions"]
                               if a["action"] in ("unload", "transfer") and "skipped" not in a)
    assert s["splits"] == sum(1 for a in plan["actions"] if a["action"] == "split")
    assert s["skipped"] == sum(1 for a in plan["actions"] if "skipped" in a)
    for side in ("before", "after"):
        assert set(s[side]) == {"mean", "std", "max", "min"}
        for k, v in s[side].items():
            _figure(v, f"summary.{side}.{k}")
