"""Turning a snapshot into the ``LoadData`` the leader broker would hold.

Mirrors ``ModularLoadManagerImpl.updateBundleData()``: every bundle a broker reports in
``lastStats`` updates its ``BundleData`` (a never-seen bundle starts from the default stats, which
the first sample overwrites); bundles no broker reports are dropped; each broker's
``TimeAverageBrokerData`` is re-summed over the bundles it reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from lbctl.model.cluster import ClusterState
from lbctl.model.javaorder import concurrent_order
from lbctl.model.load import BundleData, TimeAverageBrokerData
from lbctl.strategies.base import BrokerData, LoadData, count_system_bundles


def update_bundle_data(
    state: ClusterState, previous: Mapping[str, BundleData] | None = None
) -> dict[str, BundleData]:
    """Bundle data after this snapshot's reports.

    A snapshot that carries Pulsar's own ``bundleData`` is taken as is (it already holds the
    samples); bundles it lacks (Pulsar persists only the top bundles) are built from ``lastStats``.
    Otherwise each reported bundle's data from ``previous`` (the last cycle of a sequence) takes one
    sample, as the leader does on every load-report refresh.
    """
    given = state.bundle_data
    prev = previous or {}
    out: dict[str, BundleData] = {}
    for local in state.brokers.values():
        for bundle, stats in local.lastStats.items():
            if given is not None and bundle in given:
                out[bundle] = given[bundle]
                continue
            base = prev.get(bundle)
            if base is None:
                base = BundleData.new()
            out[bundle] = base.update(stats)
    return out


def build_load_data(
    state: ClusterState,
    bundle_data: Mapping[str, BundleData],
    recently_unloaded: Mapping[str, int] | None = None,
) -> LoadData:
    """``LoadData`` for one cycle at ``state.captured_at``, brokers in ``ConcurrentHashMap`` order."""
    brokers: dict[str, BrokerData] = {}
    for broker in concurrent_order(state.brokers):
        local = state.brokers[broker]
        brokers[broker] = BrokerData(
            local=local,
            time_average=TimeAverageBrokerData.of(local.lastStats.keys(), bundle_data),
        )
    return LoadData(
        brokers=MappingProxyType(brokers),
        bundle_data=MappingProxyType(dict(bundle_data)),
        recently_unloaded=MappingProxyType(dict(recently_unloaded or {})),
        now=state.captured_at,
        system_bundles=count_system_bundles(bundle_data),
    )
