"""Hard constraints: bundles that must stay where they are, brokers a bundle may not go to.

No plan ever breaks these (a property test checks it over random clusters):

* **pinned bundles** — system namespaces (``pulsar/system``, heartbeat and SLA-monitor
  namespaces: ``NamespaceService.isSystemServiceNamespace``); namespaces in
  ``loadBalancerSheddingExcludedNamespaces``; bundles unloaded less than
  ``loadBalancerSheddingGracePeriodMinutes`` ago (the snapshot's ``recentlyUnloaded``, and the
  planner's own moves when it runs in the simulator); on an extensible cluster, bundles of
  namespaces with an isolation policy or anti-affinity group unless
  ``loadBalancerSheddingBundlesWithPoliciesEnabled`` (TransferShedder's ``isTransferable``);
* **closed brokers** — a broker whose report says ``persistentTopicsEnabled: false`` takes no
  bundle that may hold persistent topics (every bundle, unless the snapshot's topic list shows
  only non-persistent ones), ``nonPersistentTopicsEnabled: false`` none known to hold
  non-persistent topics (``BrokerIsolationPoliciesFilter`` / ``LoadManagerShared`` topic-kind
  checks); a broker with more than ``loadBalancerBrokerMaxTopics`` topics takes nothing, and no
  move takes a broker past it (``filterBrokersWithLargeTopicCount``);
* **policies, when the snapshot carries them** (``ClusterState.policies``,
  :class:`lbctl.model.policies.ClusterPolicies`, matched as Pulsar's placement filters match
  them): a namespace with an isolation policy goes only to its primary brokers (plus the
  secondaries when fewer primaries than the ``min_available`` policy's ``min_limit`` exist), a
  namespace without one only to shared brokers; a move never raises a broker's count of an
  anti-affinity group's bundles above an even share of the group (or above its current count).

A snapshot without the ``policies`` section (policies not captured) gets isolation and
anti-affinity reported as not modelled. The rules are kept separate (:class:`Rule`) so that a
policy the snapshot gains is one more rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lbctl.config import Settings
from lbctl.model.bundle import (
    SYSTEM_NAMESPACE,
    BundleNameError,
    BundleRange,
    is_system_service_namespace,
    namespace_of,
    topic_hash,
    topic_namespace,
)
from lbctl.model.cluster import EXTENSIBLE, ClusterState
from lbctl.model.policies import ClusterPolicies
from lbctl.planner.load import LoadView


def policies_of(state: ClusterState) -> ClusterPolicies | None:
    """The snapshot's isolation policies and anti-affinity groups, when it carries any."""
    p = state.policies
    if p is None or not (p.isolation or p.anti_affinity):
        return None
    return p


@dataclass
class Rules:
    """The constraints of one planning problem, as the solvers consult them.

    ``pinned[i]`` says why bundle ``i`` must stay (``None``: movable); ``closed[j]`` why broker
    ``j`` takes nothing; :meth:`refuses` why bundle ``i`` may not go to broker ``j``, given the
    topics and anti-affinity counts the plan has reached so far.
    """

    pinned: list[str | None]
    closed: dict[int, str]
    topics_limit: int
    #: bundle index -> the broker indices its namespace may go to (isolation), absent: any
    allowed: dict[int, frozenset[int]] = field(default_factory=dict)
    #: why a bundle's allowed set is what it is (per namespace)
    allowed_why: dict[int, str] = field(default_factory=dict)
    #: bundles that may hold persistent / non-persistent topics
    kind_refused: dict[int, set[int]] = field(default_factory=dict)  # broker -> bundles refused
    kind_why: dict[int, str] = field(default_factory=dict)
    #: anti-affinity: bundle -> group, and per group the cap per broker
    group: dict[int, str] = field(default_factory=dict)
    group_cap: dict[str, list[int]] = field(default_factory=dict)
    enforced: list[str] = field(default_factory=list)
    not_modelled: list[str] = field(default_factory=list)

    def movable(self) -> list[int]:
        return [i for i, p in enumerate(self.pinned) if p is None]

    def static_refuses(self, i: int, j: int) -> str | None:
        """Why ``i`` may never go to ``j`` whatever else moves (``None``: it may)."""
        why = self.closed.get(j)
        if why is not None:
            return why
        allowed = self.allowed.get(i)
        if allowed is not None and j not in allowed:
            return self.allowed_why.get(i, "isolation policy")
        refused = self.kind_refused.get(j)
        if refused is not None and i in refused:
            return self.kind_why[j]
        return None

    def refuses(self, i: int, j: int, topics: Sequence[int], bundle_topics: int,
                groups: Mapping[tuple[str, int], int]) -> str | None:
        """Why ``i`` may not go to ``j`` now: static rules, then the topic limit and the
        anti-affinity cap with the counts reached so far."""
        why = self.static_refuses(i, j)
        if why is not None:
            return why
        if topics[j] + bundle_topics > self.topics_limit:
            return (f"{topics[j] + bundle_topics} topics would exceed "
                    f"loadBalancerBrokerMaxTopics ({self.topics_limit})")
        g = self.group.get(i)
        if g is not None and groups.get((g, j), 0) + 1 > self.group_cap[g][j]:
            return f"anti-affinity group {g}: {self.group_cap[g][j]} bundle(s) at most"
        return None


