"""An immutable picture of one cluster at one moment (what a snapshot v1 file holds)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from lbctl.model.brokerload import PublishedLoad, PublishedTopBundles
from lbctl.model.bundle import (
    BundleName,
    is_shedding_excluded,
    locate,
    namespace_of,
    topic_hash,
    topic_namespace,
)
from lbctl.model.load import BundleData, LocalBrokerData, NamespaceBundleStats
from lbctl.model.observed import ObservedDecisions
from lbctl.model.policies import NO_POLICIES, ClusterPolicies
from lbctl.model.wire.snapshot import EXTENSIBLE as EXTENSIBLE
from lbctl.model.wire.snapshot import MODULAR as MODULAR
from lbctl.model.wire.snapshot import SIMPLE as SIMPLE
from lbctl.model.wire.snapshot import ResourceQuotas
from lbctl.model.wire.snapshot import TopicStats as TopicStats  # the wire record is the model's

EXTENSIBLE_CLASS = "org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl"


def is_extensible_class(name: object) -> bool:
    """Whether a ``loadManagerClassName`` names the extensible load manager."""
    return isinstance(name, str) and (name.strip().endswith("ExtensibleLoadManagerImpl")
                                      or "extensions.ExtensibleLoadManager" in name)


def _frozen(m: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(m or {}))


@dataclass(frozen=True, slots=True)
class NamespaceTopics:
    """A namespace's topics as its metadata lists them, loaded or not.

    ``persistent``: ``NamespaceService.getListOfPersistentTopics`` (every persistent topic with a
    managed ledger, partitions included); ``non_persistent``: ``getListOfNonPersistentTopics``;
    ``partitioned``: partitioned topic → number of partitions (``getAllPartitions`` lists
    ``<topic>-partition-<i>`` for each)."""

    persistent: tuple[str, ...] = ()
    non_persistent: tuple[str, ...] = ()
    partitioned: Mapping[str, int] = field(default_factory=lambda: _frozen(None))

    def partitions(self) -> list[str]:
        """``getAllPartitions``: every partition of every partitioned topic, in order."""
        return [f"{t}-partition-{i}" for t, n in self.partitioned.items() for i in range(n)]

    def all_topics(self) -> list[str]:
        """``getOwnedTopicListForNamespaceBundle`` before its range filter: the persistent list,
        then the non-persistent one (``ListUtils.union`` keeps both), then the partitions not
        already listed."""
        out = [*self.persistent, *self.non_persistent]
        seen = set(out)
        out += [p for p in self.partitions() if p not in seen]
        return out


@dataclass(frozen=True, slots=True, eq=False)
class NameIndex:
    """What the snapshot reader learned about the bundle names while it validated them, kept so
    that a cycle does not walk every name again for the same answers (at 1,000,000 bundles each
    walk costs 0.1–0.2 s): the number of distinct bundles, and the bundles of each namespace
    with a system prefix (what ``getBundleDataForLoadShedding`` leaves out). Every name of the
    brokers it describes is valid (``tenant/namespace/0xLLLLLLLL_0xUUUUUUUU``, its namespace the
    name without its last 22 characters).

    It describes the very ``brokers`` mapping it was built from, which is immutable (as is each
    report in it), so an identity test tells whether it still applies: a state copied with
    other brokers (``lbctl.records.replace``) no longer matches (:meth:`ClusterState.name_index`
    is then ``None``); one copied with the same brokers (``shifted``, another ``captured_at``)
    still does, and rightly. Readers that build no index leave ``None``: every user then counts
    the names itself."""

    #: the state's ``brokers`` (by identity) that the figures describe
    brokers: Mapping[str, LocalBrokerData]
    #: distinct bundles named by any ``lastStats`` or ``bundles`` (:meth:`ClusterState.bundle_count`)
    bundles: int
    #: namespace with a system prefix → its bundles in every ``lastStats``
    system: Mapping[str, int] = field(default_factory=lambda: _frozen(None))
    #: broker → the very dict its report's ``lastStats`` shows (read-only, never changed):
    #: ``dict.update`` copies a dict at C speed but reads a mapping proxy key by key (the merge
    #: of every report costs 0.1 s more at 1,000,000 bundles)
    stats: Mapping[str, Mapping[str, NamespaceBundleStats]] = field(
        default_factory=lambda: _frozen(None))
    #: every ``lastStats`` name → its stats, in the snapshot's order (the brokers', then each
    #: report's): the table the one-owner check built, which a cycle takes as its bundle map
    #: (a plain dict, never changed); ``None``: not kept
    owned: Mapping[str, NamespaceBundleStats] | None = None
    #: broker → the namespaces of its ``lastStats`` when each holds one of its bundles (the
    #: usual spread of a large cluster), one shared string per namespace: the name check cut
    #: them already, so a cycle's per-namespace ownership index
    #: (:func:`lbctl.strategies.placement.filters.namespace_bundle_counts`) need not cut every
    #: name again (0.2–0.4 s at 1,000,000 bundles). A broker not here: count its names.
    one_each: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _frozen(None))

    def validated(self, broker: str, local: LocalBrokerData) -> bool:
        """Whether ``local`` is ``broker``'s report as the reader checked it (every name valid)."""
        return self.brokers.get(broker) is local

    def system_bundles(self, pulsar_system: bool) -> int:
        """:func:`lbctl.model.bundle.count_system_bundles` over every ``lastStats`` name."""
        return sum(n for ns, n in self.system.items() if is_shedding_excluded(ns, pulsar_system))


