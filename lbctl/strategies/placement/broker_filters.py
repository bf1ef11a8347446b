"""The extensible load manager's broker filters and namespace policies.

Mirrors ``ExtensibleLoadManagerImpl``'s broker-filter pipeline, in its order:

1. ``BrokerLoadManagerClassFilter`` — a broker whose lookup data names another load manager class
   than the leader's ``loadManagerClassName`` (a modular broker during a modular → extensible
   migration; ``null`` counts as different) is not a candidate;
2. ``BrokerMaxTopicCountFilter`` (``loadBalancerBrokerMaxTopics``);
3. ``BrokerVersionFilter`` (``preferLaterVersions``): only the newest version; a broker without
   (or with an invalid) version fails the filter;
4. ``AntiAffinityGroupPolicyFilter`` (``AntiAffinityGroupPolicyHelper.filter``): for a namespace
   of an anti-affinity group, the brokers (and, with ``failureDomainsEnabled``, the failure
   domains) owning the fewest bundles of the group;
5. ``BrokerIsolationPoliciesFilter`` (``IsolationPoliciesHelper`` →
   ``LoadManagerShared.applyNamespacePoliciesAsync``): primaries (+ secondaries on failover) of
   the namespace's isolation policy, else the shared brokers that load the topic kind.

and TransferShedder's ``isTransferable`` / ``isLoadBalancerSheddingBundlesWithPoliciesEnabled``.

Candidates are an ordered ``dict`` broker id → :class:`BrokerLookup` (the registry's lookup data);
a filter returns the brokers it keeps or raises :class:`FilterError`. Data a snapshot did not
capture is not invented: with no broker's ``loadManagerClassName`` known the class filter is not
applied, and with no broker's version known the version filter is not applied (both are said in
``apply_filters``' steps) — a capture that lacks them must not make every transfer fail.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Protocol

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.brokerload import BrokerLoadData
from lbctl.model.bundle import namespace_of
from lbctl.model.decision import Why
from lbctl.model.policies import NO_POLICIES, ClusterPolicies, IsolationPolicy
from lbctl.strategies.placement.namespace_policies import (
    apply_namespace_policies,
    bundle_group_counts,
    filter_anti_affinity,
)
from lbctl.strategies.placement.versions import Version, compare_versions, same_version

__all__ = [
    "NO_POLICIES", "AntiAffinityGroupFilter", "BrokerFilter", "BrokerLookup", "Candidates",
    "FilterContext", "FilterError", "FilterOutcome", "IsolationPoliciesFilter", "IsolationPolicy",
    "LoadManagerClassFilter", "MaxTopicCountFilter", "NotTransferable", "NotTransferableWhy",
    "Policies", "Version", "VersionFilter", "apply_filters", "compare_versions",
    "default_pipeline", "latest_version", "make_transferable", "shedding_with_policies_allowed",
]

#: the policies of a cluster (kept under its old name for callers)
Policies = ClusterPolicies


class FilterError(Exception):
    """``BrokerFilterException`` (e.g. ``BrokerFilterBadVersionException``)."""


class BrokerLookup(Struct, frozen=True):
    """The parts of ``BrokerLookupData`` the filters read."""

    brokerVersion: str | None = None
    persistentTopicsEnabled: bool = True
    nonPersistentTopicsEnabled: bool = True
    loadManagerClassName: str | None = None


@dataclass(frozen=True)
class FilterContext:
    """What the filters read: settings, the broker load-data store, policies, ownership (bundle →
    owner, for anti-affinity counts), the failure domains (broker → domain) when
    ``failureDomainsEnabled``, the leader's load manager class (``None``: the class filter is not
    applied) and whether any broker version is known."""

    settings: Settings
    store: Mapping[str, BrokerLoadData]
    policies: ClusterPolicies = NO_POLICIES
    non_persistent: Callable[[str], bool] = field(default=lambda bundle: False)
    owners: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    leader_class: str | None = None
    versions_known: bool = True
    #: per cycle: anti-affinity counts per group (they depend on the group only)
    group_counts: dict[str, dict[str, int] | None] = field(
        default_factory=dict, compare=False, repr=False)

    def domains(self) -> dict[str, str] | None:
        if not self.settings["failureDomainsEnabled"]:
            return None
        return self.policies.broker_domains()


Candidates = dict[str, BrokerLookup]


class BrokerFilter(Protocol):
    name: str

    def __call__(self, brokers: Candidates, bundle: str, ctx: FilterContext) -> Candidates: ...


def _namespace(bundle: str) -> str:
    return namespace_of(bundle) if bundle.count("/") >= 2 else bundle


class LoadManagerClassFilter:
    """``broker_load_manager_class_filter``: drop brokers whose ``loadManagerClassName`` is not
    the leader's (``Objects.equals``: a missing name is a mismatch)."""

    name = "broker_load_manager_class_filter"

    def __call__(self, brokers: Candidates, bundle: str, ctx: FilterContext) -> Candidates:
        if ctx.leader_class is None or not brokers:
            return brokers
        return {b: v for b, v in brokers.items() if v.loadManagerClassName == ctx.leader_class}


