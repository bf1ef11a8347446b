"""Turning a snapshot into the ``LoadData`` the leader broker would hold.

Mirrors ``ModularLoadManagerImpl.updateBundleData()``: every bundle a broker reports in
``lastStats`` updates its ``BundleData`` (a never-seen bundle starts from the default stats, which
the first sample overwrites); bundles no broker reports are dropped; each broker's
``TimeAverageBrokerData`` is re-summed over the bundles it reports.

A cycle reads the ``BundleData`` of few bundles (those of the brokers being shed, and those being
placed), so :class:`BundleDataView` builds each one on first access; a snapshot of 200,000 bundles
then costs what its shed brokers cost, not 200,000 object constructions.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from lbctl.model.bundle import count_system_bundles
from lbctl.model.bundlecolumns import BundleColumns, numpy_or_none
from lbctl.model.cluster import ClusterState
from lbctl.model.javaorder import concurrent_order
from lbctl.model.load import BundleData, NamespaceBundleStats, TimeAverageBrokerData
from lbctl.model.loaddata import BrokerData, BundleDataView, LoadData

#: a sequence's cycles keep their bundle data as numpy columns (when numpy is installed) from this
#: many bundles: below it, importing numpy costs more than it saves
COLUMNS_FROM = 512


def update_bundle_data(
    state: ClusterState, previous: Mapping[str, BundleData] | None = None, samples: int = 1
) -> BundleDataView:
    """Bundle data after this snapshot's reports.

    A snapshot that carries Pulsar's own ``bundleData`` is taken as is (it already holds the
    samples); bundles it lacks (Pulsar persists only the top bundles) are built from ``lastStats``.
    Otherwise each reported bundle's data from ``previous`` (the last cycle of a sequence) takes one
    sample per load report written since the previous snapshot (``samples``; the leader samples
    every bundle each time a broker writes its report, see :mod:`lbctl.loadmanager.clock`).
    """
    stats: dict[str, NamespaceBundleStats] = {}
    for local in state.brokers.values():
        stats.update(local.lastStats)
    if (samples == 0 and isinstance(previous, BundleDataView) and not state.bundle_data
            and previous.keys() == stats.keys()):
        return previous  # no report written, the same bundles: the leader's data is unchanged
    if len(stats) >= COLUMNS_FROM and previous and not state.bundle_data:
        np = numpy_or_none()
        if np is not None:  # a sequence's later cycle: every bundle sampled, per column
            base = previous.stored() if isinstance(previous, BundleDataView) else previous
            if not (isinstance(base, BundleColumns) and len(base) == len(previous)):
                base = BundleColumns.of(np, _materialized(previous))
            return BundleDataView(stats, None, base.sampled(stats, [], samples), samples)
    if isinstance(previous, BundleDataView):
        previous = previous.materialized()  # do not chain views across a long sequence
    return BundleDataView(stats, previous, state.bundle_data, samples)


def _materialized(data: Mapping[str, BundleData]) -> Mapping[str, BundleData]:
    return data.materialized() if isinstance(data, BundleDataView) else data


def _time_average(bundles: Mapping[str, NamespaceBundleStats],
                  data: Mapping[str, BundleData]) -> TimeAverageBrokerData:
    """``TimeAverageBrokerData.reset`` over a broker's reported bundles, without building the
    bundle data of first samples (whose short- and long-term figures are the stats themselves)."""
    if not isinstance(data, BundleDataView):
        return TimeAverageBrokerData.of(bundles.keys(), data)
    tin = tout = rin = rout = 0.0
    rest = []
    first = data.is_first_sample
    if data.first_samples_only():  # every one: the same sums without a call per bundle
        for st in bundles.values():
            tin += st.msgThroughputIn
            tout += st.msgThroughputOut
            rin += st.msgRateIn
            rout += st.msgRateOut
        return TimeAverageBrokerData(tin, tout, rin, rout, tin, tout, rin, rout)
    for b, st in bundles.items():
        if first(b):
            tin += st.msgThroughputIn
            tout += st.msgThroughputOut
            rin += st.msgRateIn
            rout += st.msgRateOut
        else:
            rest.append(b)
    if not rest:
        return TimeAverageBrokerData(tin, tout, rin, rout, tin, tout, rin, rout)
    other = TimeAverageBrokerData.of(rest, data)
    return TimeAverageBrokerData(
        tin + other.shortTermMsgThroughputIn, tout + other.shortTermMsgThroughputOut,
        rin + other.shortTermMsgRateIn, rout + other.shortTermMsgRateOut,
        tin + other.longTermMsgThroughputIn, tout + other.longTermMsgThroughputOut,
        rin + other.longTermMsgRateIn, rout + other.longTermMsgRateOut,
    )


def _columns(data: Mapping[str, BundleData]) -> BundleColumns | None:
    """The simulator's bundle data as columns (:mod:`lbctl.model.bundlecolumns`), when the cycle
    takes it as is for every reported bundle."""
    if isinstance(data, BundleDataView):
        data = data.stored()
    return data if isinstance(data, BundleColumns) else None


def build_load_data(
    state: ClusterState,
    bundle_data: Mapping[str, BundleData],
    recently_unloaded: Mapping[str, int] | None = None,
    *,
    pulsar_system: bool = True,
) -> LoadData:
    """``LoadData`` for one cycle at ``state.captured_at``, brokers in ``ConcurrentHashMap`` order."""
    brokers: dict[str, BrokerData] = {}
    order = concurrent_order(state.brokers)
    columns = _columns(bundle_data)
    averages = (columns.time_averages([state.brokers[b].lastStats for b in order])
                if columns is not None else None)
    for i, broker in enumerate(order):
        local = state.brokers[broker]
        brokers[broker] = BrokerData(
            local=local, time_average=(averages[i] if averages is not None
                                       else _time_average(local.lastStats, bundle_data)))
    if not isinstance(bundle_data, BundleDataView):
        bundle_data = MappingProxyType(dict(bundle_data))
    if averages is not None and columns is not None and len(columns) == len(bundle_data):
        # every reported bundle is in the columns (checked by time_averages), as many: the same keys
        system = columns.system_bundles(pulsar_system)
    else:
        system = count_system_bundles(bundle_data, pulsar_system)
    return LoadData(
        brokers=MappingProxyType(brokers),
        bundle_data=bundle_data,
        recently_unloaded=MappingProxyType(dict(recently_unloaded or {})),
        now=state.captured_at,
        system_bundles=system,
        pulsar_system=pulsar_system,
    )