@dataclass(frozen=True, slots=True)
class ClusterState:
    """Brokers, their load reports and bundles, the namespaces' boundaries and recent history.

    ``brokers`` and every other mapping keep the order of the source (the snapshot file); strategies
    that need Java's iteration order ask :mod:`lbctl.model.javaorder` for it.
    """

    cluster: str
    captured_at: int  # epoch milliseconds
    brokers: Mapping[str, LocalBrokerData]
    load_manager: str = MODULAR
    config: Mapping[str, Any] = field(default_factory=lambda: _frozen(None))
    #: the settings stored with ``update-dynamic-config`` (``dynamicConfig``), which beat
    #: broker.conf (:func:`lbctl.config.resolve`); empty: none stored, or not captured
    dynamic_config: Mapping[str, Any] = field(default_factory=lambda: _frozen(None))
    bundle_data: Mapping[str, BundleData] | None = None
    namespaces: Mapping[str, tuple[int, ...]] = field(default_factory=lambda: _frozen(None))
    topics: Mapping[str, TopicStats] = field(default_factory=lambda: _frozen(None))
    recently_unloaded: Mapping[str, int] = field(default_factory=lambda: _frozen(None))
    #: the extensible load manager's published data (``brokerLoadData``, ``topBundlesLoadData``)
    broker_load_data: Mapping[str, PublishedLoad] = field(default_factory=lambda: _frozen(None))
    top_bundles_load_data: Mapping[str, PublishedTopBundles] = field(
        default_factory=lambda: _frozen(None))
    recently_unloaded_brokers: Mapping[str, int] = field(default_factory=lambda: _frozen(None))
    source: str = ""
    #: what the leader did until the next sample (snapshots built from Prometheus)
    observed: ObservedDecisions | None = None
    #: the active brokers (``GET /admin/v2/brokers``) when captured: those not in ``brokers`` have
    #: no readable load report; ``None``: exactly the brokers of ``brokers``
    available_brokers: tuple[str, ...] | None = None
    #: isolation policies, anti-affinity groups and failure domains; ``None``: not captured
    policies: ClusterPolicies | None = None
    #: namespace → its topics in metadata (loaded or not); namespaces absent: not captured
    namespace_topics: Mapping[str, NamespaceTopics] = field(default_factory=lambda: _frozen(None))
    #: ``SimpleLoadManagerImpl``'s stored resource quotas and load factors; ``None``: not captured
    resource_quotas: ResourceQuotas | None = None
    #: what the reader learned about the bundle names (:class:`NameIndex`), for :meth:`name_index`
    names: NameIndex | None = field(default=None, compare=False, repr=False)

    def name_index(self) -> NameIndex | None:
        """The reader's :class:`NameIndex` when it describes these brokers, else ``None``."""
        names = self.names
        return names if names is not None and names.brokers is self.brokers else None

    def available(self) -> tuple[str, ...]:
        """The active brokers: ``available_brokers`` when captured, else those with a report."""
        if self.available_brokers is not None:
            return self.available_brokers
        return tuple(self.brokers)

    def cluster_policies(self) -> ClusterPolicies:
        """The policies, or none when they were not captured."""
        return self.policies if self.policies is not None else NO_POLICIES

    @property
    def live_read(self) -> bool:
        """Whether this state was read from a running cluster (the live readers name it
        ``live:CLUSTER``): its ``config`` is then the brokers' runtime configuration, not a
        snapshot's, whoever reads it (``lbctl watch`` as much as ``lbctl doctor``)."""
        return self.source.startswith("live:")

    @property
    def captured_at_iso(self) -> str:
        return iso_time(self.captured_at)

    def owners(self) -> dict[str, str]:
        """Full bundle name → owning broker, from each broker's ``lastStats`` and ``bundles``."""
        owner: dict[str, str] = {}
        for broker, data in self.brokers.items():
            for b in data.lastStats:
                owner[b] = broker
            for b in data.bundles:
                owner.setdefault(b, broker)
        return owner

    def bundle_count(self) -> int:
        """``len(self.owners())``, counted without building the map."""
        index = self.name_index()
        if index is not None:
            return index.bundles
        names: set[str] = set()
        for data in self.brokers.values():
            names.update(data.lastStats)
            names.update(data.bundles)
        return len(names)

    def bundle_stats(self, bundle: str) -> NamespaceBundleStats | None:
        for data in self.brokers.values():
            st = data.lastStats.get(bundle)
            if st is not None:
                return st
        return None

    def namespace_bundle_count(self, namespace: str) -> int:
        """Bundles the namespace has: from its boundaries, else from the bundles brokers report."""
        bounds = self.namespaces.get(namespace)
        if bounds is not None:
            return len(bounds) - 1
        return sum(1 for b in self.owners() if namespace_of(b) == namespace)

    def topics_of_bundle(self, bundle: str) -> list[str]:
        """The topics a split algorithm sees in ``bundle``.

        With the namespace's metadata topic list (``namespace_topics``): Pulsar's
        ``NamespaceService.getOwnedTopicListForNamespaceBundle`` — every persistent and
        non-persistent topic and every partition whose CRC-32 falls in the bundle's range, loaded
        or not. Without it: the topics of ``topics`` (the loaded ones, with stats) that hash into
        the bundle."""
        name = BundleName.parse(bundle)
        listed = self.namespace_topics.get(name.namespace)
        if listed is not None:
            return [t for t in listed.all_topics() if name.range.contains(topic_hash(t))]
        bounds = self.namespaces.get(name.namespace)
        out = []
        for t in self.topics:
            if topic_namespace(t) != name.namespace:
                continue
            h = topic_hash(t)
            if bounds is not None:
                if locate(bounds, h) == name.range:
                    out.append(t)
            elif name.range.contains(h):
                out.append(t)
        return out


def iso_time(epoch_ms: int) -> str:
    """RFC 3339 UTC with a ``Z``; milliseconds only when there are any."""
    dt = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    if epoch_ms % 1000:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")
