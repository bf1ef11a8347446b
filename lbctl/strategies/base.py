"""What strategies receive and what they return.

A strategy is pure: ``(LoadData, Settings, memory) -> (decision, new memory)``. The memory is the
state Pulsar keeps inside the strategy instance between cycles (ThresholdShedder's usage EWMA,
AvgShedder's hit counters, LeastResourceUsageWithWeight's history…); lbctl passes it in and gets it
back, so a sequence of snapshots replays exactly as the leader broker would, and one snapshot starts
from Pulsar's initial (empty) state.

Decisions mirror Pulsar's decision objects (``extensions/models/UnloadDecision``): a label, a reason
and the numbers, for every broker, including those where nothing happens.

    Label:  Success | Skip | Failure
    Reason: Overloaded | Underloaded | Balanced | NoBundles | HitCount | CoolDown | OutDatedData
            | NoLoadData | NoBrokers | Unknown            (shedding)
            Topics | Sessions | MsgRate | Bandwidth | Admin (split)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from random import Random
from types import MappingProxyType
from typing import Any, Protocol

from lbctl.config import Settings
from lbctl.model.bundle import namespace_of
from lbctl.model.decision import PlacementDecision, SheddingDecision
from lbctl.model.javaorder import concurrent_capacity, hashmap_capacity, rehashed_order
from lbctl.model.load import BundleData, LocalBrokerData, TimeAverageBrokerData

_EMPTY: Mapping[str, Any] = MappingProxyType({})


# NamespaceService.isSystemServiceNamespace: heartbeat (v1, v2) and SLA-monitor namespaces.
_SYSTEM_NAMESPACE = re.compile(
    r"^(pulsar/[^/]+/[^:/]+:\d+|pulsar/[^:/]+:\d+|sla-monitor/[^/]+/[^:/]+:\d+)$"
)


_SYSTEM_PREFIXES = ("pulsar/", "sla-monitor/")


def is_system_service_namespace(namespace: str) -> bool:
    """Heartbeat and SLA-monitor namespaces, which no shedder may move."""
    return bool(_SYSTEM_NAMESPACE.match(namespace))


def count_system_bundles(bundles: Iterable[str]) -> int:
    return sum(1 for b in bundles if b.startswith(_SYSTEM_PREFIXES)
               and is_system_service_namespace(namespace_of(b)))


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
            if not (b.startswith(_SYSTEM_PREFIXES) and is_system_service_namespace(namespace_of(b)))
        }


# --- what shedding strategies return ------------------------------------------------------------


class SheddingStrategy(Protocol):
    """A modular load-shedding strategy (``LoadSheddingStrategy``)."""

    name: str

    def initial_memory(self) -> Any: ...

    def shed(
        self, load: LoadData, settings: Settings, memory: Any
    ) -> tuple[SheddingDecision, Any]: ...


# --- what placement strategies return -----------------------------------------------------------


class PlacementStrategy(Protocol):
    """A modular placement strategy (``ModularLoadManagerStrategy``).

    ``candidates`` come in Java ``HashSet`` order. ``rng`` replaces ``ThreadLocalRandom`` for the
    uniform pick among equally good brokers (``--seed``). ``planned`` carries a shedder's own
    destinations (AvgShedder as placement).
    """

    name: str

    def initial_memory(self) -> Any: ...

    def select(
        self,
        candidates: Sequence[str],
        bundle: str,
        data: BundleData,
        load: LoadData,
        settings: Settings,
        memory: Any,
        rng: Random,
        planned: Mapping[str, str],
    ) -> tuple[PlacementDecision, Any]: ...

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> Any: ...
