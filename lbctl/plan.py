"""Plans: the actions a load manager would take, with their reasons and numbers (plan v1).

The ``lbctl/plan@1`` format is declared in :mod:`lbctl.model.wire.plan` (documented in
``docs/``); :meth:`Plan.to_dict` writes a plan through those records. A plan knows nothing of
cycles: the load managers (:mod:`lbctl.loadmanager`) and ``split-bundle``'s preview build one;
``explained=True`` adds the per-broker detail ``lbctl explain -o json`` shows next to the
explanation.

Usage "after" the plan is an estimate, stated here because it is ours, not Pulsar's: a broker's
usage is taken as shared among its bundles in proportion to their throughput (message rate when
the broker has no throughput; equal shares when it has neither), and a moved bundle carries its
share, unchanged, to the destination.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET, Struct, field

from lbctl.config import Settings
from lbctl.model.decision import CycleDecision
from lbctl.model.wire import plan as wire
from lbctl.model.wire.plan import PLAN_FORMAT as PLAN_FORMAT
from lbctl.model.wire.plan import PlanWarning as PlanWarning
from lbctl.units import rounded


class Action(Struct, frozen=True):
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
        out: dict[str, Any] = msgspec.to_builtins(self.to_wire())
        return out

    def to_wire(self) -> wire.UnloadAction | wire.TransferAction | wire.SplitAction:
        """The action as plan@1 writes it (a split, or a move: unload or transfer)."""
        skipped = UNSET if self.skipped is None else self.skipped
        if self.action == "split":
            return wire.SplitAction(
                bundle=self.bundle, broker=self.broker, reason=self.reason, detail=self.detail,
                algorithm=self.algorithm, boundaries=list(self.boundaries or ()),
                children=list(self.children or ()), unload=bool(self.unload),
                msgRate=self.msgRate, throughput=self.throughput, skipped=skipped)
        kind = wire.TransferAction if self.action == "transfer" else wire.UnloadAction
        return kind(bundle=self.bundle, broker=self.broker,
                    destinationBroker=self.destinationBroker, reason=self.reason,
                    msgRate=self.msgRate, throughput=self.throughput, skipped=skipped)


class BrokerRow(Struct, frozen=True):
    """One broker of a plan. ``why`` is its reason in words, or how to word it: a load manager
    defers the words, which only an explained plan shows (:meth:`why_text`)."""

    broker: str
    usage: float
    usage_after: float
    score: float | None
    msg_rate: float
    throughput: float
    bundles: int
    label: str | None = None
    reason: str | None = None
    why: str | Callable[[], str] = ""
    numbers: Mapping[str, float] = field(default_factory=dict)
    resources: Mapping[str, float] = field(default_factory=dict)

    def why_text(self) -> str:
        return self.why if isinstance(self.why, str) else self.why()


class Plan(Struct, frozen=True):
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

    def sanity_warnings(self) -> list[PlanWarning]:
        """Sanity checks on the plan (:func:`plan_warnings`): Pulsar's decision is kept, but a
        person should know when it looks wrong."""
        return plan_warnings(self)

    def all_warnings(self) -> list[PlanWarning]:
        """Everything a reader must know: the sanity checks, the load manager's notes (a strategy
        this release lacks, no history, …), and one per figure JSON cannot carry (shown as
        ``null``)."""
        out = self.sanity_warnings()
        out += [PlanWarning("note", w) for w in self.warnings]
        for b in self.brokers:
            for name, x in (("usage", b.usage), ("score", b.score)):
                if x is not None and math.isinf(x):
                    out.append(PlanWarning(
                        "non-finite", f"{b.broker}: {name} is {'+' if x > 0 else '-'}infinity "
                        "(a resource usage beyond float range, or a limit that rounds to 0 in "
                        "float); JSON shows null", (b.broker,)))
                elif x is not None and math.isnan(x) and name == "usage" and b.resources:
                    out.append(PlanWarning(
                        "non-finite", f"{b.broker}: usage is NaN (a usage and limit of 0 in "
                        "float); JSON shows null", (b.broker,)))
        return out

    def to_dict(self, *, explained: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self.to_wire(explained=explained))
        return out

    def to_wire(self, *, explained: bool = False) -> wire.PlanDocument:
        """The plan@1 document (the keys after ``summary`` are the later additions)."""
        return wire.PlanDocument(
            format=PLAN_FORMAT,
            cluster=self.cluster,
            capturedAt=self.captured_at,
            loadManager=self.load_manager,
            shedding=self.shedding,
            placement=self.placement,
            settings=self.settings.read_values(),
            actions=[a.to_wire() for a in self.actions],
            brokers=[_broker_row(b, explained) for b in self.brokers],
            summary=msgspec.convert(self.summary(), wire.Summary),
            decision=UNSET if self.decision is None else self.decision.to_dict(),
            history=dict(self.history) if self.history else UNSET,
            pulsarVersion=self.settings.profile.to_dict(),
            warnings=self.all_warnings(),
        )


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


def _broker_row(b: BrokerRow, explained: bool) -> wire.BrokerRow:
    row = wire.BrokerRow(broker=b.broker, usage=rounded(b.usage), score=rounded(b.score),
                         msgRate=rounded(b.msg_rate), throughput=rounded(b.throughput),
                         bundles=b.bundles, label=b.label or UNSET, reason=b.reason or UNSET)
    if not explained:
        return row
    return msgspec.structs.replace(
        row, usageAfter=rounded(b.usage_after),
        resources={k: rounded(v) for k, v in b.resources.items()}, why=b.why_text(),
        numbers={k: rounded(v) for k, v in b.numbers.items()})


# --------------------------------------------------------------------------------------------
# sanity warnings
# --------------------------------------------------------------------------------------------
OVERLOAD_KEY = "loadBalancerBrokerOverloadedThresholdPercentage"
MIN_CONCENTRATED = 3  # fewer moves to one broker are never called concentrated


def _few(names: list[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def plan_warnings(plan: Plan) -> list[PlanWarning]:
    """What looks wrong in a plan, each kind in one line. Pulsar would do exactly this; these say
    where its rules produce something an operator should look at twice:

    * ``destination-shed`` — a move goes to a broker that the same plan sheds (the modular
      placement does not know what the shedder chose);
    * ``over-threshold`` — a destination's estimated usage after the plan is at or above
      ``loadBalancerBrokerOverloadedThresholdPercentage``, or above 100 % (the estimate is
      lbctl's own, see the module docstring);
    * ``concentrated`` — more than max(3, twice an even share) of the moves go to one broker;
    * ``split-and-unload`` — one bundle is both split and unloaded in the same plan.
    """
    moves = [a for a in plan.actions
             if a.action in ("unload", "transfer") and a.skipped is None]
    out: list[PlanWarning] = []
    sources = {a.broker for a in moves}
    to_shed = [a for a in moves if a.destinationBroker in sources]
    if to_shed:
        dests = sorted({a.destinationBroker or "" for a in to_shed})
        out.append(PlanWarning(
            "destination-shed",
            f"{len(to_shed):,} of {len(moves):,} moves go to a broker that is itself being shed "
            f"({_few(dests)})", tuple(dests), tuple(a.bundle for a in to_shed)))
    received: dict[str, int] = {}
    for a in moves:
        if a.destinationBroker:
            received[a.destinationBroker] = received.get(a.destinationBroker, 0) + 1
    threshold = float(plan.settings.peek(OVERLOAD_KEY)) / 100 if OVERLOAD_KEY in plan.settings \
        else 0.85
    after = {b.broker: b.usage_after for b in plan.brokers if not math.isnan(b.usage_after)}
    hot = sorted((b for b in received if after.get(b, 0.0) >= threshold),
                 key=lambda b: -after[b])
    if hot:
        worst = after[hot[0]]
        over100 = " (above 100 %)" if worst > 1.0 else ""
        out.append(PlanWarning(
            "over-threshold",
            f"estimated usage after the plan reaches {worst * 100:,.1f}% on {hot[0]}{over100}; "
            f"{len(hot):,} destination(s) end at or above the overload threshold "
            f"{threshold * 100:g}% ({OVERLOAD_KEY})", tuple(hot)))
    if received:
        idle = max(1, len(plan.brokers) - len(sources))
        limit = max(MIN_CONCENTRATED, 2 * len(moves) / idle)
        heavy = sorted((b for b, n in received.items() if n > limit), key=lambda b: -received[b])
        if heavy:
            b = heavy[0]
            out.append(PlanWarning(
                "concentrated",
                f"{received[b]:,} of {len(moves):,} moves go to {b}"
                + (f" ({len(heavy) - 1} other broker(s) get more than {limit:g} too)"
                   if len(heavy) > 1 else ""), tuple(heavy)))
    split = {a.bundle for a in plan.actions if a.action == "split"}
    both = sorted(split & {a.bundle for a in moves})
    if both:
        out.append(PlanWarning("split-and-unload",
                               f"{len(both)} bundle(s) are both split and unloaded: {_few(both)}",
                               bundles=tuple(both)))
    return out
