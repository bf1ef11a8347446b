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

from collections.abc import Iterator, Mapping
from types import MappingProxyType

from lbctl.model.cluster import ClusterState
from lbctl.model.javaorder import concurrent_order
from lbctl.model.load import BundleData, NamespaceBundleStats, TimeAverageBrokerData
from lbctl.strategies.base import BrokerData, LoadData, count_system_bundles


class BundleDataView(Mapping[str, BundleData]):
    """Bundle data after one cycle's samples, each entry built when first read.

    Read-only from outside; the memo inside is an implementation detail. Entry for bundle ``b``:
    the snapshot's own ``bundleData[b]`` when it carries one (it already holds the samples), else
    ``previous[b].update(stats)``, else the first sample ``stats`` itself.
    """

    __slots__ = ("_built", "_given", "_prev", "_stats")

    def __init__(
        self,
        stats: Mapping[str, NamespaceBundleStats],
        previous: Mapping[str, BundleData] | None = None,
        given: Mapping[str, BundleData] | None = None,
    ):
        self._stats = stats
        self._prev = previous or {}
        self._given = given or {}
        self._built: dict[str, BundleData] = {}

    def __getitem__(self, bundle: str) -> BundleData:
        data = self._given.get(bundle)  # stored data is used as is: nothing to build
        if data is not None and bundle in self._stats:
            return data
        data = self._built.get(bundle)
        if data is None:
            stats = self._stats[bundle]  # KeyError: not reported, so not in LoadData
            data = self._given.get(bundle)
            if data is None:
                base = self._prev.get(bundle)
                data = BundleData.first_sample(stats) if base is None else base.update(stats)
            self._built[bundle] = data
        return data

    def get(self, bundle: str, default: BundleData | None = None) -> BundleData | None:  # type: ignore[override]
        """``Mapping.get`` without its exception round trip (called per bundle per cycle)."""
        if bundle not in self._stats:
            return default
        data = self._given.get(bundle)
        return data if data is not None else self[bundle]

    def __iter__(self) -> Iterator[str]:
        return iter(self._stats)

    def __len__(self) -> int:
        return len(self._stats)

    def __contains__(self, bundle: object) -> bool:
        return bundle in self._stats

    def is_first_sample(self, bundle: str) -> bool:
        """True when the entry is just the latest stats (no history, no stored data)."""
        return bundle not in self._given and bundle not in self._prev

    def materialized(self) -> dict[str, BundleData]:
        """Every entry, built (used when a sequence carries the data to its next cycle)."""
        return {b: self[b] for b in self._stats}


def update_bundle_data(
    state: ClusterState, previous: Mapping[str, BundleData] | None = None
) -> BundleDataView:
    """Bundle data after this snapshot's reports.

    A snapshot that carries Pulsar's own ``bundleData`` is taken as is (it already holds the
    samples); bundles it lacks (Pulsar persists only the top bundles) are built from ``lastStats``.
    Otherwise each reported bundle's data from ``previous`` (the last cycle of a sequence) takes one
    sample, as the leader does on every load-report refresh.
    """
    stats: dict[str, NamespaceBundleStats] = {}
    for local in state.brokers.values():
        stats.update(local.lastStats)
    if isinstance(previous, BundleDataView):
        previous = previous.materialized()  # do not chain views across a long sequence
    return BundleDataView(stats, previous, state.bundle_data)


def _time_average(bundles: Mapping[str, NamespaceBundleStats],
                  data: Mapping[str, BundleData]) -> TimeAverageBrokerData:
    """``TimeAverageBrokerData.reset`` over a broker's reported bundles, without building the
    bundle data of first samples (whose short- and long-term figures are the stats themselves)."""
    if not isinstance(data, BundleDataView):
        return TimeAverageBrokerData.of(bundles.keys(), data)
    tin = tout = rin = rout = 0.0
    rest = []
    for b, st in bundles.items():
        if data.is_first_sample(b):
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


def build_load_data(
    state: ClusterState,
    bundle_data: Mapping[str, BundleData],
    recently_unloaded: Mapping[str, int] | None = None,
) -> LoadData:
    """``LoadData`` for one cycle at ``state.captured_at``, brokers in ``ConcurrentHashMap`` order."""
    brokers: dict[str, BrokerData] = {}
    for broker in concurrent_order(state.brokers):
        local = state.brokers[broker]
        brokers[broker] = BrokerData(local=local,
                                     time_average=_time_average(local.lastStats, bundle_data))
    if not isinstance(bundle_data, BundleDataView):
        bundle_data = MappingProxyType(dict(bundle_data))
    return LoadData(
        brokers=MappingProxyType(brokers),
        bundle_data=bundle_data,
        recently_unloaded=MappingProxyType(dict(recently_unloaded or {})),
        now=state.captured_at,
        system_bundles=count_system_bundles(bundle_data),
    )
