"""The cluster policies Pulsar's placement reads besides load: namespace isolation policies,
anti-affinity groups and failure domains.

Mirrors:

* ``NamespaceIsolationPolicies`` (``clusters/{cluster}/namespaceIsolationPolicies``): the policy of a
  namespace is the **first** policy, in the map's order, one of whose namespace regexes matches the
  whole namespace name (``getPolicyByNamespace``, ``String.matches``); a broker is *shared* when no
  policy names it **primary** (``isSharedBroker`` — a secondary broker of some policy is still
  shared with every namespace without a policy);
* ``NamespaceIsolationPolicyImpl``: primary / secondary broker regexes, each matched against the
  whole value given (``matchesBrokerRegex``, ``String.matches``). ``LoadManagerShared.
  applyNamespacePolicies`` gives it the broker's **host**, never its ``host:port`` id: the id up to
  its last ``:`` (``parseBrokerHost``, Pulsar PR #21894, 3.2.0 and later; an id without ``:`` is
  skipped), or in older releases ``new URL("http://" + id).getHost()`` (an id ``URL`` refuses is
  skipped). A policy naming ``b1:8080`` therefore matches no broker (Pulsar issue #15795; PR
  #20256, which would have matched ``host:port`` too, was closed unmerged);
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

import ipaddress
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import Literal

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


#: How a release takes the host of a broker id before matching policies' broker regexes:
#: ``"brokerId"`` — ``LoadManagerShared.parseBrokerHost`` (PR #21894); ``"url"`` — the older
#: ``new URL("http://" + brokerId).getHost()``.
HostRule = Literal["brokerId", "url"]

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def _java_parse_int(text: str) -> bool:
    """Whether ``Integer.parseInt(text)`` accepts ``text`` (an optional sign, then decimal digits
    of any script, within ``int``)."""
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not all(c.isdecimal() for c in digits):
        return False
    return _INT_MIN <= int(text) <= _INT_MAX


def _ipv6_literal(text: str) -> bool:
    """``IPAddressUtil.isIPv6LiteralAddress`` (a scope id ``%…`` allowed)."""
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def url_host(broker: str) -> str | None:
    """``new URL("http://" + broker).getHost()`` as JDK 17's ``URLStreamHandler.parseURL`` takes
    it; ``None`` where the constructor throws ``MalformedURLException`` (Pulsar then logs and skips
    the broker).

    Trailing characters up to U+0020 are trimmed; the authority ends at the first ``#``, ``?`` or
    ``/``; with more than one ``@`` the host is empty, with one it follows the ``@``; a ``[...]``
    IPv6 literal keeps its brackets, must be valid and may only be followed by ``:port``;
    otherwise the host runs to the first ``:``. A port must be what ``Integer.parseInt`` reads,
    at least -1, or empty. Checked against the JDK in ``tests/model/test_policies_jdk.py``."""
    spec = broker
    end = len(spec)
    while end > 0 and spec[end - 1] <= " ":
        end -= 1
    authority = re.split(r"[#?/]", spec[:end], maxsplit=1)[0]
    if authority.count("@") > 1:
        return ""
    host = authority[authority.find("@") + 1:]
    port = ""
    if host.startswith("["):
        close = host.find("]")
        if close <= 2 or not _ipv6_literal(host[1:close]):
            return None
        rest = host[close + 1:]
        if rest and not rest.startswith(":"):
            return None
        host, port = host[:close + 1], rest[1:]
    else:
        host, _, port = host.partition(":")
    if port and not (_java_parse_int(port) and int(port) >= -1):
        return None
    return host


def broker_host(broker: str, rule: HostRule = "brokerId") -> str | None:
    """The host Pulsar matches a broker's policies against (see :data:`HostRule`): with
    ``"brokerId"``, ``parseBrokerHost`` — the id up to its last ``:`` (IPv6 ids keep their
    brackets), ``None`` (the broker is skipped) when it has no ``:``."""
    if rule == "url":
        return url_host(broker)
    i = broker.rfind(":")
    return broker[:i] if i > -1 else None


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

    def is_primary(self, host: str) -> bool:
        """``isPrimaryBroker(host)``: a primary regex matches the broker's *host*."""
        return full_match(self.primary, host)

    def is_secondary(self, host: str) -> bool:
        """``isSecondaryBroker(host)``."""
        return full_match(self.secondary, host)

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

    def is_shared(self, host: str) -> bool:
        """``NamespaceIsolationPolicies.isSharedBroker(host)``: no policy names the host
        primary."""
        return not any(p.is_primary(host) for p in self.isolation)

    # --- by broker id, as applyNamespacePolicies matches ------------------------------------------
    def primary_broker(self, policy: IsolationPolicy, broker: str,
                       rule: HostRule = "brokerId") -> bool:
        """Whether ``policy`` names the broker id ``broker`` primary: its host matches (a broker
        whose host cannot be taken never does)."""
        host = broker_host(broker, rule)
        return host is not None and policy.is_primary(host)

    def secondary_broker(self, policy: IsolationPolicy, broker: str,
                         rule: HostRule = "brokerId") -> bool:
        host = broker_host(broker, rule)
        return host is not None and policy.is_secondary(host)

    def shared_broker(self, broker: str, rule: HostRule = "brokerId") -> bool:
        """Whether the broker id is shared (a broker whose host cannot be taken is skipped by
        ``applyNamespacePolicies``, so never a shared candidate)."""
        host = broker_host(broker, rule)
        return host is not None and self.is_shared(host)

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
