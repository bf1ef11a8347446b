"""The cluster policies Pulsar's placement reads besides load: namespace isolation policies,
anti-affinity groups and failure domains.

Mirrors:

* ``NamespaceIsolationPolicies`` (``clusters/{cluster}/namespaceIsolationPolicies``): the policy of a
  namespace is the **first** policy, in the map's order, one of whose namespace regexes matches the
  whole namespace name (``getPolicyByNamespace``, ``String.matches``); a broker is *shared* when no
  policy names it **primary** (``isSharedBroker`` — a secondary broker of some policy is still
  shared with every namespace without a policy);
* ``NamespaceIsolationPolicyImpl``: primary / secondary broker regexes, matched against the whole
  value given (the broker id ``host:port``) and then against its host (the value minus a numeric
  ``:port`` suffix), as the current ``matchesBrokerRegex`` does;
* ``MinAvailablePolicy`` (the only ``auto_failover_policy``): fail over to the secondaries when
  fewer primaries than ``min_limit`` are available (``shouldFailoverToSecondary(int)``);
* ``LocalPolicies.namespaceAntiAffinityGroup`` (``namespaces/{t}/{ns}/antiAffinity``): a blank
  group is no group, and groups compare ignoring case (``equalsIgnoreCase``);
* ``FailureDomain`` (``clusters/{cluster}/failureDomains``): domain → broker ids;
  ``refreshBrokerToFailureDomainMap`` maps each listed broker to its domain (a broker listed in
  two domains ends in the last one), and ``LoadManagerShared`` puts every other broker in the
  domain ``"default"``.

Pure data: reading these from a snapshot or a live cluster is :mod:`lbctl.sources`' job, applying
them :mod:`lbctl.strategies.placement`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType

from msgspec import Struct, field

MIN_AVAILABLE = "min_available"
#: ``LoadManagerShared.DEFAULT_DOMAIN``: the failure domain of a broker no domain lists
DEFAULT_DOMAIN = "default"


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def regex_error(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid regular expression (``None`` when it is)."""
    try:
        _compiled(pattern)
    except re.error as e:
        return str(e)
    return None


def full_match(patterns: Sequence[str], value: str) -> bool:
    """``value.matches(regex)`` for any of ``patterns`` (the whole value must match)."""
    return any(_compiled(p).fullmatch(value) is not None for p in patterns)


def broker_host(broker: str) -> str:
    """``LoadManagerShared.parseBrokerHost``: a broker id up to its last ``:``."""
    i = broker.rfind(":")
    return broker[:i] if i > 0 else broker


def _strip_port(value: str) -> str | None:
    i = value.rfind(":")
    if i <= 0 or i == len(value) - 1 or not value[i + 1:].isdigit():
        return None
    return value[:i]


def matches_broker(patterns: Sequence[str], broker: str) -> bool:
    """``NamespaceIsolationPolicyImpl.matchesBrokerRegex``: the broker id as given, then its host."""
    if full_match(patterns, broker):
        return True
    host = _strip_port(broker)
    return host is not None and full_match(patterns, host)


class IsolationPolicy(Struct, frozen=True):
    """One ``NamespaceIsolationData``: namespace regexes, primary and secondary broker regexes and
    the ``min_available`` auto-failover policy's ``min_limit`` / ``usage_threshold``."""

    namespaces: tuple[str, ...]
    primary: tuple[str, ...]
    secondary: tuple[str, ...] = ()
    min_limit: int = 1
    usage_threshold: int = 100
    name: str = ""

    def applies_to(self, namespace: str) -> bool:
        return full_match(self.namespaces, namespace)

    def is_primary(self, broker: str) -> bool:
        return matches_broker(self.primary, broker)

    def is_secondary(self, broker: str) -> bool:
        return matches_broker(self.secondary, broker)

    def should_failover(self, primaries: int) -> bool:
        """``MinAvailablePolicy.shouldFailoverToSecondary(totalPrimaryCandidates)``."""
        return primaries < self.min_limit


def _frozen(m: Mapping[str, object] | None) -> Mapping[str, object]:
    return MappingProxyType(dict(m or {}))


class ClusterPolicies(Struct, frozen=True):
    """Isolation policies (in the map's order), anti-affinity groups (namespace → group) and
    failure domains (domain → broker ids)."""

    isolation: tuple[IsolationPolicy, ...] = ()
    anti_affinity: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    failure_domains: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}))

    # --- isolation -----------------------------------------------------------------------------
    def isolation_for(self, namespace: str) -> IsolationPolicy | None:
        """``getPolicyByNamespace``: the first policy matching the namespace."""
        return next((p for p in self.isolation if p.applies_to(namespace)), None)

    def has_isolation_policy(self, namespace: str) -> bool:
        return self.isolation_for(namespace) is not None

    def is_shared(self, broker: str) -> bool:
        """``NamespaceIsolationPolicies.isSharedBroker``: no policy names the broker primary."""
        return not any(p.is_primary(broker) for p in self.isolation)

    # --- anti-affinity -------------------------------------------------------------------------
    def anti_affinity_group(self, namespace: str) -> str | None:
        """The namespace's ``namespaceAntiAffinityGroup``; blank is none (``isNotBlank``)."""
        group = self.anti_affinity.get(namespace)
        return group if group is not None and group.strip() else None

    def has_anti_affinity(self, namespace: str) -> bool:
        return self.anti_affinity_group(namespace) is not None

    def same_group(self, namespace: str, group: str) -> bool:
        """``group.equalsIgnoreCase(namespace's group)``."""
        other = self.anti_affinity_group(namespace)
        return other is not None and other.lower() == group.lower()

    def has_policies(self, bundle: str) -> bool:
        """``TopKBundles.hasPolicies``: an isolation policy or an anti-affinity group."""
        ns = bundle.rpartition("/")[0] if bundle.count("/") >= 2 else bundle
        return self.has_isolation_policy(ns) or self.has_anti_affinity(ns)

    # --- failure domains -----------------------------------------------------------------------
    def broker_domains(self) -> dict[str, str]:
        """``refreshBrokerToFailureDomainMap``: broker id → domain (the last domain listing it)."""
        out: dict[str, str] = {}
        for domain, brokers in self.failure_domains.items():
            for b in brokers:
                out[b] = domain
        return out

    @property
    def empty(self) -> bool:
        return not (self.isolation or self.anti_affinity or self.failure_domains)


NO_POLICIES = ClusterPolicies()
