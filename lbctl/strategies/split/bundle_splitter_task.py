"""Which bundles the modular load manager splits on its own.

``find_bundles_to_split`` mirrors ``org.apache.pulsar.broker.loadbalance.impl.BundleSplitterTask``:

* every broker (``LoadData`` order), every bundle of its ``lastStats`` (report order);
* fewer than 2 topics: never split;
* split when ``topics > loadBalancerNamespaceBundleMaxTopics``, or (when
  ``loadBalancerNamespaceBundleMaxSessions > 0``) ``producers + consumers`` exceed it, or the
  bundle's **long-term** ``msgRateIn + msgRateOut > loadBalancerNamespaceBundleMaxMsgRate``, or its
  long-term throughput exceeds ``loadBalancerNamespaceBundleMaxBandwidthMbytes`` MiB/s (rates count
  as 0 when the bundle has no bundle data); all comparisons strict. Java ``int`` arithmetic is
  kept (:mod:`lbctl.model.javaint`): the bandwidth limit is ``MaxBandwidthMbytes * MIBI`` in
  ``int`` (2048 MB wraps to -2^31, 4096 MB to 0, so every bundle with throughput then splits
  for Bandwidth) and the session count an ``int`` sum;
* only while the namespace's bundle count plus the bundles already picked in it stays below
  ``loadBalancerNamespaceMaximumBundles``.

Pulsar's modular task records no reason; the reason here is the first condition that fires, in the
order of the extensible load manager's ``DefaultNamespaceBundleSplitStrategyImpl``
(Topics, Sessions, MsgRate, Bandwidth), with the figure and the limit it exceeded (worded as that
class logs them, "Message Rate: 49976/30000 msg/s", by :mod:`lbctl.explain.words.split`).

The load manager then splits each picked bundle (``checkNamespaceBundleSplit``, in
:mod:`lbctl.loadmanager.modular`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Literal

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.bundle import namespace_of
from lbctl.model.bundlecolumns import BundleColumns
from lbctl.model.decision import Reason, SplitCandidate, Why
from lbctl.model.javaint import INT_MAX, int_mul
from lbctl.model.load import NamespaceBundleStats
from lbctl.model.loaddata import BundleDataView, LoadData
from lbctl.strategies.split.base import (
    MB,
)

#: integers below this magnitude convert to float64 exactly (the column comparisons' limits)
_EXACT = 2**53


#: Why a bundle over a limit is not picked.
Splitter = Literal[
    "namespace-full",  # loadBalancerNamespaceMaximumBundles reached
]


class SplitterWhy(Why, frozen=True):
    """A reason of :data:`Splitter`: the namespace, its bundle count, the bundles of it already
    picked this cycle and ``loadBalancerNamespaceMaximumBundles``."""

    code: Splitter
    namespace: str
    count: int
    picked: int
    maximum: int


class _Limits(Struct, frozen=True):
    """The split thresholds ``findBundlesToSplit`` reads (bandwidth in MB/s and bytes/s)."""

    max_bundles: int
    max_topics: int
    max_sessions: int
    max_rate: int
    max_bw_mb: int
    max_bw: int

    @classmethod
    def of(cls, settings: Settings) -> _Limits:
        max_bw_mb = int(settings["loadBalancerNamespaceBundleMaxBandwidthMbytes"])
        return cls(int(settings["loadBalancerNamespaceMaximumBundles"]),
                   int(settings["loadBalancerNamespaceBundleMaxTopics"]),
                   int(settings["loadBalancerNamespaceBundleMaxSessions"]),
                   int(settings["loadBalancerNamespaceBundleMaxMsgRate"]),
                   max_bw_mb, int_mul(max_bw_mb, MB))  # int * int, then widened to long

    @classmethod
    def of_long(cls, settings: Settings) -> _Limits:
        """The same thresholds read as ``SimpleLoadManagerImpl.doNamespaceBundleSplit`` reads
        them: each widened to ``long``, and the bandwidth limit ``MaxBandwidthMbytes`` times a
        ``long`` MiB, which cannot wrap (``BundleSplitterTask`` multiplies two ``int`` s)."""
        max_bw_mb = int(settings["loadBalancerNamespaceBundleMaxBandwidthMbytes"])
        return cls(int(settings["loadBalancerNamespaceMaximumBundles"]),
                   int(settings["loadBalancerNamespaceBundleMaxTopics"]),
                   int(settings["loadBalancerNamespaceBundleMaxSessions"]),
                   int(settings["loadBalancerNamespaceBundleMaxMsgRate"]),
                   max_bw_mb, max_bw_mb * MB)

    def fired(self, stats: NamespaceBundleStats, rate: float, tp: float
              ) -> tuple[Reason, int] | None:
        """The first limit exceeded (Topics, Sessions, MsgRate, Bandwidth) and its value."""
        if stats.topics > self.max_topics:
            return Reason.TOPICS, self.max_topics
        if self.max_sessions > 0 and _sessions(stats) > self.max_sessions:
            return Reason.SESSIONS, self.max_sessions
        if rate > self.max_rate:
            return Reason.MSG_RATE, self.max_rate
        if tp > self.max_bw:  # reported as Pulsar logs it: maxBundleBandwidth / MIBI
            return Reason.BANDWIDTH, self.max_bw // MB
        return None


#: the split thresholds and the first-limit test, shared with the simple load manager's scan
#: (:mod:`lbctl.strategies.simple.split`)
SplitLimits = _Limits


def _sessions(stats: NamespaceBundleStats) -> int:
    """``stats.consumerCount + stats.producerCount`` in ``int`` (both are ``int`` counts of at
    most 2^31 - 1, so one wrap at most; inline, as the scan runs over every bundle)."""
    n = stats.consumerCount + stats.producerCount
    return n - 2**32 if n > INT_MAX else n


def _long_term(load: LoadData, bundle: str, stats: NamespaceBundleStats) -> tuple[float, float]:
    """Long-term message rate and throughput of ``bundle``, (0, 0) without bundle data.

    A bundle whose data is just this cycle's first sample has the stats themselves as long-term
    figures: read them without building its ``BundleData`` (a cycle of 200,000 bundles stays lazy).
    """
    data_map = load.bundle_data
    if isinstance(data_map, BundleDataView):
        if data_map.is_first_sample(bundle):
            return stats.msg_rate, stats.throughput  # the view holds every reported bundle
        stored = data_map.stored()
        if isinstance(stored, BundleColumns):  # a long sequence's columns: no object per bundle
            hit = stored.long_term_totals().get(bundle)
            if hit is not None:
                return hit
    data = data_map.get(bundle)
    if data is None:
        return 0.0, 0.0
    return data.longTermData.msg_rate, data.longTermData.throughput


class _Picker:
    """The bundles over a limit, picked or not: the namespace's bundle count (plus the bundles
    of it picked this cycle) must stay below ``loadBalancerNamespaceMaximumBundles``."""

    def __init__(self, limits: _Limits, bundle_count: Callable[[str], int]) -> None:
        self.limits = limits
        self.bundle_count = bundle_count
        self.picked: dict[str, int] = {}
        self.out: list[SplitCandidate] = []

    def over(self, broker: str, bundle: str, stats: NamespaceBundleStats, rate: float,
             tp: float) -> None:
        """A bundle that may exceed a limit (found by the fast test of the scan): the limit it
        exceeds first, if any, and whether it is picked."""
        fired = self.limits.fired(stats, rate, tp)
        if fired is None:
            return
        ns = namespace_of(bundle)
        count = self.bundle_count(ns)
        before = self.picked.get(ns, 0)
        selected = count + before < self.limits.max_bundles
        if selected:
            self.picked[ns] = before + 1
        why = None if selected else SplitterWhy("namespace-full", ns, count, before,
                                                self.limits.max_bundles)
        self.out.append(SplitCandidate(bundle, broker, fired[0], fired[1], stats.topics,
                                       stats.producerCount, stats.consumerCount, rate, tp,
                                       selected, why))


def find_bundles_to_split(
    load: LoadData, settings: Settings, bundle_count: Callable[[str], int]
) -> tuple[SplitCandidate, ...]:
    """``BundleSplitterTask.findBundlesToSplit``; ``bundle_count(ns)`` is
    ``NamespaceService.getBundleCount``. Returns every bundle over a threshold, picked or not:
    every broker's ``lastStats``, bundles of 2 topics or more, the first limit their long-term
    figures exceed, then the namespace's bundle count against
    ``loadBalancerNamespaceMaximumBundles``.

    The scan reads each bundle's figures the cheapest way the bundle data allows and tests
    them inline (it runs over every bundle: 200,000 in a large cycle); the few bundles that may
    exceed a limit go to the :class:`_Picker`."""
    limits = _Limits.of(settings)
    picker = _Picker(limits, bundle_count)
    view = load.bundle_data
    if isinstance(view, BundleDataView) and view.first_samples_only():
        _scan_first_samples(load, limits, picker)
    else:
        _scan(load, limits, picker)
    return tuple(picker.out)


def _scan_first_samples(load: LoadData, limits: _Limits, picker: _Picker) -> None:
    """Every bundle's data is this cycle's first sample: its long-term figures are its stats
    (:func:`_long_term`'s first case, inline: the same sums in the same order)."""
    max_topics, max_sessions = limits.max_topics, limits.max_sessions
    max_rate, max_bw = limits.max_rate, limits.max_bw
    for broker, bd in load.brokers.items():
        for bundle, stats in bd.local.lastStats.items():
            if stats.topics < 2:
                continue
            rate = stats.msgRateIn + stats.msgRateOut
            tp = stats.msgThroughputIn + stats.msgThroughputOut
            if (stats.topics <= max_topics and rate <= max_rate and tp <= max_bw
                    and (max_sessions <= 0
                         or (n := stats.consumerCount + stats.producerCount) <= max_sessions
                         or n > INT_MAX)):  # an int sum over INT_MAX wraps below the limit
                continue  # fires nothing (a NaN figure goes on to the picker, which skips it)
            picker.over(broker, bundle, stats, rate, tp)


def _scan(load: LoadData, limits: _Limits, picker: _Picker) -> None:
    """Bundle data from earlier cycles: a long sequence's columns give the figures over the
    limits per column (a bundle there and not among them, with few topics and sessions, fires
    nothing) and, when a bundle needs them, every bundle's long-term totals; others are read
    from their data."""
    view = load.bundle_data
    stored = view.stored() if isinstance(view, BundleDataView) else None
    columns = stored if isinstance(stored, BundleColumns) else None
    max_topics, max_sessions = limits.max_topics, limits.max_sessions
    max_rate, max_bw = limits.max_rate, limits.max_bw
    in_columns, over = _over_in_columns(columns, limits)
    totals: Mapping[str, tuple[float, float]] | None = None if columns is not None else {}
    kept: dict[int, _Eligible] = {}
    for broker, bd in load.brokers.items():
        reported = bd.local.lastStats
        eligible, static = _eligible(reported, max_topics, max_sessions, kept)
        # the bundles the loop below may not skip at its first test, found by set operations
        # (the simulator runs this over every bundle each cycle, reports mostly unchanged)
        # (difference with a dict: each eligible bundle looked up in it, not the dict walked)
        maybe = static | (eligible & over) | eligible.difference(
            in_columns if type(in_columns) is dict else set(in_columns))
        if not maybe:
            continue
        for bundle, stats in reported.items():
            if bundle not in maybe:
                continue
            # within the topic and session limits (every bundle here has two topics or more)
            quiet = bundle not in static
            if quiet and bundle in in_columns and bundle not in over:
                continue
            if totals is None:  # the first bundle that needs them (a quiet cycle: none)
                totals = columns.long_term_totals() if columns is not None else {}
            figures = totals.get(bundle)
            rate, tp = figures if figures is not None else _long_term(load, bundle, stats)
            if quiet and rate <= max_rate and tp <= max_bw:
                continue  # fires nothing (a NaN figure goes on to the picker, which skips it)
            picker.over(broker, bundle, stats, rate, tp)
    # only this cycle's reports stay cached: a replayed sequence's older reports are freed
    _ELIGIBLE.clear()
    _ELIGIBLE.update(kept)


_Eligible = tuple[Mapping[str, NamespaceBundleStats], tuple[int, int], frozenset[str],
                  frozenset[str]]
#: per report's ``lastStats`` (by identity; the mapping kept, so its id is not reused): the
#: limits read, its bundles of two topics or more, and those of them over the topic or session
#: limit (:func:`_eligible`)
_ELIGIBLE: dict[int, _Eligible] = {}


def _eligible(reported: Mapping[str, NamespaceBundleStats], max_topics: int, max_sessions: int,
              kept: dict[int, _Eligible]) -> tuple[frozenset[str], frozenset[str]]:
    """The bundles of ``reported`` with two topics or more, and those of them whose topics or
    sessions exceed their limit: figures of the report alone, kept (in ``kept``, the next
    cycle's cache) while the same report is read again (a report not rewritten is the same
    object cycle after cycle)."""
    hit = _ELIGIBLE.get(id(reported))
    if hit is not None and hit[0] is reported and hit[1] == (max_topics, max_sessions):
        kept[id(reported)] = hit
        return hit[2], hit[3]
    eligible = []
    static = []
    for bundle, stats in reported.items():
        topics = stats.topics
        if topics < 2:
            continue
        eligible.append(bundle)
        if topics > max_topics or not (
                max_sessions <= 0 or (n := stats.consumerCount + stats.producerCount)
                <= max_sessions or n > INT_MAX):  # an int sum over INT_MAX wraps below it
            static.append(bundle)
    got = (frozenset(eligible), frozenset(static))
    kept[id(reported)] = (reported, (max_topics, max_sessions), *got)
    return got


def _over_in_columns(columns: BundleColumns | None, limits: _Limits
                     ) -> tuple[Mapping[str, int], AbstractSet[str]]:
    """The bundles the columns hold, and those of them whose long-term figures exceed the rate
    or bandwidth limit (found per column; limits beyond float64's exact integers: none known)."""
    if columns is None or abs(limits.max_rate) >= _EXACT or abs(limits.max_bw) >= _EXACT:
        return {}, frozenset()
    return columns.key_index(), columns.long_term_over(limits.max_rate, limits.max_bw)
