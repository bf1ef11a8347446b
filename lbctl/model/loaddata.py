"""The data a modular load-manager cycle reads: Pulsar's ``LoadData`` and ``BrokerData``, and the
bundle data after one cycle's samples (:class:`BundleDataView`).

``LoadData`` is what the leader holds when a cycle runs (``ModularLoadManagerImpl.loadData``): every
broker's report with its bundles' time averages, every bundle's ``BundleData``, and the bundles
unloaded within the grace period. Strategies read it and never change it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from lbctl.model.bundle import (
    SYSTEM_PREFIXES,
    count_system_bundles,
    is_system_service_namespace,
    namespace_of,
)
from lbctl.model.javaorder import concurrent_capacity, hashmap_capacity, rehashed_order
from lbctl.model.load import (
    BundleData,
    LocalBrokerData,
    NamespaceBundleStats,
    TimeAverageBrokerData,
)

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class BrokerData:
    """``BrokerData``: the broker's report, its bundles' time averages, and preallocations."""

    local: LocalBrokerData
    time_average: TimeAverageBrokerData = TimeAverageBrokerData()
    preallocated: Mapping[str, BundleData] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, slots=True)
class LoadData:
    """``LoadData`` as the leader holds it when a cycle runs.

    ``brokers`` iterates in Java ``HashMap`` order (see :mod:`lbctl.model.javaorder`), because
    Pulsar's shedders iterate its ``ConcurrentHashMap`` and break ties by the first broker found.
    ``recently_unloaded`` is already cut to the grace period.
    """

    brokers: Mapping[str, BrokerData]
    bundle_data: Mapping[str, BundleData]
    recently_unloaded: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    now: int = 0
    system_bundles: int = -1  # bundles of system namespaces in bundle_data; -1: not counted yet

    def shedding_order(self, bundles: Iterable[str]) -> list[str]:
        """``bundles`` in the order ``getBundleDataForLoadShedding()`` iterates them.

        That map is collected (``Collectors.toMap``, one ``put`` at a time) from the
        ``ConcurrentHashMap`` of all bundle data, minus system namespaces; only the hashes of
        ``bundles`` and the two maps' sizes matter, so this never hashes the whole map.
        """
        total = len(self.bundle_data)
        system = self.system_bundles
        if system < 0:
            system = count_system_bundles(self.bundle_data)
        return rehashed_order(bundles, capacity=hashmap_capacity(total - system),
                              source_capacity=concurrent_capacity(total))

    def bundle_data_for_shedding(self) -> dict[str, BundleData]:
        """``LoadData.getBundleDataForLoadShedding()``: bundle data minus system namespaces."""
        return {
            b: d
            for b, d in self.bundle_data.items()
            if not (b.startswith(SYSTEM_PREFIXES) and is_system_service_namespace(namespace_of(b)))
        }


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

    def get(self, bundle: str, default: BundleData | None = None) -> BundleData | None:  # type: ignore[override]  # Mapping.get's overloads, one signature
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
