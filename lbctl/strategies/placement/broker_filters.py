"""The extensible load manager's broker filters and namespace policies.

Mirrors ``extensions.filter.BrokerMaxTopicCountFilter``, ``BrokerVersionFilter``,
``BrokerIsolationPoliciesFilter`` (through ``IsolationPoliciesHelper`` /
``LoadManagerShared.applyNamespacePoliciesAsync``) and TransferShedder's ``isTransferable`` /
``isLoadBalancerSheddingBundlesWithPoliciesEnabled``.

Candidates are an ordered ``dict`` broker id → :class:`BrokerLookup` (the registry's lookup data);
a filter returns the brokers it keeps or raises :class:`FilterError`. Not modelled from snapshots
(snapshot v1 carries no such data): the load-manager-class filter (every broker is taken to run the
extensible load manager) and anti-affinity groups; :class:`Policies` can carry isolation policies
and anti-affinity group membership when a caller has them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from lbctl.config import Settings
from lbctl.model.brokerload import BrokerLoadData
from lbctl.model.bundle import namespace_of


class FilterError(Exception):
    """``BrokerFilterException`` (e.g. ``BrokerFilterBadVersionException``)."""


@dataclass(frozen=True, slots=True)
class BrokerLookup:
    """The parts of ``BrokerLookupData`` the filters read."""

    brokerVersion: str | None = None
    persistentTopicsEnabled: bool = True
    nonPersistentTopicsEnabled: bool = True
    loadManagerClassName: str | None = None


@dataclass(frozen=True, slots=True)
class IsolationPolicy:
    """A ``NamespaceIsolationPolicy``: namespace regexes, primary and secondary broker regexes, and
    the ``min_available`` auto-failover ``min_limit``."""

    namespaces: tuple[str, ...]
    primary: tuple[str, ...]
    secondary: tuple[str, ...] = ()
    min_limit: int = 1

    def applies_to(self, namespace: str) -> bool:
        return any(re.fullmatch(p, namespace) for p in self.namespaces)


def _matches(patterns: Sequence[str], broker: str) -> bool:
    """A broker matches by host (``host:port`` minus the port) or by its full id."""
    host = broker.rsplit(":", 1)[0]
    return any(re.fullmatch(p, host) or re.fullmatch(p, broker) for p in patterns)


@dataclass(frozen=True)
class Policies:
    """Namespace isolation policies and anti-affinity groups (``namespace → group``)."""

    isolation: tuple[IsolationPolicy, ...] = ()
    anti_affinity: Mapping[str, str] = field(default_factory=dict)

    def isolation_for(self, namespace: str) -> IsolationPolicy | None:
        return next((p for p in self.isolation if p.applies_to(namespace)), None)

    def has_isolation_policy(self, namespace: str) -> bool:
        return self.isolation_for(namespace) is not None

    def has_anti_affinity(self, namespace: str) -> bool:
        return namespace in self.anti_affinity

    def has_policies(self, bundle: str) -> bool:
        """``TopKBundles.hasPolicies``: isolation policy or anti-affinity group."""
        ns = namespace_of(bundle)
        return self.has_isolation_policy(ns) or self.has_anti_affinity(ns)

    def is_shared(self, broker: str) -> bool:
        """``NamespaceIsolationPolicies.isSharedBroker``: no policy names it primary or secondary."""
        return not any(_matches(p.primary, broker) or _matches(p.secondary, broker)
                       for p in self.isolation)


NO_POLICIES = Policies()


@dataclass(frozen=True)
class FilterContext:
    """What the filters read: settings, the broker load-data store, policies."""

    settings: Settings
    store: Mapping[str, BrokerLoadData]
    policies: Policies = NO_POLICIES
    non_persistent: Callable[[str], bool] = field(default=lambda bundle: False)


Candidates = dict[str, BrokerLookup]


class BrokerFilter(Protocol):
    name: str

    def __call__(self, brokers: Candidates, bundle: str, ctx: FilterContext) -> Candidates: ...


class MaxTopicCountFilter:
    """``broker_max_topic_count_filter``: drop brokers with ``topics >= loadBalancerBrokerMaxTopics``
    (a broker without load data counts 0 topics)."""

    name = "broker_max_topic_count_filter"

    def __call__(self, brokers: Candidates, bundle: str, ctx: FilterContext) -> Candidates:
        limit = int(ctx.settings["loadBalancerBrokerMaxTopics"])
        return {b: v for b, v in brokers.items()
                if (ctx.store[b].topics if b in ctx.store else 0) < limit}


# --- semantic versions (com.github.zafarkhaja.semver, BUILD_AWARE_ORDER) ----------------------------
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$")


@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Version:
        m = _SEMVER.match(text)
        if not m:
            raise ValueError(f"invalid version {text!r}")
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        build = tuple(m.group(5).split(".")) if m.group(5) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, build)


def _ids_compare(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """Pre-release / build identifiers: absent ranks above present; numeric below alphanumeric."""
    if a == b:
        return 0
    if not a:
        return 1
    if not b:
        return -1
    for x, y in zip(a, b, strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return -1 if x < y else 1
    return -1 if len(a) < len(b) else 1


def compare_versions(a: Version, b: Version) -> int:
    """``Version.BUILD_AWARE_ORDER``."""
    for x, y in ((a.major, b.major), (a.minor, b.minor), (a.patch, b.patch)):
        if x != y:
            return -1 if x < y else 1
    return _ids_compare(a.pre, b.pre) or _ids_compare(a.build, b.build)


class VersionFilter:
    """``broker_version_filter``: with ``preferLaterVersions``, keep brokers on the newest version
    (equal by semantic-version precedence). A missing or invalid version fails the filter."""

    name = "broker_version_filter"

    def __call__(self, brokers: Candidates, bundle: str, ctx: FilterContext) -> Candidates:
        if not ctx.settings["preferLaterVersions"] or not brokers:
            return brokers
        latest = latest_version(brokers)
        out = {}
        for b, v in brokers.items():
            ver = Version.parse(v.brokerVersion or "")
            # Version.equals ignores build metadata
            if (ver.major, ver.minor, ver.patch, ver.pre) == (
                    latest.major, latest.minor, latest.patch, latest.pre):
                out[b] = v
        return out


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


class IsolationPoliciesFilter:
    """``broker_isolation_policies_filter``: with an isolation policy, the primaries (plus the
    secondaries when fewer primaries than ``min_limit`` are available); without, the shared
    brokers that accept the bundle's topic kind (persistent / non-persistent)."""

    name = "broker_isolation_policies_filter"

    def __call__(self, brokers: Candidates, bundle: str, ctx: FilterContext) -> Candidates:
        ns = namespace_of(bundle) if "/" in bundle and bundle.count("/") >= 2 else bundle
        policy = ctx.policies.isolation_for(ns)
        keep: set[str] = set()
        if policy is not None:
            primaries = [b for b in brokers if _matches(policy.primary, b)]
            secondaries = [b for b in brokers
                           if b not in primaries and _matches(policy.secondary, b)]
            keep.update(primaries)
            if len(primaries) < policy.min_limit:
                keep.update(secondaries)
        else:
            non_persistent = ctx.non_persistent(bundle)
            for b, v in brokers.items():
                if non_persistent and not v.nonPersistentTopicsEnabled:
                    continue
                if not non_persistent and not v.persistentTopicsEnabled:
                    continue
                if ctx.policies.is_shared(b):
                    keep.add(b)
        return {b: v for b, v in brokers.items() if b in keep}


