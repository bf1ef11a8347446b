"""Which bundles the modular load manager splits on its own, and how.

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

``auto_splits`` mirrors ``ModularLoadManagerImpl.checkNamespaceBundleSplit``: only when
``loadBalancerAutoBundleSplitEnabled`` and more than one broker is known; each picked bundle (in the
result ``HashMap``'s order) is split with the broker's ``defaultNamespaceBundleSplitAlgorithm``
(Pulsar passes no algorithm), unless its range cannot be split or it no longer exists; the children
are unloaded when ``loadBalancerAutoUnloadSplitBundlesEnabled``.
"""

from __future__ import annotations

from collections.abc import Callable

from lbctl.config import Settings
from lbctl.model.bundle import BundleName, BundleNameError, namespace_of
from lbctl.model.cluster import ClusterState
from lbctl.model.decision import AutoSplit, Reason, SplitCandidate
from lbctl.model.javaorder import java_hash_order
from lbctl.model.load import NamespaceBundleStats
from lbctl.model.loaddata import BundleDataView, LoadData
from lbctl.strategies.split.base import (
    MB,
    SplitError,
    algorithm_by_name,
    apply_boundaries,
    option_for,
)


def _n(x: float) -> str:
    """A figure as Pulsar's logs print it: whole numbers without decimals."""
    return f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}"


def _long_term(load: LoadData, bundle: str, stats: NamespaceBundleStats) -> tuple[float, float]:
    """Long-term message rate and throughput of ``bundle``, (0, 0) without bundle data.

    A bundle whose data is just this cycle's first sample has the stats themselves as long-term
    figures: read them without building its ``BundleData`` (a cycle of 200,000 bundles stays lazy).
    """
    data_map = load.bundle_data
    if isinstance(data_map, BundleDataView) and data_map.is_first_sample(bundle):
        return stats.msg_rate, stats.throughput  # the view holds every reported bundle
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
    for broker, bd in load.brokers.items():
        for bundle, stats in bd.local.lastStats.items():
            if stats.topics < 2:
                continue
            rate, tp = _long_term(load, bundle, stats)
            sessions = stats.consumerCount + stats.producerCount
            if stats.topics > max_topics:
                reason, detail = Reason.TOPICS, f"Topics: {stats.topics}/{max_topics}"
            elif max_sessions > 0 and sessions > max_sessions:
                reason = Reason.SESSIONS
                detail = (f"Sessions: ({stats.producerCount}+{stats.consumerCount})"
                          f"/{max_sessions}")
            elif rate > max_rate:
                reason, detail = Reason.MSG_RATE, f"Message Rate: {_n(rate)}/{max_rate} msg/s"
            elif tp > max_bw:
                reason = Reason.BANDWIDTH
                detail = f"Message Throughput: {_n(tp / MB)}/{max_bw_mb} MB/s"
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


def auto_splits(state: ClusterState, load: LoadData, settings: Settings) -> tuple[AutoSplit, ...]:
    """``checkNamespaceBundleSplit``: the splits the leader would make this cycle, in order."""
    if not settings["loadBalancerAutoBundleSplitEnabled"] or len(load.brokers) <= 1:
        return ()
    candidates = find_bundles_to_split(load, settings, state.namespace_bundle_count)
    picked = {c.bundle: c for c in candidates if c.selected}
    if not picked:
        return ()
    unload = bool(settings["loadBalancerAutoUnloadSplitBundlesEnabled"])
    algorithm = algorithm_by_name(None, settings)
    return tuple(_plan_one(state, settings, picked[b], algorithm, unload)
                 for b in java_hash_order(picked))


def _plan_one(state: ClusterState, settings: Settings, cand: SplitCandidate, algorithm,
              unload: bool) -> AutoSplit:
    try:
        name = BundleName.parse(cand.bundle)
    except BundleNameError as e:
        return AutoSplit(cand, algorithm.name, skipped=str(e))
    rng = name.range
    if not rng.can_split():
        return AutoSplit(cand, algorithm.name, skipped=f"range {rng} can't be split further")
    bounds = state.namespaces.get(name.namespace)
    if bounds is not None and not any(a == rng.lower and b == rng.upper
                                      for a, b in zip(bounds, bounds[1:], strict=False)):
        return AutoSplit(cand, algorithm.name,
                         skipped=f"{cand.bundle} is not one of the namespace's bundles any more")
    topics = state.topics_of_bundle(cand.bundle)
    try:
        result = algorithm.boundaries(option_for(rng, topics, state.topics, settings))
        if not result.boundaries:
            return AutoSplit(cand, algorithm.name, unload=unload, why=result.why,
                             skipped=f"{algorithm.name} found no split boundary: {result.why}")
        children = apply_boundaries(rng, result.boundaries)
    except SplitError as e:
        return AutoSplit(cand, algorithm.name, unload=unload, skipped=str(e))
    return AutoSplit(
        cand, algorithm.name, tuple(sorted(result.boundaries)),
        tuple(f"{name.namespace}/{c}" for c in children), unload, None, result.why)