class MaxTopicCountFilter:
    """``broker_max_topic_count_filter``: drop brokers with ``topics >= loadBalancerBrokerMaxTopics``
    (a broker without load data counts 0 topics)."""

    name = "broker_max_topic_count_filter"

    def __call__(self, brokers: Candidates, bundle: str, ctx: FilterContext) -> Candidates:
        limit = int(ctx.settings["loadBalancerBrokerMaxTopics"])
        return {b: v for b, v in brokers.items()
                if (ctx.store[b].topics if b in ctx.store else 0) < limit}


class VersionFilter:
    """``broker_version_filter``: with ``preferLaterVersions``, keep brokers on the newest version
    (equal by semantic-version precedence). A missing or invalid version fails the filter."""

    name = "broker_version_filter"

    def __call__(self, brokers: Candidates, bundle: str, ctx: FilterContext) -> Candidates:
        if not ctx.settings["preferLaterVersions"] or not brokers or not ctx.versions_known:
            return brokers
        latest = latest_version(brokers)
        return {b: v for b, v in brokers.items()
                if same_version(Version.parse(v.brokerVersion or ""), latest)}


def latest_version(brokers: Candidates) -> Version:
    """``getLatestVersionNumber``."""
    if not brokers:
        raise FilterError("Unable to determine latest version since broker version map was empty")
    latest: Version | None = None
    for b, v in brokers.items():
        if not v.brokerVersion:
            raise FilterError(f'No version string in lookup data for broker "{b}"')
        try:
            ver = Version.parse(v.brokerVersion)
        except ValueError:
            raise FilterError(f'Invalid version string in lookup data for broker "{b}": '
                              f'"{v.brokerVersion}"') from None
        if latest is None or compare_versions(latest, ver) < 0:
            latest = ver
    assert latest is not None
    return latest


class AntiAffinityGroupFilter:
    """``broker_anti_affinity_group_filter``: ``AntiAffinityGroupPolicyHelper.filter`` over the
    ownership entries (bundles of the group per owner)."""

    name = "broker_anti_affinity_group_filter"

    def __call__(self, brokers: Candidates, bundle: str, ctx: FilterContext) -> Candidates:
        ns = _namespace(bundle)
        group = ctx.policies.anti_affinity_group(ns)
        if group is None:
            return brokers
        key = group.lower()
        if key not in ctx.group_counts:
            ctx.group_counts[key] = bundle_group_counts(ns, ctx.policies, ctx.owners)
        counts = ctx.group_counts[key]
        kept, _ = filter_anti_affinity(tuple(brokers), counts, ctx.domains())
        keep = set(kept)
        return {b: v for b, v in brokers.items() if b in keep}


class IsolationPoliciesFilter:
    """``broker_isolation_policies_filter``: with an isolation policy, the primaries (plus the
    secondaries when fewer primaries than ``min_limit`` are available); without, the shared
    brokers that accept the bundle's topic kind (persistent / non-persistent)."""

    name = "broker_isolation_policies_filter"

    def __call__(self, brokers: Candidates, bundle: str, ctx: FilterContext) -> Candidates:
        def loads(b: str, non_persistent: bool) -> bool:
            v = brokers[b]
            return v.nonPersistentTopicsEnabled if non_persistent else v.persistentTopicsEnabled

        kept = apply_namespace_policies(_namespace(bundle), tuple(brokers), ctx.policies, loads,
                                        non_persistent=ctx.non_persistent(bundle),
                                        rule=ctx.settings.profile["isolationBrokerHost"])
        keep = set(kept.brokers)
        return {b: v for b, v in brokers.items() if b in keep}