def build_rules(state: ClusterState, settings: Settings, view: LoadView,
                recently_moved: Mapping[str, int] | None = None,
                held: Mapping[str, str] | None = None) -> Rules:
    """The constraints of ``state`` for the bundles and brokers of ``view``; ``held`` pins more
    bundles, each with why (the caller's: a live plan's bundles ``apply`` would refuse)."""
    n = len(view.brokers)
    excluded = set(settings["loadBalancerSheddingExcludedNamespaces"])
    grace_ms = int(settings["loadBalancerSheddingGracePeriodMinutes"]) * 60_000
    limit = int(settings["loadBalancerBrokerMaxTopics"])
    now = state.captured_at
    recent = dict(state.recently_unloaded)
    own = recently_moved or {}  # the caller's own moves: pinned for the window it chose
    policies = policies_of(state)
    shed_policies = bool(settings["loadBalancerSheddingBundlesWithPoliciesEnabled"])
    extensible = state.load_manager == EXTENSIBLE

    pinned: list[str | None] = []
    ns_cache: dict[str, str | None] = {}

    def why_namespace(ns: str) -> str | None:
        if ns == SYSTEM_NAMESPACE or is_system_service_namespace(ns):
            return f"system namespace {ns}"
        if ns in excluded:
            return f"namespace {ns} is in loadBalancerSheddingExcludedNamespaces"
        if (extensible and policies is not None and not shed_policies
                and (policies.isolation_for(ns) is not None or policies.has_anti_affinity(ns))):
            return (f"namespace {ns} has isolation or anti-affinity policies and "
                    "loadBalancerSheddingBundlesWithPoliciesEnabled is false")
        return None

    for x in view.bundles:
        ns = x.rpartition("/")[0]
        try:
            why = ns_cache[ns]
        except KeyError:
            why = ns_cache[ns] = why_namespace(ns)
        if why is None and x in own:
            why = (f"moved by an earlier plan {max(0, (now - own[x]) // 60_000)} min ago: "
                   "cooling down")
        if why is None and recent:
            at = recent.get(x)
            if at is not None and at >= now - grace_ms:
                why = (f"unloaded {max(0, (now - at) // 60_000)} min ago: in the grace period "
                       f"(loadBalancerSheddingGracePeriodMinutes = {grace_ms // 60_000})")
        if why is None and held:
            why = held.get(x)
        pinned.append(why)

    closed: dict[int, str] = {}
    for j, b in enumerate(view.brokers):
        if view.broker_topics[j] > limit:
            closed[j] = (f"{b} has {view.broker_topics[j]} topics, more than "
                         f"loadBalancerBrokerMaxTopics ({limit})")
    rules = Rules(pinned, closed, limit)
    rules.enforced += ["system namespaces stay", "loadBalancerSheddingExcludedNamespaces stay",
                       "bundles in the grace period stay",
                       f"loadBalancerBrokerMaxTopics ({limit}) per destination"]
    _topic_kinds(state, view, rules)
    if policies is None:
        rules.not_modelled.append("isolation policies and anti-affinity groups (the snapshot "
                                  "carries none)")
    else:
        _policies(policies, view, rules, n)
    return rules


