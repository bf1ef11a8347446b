"""``UniformLoadShedder``: move load from the busiest broker when brokers differ too much.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.UniformLoadShedder`` (master, after PR #21906,
which removed the old ``+1000`` slack; no ``> 0`` traffic filter, which only an unmerged fork had).

Rules:

1. For every broker (``load.brokers`` order) take its report's message rate (``msgRateIn +
   msgRateOut``) and throughput (``msgThroughputIn + msgThroughputOut``). The maxima start at -1
   and the minima at ``Integer.MAX_VALUE``; a value replaces the current extreme only if strictly
   greater (smaller), so the *first* broker met wins a tie.
2. A minimum within ±1e-6 of zero is taken as 1.0.
3. The rate is uneven if ``loadBalancerMsgRateDifferenceShedderThreshold > 0`` and
   ``(max - min) * 100 / min`` exceeds it; the throughput is uneven if
   ``loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold > 0`` and ``max / min``
   exceeds it (a ratio, not a percentage). If neither, nothing happens.
4. Budgets are Java ``int``s: ``(int) ((max - min) * maxUnloadPercentage)`` for the rate and for
   the throughput — truncated toward zero, saturated at ±2^31-1.
5. The rate criterion has priority: if the rate is uneven only the busiest-by-rate broker is
   considered, with the rate budget and ``minUnloadMessage``; otherwise the busiest-by-throughput
   broker, with the throughput budget and ``minUnloadMessageThroughput``. There is no fallback from
   the rate branch to the throughput branch when the rate branch selects nothing.
6. That broker must own more than one bundle and the budget must be ``>= `` the minimum.
7. Its bundles in the shedding map that were not recently unloaded are valued by short-term rate
   (or throughput), sorted largest first (stable: ties keep the shedding map's Java order), and a
   bundle is selected when its value is ``<=`` the remaining budget; the budget then drops by the
   value truncated to ``int`` (``MutableInt.add(Number)``), with Java's 32-bit wrap-around.
   Zero-traffic bundles always fit. Larger bundles are skipped, smaller ones may still fit.
8. With ``maxUnloadBundleNumPerShedding != -1``, bundles after that many selections are skipped.

The strategy keeps no state between cycles (memory is ``None``).
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Literal

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.decision import (
    BrokerVerdict,
    BundleCandidate,
    Label,
    Note,
    Reason,
    Selection,
    SheddingDecision,
    Why,
)
from lbctl.model.javaint import INT_MAX, d2i, int_add
from lbctl.model.load import BundleData
from lbctl.model.loaddata import LoadData
from lbctl.records import replace
from lbctl.strategies.registry import SHEDDING
from lbctl.strategies.shedding._select import (
    RECENTLY,
    descending,
    shedding_candidates,
    short_term_rate,
    short_term_throughput,
    unranked_candidates,
)

#: UniformLoadShedder.EPS
EPS = 1e-6


#: UniformLoadShedder's situations: a broker's verdict (its ``rate`` and ``throughput``, the
#: criterion ``by_rate``) or a cluster-level note.
Uniform = Literal[
    "balanced",
    "lowest",
    "not-highest",  # broker: the one shed
    "few-bundles",  # count
    "budget-low",  # budget, minimum
    "shed",  # count (selected), budget
    "none-fits",  # budget
    "note-no-brokers",
    "note-rates",  # broker/high, other/low, figure, threshold, exceeded
    "note-throughputs",  # the same for throughput
    "note-zero-min",
    "note-uniform",
    "note-uneven",  # by_rate, broker, high, low, max_pct, budget, also
    "note-no-source",
    "note-few-bundles",  # broker, count
    "note-budget-low",  # budget, minimum
    "note-shed",  # count, broker
    "note-none-fits",  # broker, budget
]


class UniformWhy(Why, frozen=True):
    """A reason of :data:`Uniform`. ``threshold``, ``max_pct`` and ``minimum`` are settings as
    configured; ``also``: the throughput criterion was exceeded too (and not looked at)."""

    code: Uniform
    by_rate: bool = True
    rate: float = 0.0
    throughput: float = 0.0
    broker: str | None = None
    other: str | None = None
    high: float = 0.0
    low: float = 0.0
    figure: float = 0.0
    threshold: float = 0.0
    exceeded: bool = False
    max_pct: float = 0.0
    budget: int = 0
    minimum: float = 0.0
    count: int = 0
    also: bool = False


#: What the budget loop did with one bundle.
UniformPick = Literal[
    "limit",  # maxUnloadBundleNumPerShedding reached (limit)
    "fits",  # remaining, left
    "too-large",  # value, remaining
]


class UniformPickWhy(Why, frozen=True):
    code: UniformPick
    by_rate: bool = True
    value: float = 0.0
    remaining: int = 0
    left: int = 0
    limit: int = 0


class _Extremes(Struct, frozen=True):
    """Rule 1: the brokers with the highest and lowest message rate and throughput (the first
    met wins a tie; ``None`` when no figure beats the start values), with the figures."""

    over_rate: str | None
    max_rate: float
    under_rate: str | None
    min_rate: float
    over_tp: str | None
    max_tp: float
    under_tp: str | None
    min_tp: float

    @classmethod
    def of(cls, load: LoadData) -> _Extremes:
        max_r = max_t = -1.0
        min_r = min_t = float(INT_MAX)
        over_r = over_t = under_r = under_t = None
        for broker, data in load.brokers.items():
            r = data.local.msgRateIn + data.local.msgRateOut
            t = data.local.msgThroughputIn + data.local.msgThroughputOut
            # strict comparisons: the first broker met keeps a tie
            if r > max_r:
                over_r, max_r = broker, r
            if t > max_t:
                over_t, max_t = broker, t
            if r < min_r:
                under_r, min_r = broker, r
            if t < min_t:
                under_t, min_t = broker, t
        return cls(over_r, max_r, under_r, min_r, over_t, max_t, under_t, min_t)


class _Criterion(Struct, frozen=True):
    """The criterion that sheds (rule 5): its broker, budget, minimum and bundle value."""

    by_rate: bool
    source: str | None
    dest: str | None
    budget: int
    minimum: float
    value_of: Callable[[BundleData], float]


@SHEDDING.register("UniformLoadShedder", reads=(
    "loadBalancerMsgRateDifferenceShedderThreshold",
    "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold",
    "maxUnloadBundleNumPerShedding", "maxUnloadPercentage", "minUnloadMessage",
    "minUnloadMessageThroughput"))
class UniformLoadShedder:
    """Pure port of ``UniformLoadShedder``; memory is ``None``."""

    name = "UniformLoadShedder"

    def initial_memory(self) -> None:
        return None

    def shed(
        self, load: LoadData, settings: Settings, memory: None
    ) -> tuple[SheddingDecision, None]:
        """``UniformLoadShedder.findBundlesForUnloading``: the extremes, the two differences
        against their thresholds, then the budget off the busiest broker of the criterion that
        is exceeded (the message rate first)."""
        run = _Cycle(load, settings)
        if not (run.rate_exceeded or run.tp_exceeded):
            return run.balanced()
        crit = run.criterion()
        run.note_others(crit)
        if crit.source is None:  # every figure below -1: Pulsar would fail on a null broker name
            run.notes.append(UniformWhy("note-no-source", crit.by_rate))
            return run.decision()
        run.shed_source(crit)
        return run.decision()


class _Cycle:
    """One ``findBundlesForUnloading`` call: the settings, the extremes and what it decides."""

    def __init__(self, load: LoadData, settings: Settings) -> None:
        self.load = load
        self.rate_threshold = settings["loadBalancerMsgRateDifferenceShedderThreshold"]
        self.tp_multiplier = settings[
            "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold"]
        self.max_pct = settings["maxUnloadPercentage"]
        self.min_msg = settings["minUnloadMessage"]
        self.min_tp = settings["minUnloadMessageThroughput"]
        self.limit = settings["maxUnloadBundleNumPerShedding"]
        self.x = x = _Extremes.of(load)
        # rule 2: a minimum within ±EPS of zero counts as 1
        self.min_r = 1.0 if -EPS <= x.min_rate <= EPS else x.min_rate
        self.min_t = 1.0 if -EPS <= x.min_tp <= EPS else x.min_tp
        self.rate_diff = (x.max_rate - self.min_r) * 100 / self.min_r
        self.tp_ratio = x.max_tp / self.min_t
        self.rate_exceeded = self.rate_threshold > 0 and self.rate_diff > self.rate_threshold
        self.tp_exceeded = self.tp_multiplier > 0 and self.tp_ratio > self.tp_multiplier
        self.req_r = d2i((x.max_rate - self.min_r) * self.max_pct)
        self.req_t = d2i((x.max_tp - self.min_t) * self.max_pct)
        self.numbers = {
            "maxMsgRate": x.max_rate,
            "minMsgRate": self.min_r,
            "maxThroughput": x.max_tp,
            "minThroughput": self.min_t,
            "msgRateDifferencePercentage": self.rate_diff,
            "msgThroughputDifferenceRate": self.tp_ratio,
            "msgRateRequired": float(self.req_r),
            "msgThroughputRequired": float(self.req_t),
        }
        self.rates = {b: d.local.msgRateIn + d.local.msgRateOut for b, d in load.brokers.items()}
        self.tps = {b: d.local.msgThroughputIn + d.local.msgThroughputOut
                    for b, d in load.brokers.items()}
        self.notes: list[Note] = self._figures_notes()
        self.verdicts: dict[str, BrokerVerdict] = {}
        self.selections: list[Selection] = []
        self.candidates: list[BundleCandidate] = []

    def _figures_notes(self) -> list[Note]:
        if not self.load.brokers:
            return [UniformWhy("note-no-brokers")]
        x = self.x
        notes: list[Note] = [
            UniformWhy("note-rates", broker=x.over_rate, high=x.max_rate,
                       other=x.under_rate, low=x.min_rate, figure=self.rate_diff,
                       threshold=self.rate_threshold, exceeded=self.rate_exceeded),
            UniformWhy("note-throughputs", False, broker=x.over_tp, high=x.max_tp,
                       other=x.under_tp, low=x.min_tp, figure=self.tp_ratio,
                       threshold=self.tp_multiplier, exceeded=self.tp_exceeded)]
        if x.min_rate != self.min_r or x.min_tp != self.min_t:
            notes.append(UniformWhy("note-zero-min"))
        return notes

    def decision(self) -> tuple[SheddingDecision, None]:
        return SheddingDecision(
            strategy="UniformLoadShedder",
            selections=tuple(self.selections),
            # verdicts in load.brokers order, whatever order they were decided in
            brokers=MappingProxyType({b: self.verdicts[b] for b in self.load.brokers}),
            candidates=tuple(self.candidates),
            notes=tuple(self.notes),
            numbers=MappingProxyType(self.numbers),
        ), None

    def _put(self, broker: str, label: Label, reason: Reason, why: UniformWhy,
             **more: float) -> None:
        nums = {"msgRate": self.rates[broker], "throughput": self.tps[broker], **more}
        self.verdicts[broker] = BrokerVerdict(
            broker, None, None, label, reason,
            _with(why, rate=self.rates[broker], throughput=self.tps[broker]),
            MappingProxyType(nums))

    def balanced(self) -> tuple[SheddingDecision, None]:
        """Neither difference exceeds its threshold: nothing is shed."""
        if self.load.brokers:
            self.notes.append(UniformWhy("note-uniform"))
        for broker in self.load.brokers:
            self._put(broker, Label.SKIP, Reason.BALANCED, UniformWhy("balanced"))
        return self.decision()

    def criterion(self) -> _Criterion:
        """Rule 5: the message rate has priority over the throughput."""
        x = self.x
        if self.rate_exceeded:
            crit = _Criterion(True, x.over_rate, x.under_rate, self.req_r, self.min_msg,
                              short_term_rate)
            high, low = x.max_rate, self.min_r
        else:
            crit = _Criterion(False, x.over_tp, x.under_tp, self.req_t, self.min_tp,
                              short_term_throughput)
            high, low = x.max_tp, self.min_t
        self.notes.append(UniformWhy(
            "note-uneven", crit.by_rate, broker=crit.source, high=high, low=low,
            max_pct=self.max_pct, budget=crit.budget,
            also=self.rate_exceeded and self.tp_exceeded))
        return crit

    def note_others(self, crit: _Criterion) -> None:
        """Every broker but the one shed: the lowest is noted as underloaded."""
        for broker in self.load.brokers:
            if broker == crit.source:
                continue
            if broker == crit.dest:
                self._put(broker, Label.SKIP, Reason.UNDERLOADED,
                          UniformWhy("lowest", crit.by_rate))
            else:
                self._put(broker, Label.SKIP, Reason.BALANCED,
                          UniformWhy("not-highest", crit.by_rate, broker=crit.source))

    def shed_source(self, crit: _Criterion) -> None:
        """Rule 6 (more than one bundle, a budget of at least the minimum), then the budget
        loop."""
        source = crit.source
        assert source is not None
        budget = float(crit.budget)
        n_bundles = len(self.load.brokers[source].local.bundles)
        if n_bundles <= 1:
            self._put(source, Label.SKIP, Reason.NO_BUNDLES, UniformWhy(
                "few-bundles", crit.by_rate, count=n_bundles), budget=budget)
            self.notes.append(UniformWhy("note-few-bundles", broker=source,
                                         count=n_bundles))
            return
        if crit.budget < crit.minimum:
            self._put(source, Label.SKIP, Reason.OVERLOADED, UniformWhy(
                "budget-low", crit.by_rate, budget=crit.budget, minimum=crit.minimum),
                budget=budget)
            self.notes.append(UniformWhy("note-budget-low", crit.by_rate,
                                         budget=crit.budget, minimum=crit.minimum))
            return
        remaining = self._select(source, crit)
        if self.selections:
            self._put(source, Label.SUCCESS, Reason.OVERLOADED, UniformWhy(
                "shed", crit.by_rate, count=len(self.selections), budget=crit.budget),
                budget=budget, remaining=float(remaining))
            self.notes.append(UniformWhy("note-shed", broker=source,
                                         count=len(self.selections)))
        else:
            self._put(source, Label.SKIP, Reason.NO_BUNDLES, UniformWhy(
                "none-fits", crit.by_rate, budget=crit.budget),
                budget=budget, remaining=float(remaining))
            self.notes.append(UniformWhy("note-none-fits", broker=source,
                                         budget=crit.budget))

    def _select(self, source: str, crit: _Criterion) -> int:
        """Rules 7 and 8; appends to the selections and candidates, returns the budget left."""
        load, by_rate, limit = self.load, crit.by_rate, self.limit
        table = load.bundle_data
        owned = load.brokers[source].local.bundles
        value_of = crit.value_of
        ranked = [(b, value_of(table[b])) for b in shedding_candidates(
            load, owned, lambda b: value_of(table[b]))]
        ranked.sort(key=lambda item: descending(item[1]))  # stable, like Java's Stream.sorted
        limited = UniformPickWhy("limit", limit=limit)
        remaining = crit.budget
        for bundle, value in ranked:
            if bundle in load.recently_unloaded:
                self.candidates.append(BundleCandidate(source, bundle, value, False, RECENTLY))
                continue
            if limit != -1 and len(self.selections) >= limit:
                self.candidates.append(BundleCandidate(source, bundle, value, False, limited))
                continue
            if value <= remaining:
                left = int_add(remaining, d2i(-value))
                why = UniformPickWhy("fits", by_rate, remaining=remaining, left=left)
                remaining = left
                data = table[bundle]
                self.selections.append(Selection(
                    source, bundle, Reason.OVERLOADED, short_term_rate(data),
                    short_term_throughput(data)))
                self.candidates.append(BundleCandidate(source, bundle, value, True, why))
            else:
                why = UniformPickWhy("too-large", by_rate, value, remaining)
                self.candidates.append(BundleCandidate(source, bundle, value, False, why))
        self.candidates.extend(unranked_candidates(load, source, owned))
        return remaining


def _with(why: UniformWhy, **changes: object) -> UniformWhy:
    return replace(why, **changes)
