"""Namespace policies in placement, shared by both load managers (``LoadManagerShared``).

* :func:`apply_namespace_policies` — ``applyNamespacePolicies`` / ``applyNamespacePoliciesAsync``:
  a namespace with an isolation policy may go to its primary brokers, plus the secondary ones when
  the policy's ``min_available`` failover says so (fewer primaries than ``min_limit``); a namespace
  without one may go to the *shared* brokers only — those no policy names primary — that load its
  topic kind (``persistentTopicsEnabled``, or ``nonPersistentTopicsEnabled`` for a bundle looked up
  for a non-persistent topic). The modular load manager's predicate also needs the broker's load
  report (``brokerTopicLoadingPredicate`` reads ``loadData``): a broker without one is never a
  shared candidate. Policies' broker regexes are matched against the broker's *host*, never its
  ``host:port`` id (:func:`lbctl.model.policies.broker_host`: ``parseBrokerHost`` since Pulsar
  3.2.0, ``URL.getHost()`` before; the rule is the profile's ``isolationBrokerHost``); a broker
  whose host cannot be taken is skipped, as Pulsar logs and skips it.
* :func:`filter_anti_affinity` — ``filterAntiAffinityGroupOwnedBrokers``: for a namespace of an
  anti-affinity group, with ``failureDomainsEnabled`` first only the failure domains owning the
  fewest namespaces of the group stay, then only the brokers owning the fewest (a broker owning
  none wins over every broker owning some).
* :func:`should_anti_affinity_namespace_unload` — ``shouldAntiAffinityNamespaceUnload``: do not shed
  a bundle of such a namespace when every candidate broker owns as many of the group as the
  least-owning one and the owner is among them (the bundle would come back).

Counting members of a group differs between the load managers: the modular one counts, per broker,
the *namespaces* of the group it owns bundles of (``BundleRangeCache``); the extensible one counts
the owned *bundles* of the group (``ServiceUnitStateChannel`` ownership entries). Both are here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

from msgspec import Struct

from lbctl.model.bundle import namespace_of
from lbctl.model.decision import Why
from lbctl.model.javaorder import bucket_order, cleared_capacity
from lbctl.model.policies import DEFAULT_DOMAIN, ClusterPolicies, HostRule, broker_host

#: What the namespace policies kept, and why.
Policy = Literal[
    "isolation",  # name (of the policy, may be empty), names (its primaries);
    #   failover: min_limit, others (the secondaries added); skipped
    "shared",  # names (brokers not loading the topic kind), others (primaries of a
    #   policy, not shared), non_persistent; skipped
    "anti-affinity",  # domains (removed by domain, with domain_least);
    #   names/counts (removed brokers), least
]


class PolicyWhy(Why, frozen=True):
    """A reason of :data:`Policy`, with its figures."""

    code: Policy
    name: str = ""
    names: tuple[str, ...] = ()
    others: tuple[str, ...] = ()
    failover: bool = False
    min_limit: int = 0
    non_persistent: bool = False
    domains: tuple[str, ...] = ()
    domain_least: int = 0
    counts: tuple[int, ...] = ()
    least: int = 0
    #: broker ids whose host Pulsar cannot take (``parseBrokerHost`` / ``new URL`` throws)
    skipped: tuple[str, ...] = ()


class PolicyCandidates(Struct, frozen=True):
    """The brokers a namespace's policies allow, and why (``None``: nothing removed)."""

    brokers: tuple[str, ...]
    why: PolicyWhy | None
    policy: str | None = None  # the isolation policy's name, when one applies


