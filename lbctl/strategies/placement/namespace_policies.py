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
from itertools import filterfalse
from typing import Literal

from msgspec import Struct

from lbctl.model.bundle import namespace_of
from lbctl.model.decision import Why
from lbctl.model.javaorder import hash_fill
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
    #: with a ``table``: the table lengths the fill left (the candidate set's, the secondaries
    #: set's, the primaries set's), which the kept sets carry to the next fill
    tables: tuple[int, int, int] | None = None
    #: with a ``table``: the brokers in the order the candidate set was given them (what a
    #: refill without ``clear()`` puts again: ``refill_order``)
    puts: tuple[str, ...] = ()


class BrokerClasses(Struct, frozen=True):
    """How ``applyNamespacePolicies`` sorts the available brokers for a namespace without an
    isolation policy (:func:`classify`): the brokers whose host cannot be taken (skipped), those
    that do not load the topic kind, and those some policy names primary (reserved); every
    other broker is shared. ``brokers``: the brokers classified."""

    brokers: frozenset[str]
    skipped: frozenset[str]
    no_kind: frozenset[str]
    reserved: frozenset[str]


def classify(available: Iterable[str], policies: ClusterPolicies,
             loads_topics: Callable[[str, bool], bool], *, non_persistent: bool = False,
             rule: HostRule = "brokerId") -> BrokerClasses:
    """The classes of :class:`BrokerClasses`, with the tests :func:`apply_namespace_policies`
    makes per broker in the same order. Depends on each broker alone, not on the order: a
    modular cycle fills the candidate set three times or more over the same brokers, each fill
    in another order, and classifies them once (the fill is O(brokers))."""
    brokers = frozenset(available)
    skipped: set[str] = set()
    no_kind: set[str] = set()
    reserved: set[str] = set()
    for b in brokers:
        host = broker_host(b, rule)
        if host is None:
            skipped.add(b)
        elif not loads_topics(b, non_persistent):
            no_kind.add(b)
        elif not policies.is_shared(host):
            reserved.add(b)
    return BrokerClasses(brokers, frozenset(skipped), frozenset(no_kind), frozenset(reserved))


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
    primaries_table: int = 0,
    walk: Sequence[str] | None = None,
    classes: BrokerClasses | None = None,
) -> PolicyCandidates:
    """``LoadManagerShared.applyNamespacePolicies``; ``loads_topics(broker, non_persistent)`` is the
    ``BrokerTopicLoadingPredicate`` (given the broker id). Regexes match each broker's host taken
    by ``rule``. The result keeps ``available``'s order, except with ``table`` (below).

    ``table``: the candidates go into ``brokerCandidateCache``, a kept ``HashSet`` whose table
    is ``table`` long before this fill (``clear()`` keeps it), and come out in that set's order.
    Pulsar does not add them in ``available``'s order: walking ``getAvailableBrokers()``'s own
    ``HashSet`` copy (``walk``; ``available`` when not given) it collects a policy's primaries
    and secondaries — or, without a policy, the shared brokers — in two kept thread-local
    ``HashSet`` s (``localPrimariesCache``, ``localSecondaryCache``, tables
    ``primaries_table`` and ``secondaries_table`` long before the fill, 0 for none yet), then
    ``addAll`` s the primaries' set and, on failover, the secondaries' set (or the shared
    brokers' set) to the candidate set, each walked in its own order
    (``applyNamespacePolicies`` alike in the ``URL.getHost()`` releases, LoadManagerShared at
    01f1d8fab668 and b3659d4a5624, and in a version after PR #21894's ``parseBrokerHost``,
    which has ``applyNamespacePoliciesAsync`` too). All three sets are followed put by put
    (:func:`~lbctl.model.javaorder.hash_fill`): the secondaries' set grows by a policy's
    secondaries even when they are not added (no failover), a chain of 9 brokers grows a table
    below 64 buckets early and becomes a tree bin from 64 on (only names made to collide do
    that), and the tables the fill leaves are in :attr:`PolicyCandidates.tables`. ``None``
    (the extensible filter, which ``retainAll`` s a map, keeping its order): ``available``'s
    order.

    ``classes``: :func:`classify` of ``available`` with the same ``policies``, ``loads_topics``,
    ``non_persistent`` and ``rule``, when the caller kept it (only a namespace without an
    isolation policy reads it); computed here otherwise."""
    policy = policies.isolation_for(namespace)
    if policy is None:
        return _shared_candidates(available, classes or classify(
            available, policies, loads_topics, non_persistent=non_persistent, rule=rule),
            non_persistent, table, secondaries_table, primaries_table, walk)
    hosts = {b: broker_host(b, rule) for b in available}
    skipped = tuple(b for b in available if hosts[b] is None)
    primaries = [b for b in available if (h := hosts[b]) is not None and policy.is_primary(h)]
    keep = set(primaries)
    keep_p = frozenset(primaries)
    secondaries = [b for b in available if (h := hosts[b]) is not None
                   and b not in keep and policy.is_secondary(h)]
    seconds = frozenset(secondaries)
    failover = policy.should_failover(len(primaries))
    if failover:
        keep.update(secondaries)
    why = PolicyWhy("isolation", policy.name or "", tuple(primaries),
                    tuple(secondaries), failover, policy.min_limit, skipped=skipped)
    if table is not None:  # addAll(primaries), then addAll(secondaries) on failover
        firsts, p_table = hash_fill(
            primaries if walk is None else [b for b in walk if b in keep_p], primaries_table)
        seconds_order, s_table = hash_fill(
            secondaries if walk is None else [b for b in walk if b in seconds],
            secondaries_table)
        puts = (*firsts, *seconds_order) if failover else tuple(firsts)
        order, c_table = hash_fill(puts, table)
        return PolicyCandidates(tuple(order), why, policy.name, (c_table, s_table, p_table),
                                puts)
    return PolicyCandidates(tuple(b for b in available if b in keep), why, policy.name)


def _shared_candidates(available: Sequence[str], classes: BrokerClasses, non_persistent: bool,
                       table: int | None, secondaries_table: int, primaries_table: int,
                       walk: Sequence[str] | None) -> PolicyCandidates:
    """:func:`apply_namespace_policies` for a namespace without an isolation policy: the shared
    brokers that load the topic kind, each list in ``available``'s order."""
    out = classes.skipped | classes.no_kind | classes.reserved
    kept = list(filterfalse(out.__contains__, available)) if out else list(available)
    skipped = tuple(filter(classes.skipped.__contains__, available)) if classes.skipped else ()
    no_kind = tuple(filter(classes.no_kind.__contains__, available)) if classes.no_kind else ()
    reserved = (tuple(filter(classes.reserved.__contains__, available)) if classes.reserved
                else ())
    shared = (PolicyWhy("shared", names=no_kind, others=reserved,
                        non_persistent=non_persistent, skipped=skipped)
              if no_kind or reserved or skipped else None)
    if table is not None:  # addAll(the secondaries' set of shared brokers)
        if walk is not None:
            kept = list(filter(frozenset(kept).__contains__, walk))
        scratch, s_table = hash_fill(kept, secondaries_table)
        kept, c_table = hash_fill(scratch, table)
        return PolicyCandidates(tuple(kept), shared, tables=(c_table, s_table, primaries_table),
                                puts=tuple(scratch))
    return PolicyCandidates(tuple(kept), shared)


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
