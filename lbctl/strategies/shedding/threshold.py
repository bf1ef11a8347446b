"""``ThresholdShedder``: shed brokers whose smoothed usage is well above the cluster average.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder`` (the master version with
lower-boundary shedding, weights as changed by PR #19559). Pulsar's default shedding strategy.

Rules, in Pulsar's order:

1. Usage of a broker is ``getMaxResourceUsageWithWeight`` of its report (4-argument form since
   Pulsar 3.0, PR #19559): ``loadBalancerCPUResourceWeight``,
   ``loadBalancerDirectMemoryResourceWeight``, ``loadBalancerBandwidthIn/OutResourceWeight``.
   Before 3.0 the 5-argument form also weighed JVM heap with ``loadBalancerMemoryResourceWeight``
   (:meth:`lbctl.config.Settings.weighted_usage` follows the version profile).
2. Each broker's usage is smoothed across cycles (the strategy instance's
   ``brokerAvgResourceUsage`` map, here the memory): the first sample is taken as is, later ones as
   ``old * H + (1 - H) * usage`` with ``H = loadBalancerHistoryResourcePercentage``. Entries of
   brokers that left are kept, as in Pulsar (no pruning).
3. The average is the mean of the smoothed usages of all brokers. If it is 0 nothing happens.
4. A broker whose smoothed usage is ``>= average + loadBalancerBrokerThresholdShedderPercentage``
   is overloaded. It should offload ``usage - average - threshold + 5 %`` of its message throughput
   (``msgThroughputIn + msgThroughputOut`` of its report).
5. If that is less than ``loadBalancerBundleUnloadMinThroughputThreshold`` MB/s, it is skipped.
6. A broker with one bundle (or none) is never shed; otherwise the greedy selector
   (:mod:`lbctl.strategies.shedding._select`) picks its largest bundles.
7. If nothing was selected and ``lowerBoundarySheddingEnabled``: up to Pulsar 4.0 the average is
   computed again — which smooths every broker's usage a *second* time in the same cycle; from 4.1
   (PR #24064, ``tryLowerBoundaryShedding`` reuses the average it is given) it is not — and, if
   some broker is below ``average - threshold``, the broker with the highest smoothed usage above
   ``average - threshold`` that has more than one bundle offloads ``throughput * threshold * 0.5``,
   unless that is below the minimum throughput of rule 5 (equality proceeds).

Ties: brokers are visited in ``load.brokers`` order (Java ``HashMap`` order); in rule 7 the first
broker with the highest usage wins. Bundles tie as in the greedy selector.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from lbctl.config import MB, USAGE_KEYS, Settings
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
from lbctl.model.loaddata import LoadData
from lbctl.records import replace
from lbctl.strategies.registry import SHEDDING
from lbctl.strategies.shedding._select import Offload, select_greedy

#: ThresholdShedder.ADDITIONAL_THRESHOLD_PERCENT_MARGIN
ADDITIONAL_THRESHOLD_PERCENT_MARGIN = 0.05
#: ThresholdShedder.LOWER_BOUNDARY_THRESHOLD_MARGIN
LOWER_BOUNDARY_THRESHOLD_MARGIN = 0.5

Memory = Mapping[str, float]


#: ThresholdShedder's situations: a broker's verdict, a lower-boundary addition to it, or a
#: cluster-level note. The figures each needs are named after it.
Threshold = Literal[
    # a broker (usage, smoothed; the "over" ones add average, percent, trigger, fraction,
    # throughput and need)
    "zero-average",
    "below-trigger",  # average, percent, trigger
    "under-min-throughput",  # over…, min_mb
    "offload",  # over…, offload; count (bundles selected, or its bundles), marked
    # tryLowerBoundaryShedding, added to a broker's verdict (trigger: the lower bound)
    "lower-under-min",  # need, min_mb
    "lower-shed",  # trigger, count, marked
    "lower-none",
    "lower-below",  # trigger, smoothed (the second smoothing)
    # the cluster
    "note-no-brokers",
    "note-average",  # count (brokers), average, percent, trigger, history
    "note-zero-average",
    "note-selected",  # count, names (the brokers shed)
    "note-not-shed",  # names (the brokers over the trigger), trigger
    "note-none-reach",  # trigger
    "note-lower-off",
    "note-lower-average",  # average (recomputed), percent, trigger (bound)
    "note-lower-no-busiest",  # trigger
    "note-lower-none-below",  # trigger, broker, smoothed (its usage)
    "note-lower-plan",  # names (below), trigger, broker, smoothed, percent,
    #   throughput, need
    "note-lower-under-min",  # need, min_mb
    "note-lower-nothing",  # broker
]


class ThresholdWhy(Why, frozen=True):
    """A reason of :data:`Threshold`. ``percent``, ``history`` and ``min_mb`` are the settings
    as configured; ``then`` is what lower-boundary shedding added to a broker's verdict."""

    code: Threshold
    usage: float = 0.0
    smoothed: float = 0.0
    average: float = 0.0
    trigger: float = 0.0
    percent: float = 0.0  # loadBalancerBrokerThresholdShedderPercentage
    history: float = 0.0  # loadBalancerHistoryResourcePercentage
    fraction: float = 0.0
    throughput: float = 0.0
    need: float = 0.0
    min_mb: float = 0.0  # loadBalancerBundleUnloadMinThroughputThreshold
    count: int = 0
    marked: float = 0.0
    offload: Offload = "shed"
    names: tuple[str, ...] = ()
    broker: str = ""
    then: ThresholdWhy | None = None
    #: lower-boundary shedding recomputed the average, smoothing every usage a second time
    #: (before PR #24064)
    again: bool = False


