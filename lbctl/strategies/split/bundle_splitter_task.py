"""Which bundles the modular load manager splits on its own.

``find_bundles_to_split`` mirrors ``org.apache.pulsar.broker.loadbalance.impl.BundleSplitterTask``:

* every broker (``LoadData`` order), every bundle of its ``lastStats`` (report order);
* fewer than 2 topics: never split;
* split when ``topics > loadBalancerNamespaceBundleMaxTopics``, or (when
  ``loadBalancerNamespaceBundleMaxSessions > 0``) ``producers + consumers`` exceed it, or the
  bundle's **long-term** ``msgRateIn + msgRateOut > loadBalancerNamespaceBundleMaxMsgRate``, or its
  long-term throughput exceeds ``loadBalancerNamespaceBundleMaxBandwidthMbytes`` MiB/s (rates count
  as 0 when the bundle has no bundle data); all comparisons strict;
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
    """A reason of :class:`Splitter`: the namespace, its bundle count, the bundles of it already
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
                   max_bw_mb, max_bw_mb * MB)

    def fired(self, stats: NamespaceBundleStats, rate: float, tp: float
              ) -> tuple[Reason, int] | None:
        """The first limit exceeded (Topics, Sessions, MsgRate, Bandwidth) and its value."""
        if stats.topics > self.max_topics:
            return Reason.TOPICS, self.max_topics
        if self.max_sessions > 0 and stats.consumerCount + stats.producerCount > self.max_sessions:
            return Reason.SESSIONS, self.max_sessions
        if rate > self.max_rate:
            return Reason.MSG_RATE, self.max_rate
        if tp > self.max_bw:
            return Reason.BANDWIDTH, self.max_bw_mb
        return None


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


class _LongTermFigures:
    """The long-term message rate and throughput of each bundle, read the cheapest way the
    bundle data allows: the stats themselves when every bundle's data is this cycle's first
    sample; a long sequence's columns, whose figures over the limits are found per column (a
    bundle there and not among them, with few topics and sessions, fires nothing)."""

    def __init__(self, load: LoadData, limits: _Limits) -> None:
        self.load = load
        self.limits = limits
        view = load.bundle_data
        self.all_first = isinstance(view, BundleDataView) and view.first_samples_only()
        stored = view.stored() if isinstance(view, BundleDataView) else None
        self.columns = stored if isinstance(stored, BundleColumns) else None
        self.totals: Mapping[str, tuple[float, float]] | None = None
        self.in_columns: Mapping[str, int] = {}
        self.over: AbstractSet[str] = frozenset()
        if (self.columns is not None and not self.all_first and abs(limits.max_rate) < _EXACT
                and abs(limits.max_bw) < _EXACT):
            self.in_columns = self.columns.key_index()
            self.over = self.columns.long_term_over(limits.max_rate, limits.max_bw)

    def quiet(self, bundle: str, stats: NamespaceBundleStats) -> bool:
        """Known from the columns to fire no limit."""
        limits = self.limits
        return (stats.topics <= limits.max_topics and bundle in self.in_columns
                and bundle not in self.over
                and (limits.max_sessions <= 0
                     or stats.consumerCount + stats.producerCount <= limits.max_sessions))

    def of(self, bundle: str, stats: NamespaceBundleStats) -> tuple[float, float]:
        if self.totals is None and self.columns is not None:
            self.totals = self.columns.long_term_totals()
        if self.all_first:  # _long_term's first case, inline (same sums, same order)
            return (stats.msgRateIn + stats.msgRateOut,
                    stats.msgThroughputIn + stats.msgThroughputOut)
        if self.totals is not None and bundle in self.totals:  # _long_term's columns case
            return self.totals[bundle]
        return _long_term(self.load, bundle, stats)


def find_bundles_to_split(
    load: LoadData, settings: Settings, bundle_count: Callable[[str], int]
) -> tuple[SplitCandidate, ...]:
    """``BundleSplitterTask.findBundlesToSplit``; ``bundle_count(ns)`` is
    ``NamespaceService.getBundleCount``. Returns every bundle over a threshold, picked or not:
    every broker's ``lastStats``, bundles of 2 topics or more, the first limit their figures
    exceed, then the namespace's bundle count against ``loadBalancerNamespaceMaximumBundles``."""
    limits = _Limits.of(settings)
    figures = _LongTermFigures(load, limits)
    out: list[SplitCandidate] = []
    picked: dict[str, int] = {}
    for broker, bd in load.brokers.items():
        for bundle, stats in bd.local.lastStats.items():
            if stats.topics < 2 or figures.quiet(bundle, stats):
                continue
            rate, tp = figures.of(bundle, stats)
            fired = limits.fired(stats, rate, tp)
            if fired is None:
                continue
            ns = namespace_of(bundle)
            count = bundle_count(ns)
            selected = count + picked.get(ns, 0) < limits.max_bundles
            why = None if selected else SplitterWhy(
                "namespace-full", ns, count, picked.get(ns, 0), limits.max_bundles)
            if selected:
                picked[ns] = picked.get(ns, 0) + 1
            out.append(SplitCandidate(bundle, broker, fired[0], fired[1], stats.topics,
                                      stats.producerCount, stats.consumerCount, rate, tp,
                                      selected, why))
    return tuple(out)