def apply_namespace_policies(
    namespace: str,
    available: Sequence[str],
    policies: ClusterPolicies,
    loads_topics: Callable[[str, bool], bool],
    *,
    non_persistent: bool = False,
    rule: HostRule = "brokerId",
    table: int | None = None,
    secondaries_table: int = 0,
) -> PolicyCandidates:
    """``LoadManagerShared.applyNamespacePolicies``; ``loads_topics(broker, non_persistent)`` is the
    ``BrokerTopicLoadingPredicate`` (given the broker id). Regexes match each broker's host taken
    by ``rule``. The result keeps ``available``'s order, except with ``table`` (below).

    ``table``: the candidates go into a ``HashSet`` of that table length (kept from earlier
    fills; grown here when this fill outnumbers its 3/4) which iterates them (the modular
    ``brokerCandidateCache``; ``available`` is then that set's order for a table no longer
    than the grown one, each bucket in the order ``getAvailableBrokers()`` gives). Pulsar does
    not add the brokers in that order: walking the available brokers, it collects a policy's
    primaries and secondaries — or, without a policy, the shared brokers — in two thread-local
    ``HashSet`` s, then ``addAll`` s the primaries and, on failover, the secondaries (or the
    shared brokers) (``applyNamespacePolicies`` alike in the ``URL.getHost()`` releases,
    LoadManagerShared at 01f1d8fab668 and b3659d4a5624, and in a version after PR #21894's
    ``parseBrokerHost``, which has ``applyNamespacePoliciesAsync`` too). ``addAll`` walks each
    scratch set in its own order, so within one bucket of the candidate set the primaries come
    first, and each group comes in its scratch set's order. The primaries' set is never longer
    than the candidate set (every fill of it is added whole), so within a candidate bucket its
    order is the available order. The secondaries' set (``secondaries_table``: its table length
    before this fill, 0 for none yet) is longer when a policy that did not fail over once held
    more secondaries than the candidate set ever held; then the secondaries (and the shared
    brokers of a namespace without a policy) come, within a candidate bucket, by the buckets of
    that longer table first (:func:`scratch_order`). Tree bins (9 brokers or more in one bucket
    of a table of 64 or more, which only names made to collide give) are not followed here: each
    bucket keeps the order its brokers were added in. ``None`` (the extensible filter, which
    ``retainAll`` s a map, keeping its order): ``available``'s order."""
    policy = policies.isolation_for(namespace)
    hosts = {b: broker_host(b, rule) for b in available}
    skipped = tuple(b for b in available if hosts[b] is None)
    if policy is not None:
        primaries = [b for b in available if (h := hosts[b]) is not None and policy.is_primary(h)]
        keep = set(primaries)
        secondaries = [b for b in available if (h := hosts[b]) is not None
                       and b not in keep and policy.is_secondary(h)]
        failover = policy.should_failover(len(primaries))
        if failover:
            keep.update(secondaries)
        why = PolicyWhy("isolation", policy.name or "", tuple(primaries),
                        tuple(secondaries), failover, policy.min_limit, skipped=skipped)
        if table is not None:  # addAll(primaries), then addAll(secondaries) on failover
            fill = [*primaries, *secondaries] if failover else primaries
            capacity = cleared_capacity(table, len(fill))
            if failover:  # the secondaries' set, grown by this fill
                scratch = cleared_capacity(secondaries_table, len(secondaries))
                fill = [*primaries, *scratch_order(secondaries, capacity, scratch)]
            order = bucket_order(fill, capacity)
            return PolicyCandidates(tuple(order), why, policy.name)
        return PolicyCandidates(tuple(b for b in available if b in keep), why, policy.name)
    kept: list[str] = []
    no_kind: list[str] = []
    reserved: list[str] = []
    for b in available:
        host = hosts[b]
        if host is None:
            continue
        if not loads_topics(b, non_persistent):
            no_kind.append(b)
        elif not policies.is_shared(host):
            reserved.append(b)
        else:
            kept.append(b)
    shared = (PolicyWhy("shared", names=tuple(no_kind), others=tuple(reserved),
                        non_persistent=non_persistent, skipped=skipped)
              if no_kind or reserved or skipped else None)
    if table is not None and kept:  # addAll(the secondaries' set of shared brokers)
        capacity = cleared_capacity(table, len(kept))
        fill = scratch_order(kept, capacity, cleared_capacity(secondaries_table, len(kept)))
        kept = bucket_order(fill, capacity)
    return PolicyCandidates(tuple(kept), shared)