def default_pipeline() -> tuple[BrokerFilter, ...]:
    """The filters lbctl can apply from a snapshot, in Pulsar's pipeline order."""
    return (MaxTopicCountFilter(), VersionFilter(), IsolationPoliciesFilter())


def apply_filters(brokers: Candidates, bundle: str, ctx: FilterContext,
                  pipeline: Sequence[BrokerFilter]) -> tuple[Candidates, list[tuple[str, str]]]:
    """Run the pipeline; returns the survivors and, per filter, who it removed (or its error).
    Errors propagate as :class:`FilterError` after being recorded."""
    steps: list[tuple[str, str]] = []
    cands = dict(brokers)
    for f in pipeline:
        try:
            after = f(dict(cands), bundle, ctx)
        except (FilterError, ValueError) as e:
            steps.append((f.name, f"failed: {e}"))
            raise FilterError(f"{f.name}: {e}") from None
        removed = [b for b in cands if b not in after]
        if removed:
            steps.append((f.name, "removed " + ", ".join(removed)))
        cands = after
    return cands, steps


def shedding_with_policies_allowed(has_isolation: bool, has_anti_affinity: bool,
                                   enabled: bool) -> bool:
    """``isLoadBalancerSheddingBundlesWithPoliciesEnabled``: a bundle with an isolation policy or
    an anti-affinity group may be shed only when ``loadBalancerSheddingBundlesWithPoliciesEnabled``."""
    if has_isolation or has_anti_affinity:
        return enabled
    return True


def make_transferable(
    available: Mapping[str, BrokerLookup],
    ctx: FilterContext,
    pipeline: Sequence[BrokerFilter],
) -> Callable[[str, str, str | None], tuple[bool, str]]:
    """TransferShedder's ``isTransferable(bundle, src, dst)`` with a PulsarService: policies gate,
    the filter pipeline over the available brokers, then the destination (or, in unload mode, any
    other broker) must survive. Note Q4: the destination is checked in unload mode too."""
    settings = ctx.settings

    def transferable(bundle: str, src: str, dst: str | None) -> tuple[bool, str]:
        ns = namespace_of(bundle)
        if not shedding_with_policies_allowed(
                ctx.policies.has_isolation_policy(ns), ctx.policies.has_anti_affinity(ns),
                bool(settings["loadBalancerSheddingBundlesWithPoliciesEnabled"])):
            return False, ("its namespace has isolation or anti-affinity policies and "
                           "loadBalancerSheddingBundlesWithPoliciesEnabled is false")
        try:
            cands, _ = apply_filters(dict(available), bundle, ctx, pipeline)
        except FilterError as e:
            return False, f"broker filter failed ({e})"
        if dst is not None and dst not in cands:
            return False, f"the broker filters exclude {dst}"
        cands.pop(src, None)
        if dst is None or not settings["loadBalancerTransferEnabled"]:
            return (bool(cands), "" if cands else "no other broker passes the filters")
        return (dst in cands, "")

    return transferable
