"""Plans: the actions a load manager would take, with their reasons and numbers (plan v1).

A :class:`Plan` is built from one :class:`lbctl.cycle.CycleResult`. Its ``to_dict`` is exactly the
``lbctl/plan@1`` object of ``shared/spec/plan-v1.md``; ``explained=True`` attaches the per-broker
reasoning that ``lbctl explain -o json`` prints.

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

from lbctl.cycle import CycleResult
from lbctl.model.decision import UnloadOutcome

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
    cycle: CycleResult
    actions: tuple[Action, ...]
    brokers: tuple[BrokerRow, ...]

    @property
    def state(self):
        return self.cycle.state

    def summary(self) -> dict[str, Any]:
        before = [b.usage for b in self.brokers]
        after = [b.usage_after for b in self.brokers]
        return {
            "brokers": len(self.brokers),
            "bundles": self.cycle.state.bundle_count(),
            "unloads": sum(1 for a in self.actions if a.action == "unload" and a.skipped is None),
            "splits": sum(1 for a in self.actions if a.action == "split"),
            "skipped": sum(1 for a in self.actions if a.skipped is not None),
            "before": spread(before),
            "after": spread(after),
        }

    def to_dict(self, *, explained: bool = False) -> dict[str, Any]:
        c = self.cycle
        out: dict[str, Any] = {
            "format": PLAN_FORMAT,
            "cluster": c.state.cluster,
            "capturedAt": c.state.captured_at_iso,
            "loadManager": c.state.load_manager,
            "shedding": c.shedding,
            "placement": c.placement,
            "settings": c.settings.read_values(),
            "actions": [a.to_dict() for a in self.actions],
            "brokers": [_broker_dict(b, explained) for b in self.brokers],
            "summary": self.summary(),
        }
        if explained:
            from lbctl.explain import explanation_dict

            out["explanation"] = explanation_dict(c)
        return out


def spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "std": 0.0, "max": 0.0, "min": 0.0}
    return {
        "mean": round(statistics.fmean(values), 6),
        "std": round(statistics.pstdev(values), 6),
        "max": round(max(values), 6),
        "min": round(min(values), 6),
    }


def _num(x: float | None) -> float | None:
    if x is None:
        return None
    if math.isinf(x) or math.isnan(x):
        return None
    return round(x, 6)


def _broker_dict(b: BrokerRow, explained: bool) -> dict[str, Any]:
    d: dict[str, Any] = {
        "broker": b.broker,
        "usage": _num(b.usage),
        "score": _num(b.score),
        "msgRate": _num(b.msg_rate),
        "throughput": _num(b.throughput),
        "bundles": b.bundles,
    }
    if b.label:
        d["label"] = b.label
    if b.reason:
        d["reason"] = b.reason
    if explained:
        d["usageAfter"] = _num(b.usage_after)
        d["resources"] = {k: _num(v) for k, v in b.resources.items()}
        d["why"] = b.why
        d["numbers"] = {k: _num(v) for k, v in b.numbers.items()}
    return d


def _action(o: UnloadOutcome) -> Action:
    s = o.selection
    return Action(
        action="unload",
        bundle=s.bundle,
        broker=s.broker,
        reason=str(s.reason),
        destinationBroker=o.destination,
        msgRate=_num(s.msg_rate),
        throughput=_num(s.throughput),
        skipped=o.skipped,
    )


def build_plan(cycle: CycleResult) -> Plan:
    """The plan of one cycle: its unload actions and a row per broker (before/after)."""
    settings = cycle.settings
    weights = settings.weights4()
    verdicts = cycle.decision.brokers if cycle.decision else {}
    usage: dict[str, float] = {}
    for name, bd in cycle.load.brokers.items():
        usage[name] = bd.local.max_resource_usage_with_weight(*weights)
    after = dict(usage)
    for o in cycle.outcomes:
        if o.skipped is not None or o.destination is None:
            continue
        src = cycle.load.brokers.get(o.selection.broker)
        if src is None:
            continue
        share = _share(src.local, o.selection.bundle) * usage[o.selection.broker]
        after[o.selection.broker] -= share
        after[o.destination] = after.get(o.destination, 0.0) + share
    rows = []
    for name in cycle.state.brokers:  # the snapshot's order, which a person chose
        bd = cycle.load.brokers[name]
        v = verdicts.get(name)
        rows.append(BrokerRow(
            broker=name,
            usage=usage[name],
            usage_after=after[name],
            score=v.score if v else None,
            msg_rate=bd.local.msg_rate,
            throughput=bd.local.throughput,
            bundles=len(bd.local.lastStats) or bd.local.numBundles,
            label=str(v.label) if v and v.label else None,
            reason=str(v.reason) if v and v.reason else None,
            why=v.why if v else "",
            numbers=dict(v.numbers) if v else {},
            resources=bd.local.resource_percents(),
        ))
    splits = tuple(split_action(s) for s in getattr(cycle, "splits", ()))
    return Plan(cycle, tuple(_action(o) for o in cycle.outcomes) + splits, tuple(rows))


def split_action(split: Any) -> Action:
    """A plan action for one automatic split (:class:`lbctl.strategies.split.candidates.AutoSplit`)."""
    from lbctl.model.bundle import format_position

    c = split.candidate
    return Action(
        action="split",
        bundle=c.bundle,
        broker=c.broker,
        reason=str(c.reason),
        msgRate=_num(c.msg_rate),
        throughput=_num(c.throughput),
        skipped=split.skipped,
        algorithm=split.algorithm,
        boundaries=tuple(format_position(b) for b in split.boundaries),
        children=tuple(split.children),
        unload=split.unload,
        detail=c.detail,
    )


def _share(local: Any, bundle: str) -> float:
    stats = local.lastStats
    st = stats.get(bundle)
    if st is None or not stats:
        return 0.0
    total_tp = sum(s.throughput for s in stats.values())
    if total_tp > 0:
        return st.throughput / total_tp
    total_rate = sum(s.msg_rate for s in stats.values())
    if total_rate > 0:
        return st.msg_rate / total_rate
    return 1.0 / len(stats)


def build_extensible_plan(cycle: Any) -> Plan:
    """The plan of an extensible load manager cycle (:mod:`lbctl.extensible.plan`)."""
    from lbctl.extensible.plan import build

    return build(cycle)
