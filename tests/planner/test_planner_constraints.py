"""Hard constraints are never violated: a property over random clusters with random exclusions.

Each example draws a cluster (brokers of different strength, skewed bundles), then at random:
excluded namespaces, bundles in (and just out of) the grace period, heavy system and heartbeat
bundles the planner would love to move, brokers refusing persistent topics, a small
``loadBalancerBrokerMaxTopics``, isolation policies and anti-affinity groups (on a state that
carries ``policies``). Every plan is then checked
against the snapshot, re-deriving each rule here rather than asking the planner's rules.
"""

from __future__ import annotations

import math
import re
from dataclasses import fields

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lbctl.config import resolve
from lbctl.model.bundle import namespace_of
from lbctl.model.cluster import ClusterState
from lbctl.planner import milp
from lbctl.planner.propose import ProposeOptions, propose
from lbctl.strategies.placement.broker_filters import IsolationPolicy, Policies
from tests.plan_contract import check_plan
from tests.planner_clusters import AT_MS, random_cluster, stats

GRACE_MIN = 30


def _with(state: ClusterState, **changes: object) -> ClusterState:
    values = {f.name: getattr(state, f.name) for f in fields(ClusterState)}
    values.update(changes)
    return ClusterState(**values)  # type: ignore[arg-type]


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterState, dict[str, object]]:
    seed = draw(st.integers(0, 10_000))
    n = draw(st.integers(2, 7))
    base = random_cluster(seed, n, per_broker=draw(st.integers(2, 6)))
    brokers = list(base.brokers)
    reports = dict(base.brokers)
    # heavy system bundles (pulsar/system and a heartbeat namespace) on the busiest broker
    from lbctl.records import replace

    busiest = max(brokers, key=lambda b: reports[b].cpu.percent)
    if draw(st.booleans()):
        rep = reports[busiest]
        extra = {"pulsar/system/0x00000000_0xffffffff": stats(3000),
                 f"pulsar/test/{busiest}/0x00000000_0xffffffff": stats(3000)}
        from lbctl.model.load import NamespaceBundleStats

        new = dict(rep.lastStats)
        for x, s in extra.items():
            new[x] = NamespaceBundleStats(**s)
        reports[busiest] = rep.with_stats(new)
    owners = {x: b for b, r in reports.items() for x in r.lastStats}
    namespaces = sorted({namespace_of(x) for x in owners if not x.startswith("pulsar/")})
    excluded = draw(st.lists(st.sampled_from(namespaces), max_size=2, unique=True))
    bundles = sorted(owners)
    recent = {}
    for x in draw(st.lists(st.sampled_from(bundles), max_size=4, unique=True)):
        recent[x] = AT_MS - draw(st.integers(0, 2 * GRACE_MIN)) * 60_000
    for b in draw(st.lists(st.sampled_from(brokers), max_size=max(0, n - 2), unique=True)):
        reports[b] = replace(reports[b], persistentTopicsEnabled=False)
    topics_now = sorted(r.numTopics for r in reports.values())
    max_topics = draw(st.sampled_from([50_000, topics_now[len(topics_now) // 2] + 5,
                                       topics_now[-1] + 1]))
    config = {"loadBalancerSheddingExcludedNamespaces": ",".join(excluded),
              "loadBalancerBrokerMaxTopics": str(max_topics),
              "loadBalancerSheddingGracePeriodMinutes": str(GRACE_MIN)}
    changes: dict[str, object] = {"brokers": reports, "config": config,
                                  "recently_unloaded": recent}
    if draw(st.booleans()):
        iso_ns = draw(st.sampled_from(namespaces))
        primaries = draw(st.lists(st.sampled_from(brokers), min_size=1, max_size=2, unique=True))
        shared = [b for b in brokers if b not in primaries]
        isolation = (IsolationPolicy((re.escape(iso_ns),),
                                     # policies name hosts (LoadManagerShared.parseBrokerHost)
                                     tuple(re.escape(b.rpartition(":")[0]) for b in primaries)),)
        group_ns = draw(st.lists(st.sampled_from(namespaces), max_size=2, unique=True))
        changes["policies"] = Policies(isolation, dict.fromkeys(group_ns, "g1"))
        changes["meta"] = {"iso_ns": iso_ns, "primaries": primaries, "shared": shared,
                           "group_ns": group_ns}
    meta = changes.pop("meta", {})
    state = _with(base, **changes)
    return state, {"excluded": excluded, "recent": recent, "max_topics": max_topics,
                   "owners": owners, **meta}  # type: ignore[dict-item]


def _check(state: ClusterState, info: dict[str, object], p: object) -> None:
    from lbctl.planner.propose import Proposal

    assert isinstance(p, Proposal)
    plan = p.plan().to_dict(explained=True)
    check_plan(plan)
    owners: dict[str, str] = info["owners"]  # type: ignore[assignment]
    excluded: list[str] = info["excluded"]  # type: ignore[assignment]
    recent: dict[str, int] = info["recent"]  # type: ignore[assignment]
    limit: int = info["max_topics"]  # type: ignore[assignment]
    topics = {b: r.numTopics for b, r in state.brokers.items()}
    received: set[str] = set()
    moved_topics = {x: st.topics for r in state.brokers.values() for x, st in r.lastStats.items()}
    for a in plan["actions"]:
        if a["action"] != "unload":
            continue
        x, src, dst = a["bundle"], a["broker"], a["destinationBroker"]
        ns = namespace_of(x)
        assert owners[x] == src
        assert not ns.startswith("pulsar/"), f"system bundle {x} moved"
        assert ns not in excluded, f"{x} of an excluded namespace moved"
        assert not (x in recent and recent[x] >= AT_MS - GRACE_MIN * 60_000), \
            f"{x} moved inside its grace period"
        assert state.brokers[dst].persistentTopicsEnabled, f"{dst} refuses persistent topics"
        assert topics[dst] <= limit, f"{dst} was over the topic limit and received {x}"
        topics[src] -= moved_topics[x]
        topics[dst] += moved_topics[x]
        received.add(dst)
        if "iso_ns" in info:
            if ns == info["iso_ns"]:
                assert dst in info["primaries"], f"{x} left its isolation primaries"  # type: ignore[operator]
            else:
                assert dst in info["shared"], f"{x} sent to an isolated broker"  # type: ignore[operator]
    for b in received:
        assert topics[b] <= limit, f"{b} ends with {topics[b]} topics > {limit}"
    if info.get("group_ns"):
        group = set(info["group_ns"])  # type: ignore[arg-type]
        members = [x for x in owners if namespace_of(x) in group]
        before = {b: sum(1 for x in members if owners[x] == b) for b in state.brokers}
        final = dict(owners)
        for a in plan["actions"]:
            if a["action"] == "unload":
                final[a["bundle"]] = a["destinationBroker"]
        even = math.ceil(len(members) / len(state.brokers))
        for b in state.brokers:
            after = sum(1 for x in members if final[x] == b)
            assert after <= max(before[b], even), f"anti-affinity group crowded on {b}"


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(clusters())
def test_greedy_plans_never_break_a_hard_constraint(case: tuple[ClusterState, dict[str, object]]) -> None:
    state, info = case
    p = propose(state, resolve(state.config), ProposeOptions(solver="greedy"))
    _check(state, info, p)


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(clusters())
def test_exact_plans_never_break_a_hard_constraint(case: tuple[ClusterState, dict[str, object]]) -> None:
    if not milp.available():
        return
    state, info = case
    p = propose(state, resolve(state.config), ProposeOptions(solver="exact", time_limit=2.0))
    _check(state, info, p)


def test_the_explanation_lists_what_stays_and_why() -> None:
    base = random_cluster(3, 4)
    x = sorted(base.owners())[0]
    state = _with(base, config={"loadBalancerSheddingExcludedNamespaces": namespace_of(x)},
                  recently_unloaded={sorted(base.owners())[-1]: AT_MS - 60_000})
    p = propose(state, resolve(state.config), ProposeOptions(solver="greedy"))
    from lbctl.planner.explain import pinned_counts

    counts = pinned_counts(p)
    assert counts.get("loadBalancerSheddingExcludedNamespaces", 0) >= 1
    assert counts.get("grace period") == 1
    assert any("isolation" in m for m in p.rules.not_modelled)
    policy = _with(base, policies=Policies((), {namespace_of(x): "g"}))
    q = propose(policy, resolve(policy.config), ProposeOptions(solver="greedy"))
    assert not q.rules.not_modelled
    assert any("anti-affinity" in e for e in q.rules.enforced)
