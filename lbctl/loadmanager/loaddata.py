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

from collections.abc import Mapping, Sequence
from itertools import chain
from types import MappingProxyType

from lbctl.model.bundle import count_system_bundles
from lbctl.model.bundlecolumns import BundleColumns, numpy_or_none
from lbctl.model.cluster import ClusterState, NameIndex
from lbctl.model.cycle import LeaderMaps
from lbctl.model.javaorder import (
    ConcurrentOrder,
    MapHistory,
    concurrent_order,
    hashset_copy_capacity,
    java_hash_order,
)
from lbctl.model.load import BundleData, NamespaceBundleStats, TimeAverageBrokerData
from lbctl.model.loaddata import BrokerData, BundleDataView, LoadData

#: a sequence's cycles keep their bundle data as numpy columns (when numpy is installed) from this
#: many bundles: below it, importing numpy costs more than it saves
COLUMNS_FROM = 512


def update_bundle_data(
    state: ClusterState, previous: Mapping[str, BundleData] | None = None, samples: int = 1,
    reported: Mapping[str, NamespaceBundleStats] | None = None,
    order: Sequence[str] | None = None,
) -> BundleDataView:
    """Bundle data after this snapshot's reports.

    A snapshot that carries Pulsar's own ``bundleData`` is taken as is (it already holds the
    samples); bundles it lacks (Pulsar persists only the top bundles) are built from ``lastStats``.
    Otherwise each reported bundle's data from ``previous`` (the last cycle of a sequence) takes one
    sample per load report written since the previous snapshot (``samples``; the leader samples
    every bundle each time a broker writes its report, see :mod:`lbctl.loadmanager.clock`).

    ``reported``: every report's ``lastStats`` already merged (:func:`leader_maps_and_reports`),
    else they are merged here in the snapshot's order; ``order``: ``reported``'s keys in the
    order the leader put them, when ``reported`` iterates in another (the view iterates so).
    """
    stats: Mapping[str, NamespaceBundleStats]
    if reported is None:
        stats = {}
        for local in state.brokers.values():
            stats.update(local.lastStats)
    else:
        stats = reported
    if order is not None and (previous or state.bundle_data):
        # a history to sample or stored data: take the plain way, a table in the put order
        stats, order = {b: stats[b] for b in order}, None
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
    return BundleDataView(stats, previous, state.bundle_data, samples, order)


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


_NO_STATS: Mapping[str, Mapping[str, NamespaceBundleStats]] = MappingProxyType({})