def _topic_kinds(state: ClusterState, view: LoadView, rules: Rules) -> None:
    """Brokers refusing persistent or non-persistent topics, and the bundles they refuse."""
    reps = list(state.brokers.values())
    no_persistent = [j for j, r in enumerate(reps) if not r.persistentTopicsEnabled]
    no_non_persistent = [j for j, r in enumerate(reps) if not r.nonPersistentTopicsEnabled]
    rules.enforced.append("persistentTopicsEnabled / nonPersistentTopicsEnabled of destinations")
    if not no_persistent and not no_non_persistent:
        return
    kinds = _bundle_kinds(state, view)  # bundle -> (has persistent, has non-persistent)
    for j in no_persistent:
        refused = {i for i in range(len(view.bundles)) if kinds.get(i, (True, False))[0]}
        rules.kind_refused.setdefault(j, set()).update(refused)
        rules.kind_why[j] = f"{view.brokers[j]} does not accept persistent topics"
    for j in no_non_persistent:
        refused = {i for i in range(len(view.bundles)) if kinds.get(i, (True, False))[1]}
        rules.kind_refused.setdefault(j, set()).update(refused)
        rules.kind_why.setdefault(j, f"{view.brokers[j]} does not accept non-persistent topics")
        if j in no_persistent:
            rules.kind_why[j] = f"{view.brokers[j]} accepts neither persistent nor non-persistent topics"


def _bundle_kinds(state: ClusterState, view: LoadView) -> dict[int, tuple[bool, bool]]:
    """Per bundle with listed topics: whether it holds persistent and non-persistent ones."""
    by_ns: dict[str, list[tuple[int, bool]]] = {}
    for t in state.topics:
        by_ns.setdefault(topic_namespace(t), []).append((topic_hash(t),
                                                         t.startswith("non-persistent://")))
    out: dict[int, tuple[bool, bool]] = {}
    for i, x in enumerate(view.bundles):
        ns = namespace_of(x)
        listed = by_ns.get(ns)
        if not listed:
            continue
        try:
            rng = BundleRange.parse(x.rpartition("/")[2])
        except BundleNameError:
            continue
        mine = [np for h, np in listed if rng.contains(h)]
        if mine:
            out[i] = (not all(mine), any(mine))
    return out


def _policies(policies: ClusterPolicies, view: LoadView, rules: Rules, n: int) -> None:
    """Isolation (allowed destinations per namespace) and anti-affinity caps."""
    shared = frozenset(j for j, b in enumerate(view.brokers) if policies.shared_broker(b))
    per_ns: dict[str, tuple[frozenset[int], str]] = {}
    for i, x in enumerate(view.bundles):
        ns = namespace_of(x)
        hit = per_ns.get(ns)
        if hit is None:
            policy = policies.isolation_for(ns)
            if policy is None:
                hit = (shared, f"namespace {ns} has no isolation policy: shared brokers only")
            else:
                primaries = frozenset(j for j, b in enumerate(view.brokers)
                                      if policies.primary_broker(policy, b))
                allowed = primaries
                if policy.should_failover(len(primaries)):
                    allowed = primaries | frozenset(
                        j for j, b in enumerate(view.brokers)
                        if policies.secondary_broker(policy, b))
                hit = (allowed, f"namespace {ns}'s isolation policy")
            per_ns[ns] = hit
        rules.allowed[i] = hit[0]
        rules.allowed_why[i] = hit[1]
    rules.enforced.append("namespace isolation policies (primary/secondary brokers)")

    groups: dict[str, list[int]] = {}
    for i, x in enumerate(view.bundles):
        g = policies.anti_affinity_group(namespace_of(x))
        if g is not None:
            rules.group[i] = g
            groups.setdefault(g, []).append(i)
    for g, members in groups.items():
        count = [0] * n
        for i in members:
            count[view.owner[i]] += 1
        even = math.ceil(len(members) / max(n, 1))
        rules.group_cap[g] = [max(c, even) for c in count]
    if groups:
        rules.enforced.append("anti-affinity groups (no broker above an even share)")


def group_counts(rules: Rules, owner: Sequence[int]) -> dict[tuple[str, int], int]:
    """Anti-affinity bundles per (group, broker) for an assignment."""
    counts: dict[tuple[str, int], int] = {}
    for i, g in rules.group.items():
        key = (g, owner[i])
        counts[key] = counts.get(key, 0) + 1
    return counts
