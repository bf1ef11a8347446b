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
(Topics, Sessions, MsgRate, Bandwidth), with the figures against their limits as that class logs
them ("Message Rate: 49976/30000 msg/s").

The load manager then splits each picked bundle (``checkNamespaceBundleSplit``, in
:mod:`lbctl.loadmanager.modular`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet

from lbctl.config import Settings
from lbctl.model.bundle import namespace_of
from lbctl.model.bundlecolumns import BundleColumns
from lbctl.model.decision import Reason, SplitCandidate
from lbctl.model.load import NamespaceBundleStats
from lbctl.model.loaddata import BundleDataView, LoadData
from lbctl.strategies.split.base import (
    MB,
)
from lbctl.units import whole

#: integers below this magnitude convert to float64 exactly (the column comparisons' limits)
_EXACT = 2**53


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


def find_bundles_to_split(
    load: LoadData, settings: Settings, bundle_count: Callable[[str], int]
) -> tuple[SplitCandidate, ...]:
    """``BundleSplitterTask.findBundlesToSplit``; ``bundle_count(ns)`` is
    ``NamespaceService.getBundleCount``. Returns every bundle over a threshold, picked or not."""
    max_bundles = int(settings["loadBalancerNamespaceMaximumBundles"])
    max_topics = int(settings["loadBalancerNamespaceBundleMaxTopics"])
    max_sessions = int(settings["loadBalancerNamespaceBundleMaxSessions"])
    max_rate = int(settings["loadBalancerNamespaceBundleMaxMsgRate"])
    max_bw_mb = int(settings["loadBalancerNamespaceBundleMaxBandwidthMbytes"])
    max_bw = max_bw_mb * MB

    out: list[SplitCandidate] = []
    picked: dict[str, int] = {}
    view = load.bundle_data
    # every bundle's data just this cycle's first sample: its long-term figures are its stats
    all_first = isinstance(view, BundleDataView) and view.first_samples_only()
    stored = view.stored() if isinstance(view, BundleDataView) else None
    columns = stored if isinstance(stored, BundleColumns) else None
    totals: Mapping[str, tuple[float, float]] | None = None
    # a long sequence's columns: the long-term figures over their limits found per column; a
    # bundle in the columns and not among them, with few topics and sessions, fires nothing
    in_columns: Mapping[str, int] = {}
    over: AbstractSet[str] = frozenset()
    if columns is not None and not all_first and abs(max_rate) < _EXACT and abs(max_bw) < _EXACT:
        in_columns = columns.key_index()
        over = columns.long_term_over(max_rate, max_bw)
    for broker, bd in load.brokers.items():
        for bundle, stats in bd.local.lastStats.items():
            topics = stats.topics
            if topics < 2:
                continue
            if (topics <= max_topics and bundle in in_columns and bundle not in over
                    and (max_sessions <= 0
                         or stats.consumerCount + stats.producerCount <= max_sessions)):
                continue
            if totals is None and columns is not None:
                totals = columns.long_term_totals()
            if all_first:  # _long_term's first case, inline (same sums, same order)
                rate = stats.msgRateIn + stats.msgRateOut
                tp = stats.msgThroughputIn + stats.msgThroughputOut
            elif totals is not None and bundle in totals:  # _long_term's columns case, inline
                rate, tp = totals[bundle]
            else:
                rate, tp = _long_term(load, bundle, stats)
            sessions = stats.consumerCount + stats.producerCount
            if stats.topics > max_topics:
                reason, detail = Reason.TOPICS, f"Topics: {stats.topics}/{max_topics}"
            elif max_sessions > 0 and sessions > max_sessions:
                reason = Reason.SESSIONS
                detail = (f"Sessions: ({stats.producerCount}+{stats.consumerCount})"
                          f"/{max_sessions}")
            elif rate > max_rate:
                reason, detail = Reason.MSG_RATE, f"Message Rate: {whole(rate)}/{max_rate} msg/s"
            elif tp > max_bw:
                reason = Reason.BANDWIDTH
                detail = f"Message Throughput: {whole(tp / MB)}/{max_bw_mb} MB/s"
            else:
                continue
            ns = namespace_of(bundle)
            count = bundle_count(ns)
            selected = count + picked.get(ns, 0) < max_bundles
            why = "" if selected else (
                f"namespace {ns} has {count} bundles (+{picked.get(ns, 0)} picked this cycle): "
                f"loadBalancerNamespaceMaximumBundles is {max_bundles}")
            if selected:
                picked[ns] = picked.get(ns, 0) + 1
            out.append(SplitCandidate(bundle, broker, reason, detail, stats.topics, sessions,
                                      rate, tp, selected, why))
    return tuple(out)


