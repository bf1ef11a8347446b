"""Plan v1 from an extensible cycle: ``transfer`` (transfer mode) or ``unload`` (unload mode)
actions, ``split`` actions, and a row per broker.

A broker's ``usage`` and ``score`` are its ``weightedMaxEMA`` (the load TransferShedder compares;
it is already history-smoothed). "Usage after" is our estimate, as for the modular plans: a
broker's load is shared among its bundles in proportion to their throughput (over the broker's
total throughput), and a moved bundle carries its share to the destination (in unload mode: to
the broker the placement preview picks). Brokers without load data show no usage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from lbctl.extensible.cycle import ExtensibleCycleResult
from lbctl.model.bundle import format_position
from lbctl.model.decision import Reason
from lbctl.plan import Action, BrokerRow, Plan, spread


@dataclass(frozen=True, slots=True)
class ExtensiblePlan(Plan):
    """A :class:`~lbctl.plan.Plan` whose summary counts transfers as unloads and skips brokers
    without load data."""

    def summary(self) -> dict[str, Any]:
        c = self.cycle
        before = [b.usage for b in self.brokers if not math.isnan(b.usage)]
        after = [b.usage_after for b in self.brokers if not math.isnan(b.usage_after)]
        return {
            "brokers": len(self.brokers),
            "bundles": len(c.bundle_names()),
            "unloads": sum(1 for a in self.actions if a.action in ("unload", "transfer")),
            "splits": sum(1 for a in self.actions if a.action == "split"),
            "skipped": sum(1 for a in self.actions if a.skipped is not None),
            "before": spread(before),
            "after": spread(after),
        }


def _num(x: float | None) -> float | None:
    if x is None or math.isnan(x) or math.isinf(x):
        return None
    return round(x, 6)


def build(c: ExtensibleCycleResult) -> ExtensiblePlan:
    actions: list[Action] = []
    load = {b: d.weightedMaxEMA for b, d in c.store.items()}
    after = dict(load)
    for a in c.actions:
        u = a.decision.unload
        dest = u.destination or (a.preview.broker if a.preview else None)
        src = c.store.get(u.source)
        if src is not None and a.throughput is not None and src.throughput > 0:
            share = a.throughput / src.throughput * load[u.source]
            after[u.source] -= share
            if dest in after:
                after[dest] += share
        actions.append(Action(
            action="transfer" if u.destination else "unload", bundle=u.bundle, broker=u.source,
            reason=str(a.decision.reason), destinationBroker=u.destination,
            msgRate=_num(a.msg_rate), throughput=_num(a.throughput)))
    for res in c.splits:
        for s in res.decisions:
            st = c.bundle_stats(s.bundle)
            actions.append(Action(
                action="split", bundle=s.bundle, broker=s.broker, reason=str(s.reason),
                msgRate=_num(st.stats.msgRateIn + st.stats.msgRateOut) if st else None,
                throughput=_num(st.throughput) if st else None,
                algorithm=s.algorithm,
                boundaries=(format_position(s.boundary),) if s.boundary is not None else (),
                children=s.children, unload=False))
    rows = [_row(c, b, load, after) for b in c.state.brokers]
    return ExtensiblePlan(c, tuple(actions), tuple(rows))  # type: ignore[arg-type]


def _row(c: ExtensibleCycleResult, broker: str, load: dict[str, float],
         after: dict[str, float]) -> BrokerRow:
    data = c.store.get(broker)
    label = reason = None
    whys = []
    shed = c.shed
    for r in (shed.rounds if shed else ()):
        if r.max_broker == broker:
            whys.append(f"max broker of a round ({r.reason}): {r.why}")
        elif r.min_broker == broker and r.outcome == "offloaded":
            whys.append(f"min broker of a round: receives load from {r.max_broker}")
    moved = [a for a in c.actions if a.decision.unload.source == broker]
    if moved:
        label = "Success"
        reasons = {str(a.decision.reason) for a in moved}
        reason = str(Reason.OVERLOADED) if str(Reason.OVERLOADED) in reasons else reasons.pop()
    if data is None:
        whys.append("no load data")
        nan = math.nan
        return BrokerRow(broker, nan, nan, None, 0.0, 0.0, len(c.top_bundles.get(broker, ())),
                         label, reason, "; ".join(whys))
    numbers = {"weightedMaxEMA": data.weightedMaxEMA, "maxResourceUsage": data.maxResourceUsage,
               "msgThroughputEMA": data.msgThroughputEMA, "updatedAt": float(data.updatedAt)}
    return BrokerRow(
        broker=broker, usage=load[broker], usage_after=after[broker], score=data.weightedMaxEMA,
        msg_rate=data.msg_rate, throughput=data.throughput,
        bundles=data.bundleCount or len(c.top_bundles.get(broker, ())), label=label,
        reason=reason, why="; ".join(whys), numbers=numbers, resources=data.resource_percents())
