"""Plans: the actions a load manager would take, with their reasons and numbers (plan v1).

This module is the sole owner of the ``lbctl/plan@1`` format: :meth:`Plan.to_dict` is exactly its
object (documented in ``docs/``). A plan knows nothing of cycles: the load managers
(:mod:`lbctl.loadmanager`) and ``split-bundle``'s preview build one; ``explained=True`` adds the
per-broker detail ``lbctl explain -o json`` shows next to the explanation.

Usage "after" the plan is an estimate, stated here because it is ours, not Pulsar's: a broker's
usage is taken as shared among its bundles in proportion to their throughput (message rate when
the broker has no throughput; equal shares when it has neither), and a moved bundle carries its
share, unchanged, to the destination.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lbctl.config import Settings
from lbctl.model.decision import CycleDecision
from lbctl.units import rounded

PLAN_FORMAT = "lbctl/plan@1"


@dataclass(frozen=True, slots=True)
class Action:
    """One row of a plan: unload (or transfer, split) of a bundle, with reason and numbers."""

    action: str
    bundle: str
    broker: str
    reason: str
    destinationBroker: str | None = None
    msgRate: float | None = None
    throughput: float | None = None
    skipped: str | None = None
    # split actions only (plan v1): the algorithm, boundaries ("0x%08x", ascending), the children's
    # full names, whether they are unloaded after the split, and the figure that fired the reason
    algorithm: str | None = None
    boundaries: tuple[str, ...] | None = None
    children: tuple[str, ...] | None = None
    unload: bool | None = None
    detail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.action == "split":
            return self._split_dict()
        d: dict[str, Any] = {
            "action": self.action,
            "bundle": self.bundle,
            "broker": self.broker,
            "destinationBroker": self.destinationBroker,
            "reason": self.reason,
            "msgRate": self.msgRate,
            "throughput": self.throughput,
        }
        if self.skipped is not None:
            d["skipped"] = self.skipped
        return d

    def _split_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "action": self.action,
            "bundle": self.bundle,
            "broker": self.broker,
            "reason": self.reason,
            "detail": self.detail,
            "algorithm": self.algorithm,
            "boundaries": list(self.boundaries or ()),
            "children": list(self.children or ()),
            "unload": bool(self.unload),
            "msgRate": self.msgRate,
            "throughput": self.throughput,
        }
        if self.skipped is not None:
            d["skipped"] = self.skipped
        return d


@dataclass(frozen=True, slots=True)
class BrokerRow:
    broker: str
    usage: float
    usage_after: float
    score: float | None
    msg_rate: float
    throughput: float
    bundles: int
    label: str | None = None
    reason: str | None = None
    why: str = ""
    numbers: Mapping[str, float] = field(default_factory=dict)
    resources: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Plan:
    """One cycle's actions and a row per broker, with the header plan@1 carries.

    ``settings`` is read at :meth:`to_dict` time: the plan lists every setting the computation
    read, including those read while its rows were built. ``gate`` says why no shedding ran;
    ``decision`` is the cycle's outcome in one line (label, reason, detail); ``history`` says how
    the leader's clock moved before the cycle (:mod:`lbctl.loadmanager.clock`); ``warnings`` are
    what a reader must know (a strategy this release lacks, a figure JSON cannot hold, no history).
    """

    cluster: str
    captured_at: str  # RFC 3339
    load_manager: str
    shedding: str
    placement: str
    settings: Settings
    actions: tuple[Action, ...]
    brokers: tuple[BrokerRow, ...]
    bundles: int
    gate: str | None = None
    decision: CycleDecision | None = None
    history: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        """Counts, and the usage spread before and after (brokers without a finite figure — no
        load data, or an infinite or NaN usage — are left out and counted apart)."""
        before = [b.usage for b in self.brokers if math.isfinite(b.usage)]
        after = [b.usage_after for b in self.brokers if math.isfinite(b.usage_after)]
        return {
            "brokers": len(self.brokers),
            "bundles": self.bundles,
            "unloads": sum(1 for a in self.actions
                           if a.action in ("unload", "transfer") and a.skipped is None),
            "splits": sum(1 for a in self.actions if a.action == "split"),
            "skipped": sum(1 for a in self.actions if a.skipped is not None),
            "before": spread(before),
            "after": spread(after),
        }

    def all_warnings(self) -> list[str]:
        """The plan's warnings, then one per figure JSON cannot carry (shown as ``null``)."""
        out = list(self.warnings)
        for b in self.brokers:
            for name, x in (("usage", b.usage), ("score", b.score)):
                if x is not None and math.isinf(x):
                    out.append(f"{b.broker}: {name} is {'+' if x > 0 else '-'}infinity "
                               "(a resource usage beyond float range, or a limit that rounds to "
                               "0 in float); JSON shows null")
                elif x is not None and math.isnan(x) and name == "usage" and b.resources:
                    out.append(f"{b.broker}: usage is NaN (a usage and limit of 0 in float); "
                               "JSON shows null")
        return out

    def to_dict(self, *, explained: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "format": PLAN_FORMAT,
            "cluster": self.cluster,
            "capturedAt": self.captured_at,
            "loadManager": self.load_manager,
            "shedding": self.shedding,
            "placement": self.placement,
            "settings": self.settings.read_values(),
            "actions": [a.to_dict() for a in self.actions],
            "brokers": [_broker_dict(b, explained) for b in self.brokers],
            "summary": self.summary(),
        }
        # additions to plan@1 (docs/plan-format.md), after the original keys
        if self.decision is not None:
            d["decision"] = self.decision.to_dict()
        if self.history:
            d["history"] = dict(self.history)
        d["pulsarVersion"] = self.settings.profile.to_dict()
        d["warnings"] = self.all_warnings()
        return d


def spread(values: list[float]) -> dict[str, float]:
    """Mean, population std, max and min of finite figures (``statistics`` would raise on an
    infinite one: the callers leave those out)."""
    values = [v for v in values if math.isfinite(v)]
    if not values:
        return {"mean": 0.0, "std": 0.0, "max": 0.0, "min": 0.0}
    try:
        mean = math.fsum(values) / len(values)
        std = statistics.pstdev(values)
    except (OverflowError, ValueError):  # finite figures so huge that their sums overflow
        mean = std = math.inf
    return {
        "mean": rounded(mean) or 0.0,
        "std": rounded(std) or 0.0,
        "max": rounded(max(values)) or 0.0,
        "min": rounded(min(values)) or 0.0,
    }


def _broker_dict(b: BrokerRow, explained: bool) -> dict[str, Any]:
    d: dict[str, Any] = {
        "broker": b.broker,
        "usage": rounded(b.usage),
        "score": rounded(b.score),
        "msgRate": rounded(b.msg_rate),
        "throughput": rounded(b.throughput),
        "bundles": b.bundles,
    }
    if b.label:
        d["label"] = b.label
    if b.reason:
        d["reason"] = b.reason
    if explained:
        d["usageAfter"] = rounded(b.usage_after)
        d["resources"] = {k: rounded(v) for k, v in b.resources.items()}
        d["why"] = b.why
        d["numbers"] = {k: rounded(v) for k, v in b.numbers.items()}
    return d