def scratch_order(brokers: list[str], capacity: int, scratch: int) -> list[str]:
    """``brokers`` (in the available order) as ``addAll`` takes them from the thread-local
    scratch set of table length ``scratch`` into the candidate set of table length ``capacity``:
    as they are when the scratch table is no longer (each candidate bucket then holds them in
    the available order), else in the scratch set's own order (``brokers`` itself is returned
    when unchanged)."""
    if scratch <= capacity:
        return brokers
    return bucket_order(brokers, scratch)


# --- anti-affinity groups ---------------------------------------------------------------------------
def namespace_group_counts(namespace: str, policies: ClusterPolicies,
                           broker_namespaces: Mapping[str, Iterable[str]]) -> dict[str, int] | None:
    """Modular ``getAntiAffinityNamespaceOwnedBrokers``: per broker, how many namespaces of the
    namespace's group it owns bundles of (``None`` when the namespace has no group)."""
    group = policies.anti_affinity_group(namespace)
    if group is None:
        return None
    out: dict[str, int] = {}
    for broker, namespaces in broker_namespaces.items():
        n = sum(1 for ns in namespaces if policies.same_group(ns, group))
        if n:
            out[broker] = n
    return out


def bundle_group_counts(namespace: str, policies: ClusterPolicies,
                        owners: Mapping[str, str]) -> dict[str, int] | None:
    """Extensible ``getAntiAffinityNamespaceOwnedBrokers`` over the ownership entries
    (bundle → owner): per broker, how many owned bundles belong to the group."""
    group = policies.anti_affinity_group(namespace)
    if group is None:
        return None
    out: dict[str, int] = {}
    for bundle, owner in owners.items():
        if policies.same_group(namespace_of(bundle), group):
            out[owner] = out.get(owner, 0) + 1
    return out


def filter_anti_affinity(
    cands: Sequence[str],
    counts: Mapping[str, int] | None,
    domains: Mapping[str, str] | None,
) -> tuple[tuple[str, ...], PolicyWhy | None]:
    """``filterAntiAffinityGroupOwnedBrokers`` on ``cands`` (order kept); ``domains`` is the broker →
    failure domain map when ``failureDomainsEnabled`` (else ``None``). Returns the survivors and
    why others went (``None``: none did)."""
    if not cands or counts is None:
        return tuple(cands), None
    out = list(cands)
    by_domain: list[str] = []
    least_d = 0
    if domains:  # filterDomainsNotHavingLeastNumberAntiAffinityNamespaces
        per_domain: dict[str, int] = {}
        for b in out:
            d = domains.get(b, DEFAULT_DOMAIN)
            per_domain[d] = per_domain.get(d, 0) + counts.get(b, 0)
        least_d = min(per_domain.values())
        by_domain = [b for b in out if per_domain[domains.get(b, DEFAULT_DOMAIN)] != least_d]
        out = [b for b in out if b not in by_domain]
    least = min((counts.get(b, 0) for b in out), default=0)
    kept = [b for b in out if counts.get(b, 0) == least]
    dropped = [b for b in out if counts.get(b, 0) != least]
    why = None
    if by_domain or dropped:
        why = PolicyWhy("anti-affinity", names=tuple(dropped),
                        counts=tuple(counts.get(b, 0) for b in dropped), least=least,
                        domains=tuple(by_domain), domain_least=least_d)
    return tuple(kept), why


def should_anti_affinity_namespace_unload(current: str, cands: Sequence[str],
                                          counts: Mapping[str, int] | None) -> bool:
    """``LoadManagerShared.shouldAntiAffinityNamespaceUnload`` over the policy candidates."""
    if not counts:
        return True
    least = min((counts.get(b, 0) for b in cands), default=2**31 - 1)
    current_count = counts.get(current, 0) if current in cands else 0
    if least == 0 or current_count > least:
        return True
    owners_of_least = sum(1 for b in cands if counts.get(b, 0) == least)
    return len(cands) != owners_of_least
