"""AvgShedder (PIP-364): pair the most and least loaded brokers and even out each pair.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.AvgShedder``, which is both a
``LoadSheddingStrategy`` and a ``ModularLoadManagerStrategy``: it decides which bundles leave a
busy broker *and* where they go. lbctl registers the two halves separately, under the same name:
:class:`AvgShedder` in ``SHEDDING`` and :class:`AvgShedderPlacement` in ``PLACEMENT``.

Shedding, one cycle (``findBundlesForUnloading``):

1. Score every broker: the weighted max resource usage ``getMaxResourceUsageWithWeight`` (4-argument
   form) × 100, so 0‥100 (more when a resource is over its limit). Weights:
   ``loadBalancerCPUResourceWeight``, ``loadBalancerDirectMemoryResourceWeight``,
   ``loadBalancerBandwidthIn/OutResourceWeight`` (with the deprecated ``…Bandwith…`` fallback).
2. Sort brokers by score, ascending. The releases before PR #24954 (``calculateScoresAndSort``,
   AvgShedder at d76ae6831a1c) stream the score ``HashMap``'s entries and sort them with
   ``(o1, o2) -> (int) (score1 - score2)`` (``Stream.sorted`` → ``Arrays.sort`` → TimSort, the
   path of the stack trace in PR #24954): scores less than a point apart compare equal, that
   "equal" is not transitive, so the order is whatever JDK 17's TimSort makes of it — lbctl runs
   the same algorithm (:func:`lbctl.model.javasort.java_sort`) — and TimSort may throw
   ``IllegalArgumentException`` ("Comparison method violates its general contract!"). The throw
   ends the cycle: see *Failure* below. PR #24954 (4.0.8, 4.1.2, 4.2.0) compares
   the scores themselves, stably: the ``avgShedderScoreOrder`` variant's ``double`` value. (PIP-364's first draft, AvgShedder at 00e5625b8a2f, sorted a
   ``LinkedList`` filled in ``getBrokerData()`` order with ``Collections.sort`` and the same
   comparator.)
3. Pair the ends: lowest with highest, second lowest with second highest…; with an odd number of
   brokers the middle one is paired with itself (gap 0).
4. For each pair, ``gap = score(high) - score(low)``:
   ``gap < loadBalancerAvgShedderLowThreshold`` → both brokers' hit counts are dropped;
   otherwise the pair is kept and both brokers' *low* hit count goes up by one, and their *high*
   hit count goes up too if ``gap >= loadBalancerAvgShedderHighThreshold`` (else it is dropped).
   The counters live in the strategy between cycles (lbctl's ``memory``).
5. No pair kept → every hit count is cleared and nothing is unloaded.
6. A kept pair sheds only when one of its brokers has a high hit count
   ``>= loadBalancerAvgShedderHitCountHighThreshold`` or a low hit count
   ``>= loadBalancerAvgShedderHitCountLowThreshold``; then both brokers' counts are dropped.
7. Amount: ``(rate(high) - rate(low)) * maxUnloadPercentage`` (rates are the brokers' reported
   ``msgRateIn + msgRateOut``); if that is ``> minUnloadMessage`` the pair moves message rate,
   else if the same for throughput is ``> minUnloadMessageThroughput`` it moves throughput, else
   nothing moves.
8. Bundles of the high broker (``LocalBrokerData.bundles``) that are in the shedding bundle data
   (system namespaces excluded) and not recently unloaded, valued by their short-term rate (or
   throughput), are taken in descending order: a bundle is selected when ``0 < v <= left``, and
   ``left -= v``. A sole bundle is shed too (Pulsar only logs a warning).

Failure: when the sort throws, ``findBundlesForUnloading`` has already cleared and refilled its
score map and changed nothing else (the hit counts are updated after the sort, the selection
multimap is empty). The exception leaves ``ModularLoadManagerImpl.doLoadShedding`` (the strategy is
called outside its ``try``/``finally``, so no unload runs and ``onUnloadAttemptCompleted`` is not
called) and ``LoadSheddingTask.run`` catches it, logs "Error during the load shedding" and
schedules the next run. lbctl returns a decision with no selection, every broker
``Failure``/``Unknown`` (the labels Pulsar's ``UnloadDecision`` uses for an unexpected error),
``failure`` set to the exception, and the hit counts unchanged.

Each selection carries ``destination`` = the pair's low broker: that is AvgShedder's plan, which
its placement half (:class:`AvgShedderPlacement`) honours.

Ties: brokers are scored in ``LoadData.getBrokerData()`` order into the score ``HashMap``, whose
iteration order (:func:`score_map_order`) the sort starts from. That map is a field, cleared and
refilled each cycle: it keeps the largest table it grew to, so after the cluster shrinks its order
is not a fresh map's (:class:`AvgShedderMemory`, ``score_capacity``). Bundles are iterated in the order of
``LoadData.getBundleDataForLoadShedding()``, a ``HashMap`` built by ``Collectors.toMap`` (one put
at a time), then stably sorted by value, so equal values keep that ``HashMap`` order.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from types import MappingProxyType
from typing import Any, Literal

from msgspec import Struct, field

from lbctl.config import WEIGHT_KEYS, Settings
from lbctl.model.decision import (
    BrokerVerdict,
    BundleCandidate,
    Label,
    Note,
    PlacementDecision,
    Reason,
    Selection,
    SheddingDecision,
    Why,
)
from lbctl.model.javaorder import JavaHashMap
from lbctl.model.javasort import (
    JAVA_EXCEPTION,
    ComparisonContractViolation,
    int_cast_compare,
    java_sort,
)
from lbctl.model.load import NamespaceBundleStats
from lbctl.model.loaddata import BundleDataView, LoadData
from lbctl.records import replace
from lbctl.strategies.base import PlacementRequest
from lbctl.strategies.registry import PLACEMENT, SHEDDING

NAME = "AvgShedder"
MB = 1024 * 1024

_EMPTY_COUNTS: Mapping[str, int] = MappingProxyType({})
#: one instance sheds and places (``AvgShedder`` implements both interfaces in Pulsar)
READS = (*WEIGHT_KEYS, "loadBalancerAvgShedderHighThreshold",
         "loadBalancerAvgShedderHitCountHighThreshold", "loadBalancerAvgShedderHitCountLowThreshold",
         "loadBalancerAvgShedderLowThreshold", "maxUnloadPercentage", "minUnloadMessage",
         "minUnloadMessageThroughput")


class AvgShedderMemory(Struct, frozen=True):
    """What AvgShedder's fields keep between cycles: the hit counters
    (``brokerHitCountForHigh/Low``) and the table length of the score map (``brokerScoreMap``).

    The score map is a field ``HashMap`` that ``calculateScoresAndSort`` ``clear()`` s and refills
    each cycle (AvgShedder at d76ae6831a1c, and master after PR #24954); ``clear()`` keeps the
    table, so after the cluster shrinks the map iterates its brokers by the buckets of the
    largest table it ever grew to, not those of a fresh map: equal scores (and, before PR
    #24954, scores less than a point apart) then tie in that order. ``score_capacity`` is that
    length once it is over 16, else 0 (no put yet, or 16 buckets: a fresh map's first put makes
    16, so both iterate alike). The hit-count maps are only read by key (``computeIfAbsent``,
    ``remove``) and logged, never iterated for a decision: their tables change nothing."""

    hit_high: Mapping[str, int] = field(default_factory=lambda: _EMPTY_COUNTS)
    hit_low: Mapping[str, int] = field(default_factory=lambda: _EMPTY_COUNTS)
    score_capacity: int = 0


class _Limits(Struct, frozen=True):
    """The settings ``findBundlesForUnloading`` reads, as it reads them (doubles and ints)."""

    min_tp: float
    min_msg: float
    max_pct: float
    low: float
    high: float
    hit_high: int
    hit_low: int

    @classmethod
    def of(cls, settings: Settings) -> _Limits:
        return cls(float(settings["minUnloadMessageThroughput"]),
                   float(settings["minUnloadMessage"]), float(settings["maxUnloadPercentage"]),
                   float(settings["loadBalancerAvgShedderLowThreshold"]),
                   float(settings["loadBalancerAvgShedderHighThreshold"]),
                   int(settings["loadBalancerAvgShedderHitCountHighThreshold"]),
                   int(settings["loadBalancerAvgShedderHitCountLowThreshold"]))

    def numbers(self, pairs: int) -> Mapping[str, float]:
        return MappingProxyType({
            "pairs": float(pairs),
            "low_threshold": self.low,
            "high_threshold": self.high,
            "hit_count_high_threshold": float(self.hit_high),
            "hit_count_low_threshold": float(self.hit_low),
        })


class Pair(Struct, frozen=True):
    """One pair of ``findBrokerPairs``: the low and high broker, their scores and gap, whether
    the gap reaches the low and the high threshold (both thresholds as configured)."""

    low: str
    high: str
    low_score: float
    high_score: float
    gap: float
    kept: bool  # gap >= low threshold
    high_gap: bool  # gap >= high threshold
    low_threshold: float
    high_threshold: float


class Gate(Struct, frozen=True):
    """Rule 6's figures for a kept pair: each of its brokers' (once) high and low hit counts,
    and the two hit-count thresholds."""

    counts: tuple[tuple[str, int, int], ...]
    hit_high: int
    hit_low: int

    def due(self) -> bool:
        return any(hh >= self.hit_high or hl >= self.hit_low for _, hh, hl in self.counts)


class Amount(Struct, frozen=True):
    """Rule 7's figures: the pair's rates and throughputs, ``maxUnloadPercentage``, the two
    amounts and their minimums; ``by_rate`` when message rate moves (``None``: too small)."""

    high_rate: float
    low_rate: float
    high_tp: float
    low_tp: float
    max_pct: float
    need_rate: float
    need_tp: float
    min_msg: float
    min_tp: float
    by_rate: bool | None


#: AvgShedder's situations for a broker of a pair, and its cluster-level notes.
Avg = Literal[
    "cleared",  # no pair kept: every count cleared
    "reset",  # the pair's gap is below the low threshold
    "not-yet",  # gate: neither hit count reached
    "small-high",  # gate, amount: due, but the traffic gap is too small
    "small-low",
    "shed-high",  # gate, amount, count, moved, sole
    "shed-low",  # gate, amount, count, moved
    "no-fit-high",  # gate, amount
    "no-fit-low",  # gate
    "note-no-brokers",
    "note-no-pair",  # threshold (the low threshold)
    "note-not-yet",  # pair, gate
    "note-small",  # as SMALL_HIGH
    "note-no-fit",  # as NO_FIT_HIGH
    "sort-failed",  # the broker sort threw: the cycle fails (broker)
    "note-sort-failed",  # the same, for the cluster
]


class AvgWhy(Why, frozen=True):
    """A reason of :data:`Avg`: ``broker`` (whose verdict) of ``pair``, with the gate and the
    amount figures when they were reached."""

    code: Avg
    broker: str = ""
    pair: Pair | None = None
    gate: Gate | None = None
    amount: Amount | None = None
    count: int = 0
    moved: float = 0.0
    sole: bool = False
    threshold: float = 0.0


#: What rule 8 did with one bundle of the high broker.
AvgPick = Literal[
    "recently",  # unloaded recently (grace period)
    "taken",  # 0 < value <= left (low: where it goes)
    "no-traffic",  # value <= 0: never moved
    "too-big",  # value > left
]


class AvgPickWhy(Why, frozen=True):
    code: AvgPick
    by_rate: bool = True
    value: float = 0.0
    left: float = 0.0
    low: str = ""


_RECENTLY = AvgPickWhy("recently")
_NO_TRAFFIC = AvgPickWhy("no-traffic")


def _double_key(x: float) -> tuple[bool, float, float]:
    """Sort key with ``Double.compare`` semantics: -0.0 before 0.0, NaN after everything."""
    if math.isnan(x):
        return (True, 0.0, 0.0)
    return (False, x, math.copysign(1.0, x))


def _inc(counts: dict[str, int], broker: str) -> None:
    counts[broker] = counts.get(broker, 0) + 1


def score_map_order(brokers: Iterable[str], capacity: int = 0) -> tuple[list[str], int]:
    """``brokerScoreMap.clear()`` then one ``put`` per broker of ``brokers`` (in
    ``getBrokerData()``'s order): the map's iteration order, and the table length to carry to
    the next cycle (0 when it is 16 or less; see :class:`AvgShedderMemory`).

    A cleared ``HashMap`` of table length ``capacity`` fills as a ``new HashMap<>(capacity)``
    does (its first put makes a table of that length, threshold 3/4 of it): JDK 17
    ``HashMap.clear`` / ``resize``. :class:`~lbctl.model.javaorder.JavaHashMap` also grows the
    table where a bucket of 9 brokers would (below 64 buckets it resizes instead of making a
    tree bin)."""
    m = JavaHashMap(capacity) if capacity > 16 else JavaHashMap()
    for b in brokers:
        m.put(b)
    grown = m.capacity
    return m.keys(), grown if grown > 16 else 0


def sort_brokers(scores: Mapping[str, float], settings: Settings) -> list[str]:
    """Rule 2: the brokers in ascending score order, as the release modelled sorts them.

    ``int-cast`` (before PR #24954, AvgShedder at d76ae6831a1c): ``Stream.sorted`` with
    ``(int) (score1 - score2)`` — JDK 17's TimSort over that comparator, which raises
    :class:`~lbctl.model.javasort.ComparisonContractViolation` where Java throws. ``double``
    (PR #24954, from 4.0.8): a stable sort by ``Double.compare`` of the scores."""
    if settings.profile["avgShedderScoreOrder"] == "int-cast":
        return java_sort(scores, lambda a, b: int_cast_compare(scores[a], scores[b]))
    return sorted(scores, key=lambda b: _double_key(scores[b]))


def find_broker_pairs(order: list[str], scores: Mapping[str, float], limits: _Limits,
                      hit_high: dict[str, int], hit_low: dict[str, int]) -> list[Pair]:
    """``findBrokerPairs`` (rules 3-4): pair the ends of the ascending order and update the hit
    counters in place."""
    pairs: list[Pair] = []
    i, j = 0, len(order) - 1
    while i <= j:
        lo, hi = order[i], order[j]
        gap = scores[hi] - scores[lo]
        kept = not gap < limits.low  # a NaN gap is kept, as Java's `gap < low` is false
        high_gap = kept and not gap < limits.high
        if not kept:
            for b in (hi, lo):
                hit_high.pop(b, None)
                hit_low.pop(b, None)
        else:
            # Quirk: a middle broker paired with itself (only when the low threshold is <= 0)
            # is counted twice, as in Pulsar.
            _inc(hit_low, lo)
            _inc(hit_low, hi)
            if high_gap:
                _inc(hit_high, lo)
                _inc(hit_high, hi)
            else:
                hit_high.pop(hi, None)
                hit_high.pop(lo, None)
        pairs.append(Pair(lo, hi, scores[lo], scores[hi], gap, kept, high_gap, limits.low,
                          limits.high))
        i += 1
        j -= 1
    return pairs


@SHEDDING.register(NAME, reads=READS)
class AvgShedder:
    """The shedding half of ``AvgShedder`` (see the module docstring for the rules)."""

    name = NAME

    def initial_memory(self) -> AvgShedderMemory:
        return AvgShedderMemory()

    def shed(
        self, load: LoadData, settings: Settings, memory: Any
    ) -> tuple[SheddingDecision, AvgShedderMemory]:
        """``AvgShedder.findBundlesForUnloading``: score and sort the brokers, find the pairs
        (updating the hit counts); no pair kept clears every count; each kept pair whose hit
        count is due moves its amount from the high broker to the low one."""
        return self._shed(load, settings, memory, record=True)[1:]

    def selections(
        self, load: LoadData, settings: Settings, memory: Any, first_only: bool = False
    ) -> tuple[SheddingDecision, AvgShedderMemory, frozenset[str]]:
        """:meth:`shed` without listing the bundles rule 8 looked at (the decision's
        ``candidates`` are empty; its selections, notes and the memory are :meth:`shed`'s): for
        a cycle of which only what it unloads is read — ``explain``'s projection
        (:class:`~lbctl.strategies.base.SelectingShedder`) — where a deep broker's 170,000
        candidates would be made and dropped. ``first_only``: each broker's first selection
        alone (the verdicts then count that one); the brokers whose list may go on after it
        are returned."""
        run, decision, mem = self._shed(load, settings, memory, record=False,
                                        first_only=first_only)
        return decision, mem, frozenset(run.cut) if run is not None else frozenset()

    def _shed(self, load: LoadData, settings: Settings, memory: Any, *, record: bool,
              first_only: bool = False) -> tuple[_Cycle | None, SheddingDecision,
                                                 AvgShedderMemory]:
        mem = memory if isinstance(memory, AvgShedderMemory) else AvgShedderMemory()
        limits = _Limits.of(settings)
        if not load.brokers:
            return None, SheddingDecision(NAME, notes=(AvgWhy("note-no-brokers"),),
                                          numbers=limits.numbers(0)), mem
        in_map, capacity = score_map_order(load.brokers, mem.score_capacity)
        weights = settings.weights4()
        scores = {b: load.brokers[b].local.max_resource_usage_with_weight(*weights) * 100
                  for b in in_map}
        try:
            order = sort_brokers(scores, settings)
        except ComparisonContractViolation:
            # the exception leaves findBundlesForUnloading before the hit counts change; the
            # score map was refilled (and grown) before the sort
            failed = _Cycle(load, limits, scores, list(scores), record, first_only)
            return failed, failed.failed(), replace(mem, score_capacity=capacity)
        hit_high, hit_low = dict(mem.hit_high), dict(mem.hit_low)
        pairs = find_broker_pairs(order, scores, limits, hit_high, hit_low)
        run = _Cycle(load, limits, scores, order, record, first_only)
        if not any(p.kept for p in pairs):
            return run, run.no_pair(pairs), AvgShedderMemory(score_capacity=capacity)
        for pair in pairs:
            run.pair(pair, hit_high, hit_low)
        return run, run.decision(sum(p.kept for p in pairs)), AvgShedderMemory(
            MappingProxyType(hit_high), MappingProxyType(hit_low), capacity)


class _Cycle:
    """What one ``findBundlesForUnloading`` call decides, pair by pair."""

    def __init__(self, load: LoadData, limits: _Limits, scores: Mapping[str, float],
                 order: list[str], record: bool = True, first_only: bool = False) -> None:
        self.load = load
        #: whether each bundle rule 8 looked at is listed (``candidates``) with why
        self.record = record
        #: each broker's first selection alone (:meth:`AvgShedder.selections`), and the brokers
        #: whose list may go on after it
        self.first_only = first_only
        self.cut: set[str] = set()
        self.limits = limits
        self.scores = scores
        self.order = order
        self.rank = {b: i for i, b in enumerate(order)}
        self.verdicts: dict[str, BrokerVerdict] = {}
        self.selections: list[Selection] = []
        self.candidates: list[BundleCandidate] = []
        self.notes: list[Note] = []

    def decision(self, kept: int) -> SheddingDecision:
        return SheddingDecision(
            NAME,
            selections=tuple(self.selections),
            brokers=MappingProxyType({b: self.verdicts[b] for b in self.order}),
            candidates=tuple(self.candidates),
            notes=tuple(self.notes),
            numbers=self.limits.numbers(kept),
        )

    def _put(self, b: str, pair: Pair, label: Label, reason: Reason, why: AvgWhy,
             hits: tuple[int, int] = (0, 0), **extra: float) -> None:
        # AvgShedder keeps no smoothed figure: its score (usage × 100) goes in numbers.
        limits = self.limits
        self.verdicts[b] = BrokerVerdict(
            broker=b, usage=self.scores[b] / 100, score=None, label=label, reason=reason,
            why=why, numbers=MappingProxyType({
                "score": self.scores[b], "rank": float(self.rank[b]), "gap": pair.gap,
                "low_threshold": limits.low, "high_threshold": limits.high,
                "hit_count_high_threshold": float(limits.hit_high),
                "hit_count_low_threshold": float(limits.hit_low),
                "hit_high": float(hits[0]), "hit_low": float(hits[1]), **extra}))

    def failed(self) -> SheddingDecision:
        """The broker sort threw: no selection, every broker Failure/Unknown, ``failure`` set
        (the modular load manager then ends the cycle as ``LoadSheddingTask`` does)."""
        limits = self.limits
        for b in self.order:
            self.verdicts[b] = BrokerVerdict(
                broker=b, usage=self.scores[b] / 100, label=Label.FAILURE, reason=Reason.UNKNOWN,
                why=AvgWhy("sort-failed", b), numbers=MappingProxyType({
                    "score": self.scores[b], "low_threshold": limits.low,
                    "high_threshold": limits.high}))
        self.notes.append(AvgWhy("note-sort-failed"))
        return SheddingDecision(NAME, brokers=MappingProxyType(dict(self.verdicts)),
                                notes=tuple(self.notes), numbers=limits.numbers(0),
                                failure=JAVA_EXCEPTION)

    def no_pair(self, pairs: list[Pair]) -> SheddingDecision:
        """Rule 5: no pair kept; every hit count is cleared."""
        for pair in pairs:
            for b in dict.fromkeys((pair.low, pair.high)):
                self._put(b, pair, Label.SKIP, Reason.BALANCED, AvgWhy("cleared", b, pair))
        self.notes.append(AvgWhy("note-no-pair", threshold=self.limits.low))
        return self.decision(0)

    def pair(self, pair: Pair, hit_high: dict[str, int], hit_low: dict[str, int]) -> None:
        """One pair of the loop: not kept, not due yet (rule 6), or due: its amount (rule 7)
        and the bundles that move (rule 8)."""
        lo, hi = pair.low, pair.high
        members = tuple(dict.fromkeys((lo, hi)))
        if not pair.kept:
            for b in members:
                self._put(b, pair, Label.SKIP, Reason.BALANCED, AvgWhy("reset", b, pair))
            return
        # the hit-count gate (absent counters count as 0)
        counts = {b: (hit_high.get(b, 0), hit_low.get(b, 0)) for b in (lo, hi)}
        gate = Gate(tuple((b, *counts[b]) for b in members), self.limits.hit_high,
                    self.limits.hit_low)
        if not gate.due():
            for b in members:
                self._put(b, pair, Label.SKIP, Reason.HIT_COUNT,
                          AvgWhy("not-yet", b, pair, gate), counts[b])
            self.notes.append(AvgWhy("note-not-yet", hi, pair, gate))
            return
        for b in (lo, hi):
            hit_high.pop(b, None)
            hit_low.pop(b, None)
        amount = self._amount(lo, hi)
        amounts = {"need_msg_rate": amount.need_rate, "need_throughput": amount.need_tp}
        if amount.by_rate is None:
            for b in members:
                code: Avg = "small-high" if b == hi else "small-low"
                self._put(b, pair, Label.SKIP, Reason.BALANCED,
                          AvgWhy(code, b, pair, gate, amount), counts[b], **amounts)
            self.notes.append(AvgWhy("note-small", hi, pair, gate, amount))
            return
        left = amount.need_rate if amount.by_rate else amount.need_tp
        chosen = self._select(hi, lo, amount.by_rate, left)
        self.selections.extend(chosen)
        moved = sum(s.msg_rate if amount.by_rate else s.throughput for s in chosen)
        sole = len(self.load.brokers[hi].local.bundles) == 1 and bool(chosen)
        hi_code: Avg
        lo_code: Avg
        if chosen:
            hi_label, hi_reason, hi_code = Label.SUCCESS, Reason.OVERLOADED, "shed-high"
            lo_label, lo_reason, lo_code = Label.SUCCESS, Reason.UNDERLOADED, "shed-low"
        else:
            hi_label, hi_reason, hi_code = Label.SKIP, Reason.NO_BUNDLES, "no-fit-high"
            lo_label, lo_reason, lo_code = Label.SKIP, Reason.NO_BUNDLES, "no-fit-low"
            self.notes.append(AvgWhy("note-no-fit", hi, pair, gate, amount))
        for b, label, reason, code in ((lo, lo_label, lo_reason, lo_code),
                                       (hi, hi_label, hi_reason, hi_code)):
            self._put(b, pair, label, reason,
                      AvgWhy(code, b, pair, gate, amount, len(chosen), moved, sole),
                      counts[b], **amounts, selected=float(len(chosen)))

    def _amount(self, lo: str, hi: str) -> Amount:
        """Rule 7: message rate moves when its amount exceeds ``minUnloadMessage``, else
        throughput when its amount exceeds ``minUnloadMessageThroughput``, else nothing."""
        limits = self.limits
        lo_local, hi_local = self.load.brokers[lo].local, self.load.brokers[hi].local
        need_rate = (hi_local.msg_rate - lo_local.msg_rate) * limits.max_pct
        need_tp = (hi_local.throughput - lo_local.throughput) * limits.max_pct
        by_rate = True if need_rate > limits.min_msg else (
            False if need_tp > limits.min_tp else None)
        return Amount(hi_local.msg_rate, lo_local.msg_rate, hi_local.throughput,
                      lo_local.throughput, limits.max_pct, need_rate, need_tp, limits.min_msg,
                      limits.min_tp, by_rate)

    def _select(self, high: str, low: str, by_rate: bool, left: float) -> list[Selection]:
        """Rule 8: ``0 < v <= left``, largest first; ``left`` shrinks with every pick.

        ``findBundlesForUnloading`` sorts ``getBundleDataForLoadShedding()``'s entries by value,
        descending and stably, so that map's iteration order (:meth:`LoadData.shedding_order`,
        which hashes every name) decides only among bundles of equal value: the bundles are
        sorted by value first (:func:`_descending`) and only those that tie are put in that
        order (:func:`_order_ties`) — on a deep broker a few thousand names hashed, not
        170,000. Its bundles still in their grace period are listed first, in that map's order,
        as the loop meets them: with any of them the whole order is taken, as before. Without
        ``record`` (:meth:`AvgShedder.selections`) no bundle is listed, only the ties among the
        chosen bundles are ordered, and with ``first_only`` the first pick alone is made, with
        no sort (:meth:`_first_pick`)."""
        load = self.load
        data = load.bundle_data
        owned = load.sheddable(load.brokers[high].local.bundles)
        # a bundle's short-term figure; from its stats when it is a first sample (a deep broker's
        # bundles then build no BundleData but the chosen ones')
        once = isinstance(data, BundleDataView) and data.first_samples_only()
        stats = data.reported() if isinstance(data, BundleDataView) and once else None
        value = (data.first_sample_values(by_rate) if isinstance(data, BundleDataView)
                 else None) or (lambda b: (data[b].shortTermData.msg_rate if by_rate
                                           else data[b].shortTermData.throughput))
        recently = load.recently_unloaded
        if self.record and recently and not recently.keys().isdisjoint(owned):
            return self._select_in_map_order(owned, value, high, low, by_rate, left)
        fresh = [b for b in owned if b not in recently] if recently else owned
        values = (list(map(attrgetter("msg_rate" if by_rate else "throughput"),
                           map(stats.__getitem__, fresh))) if stats is not None
                  else list(map(value, fresh)))
        if self.first_only:
            return self._first_pick(fresh, values, value, high, low, left, stats)
        order, keys = _descending(values)
        if not self.record:
            return self._chosen(fresh, values, order, keys, value, high, low, left, stats)
        _order_ties(load, fresh, order, keys, value, range(len(order)))
        return self._pick(((fresh[i], values[i]) for i in order), high, low, by_rate, left)

    def _first_pick(self, fresh: list[str], values: list[float], value: Callable[[str], float],
                    high: str, low: str, left: float,
                    stats: Mapping[str, NamespaceBundleStats] | None) -> list[Selection]:
        """The first bundle rule 8 takes, alone: the largest value with ``0 < v <= left`` (a
        NaN, a zero and a negative value are never taken, so plain float comparisons find it),
        the first in ``getBundleDataForLoadShedding()``'s order among bundles of that value; no
        sort. The broker's list may go on after it (:attr:`cut`)."""
        best = max((v for v in values if 0 < v <= left), default=None)
        if best is None:
            return []
        tied = [fresh[i] for i, v in enumerate(values) if v == best]
        b = tied[0] if len(tied) == 1 else self.load.shedding_order(tied, value)[0]
        self.cut.add(high)
        st = stats[b] if stats is not None else self.load.bundle_data[b].shortTermData
        return [Selection(high, b, Reason.OVERLOADED, st.msg_rate, st.throughput, low)]

    def _select_in_map_order(self, owned: list[str], value: Callable[[str], float], high: str,
                             low: str, by_rate: bool, left: float) -> list[Selection]:
        """:meth:`_select` over the whole of ``getBundleDataForLoadShedding()``'s order, its
        bundles in their grace period listed as the loop meets them."""
        load, out = self.load, self.candidates
        # getBundleDataForLoadShedding() iteration order (Collectors.toMap from the CHM).
        ordered = load.shedding_order(owned, value)
        values: list[tuple[str, float]] = []
        recently = load.recently_unloaded
        for b in ordered:
            v = value(b)
            if b in recently:
                out.append(BundleCandidate(high, b, v, False, _RECENTLY))
                continue
            values.append((b, v))
        # Java sorts descending with Double.compare(e2, e1), stably: negate the key (reversing
        # the list would also reverse the order of equal values).
        values.sort(key=lambda t: _neg_key(t[1]))
        return self._pick(values, high, low, by_rate, left)

    def _pick(self, values: Iterable[tuple[str, float]], high: str, low: str, by_rate: bool,
              left: float) -> list[Selection]:
        """The loop of rule 8 over the sorted bundles, each listed with what it did."""
        data, out = self.load.bundle_data, self.candidates
        chosen: list[Selection] = []
        for b, v in values:
            if v > 0 and v <= left:
                st = data[b].shortTermData
                chosen.append(
                    Selection(high, b, Reason.OVERLOADED, st.msg_rate, st.throughput, low)
                )
                out.append(BundleCandidate(high, b, v, True,
                                           AvgPickWhy("taken", by_rate, v, left, low)))
                left -= v
            elif not v > 0:
                out.append(BundleCandidate(high, b, v, False, _NO_TRAFFIC))
            else:
                out.append(BundleCandidate(high, b, v, False,
                                           AvgPickWhy("too-big", by_rate, v, left)))
        return chosen

    def _chosen(self, fresh: list[str], values: list[float], order: list[int],
                keys: list[Any], value: Callable[[str], float], high: str, low: str,
                left: float, stats: Mapping[str, NamespaceBundleStats] | None
                ) -> list[Selection]:
        """Rule 8's picks alone, no bundle listed. Which positions of the sorted values are
        taken depends on the values alone (equal values are equally taken, whatever their
        order), so the loop runs first on the values and only the runs of equal values holding
        a pick are then put in the map's order. With float keys (``-v``, :func:`_descending`)
        the loop goes from pick to pick, the next one found by bisection: those are the
        values ``<= left``. ``stats``: the first samples' stats, whose figures are the chosen
        bundles' ``shortTermData``'s (no ``BundleData`` built)."""
        taken: list[int] = []
        n = len(order)
        if n and isinstance(keys[0], float):
            ranked = [keys[i] for i in order]  # ascending -v
            p = bisect_left(ranked, -left) if left == left else n
            while p < n:
                v = values[order[p]]
                if not v > 0:  # descending: none after it is positive either
                    break
                if v <= left:
                    taken.append(p)
                    left -= v
                    p += 1
                else:  # the next value <= left
                    p = bisect_left(ranked, -left, p + 1)
        else:
            for p, i in enumerate(order):
                v = values[i]
                if v > 0 and v <= left:
                    taken.append(p)
                    left -= v
        _order_ties(self.load, fresh, order, keys, value, taken)
        data = self.load.bundle_data
        chosen: list[Selection] = []
        for p in taken:
            b = fresh[order[p]]
            st = stats[b] if stats is not None else data[b].shortTermData
            chosen.append(Selection(high, b, Reason.OVERLOADED, st.msg_rate, st.throughput, low))
        return chosen


def _descending(values: list[float]) -> tuple[list[int], list[Any]]:
    """The positions of ``values`` sorted as Java's ``Double.compare(e2, e1)`` sorts them
    (descending, stably: NaN first, 0.0 before -0.0), and each position's sort key (equal keys:
    a tie). Without NaN or zero, ``-v`` is that key (a float key sorts in C); otherwise
    :func:`_neg_key`."""
    keys: list[Any]
    if 0.0 in values or any(map(math.isnan, values)):  # ``in`` finds -0.0 too
        keys = list(map(_neg_key, values))
    else:
        keys = [-v for v in values]
    return sorted(range(len(values)), key=keys.__getitem__), keys


def _order_ties(load: LoadData, names: list[str], order: list[int], keys: list[Any],
                value: Callable[[str], float], wanted: Iterable[int]) -> None:
    """Put the runs of equal keys in ``order`` (positions into ``names``) that hold a position
    of ``wanted`` in ``getBundleDataForLoadShedding()``'s order, in place: the stable sort
    over that map keeps it among equal values. :meth:`LoadData.shedding_order` of only the
    tied names orders them as the whole map's order does (a key's place there depends on its
    own hash and, within a bucket, on the keys of that bucket with an equal value, which tie
    too)."""
    n = len(order)
    if len(set(keys)) == n:
        return
    runs: list[tuple[int, int]] = []
    seen = -1  # the end of the last run found
    for p in wanted:
        if p < seen:
            continue
        k = keys[order[p]]
        start = p
        while start > 0 and keys[order[start - 1]] == k:
            start -= 1
        end = p + 1
        while end < n and keys[order[end]] == k:
            end += 1
        seen = end
        if end - start > 1:
            runs.append((start, end))
    if not runs:
        return
    tied = [names[order[p]] for start, end in runs for p in range(start, end)]
    rank = {b: r for r, b in enumerate(load.shedding_order(tied, value))}
    for start, end in runs:
        order[start:end] = sorted(order[start:end], key=lambda i: rank[names[i]])


def _neg_key(x: float) -> tuple[bool, float, float]:
    """Descending ``Double.compare`` order as an ascending key: NaN first, then large to small."""
    if math.isnan(x):
        return (False, 0.0, 0.0)
    return (True, -x, -math.copysign(1.0, x))


def _java_string_key(s: str) -> bytes:
    """``String.compareTo`` order (UTF-16 code units), for ``Collections.sort`` of names."""
    return s.encode("utf-16-be")


#: How AvgShedder's placement half chose.
Placed = Literal[
    "planned",  # bundle, target: the shedder's plan
    "no-candidates",
    "no-plan",  # random pick: names (sorted candidates), pick
    "plan-gone",  # random pick; target: the planned broker, not a candidate
    "remembered",  # bundle, target: the pick stored at an earlier ask of this attempt
    "kept",  # bundle, target: the entry kept from an earlier attempt (before PR #26246)
]


class PlacedWhy(Why, frozen=True):
    code: Placed
    bundle: str = ""
    target: str = ""
    pick: str = ""
    names: tuple[str, ...] = ()


class AvgPicks(Struct, frozen=True):
    """AvgShedder's bundle → broker map as its placement half sees it.

    ``picks``: the random picks stored this unload attempt: a pick made when the planned broker
    was not a candidate is put in the same map as the plan (``bundleBrokerMap.put``), so the
    next ask for that bundle answers with it. ``kept``: in the releases before PR #26246 (the
    ``avgShedderBundleMap`` variant's ``bundle-data``), the entries earlier attempts left — their
    plans and picks, by bundle name — which the map never drops; empty from PR #26246."""

    picks: Mapping[str, str] = field(default_factory=lambda: _NO_PICKS)
    kept: Mapping[str, str] = field(default_factory=lambda: _NO_PICKS)


_NO_PICKS: Mapping[str, str] = MappingProxyType({})


@PLACEMENT.register(NAME, reads=READS)
class AvgShedderPlacement:
    """The placement half of ``AvgShedder`` (``selectBroker``).

    1. The map AvgShedder answers from holds, per bundle, the shedder's planned destination
       (``planned[bundle]``, the ``destination`` of its selections) or, once this half has drawn
       one for the bundle, that draw (memory: :class:`AvgPicks`). When that broker is a
       candidate, it is the answer.
    2. Otherwise (cluster starting, the bundle was not shed by AvgShedder, or the planned broker
       was filtered out or is gone) Pulsar sorts the candidates by name and indexes them with
       the CRC-32 of the text of a random ``int``, which is a uniform random pick; lbctl picks
       ``rng.randrange(len(candidates))`` from the sorted list (``--seed``) — and **stores the
       pick** in the map. ``ModularLoadManagerImpl.selectBroker`` asks a second time, over every
       broker the namespace policies allow, when the first answer is over the overload
       threshold: AvgShedder then answers with the stored pick, which may be the owner (the
       unload is then skipped), not with the planned low broker.

    From PR #26246 (4.0.14, 4.2.5) the map is keyed by bundle name and lives for one unload
    attempt (cleared when planning starts and when the attempt completes —
    :meth:`on_unload_attempt_completed`), so the stored picks are forgotten between cycles.

    Before it (AvgShedder at d76ae6831a1c; the ``avgShedderBundleMap`` variant) the map is keyed
    by the ``BundleData`` object itself — BundleData defines no ``equals``, so by identity — and
    nothing ever removes an entry: the plans ``findBundlesForUnloading`` puts and the picks
    ``selectBroker`` puts stay, and a later ``selectBroker`` of the bundle (a lookup after its
    owner unloaded it or stopped, a later cycle) answers with the stale broker when it is a
    candidate. An entry is found only while ``selectBroker`` is handed the same object: the
    leader's ``LoadData.getBundleData()`` keeps a bundle's ``BundleData`` and samples it in place
    (``updateBundleData`` puts a new one only for a bundle it does not hold), and drops it when
    no broker reports the bundle any more or when ``checkNamespaceBundleSplit`` splits it
    (ModularLoadManagerImpl at 009a9bf2cdff); a bundle that comes back gets a new object, and the
    old entry can no longer be reached. lbctl's assumption, from that: an entry lives while the
    bundle stays in the leader's bundle data from cycle to cycle (:meth:`on_bundle_data_update`
    drops the rest), with no lookup between two cycles; a new leader (a sequence's first cycle)
    starts from an empty map. A plan put this attempt replaces the kept entry, as the shedder's
    ``put`` does before any ``selectBroker``.
    """

    name = NAME

    def initial_memory(self) -> AvgPicks:
        return AvgPicks()

    def select(self, request: PlacementRequest, memory: Any) -> tuple[PlacementDecision, Any]:
        """``AvgShedder.selectBroker``: the map's broker for the bundle (the stored pick, else
        the shedder's plan) when it is a candidate, else a uniform random pick among the
        candidates sorted by name, stored for the next ask."""
        picks = memory.picks if isinstance(memory, AvgPicks) else _NO_PICKS
        cands = tuple(request.candidates)
        bundle, load = request.bundle, request.load
        weights = request.settings.weights4()
        scores = MappingProxyType({
            c: load.brokers[c].local.max_resource_usage_with_weight(*weights) * 100
            for c in cands
            if c in load.brokers
        })
        stored = picks.get(bundle)
        planned = request.planned.get(bundle)
        kept = memory.kept.get(bundle) if isinstance(memory, AvgPicks) else None
        target = stored if stored is not None else planned if planned is not None else kept
        if target is not None and target in cands:
            why = (PlacedWhy("remembered", bundle, target) if stored is not None
                   else PlacedWhy("planned", bundle, target) if planned is not None
                   else PlacedWhy("kept", bundle, target))
            return PlacementDecision(NAME, bundle, target, cands, scores, (target,), why), memory
        if not cands:
            return PlacementDecision(NAME, bundle, None, cands,
                                     why=PlacedWhy("no-candidates")), memory
        ordered = tuple(sorted(cands, key=_java_string_key))
        pick = ordered[request.rng.randrange(len(ordered))]
        why = (PlacedWhy("no-plan", bundle, pick=pick, names=ordered) if target is None
               else PlacedWhy("plan-gone", bundle, target, pick, ordered))
        left = memory.kept if isinstance(memory, AvgPicks) else _NO_PICKS
        stored_now = AvgPicks(MappingProxyType({**picks, bundle: pick}), left)
        return PlacementDecision(NAME, bundle, pick, cands, scores, ordered, why), stored_now

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> Any:
        return memory

    def on_unload_attempt_completed(self, memory: Any, planned: Mapping[str, str] = _NO_PICKS,
                                    settings: Settings | None = None) -> AvgPicks:
        """From PR #26246 the attempt's ``finally`` clears the map: nothing is carried on.
        Before it (``settings`` of such a release) the map keeps everything: the entries kept
        so far, then this attempt's plans (``planned``, put by the shedder first), then the
        picks stored at its asks (put last)."""
        if settings is None or settings.profile["avgShedderBundleMap"] == "name":
            return AvgPicks()
        old = memory if isinstance(memory, AvgPicks) else AvgPicks()
        if not (old.kept or planned or old.picks):
            return AvgPicks()
        return AvgPicks(_NO_PICKS, MappingProxyType({**old.kept, **planned, **old.picks}))

    def on_bundle_data_update(self, memory: Any, load: LoadData) -> Any:
        """Before PR #26246: the kept entries of bundles whose ``BundleData`` the leader dropped
        (no broker reports them, or split this cycle) can no longer be found, as a later lookup
        is handed a new object: they are forgotten."""
        if not isinstance(memory, AvgPicks) or not memory.kept:
            return memory
        data, away = load.bundle_data, load.split_away
        alive = {b: x for b, x in memory.kept.items() if b in data and b not in away}
        if len(alive) == len(memory.kept):
            return memory
        return AvgPicks(memory.picks, MappingProxyType(alive))