def _smooth(
    load: LoadData, history: dict[str, float], usage: Mapping[str, float], h: float
) -> float:
    """``getBrokerAvgUsage``: update every broker's smoothed usage and return their mean."""
    total = 0.0
    count = 0
    for broker in load.brokers:
        old = history.get(broker)
        new = usage[broker] if old is None else old * h + (1 - h) * usage[broker]
        history[broker] = new
        total += new
        count += 1
    return total / count if count > 0 else 0.0


@SHEDDING.register("ThresholdShedder", reads=(
    *USAGE_KEYS, "loadBalancerBrokerThresholdShedderPercentage",
    "loadBalancerBundleUnloadMinThroughputThreshold", "loadBalancerHistoryResourcePercentage",
    "lowerBoundarySheddingEnabled"))
class ThresholdShedder:
    """Pure port of ``ThresholdShedder``; memory = broker → smoothed usage (fraction)."""

    name = "ThresholdShedder"

    def initial_memory(self) -> Memory:
        return MappingProxyType({})

    def shed(
        self, load: LoadData, settings: Settings, memory: Memory
    ) -> tuple[SheddingDecision, Memory]:
        """``ThresholdShedder.findBundlesForUnloading``: the average smoothed usage, each broker
        against average + threshold, then lower-boundary shedding when nothing was selected."""
        run = _Cycle(load, settings, memory)
        if not load.brokers:
            run.notes.append(ThresholdWhy("note-no-brokers"))
            return run.decision()
        run.note_average()
        if run.avg == 0:
            return run.zero_average()
        for broker in load.brokers:
            run.shed_broker(broker)
        if run.selections:
            run.note_selected()
            return run.decision()
        run.note_nothing_selected()
        if not run.lower_enabled:
            run.notes.append(ThresholdWhy("note-lower-off"))
            return run.decision()
        run.lower_boundary()
        return run.decision()