def default_pipeline() -> tuple[BrokerFilter, ...]:
    """The filters of ``ExtensibleLoadManagerImpl``, in Pulsar's pipeline order."""
    return (LoadManagerClassFilter(), MaxTopicCountFilter(), VersionFilter(),
            AntiAffinityGroupFilter(), IsolationPoliciesFilter())


class FilterOutcome(Struct, frozen=True):
    """What one filter of the pipeline did: the brokers it removed, or the error it raised."""

    name: str
    removed: tuple[str, ...] = ()
    error: str | None = None


def apply_filters(brokers: Candidates, bundle: str, ctx: FilterContext,
                  pipeline: Sequence[BrokerFilter]) -> tuple[Candidates, list[FilterOutcome]]:
    """Run the pipeline; returns the survivors and, per filter that removed a broker or failed,
    what it did. Errors propagate as :class:`FilterError` after being recorded."""
    steps: list[FilterOutcome] = []
    cands = dict(brokers)
    for f in pipeline:
        try:
            after = f(dict(cands), bundle, ctx)
        except (FilterError, ValueError) as e:
            steps.append(FilterOutcome(f.name, error=str(e)))
            raise FilterError(f"{f.name}: {e}") from None
        removed = tuple(b for b in cands if b not in after)
        if removed:
            steps.append(FilterOutcome(f.name, removed))
        cands = after
    return cands, steps


def shedding_with_policies_allowed(has_isolation: bool, has_anti_affinity: bool,
                                   enabled: bool) -> bool:
    """``isLoadBalancerSheddingBundlesWithPoliciesEnabled``: a bundle with an isolation policy or
    an anti-affinity group may be shed only when ``loadBalancerSheddingBundlesWithPoliciesEnabled``."""
    if has_isolation or has_anti_affinity:
        return enabled
    return True


#: Why TransferShedder may not move a bundle (``isTransferable`` is false).
NotTransferable = Literal[
    "policies",  # loadBalancerSheddingBundlesWithPoliciesEnabled is false
    "filter-failed",  # detail: the filter's error
    "excluded",  # detail: the destination the filters remove
    "no-other",  # no broker but the source passes the filters
]


class NotTransferableWhy(Why, frozen=True):
    code: NotTransferable
    detail: str = ""


_POLICIES = NotTransferableWhy("policies")
_NO_OTHER = NotTransferableWhy("no-other")


def make_transferable(
    available: Mapping[str, BrokerLookup],
    ctx: FilterContext,
    pipeline: Sequence[BrokerFilter],
) -> Callable[[str, str, str | None], tuple[bool, Why | None]]:
    """TransferShedder's ``isTransferable(bundle, src, dst)`` with a PulsarService: policies gate,
    the filter pipeline over the available brokers (a failing filter makes the bundle not
    transferable), then the destination (or, in unload mode, any other broker) must survive.
    Note Q4: the destination is checked in unload mode too. Returns whether, and why not."""
    settings = ctx.settings

    def transferable(bundle: str, src: str, dst: str | None) -> tuple[bool, Why | None]:
        ns = namespace_of(bundle)
        if not shedding_with_policies_allowed(
                ctx.policies.has_isolation_policy(ns), ctx.policies.has_anti_affinity(ns),
                bool(settings["loadBalancerSheddingBundlesWithPoliciesEnabled"])):
            return False, _POLICIES
        try:
            cands, _ = apply_filters(dict(available), bundle, ctx, pipeline)
        except FilterError as e:
            return False, NotTransferableWhy("filter-failed", str(e))
        if dst is not None and dst not in cands:
            return False, NotTransferableWhy("excluded", dst)
        cands.pop(src, None)
        if dst is None or not settings["loadBalancerTransferEnabled"]:
            return (bool(cands), None if cands else _NO_OTHER)
        return (dst in cands, None)

    return transferable