def leader_maps_and_reports(
    state: ClusterState, previous: LeaderMaps | None = None
) -> tuple[LeaderMaps, Mapping[str, NamespaceBundleStats], tuple[str, ...] | None]:
    """The leader's ``brokerData`` and ``bundleData`` maps after this snapshot's update, carried
    on from ``previous`` (the last cycle of a sequence; ``None``: a leader that starts now).

    ``ModularLoadManagerImpl.updateAllBrokerData`` walks ``getAvailableBrokers()`` — a
    ``new HashSet<>(list)``, so in that set's hash order — putting each broker with a load report
    not yet in the map and removing one without, then removes the brokers no longer available.
    ``updateBundleData`` then walks the broker map in *its* iteration order and each broker's
    ``lastStats``, putting every bundle not yet known; bundles no broker reports any more are
    removed. Keys already present keep their place, and the tables never shrink.

    What a snapshot cannot tell and lbctl assumes: the metadata store lists the brokers in the
    snapshot's order; removals happen in the order the keys were put (the map's own order only
    matters for a tree bin); no lookup (``selectBrokerForAssignment``'s ``computeIfAbsent``) put
    a bundle between two snapshots.

    Also returns every report's ``lastStats`` merged into one map in the order
    ``updateBundleData`` walks them (the broker map's order, then each report's): the bundle
    map's new keys are that map's keys in order, so a first fill takes that very dict as the
    map's keys (:meth:`MapHistory.then_puts`; nothing mutates it afterwards) instead of a second
    table of every name, and the cycle's bundle data (:func:`update_bundle_data`'s
    ``reported``) is that same map.

    The third value is ``None``, except for a first fill from a snapshot whose reader kept its
    one-owner table (:attr:`NameIndex.owned`, every ``lastStats`` in the snapshot's order): that
    table is the map returned, no merge is made, and the third value is its keys in the order
    ``updateBundleData`` puts them (one pass at C speed over the reports, no table)."""
    prev = previous or LeaderMaps()
    brokers = prev.brokers
    if brokers.live.keys() != state.brokers.keys():  # else: every broker kept its place
        available = state.available()
        active = set(available)
        ops = [(b, b in state.brokers)
               for b in java_hash_order(available, capacity=hashset_copy_capacity(len(available)))]
        ops += [(b, True) for b in state.brokers if b not in active]  # reported, not listed
        ops += [(b, False) for b in brokers.live if b not in active and b not in state.brokers]
        brokers = brokers.then(ops)
    names = state.name_index()  # the reader's dicts behind the reports' lastStats, when known
    raw = names.stats if names is not None else _NO_STATS
    reporting = [b for b in map_order(brokers) if b in state.brokers]  # every one is in the map
    known = prev.bundles.live
    if not known and names is not None and names.owned is not None:
        # one owner per bundle (the reader checked it): the table holds exactly the merge's
        # entries; each report's dict, chained in the broker map's order, gives the put order
        owned = names.owned
        order = tuple(chain.from_iterable(map(raw.__getitem__, reporting)))
        return LeaderMaps(brokers, prev.bundles.then_puts(owned, order=order)), owned, order
    reports: dict[str, NamespaceBundleStats] = {}
    for b in reporting:
        reports.update(raw.get(b, state.brokers[b].lastStats))
    if not known:
        return LeaderMaps(brokers, prev.bundles.then_puts(reports)), reports, None
    if known.keys() == reports.keys():  # the same bundles: the map is unchanged
        return ((prev if brokers is prev.brokers else LeaderMaps(brokers, prev.bundles)), reports,
                None)
    removes = known.keys() - reports.keys()
    return (LeaderMaps(brokers, prev.bundles.then_puts(
        reports, [x for x in prev.bundles.in_order() if x in removes])), reports, None)


#: the last histories' orders: a sequence's cycles mostly keep the same keys (``then`` returns the
#: very same history then), so the same map is not replayed again
_ORDERS: list[tuple[MapHistory, ConcurrentOrder]] = []


def map_of(history: MapHistory) -> ConcurrentOrder:
    """The ``ConcurrentHashMap`` a history leaves (memoised for the last few histories)."""
    for h, order in _ORDERS:
        if h is history:
            return order
    order = ConcurrentOrder((), history=history)
    _ORDERS.insert(0, (history, order))
    del _ORDERS[4:]
    return order


def map_order(history: MapHistory) -> list[str]:
    """Every key of a (small) map, in its iteration order."""
    return map_of(history).order()


def build_load_data(
    state: ClusterState,
    bundle_data: Mapping[str, BundleData],
    recently_unloaded: Mapping[str, int] | None = None,
    *,
    pulsar_system: bool = True,
    maps: LeaderMaps | None = None,
    names: NameIndex | None = None,
) -> LoadData:
    """``LoadData`` for one cycle at ``state.captured_at``, brokers in ``ConcurrentHashMap`` order:
    the maps' histories when given (:func:`leader_maps_and_reports`), else maps filled once in the snapshot's
    order. ``names``: the state's name index (:meth:`ClusterState.name_index`), given only when
    ``bundle_data``'s keys are exactly the names of the state's ``lastStats`` (a cycle's merged
    reports): it then counts the system namespaces' bundles without a walk over every name."""
    brokers: dict[str, BrokerData] = {}
    if maps is not None:
        order = [b for b in map_order(maps.brokers) if b in state.brokers]
    else:
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
    elif names is not None:
        system = names.system_bundles(pulsar_system)
    else:
        system = count_system_bundles(bundle_data, pulsar_system)
    return LoadData(
        brokers=MappingProxyType(brokers),
        bundle_data=bundle_data,
        recently_unloaded=MappingProxyType(dict(recently_unloaded or {})),
        now=state.captured_at,
        system_bundles=system,
        pulsar_system=pulsar_system,
        bundle_map=None if maps is None else map_of(maps.bundles),
    )