class _Cycle:
    """One ``findBundlesForUnloading`` call: the settings it reads, the usages, the smoothed
    history (updated in place), and what it decides."""

    def __init__(self, load: LoadData, settings: Settings, memory: Memory) -> None:
        self.load = load
        self.percent = settings["loadBalancerBrokerThresholdShedderPercentage"]
        self.threshold = self.percent / 100.0
        self.min_mb = settings["loadBalancerBundleUnloadMinThroughputThreshold"]
        self.min_tp = self.min_mb * MB
        self.h = settings["loadBalancerHistoryResourcePercentage"]
        self.lower_enabled = bool(settings["lowerBoundarySheddingEnabled"])
        # Settings.weighted_usage with its weights read once, not once per broker
        weights = settings.weights4()
        memory_weight = settings.weighted_usage_memory_weight()
        self.usage = {b: float(d.local.max_resource_usage_with_weight(
                          *weights, memory_weight=memory_weight))
                      for b, d in load.brokers.items()}
        self.history = dict(memory)
        self.avg = _smooth(load, self.history, self.usage, self.h)
        # before PR #24064 tryLowerBoundaryShedding called getBrokerAvgUsage again
        self.again = settings.profile["thresholdLowerBoundaryAverage"] == "recomputed"
        self.trigger = self.avg + self.threshold
        self.notes: list[Note] = []
        self.numbers: dict[str, float] = {
            "average": self.avg,
            "threshold": self.threshold,
            "trigger": self.trigger,
            "minThroughput": self.min_tp,
            "historyPercentage": self.h,
        }
        self.verdicts: dict[str, BrokerVerdict] = {}
        self.selections: list[Selection] = []
        self.candidates: list[BundleCandidate] = []

    def decision(self) -> tuple[SheddingDecision, Memory]:
        return SheddingDecision(
            strategy="ThresholdShedder",
            selections=tuple(self.selections),
            brokers=MappingProxyType(self.verdicts),
            candidates=tuple(self.candidates),
            notes=tuple(self.notes),
            numbers=MappingProxyType(dict(self.numbers)),
        ), MappingProxyType(self.history)

    # --- words' figures ---------------------------------------------------------------------
    def _numbers(self, broker: str) -> dict[str, float]:
        local = self.load.brokers[broker].local
        return {
            "usage": self.usage[broker],
            "smoothed": self.history[broker],
            "average": self.avg,
            "threshold": self.threshold,
            "trigger": self.trigger,
            "throughput": local.msgThroughputIn + local.msgThroughputOut,
            "bundles": float(len(local.bundles)),
        }

    def _put(self, broker: str, label: Label, reason: Reason, why: ThresholdWhy,
             numbers: dict[str, float]) -> None:
        self.verdicts[broker] = BrokerVerdict(
            broker, self.usage[broker], self.history[broker], label, reason, why,
            MappingProxyType(numbers))

    def note_average(self) -> None:
        self.notes.append(ThresholdWhy(
            "note-average", average=self.avg, trigger=self.trigger, percent=self.percent,
            history=self.h, count=len(self.load.brokers)))

    # --- the steps of findBundlesForUnloading -----------------------------------------------
    def zero_average(self) -> tuple[SheddingDecision, Memory]:
        """``avgUsage == 0``: Pulsar warns and returns before looking at any broker."""
        self.notes.append(ThresholdWhy("note-zero-average"))
        for broker in self.load.brokers:
            self._put(broker, Label.SKIP, Reason.BALANCED, ThresholdWhy(
                "zero-average", self.usage[broker], self.history[broker]),
                self._numbers(broker))
        return self.decision()

    def shed_broker(self, broker: str) -> None:
        """One broker of the ``forEach``: against the trigger, the amount to offload and its
        minimum, then ``filterAndSelectBundle`` when it has more than one bundle."""
        data = self.load.brokers[broker]
        local = data.local
        nums = self._numbers(broker)
        current = self.history[broker]
        if current < self.trigger:
            self._put(broker, Label.SKIP, Reason.BALANCED, ThresholdWhy(
                "below-trigger", self.usage[broker], current, self.avg, self.trigger,
                self.percent), nums)
            return
        fraction = current - self.avg - self.threshold + ADDITIONAL_THRESHOLD_PERCENT_MARGIN
        throughput = local.msgThroughputIn + local.msgThroughputOut
        need = throughput * fraction
        nums.update(offloadFraction=fraction, need=need, minThroughput=self.min_tp)
        over = ThresholdWhy("offload", self.usage[broker], current, self.avg, self.trigger,
                            self.percent, fraction=fraction, throughput=throughput, need=need)
        if need < self.min_tp:
            self._put(broker, Label.SKIP, Reason.OVERLOADED, _with(
                over, code="under-min-throughput", min_mb=self.min_mb), nums)
            return
        n_bundles = len(local.bundles)
        if n_bundles > 1:
            got = select_greedy(self.load, broker, data, need, Reason.OVERLOADED)
            self.selections.extend(got.selections)
            self.candidates.extend(got.candidates)
            nums["selected"] = got.marked
            if got.selections:
                self._put(broker, Label.SUCCESS, Reason.OVERLOADED, _with(
                    over, count=len(got.selections), marked=got.marked), nums)
            else:
                self._put(broker, Label.SKIP, Reason.NO_BUNDLES, _with(
                    over, offload="none-sheddable", count=n_bundles), nums)
        elif n_bundles == 1:
            self._put(broker, Label.SKIP, Reason.NO_BUNDLES,
                      _with(over, offload="one-bundle"), nums)
        else:
            self._put(broker, Label.SKIP, Reason.NO_BUNDLES,
                      _with(over, offload="no-bundles"), nums)

    def note_selected(self) -> None:
        # the brokers' order by a position map: list.index per source was quadratic (10,000
        # brokers with 1,000 shed took longer than the rest of the strategy)
        position = {b: i for i, b in enumerate(self.load.brokers)}
        sources = sorted({s.broker for s in self.selections}, key=position.__getitem__)
        self.notes.append(ThresholdWhy("note-selected", count=len(self.selections),
                                       names=tuple(sources)))

    def note_nothing_selected(self) -> None:
        over = tuple(b for b in self.load.brokers if self.history[b] >= self.trigger)
        self.notes.append(ThresholdWhy("note-not-shed", trigger=self.trigger, names=over)
                          if over else
                          ThresholdWhy("note-none-reach", trigger=self.trigger))

    def lower_boundary(self) -> None:
        """``tryLowerBoundaryShedding`` (rule 7 of the module docstring): the average (computed
        again, every usage smoothed a second time, before PR #24064; the cycle's own since), the
        busiest broker with more than one bundle above the lower bound, shed by
        ``threshold × 0.5`` of its throughput when some broker is below that bound."""
        avg2 = _smooth(self.load, self.history, self.usage, self.h) if self.again else self.avg
        lower = avg2 - self.threshold
        self.numbers.update(lowerBoundaryAverage=avg2, lowerBound=lower)
        max_broker, max_usage, below = self._busiest_and_below(lower)
        self.notes.append(ThresholdWhy("note-lower-average", average=avg2, trigger=lower,
                                       percent=self.percent, again=self.again))
        if max_broker is None:
            self.notes.append(ThresholdWhy("note-lower-no-busiest", trigger=lower))
            return
        if not below:
            self.notes.append(ThresholdWhy("note-lower-none-below", trigger=lower,
                                           broker=max_broker, smoothed=max_usage))
            return
        local = self.load.brokers[max_broker].local
        throughput = local.msgThroughputIn + local.msgThroughputOut
        need = throughput * self.threshold * LOWER_BOUNDARY_THRESHOLD_MARGIN
        more = {"lowerBoundaryNeed": need, "minThroughput": self.min_tp}
        self.notes.append(ThresholdWhy(
            "note-lower-plan", trigger=lower, broker=max_broker, smoothed=max_usage,
            percent=self.percent, throughput=throughput, need=need, names=tuple(below)))
        if self.min_tp > need:  # strict: exactly the minimum proceeds
            self._annotate(max_broker, lower, Label.SKIP, Reason.UNDERLOADED, ThresholdWhy(
                "lower-under-min", need=need, min_mb=self.min_mb), more)
            self.notes.append(ThresholdWhy("note-lower-under-min", need=need,
                                           min_mb=self.min_mb))
            return
        got = select_greedy(self.load, max_broker, self.load.brokers[max_broker], need,
                            Reason.UNDERLOADED)
        self.candidates.extend(got.candidates)
        more["selected"] = got.marked
        if got.selections:
            self._annotate(max_broker, lower, Label.SUCCESS, Reason.UNDERLOADED, ThresholdWhy(
                "lower-shed", trigger=lower, count=len(got.selections),
                marked=got.marked), more)
            self.notes.append(ThresholdWhy("note-selected", count=len(got.selections),
                                           names=(max_broker,)))
        else:
            self._annotate(max_broker, lower, Label.SKIP, Reason.NO_BUNDLES,
                           ThresholdWhy("lower-none"), more)
            self.notes.append(ThresholdWhy("note-lower-nothing", broker=max_broker))
        for broker in below:
            self._annotate(broker, lower, Label.SKIP, Reason.UNDERLOADED, ThresholdWhy(
                "lower-below", trigger=lower, smoothed=self.history[broker], again=self.again), {})
        self.selections.extend(got.selections)

    def _busiest_and_below(self, lower: float) -> tuple[str | None, float, list[str]]:
        """The broker with the highest smoothed usage above ``lower`` and more than one bundle
        (strict ``>``: the first met wins a tie), its usage, and the brokers below ``lower``."""
        max_usage = lower
        max_broker: str | None = None
        below: list[str] = []
        for broker, data in self.load.brokers.items():
            current = self.history[broker]
            if current > max_usage and len(data.local.bundles) > 1:
                max_usage = current
                max_broker = broker
            if current < lower:
                below.append(broker)
        return max_broker, max_usage, below

    def _annotate(self, broker: str, lower: float, label: Label, reason: Reason,
                  then: ThresholdWhy, more: Mapping[str, float]) -> None:
        """A lower-boundary verdict added to a broker's own: the score stays the first-pass
        smoothed usage; the second one goes to the numbers."""
        old = self.verdicts[broker]
        nums = dict(old.numbers)
        nums.update(more, smoothedTwice=self.history[broker], lowerBound=lower)
        why = old.why
        assert isinstance(why, ThresholdWhy)  # every broker has its verdict by now
        self.verdicts[broker] = BrokerVerdict(
            broker, old.usage, old.score, label, reason, _with(why, then=then),
            MappingProxyType(nums))


def _with(why: ThresholdWhy, **changes: object) -> ThresholdWhy:
    """``why`` with some fields changed."""
    return replace(why, **changes)
