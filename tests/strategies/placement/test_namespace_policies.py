"""Namespace policies in placement: ``LoadManagerShared.applyNamespacePolicies``,
``filterAntiAffinityGroupOwnedBrokers``, ``shouldAntiAffinityNamespaceUnload``,
``NamespaceIsolationPolicies`` and ``MinAvailablePolicy``.

Cases ported from Pulsar's ``NamespaceIsolationPoliciesTest``, ``MinAvailablePolicyTest`` and
``AntiAffinityNamespaceGroupTest`` (pulsar-broker, commit 024226641a5f), and from the example in
``LoadManagerShared.filterAntiAffinityGroupOwnedBrokers``' javadoc.
"""

from __future__ import annotations

import pytest

from lbctl import versions
from lbctl.explain.words import text
from lbctl.model.policies import ClusterPolicies, IsolationPolicy, broker_host
from lbctl.strategies.placement.namespace_policies import (
    apply_namespace_policies,
    bundle_group_counts,
    filter_anti_affinity,
    namespace_group_counts,
    should_anti_affinity_namespace_unload,
)

# NamespaceIsolationPoliciesTest.defaultJson
POLICY1 = IsolationPolicy(("pulsar/use/test.*",), ("prod1-broker[1-3].messaging.use.example.com",),
                          ("prod1-broker.*.use.example.com",), 3, 100, "policy1")


def everyone(_broker: str, _non_persistent: bool) -> bool:
    return True


def test_policy_by_namespace_is_the_first_match() -> None:
    policies = ClusterPolicies((POLICY1,))
    assert policies.isolation_for("no/such/namespace") is None
    assert policies.isolation_for("pulsar/use/testns-1") is POLICY1
    # testSetPolicy: a second policy for pulsar/use/TESTNS.*; each namespace finds its own
    policy2 = IsolationPolicy(("pulsar/use/TESTNS.*",), ("prod1-broker[45].messaging.use.example.com",),
                              ("prod1-broker.*.use.example.com",), 2, 80, "policy2")
    both = ClusterPolicies((POLICY1, policy2))
    assert both.isolation_for("pulsar/use/TESTNS.1") is policy2
    # the whole namespace must match (String.matches), and the map's order decides overlaps
    overlapping = ClusterPolicies((IsolationPolicy(("pulsar/use/.*",), ("a",), name="first"),
                                   POLICY1))
    assert overlapping.isolation_for("pulsar/use/testns-1").name == "first"
    assert ClusterPolicies((POLICY1,)).isolation_for("x/pulsar/use/test") is None


def test_shared_brokers_are_those_no_policy_names_primary() -> None:
    """``NamespaceIsolationPolicies.isSharedBroker``: a secondary broker stays shared."""
    policies = ClusterPolicies((POLICY1,))
    assert not policies.is_shared("prod1-broker1.messaging.use.example.com")
    assert policies.is_shared("prod1-broker4.messaging.use.example.com")  # a secondary
    assert policies.is_shared("use.example.com")


def test_min_available_failover() -> None:
    """``MinAvailablePolicyTest``: min_limit 3 fails over with 2 primaries, not with 15."""
    policy = IsolationPolicy(("x/.*",), ("p",), min_limit=3, usage_threshold=10)
    assert not policy.should_failover(15)
    assert policy.should_failover(2)
    assert not policy.should_failover(3)


def test_policies_match_the_brokers_host_never_its_id() -> None:
    """``LoadManagerShared.applyNamespacePolicies`` hands ``isPrimaryBroker`` /
    ``isSecondaryBroker`` / ``isSharedBroker`` the broker's host (``parseBrokerHost``, apache/pulsar
    master 2025, PR #21894), and ``NamespaceIsolationPolicyImpl.matchesBrokerRegex`` matches that
    whole value: a policy naming ``broker2:8080`` (issue #15795) matches nothing, so broker2 stays
    shared."""
    policy = IsolationPolicy(("t/ns",), ("broker1",), ("broker2:8080",), min_limit=2, name="p")
    policies = ClusterPolicies((policy,))
    ids = ("broker1:8080", "broker2:8080", "broker3:8080")
    got = apply_namespace_policies("t/ns", ids, policies, everyone)
    assert got.brokers == ("broker1:8080",)  # 1 primary < 2, yet no secondary matched
    assert got.why is not None and got.why.failover and got.why.others == ()
    other = apply_namespace_policies("t/other", ids, policies, everyone)
    assert other.brokers == ("broker2:8080", "broker3:8080")
    assert policies.primary_broker(policy, "broker1:8080")
    assert not policies.secondary_broker(policy, "broker2:8080")
    assert policies.shared_broker("broker2:8080") and not policies.shared_broker("broker1:8080")


def test_broker_host_per_release() -> None:
    """``parseBrokerHost`` (3.2.0+): up to the last ``:``; no ``:`` throws and the broker is
    skipped. Older releases: ``new URL("http://" + id).getHost()`` (the JDK's figures are checked
    in tests/model/test_policies_jdk.py)."""
    assert broker_host("10.0.0.1:8080") == "10.0.0.1"
    assert broker_host("[::1]:8080") == "[::1]"
    assert broker_host("a:b:8080") == "a:b"
    assert broker_host("broker1") is None
    assert broker_host("broker1", "url") == "broker1"
    assert broker_host("a:b:8080", "url") is None
    assert broker_host("user@b1:8080/x", "url") == "b1"
    assert versions.resolve("3.1.3")["isolationBrokerHost"] == "url"
    assert versions.resolve("3.2.0")["isolationBrokerHost"] == "brokerId"


def test_a_broker_without_a_host_is_skipped() -> None:
    """``applyNamespacePolicies`` logs and skips a broker whose host it cannot take, with or without
    a policy: not even shared."""
    policies = ClusterPolicies((IsolationPolicy(("t/iso",), ("b.*",)),))
    ids = ("b1", "c1:8080", "c2")
    got = apply_namespace_policies("t/ns", ids, policies, everyone)
    assert got.brokers == ("c1:8080",)
    assert got.why is not None and got.why.skipped == ("b1", "c2")
    assert "skipped b1, c2" in text(got.why)
    assert apply_namespace_policies("t/iso", ids, policies, everyone).brokers == ()
    old = apply_namespace_policies("t/iso", ids, policies, everyone, rule="url")
    assert old.brokers == ("b1",)


HOSTS = ("prod1-broker1.messaging.use.example.com:8080", "prod1-broker2.messaging.use.example.com:8080",
         "prod1-broker4.messaging.use.example.com:8080", "other.example.org:8080")


def test_isolated_namespace_gets_primaries_then_secondaries() -> None:
    """``applyNamespacePolicies`` with a policy: primaries; with fewer than min_limit (3) the
    secondaries join (``shouldFailoverToSecondaries``)."""
    policies = ClusterPolicies((POLICY1,))
    got = apply_namespace_policies("pulsar/use/testns-1", HOSTS, policies, everyone)
    assert got.brokers == HOSTS[:3]  # 2 primaries < 3: failover adds broker4 (secondary)
    assert got.policy == "policy1"
    one = ClusterPolicies((IsolationPolicy(POLICY1.namespaces, POLICY1.primary, POLICY1.secondary,
                                           1),))
    assert apply_namespace_policies("pulsar/use/testns-1", HOSTS, one, everyone).brokers == HOSTS[:2]


def test_other_namespaces_avoid_every_policys_primaries() -> None:
    """The shared-broker exclusion a policy imposes on every namespace without one."""
    got = apply_namespace_policies("public/default", HOSTS, ClusterPolicies((POLICY1,)), everyone)
    assert got.brokers == HOSTS[2:]
    assert "primary brokers of an isolation policy" in text(got.why)


def test_topic_kind_and_missing_reports() -> None:
    """The predicate: persistent bundles need persistentTopicsEnabled, non-persistent ones
    nonPersistentTopicsEnabled; the modular predicate is false for a broker without a report."""
    flags = {"a:1": (True, True), "b:1": (False, True), "c:1": (True, False)}

    def loads(b: str, non_persistent: bool) -> bool:
        if b not in flags:
            return False
        return flags[b][1] if non_persistent else flags[b][0]

    names = ("a:1", "b:1", "c:1", "no-report:1")
    assert apply_namespace_policies("t/ns", names, ClusterPolicies(), loads).brokers == ("a:1", "c:1")
    assert apply_namespace_policies("t/ns", names, ClusterPolicies(), loads,
                                    non_persistent=True).brokers == ("a:1", "b:1")


def _index(owned: dict[str, list[str]]) -> dict[str, set[str]]:
    return {b: set(ns) for b, ns in owned.items()}


GROUP = ClusterPolicies(anti_affinity={f"my-tenant/use/my-ns{i}": "my-antiaffinity"
                                       for i in range(5)})


def _filter(ns: str, owned: dict[str, list[str]], cands: tuple[str, ...],
            domains: dict[str, str] | None) -> set[str]:
    counts = namespace_group_counts(ns, GROUP, _index(owned))
    return set(filter_anti_affinity(cands, counts, domains)[0])


def test_anti_affinity_with_failure_domains() -> None:
    """``testAntiAffinityNamespaceFilteringWithDomain``."""
    ns = "my-tenant/use/my-ns"
    b = tuple(f"brokerName-{i}" for i in range(4))
    domains = {b[0]: "domain-0", b[1]: "domain-0", b[2]: "domain-1", b[3]: "domain-1"}
    owned: dict[str, list[str]] = {}
    assert _filter(ns + "0", owned, b, domains) == set(b)
    owned = {b[0]: [ns + "0"]}
    assert _filter(ns + "1", owned, b, domains) == {b[2], b[3]}
    owned[b[2]] = [ns + "1"]
    assert _filter(ns + "2", owned, b, domains) == {b[1], b[3]}
    owned[b[1]] = [ns + "2"]
    assert _filter(ns + "3", owned, b, domains) == {b[3]}
    owned[b[3]] = [ns + "3"]
    assert _filter(ns + "4", owned, b, domains) == set(b)


def test_anti_affinity_without_failure_domains() -> None:
    """``testAntiAffinityNamespaceFilteringWithoutDomain``."""
    ns = "my-tenant/use/my-ns"
    b = ("broker-0", "broker-1", "broker-2")
    owned: dict[str, list[str]] = {}
    assert _filter(ns + "0", owned, b, None) == set(b)
    owned = {b[0]: [ns + "0"]}
    assert _filter(ns + "1", owned, b, None) == {b[1], b[2]}
    owned[b[1]] = [ns + "1"]
    assert _filter(ns + "2", owned, b, None) == {b[2]}
    owned[b[2]] = [ns + "2"]
    assert _filter(ns + "3", owned, b, None) == set(b)
    # with failureDomainsEnabled but no domain defined, the domain step does nothing
    assert _filter(ns + "3", owned, b, {}) == set(b)


def test_anti_affinity_javadoc_example() -> None:
    """``filterAntiAffinityGroupOwnedBrokers``' javadoc: domains d1 (b1:2, b2:1), d2 (b3:2, b4:1),
    d3 (b5:2, b6:2) → b2 or b4."""
    counts = {"b1": 2, "b2": 1, "b3": 2, "b4": 1, "b5": 2, "b6": 2}
    domains = {"b1": "d1", "b2": "d1", "b3": "d2", "b4": "d2", "b5": "d3", "b6": "d3"}
    kept, why = filter_anti_affinity(tuple(counts), counts, domains)
    assert kept == ("b2", "b4")
    assert "b5" in text(why) and "b6" in text(why)


def test_no_group_filters_nothing_and_groups_ignore_case() -> None:
    policies = ClusterPolicies(anti_affinity={"t/a": "G", "t/b": "g", "t/c": "  "})
    assert namespace_group_counts("t/c", policies, {"x": {"t/a"}}) is None  # blank: no group
    assert namespace_group_counts("t/a", policies, {"x": {"t/a", "t/b"}, "y": {"t/c"}}) == {"x": 2}
    # the extensible count is per owned bundle, not per namespace
    owners = {"t/a/0x00000000_0x80000000": "x", "t/a/0x80000000_0xffffffff": "x",
              "t/b/0x00000000_0xffffffff": "y", "t/c/0x00000000_0xffffffff": "y"}
    assert bundle_group_counts("t/b", policies, owners) == {"x": 2, "y": 1}
    assert filter_anti_affinity(("x", "y", "z"), {"x": 2, "y": 1}, None)[0] == ("z",)
    assert filter_anti_affinity(("x", "y"), {"x": 2, "y": 1}, None)[0] == ("y",)


def test_should_anti_affinity_namespace_unload() -> None:
    """``testLoadSheddingUtilWithAntiAffinityNamespace``: broker-0 owns ns-0; it may unload it
    while some broker owns fewer namespaces of the group, not once every broker owns one."""
    ns = "my-tenant/use/my-ns"
    cands = ("broker-0", "broker-1", "broker-2")
    owned = {"broker-0": [ns + "0"]}

    def should() -> bool:
        counts = namespace_group_counts(ns + "0", GROUP, _index(owned))
        return should_anti_affinity_namespace_unload("broker-0", cands, counts)

    assert should()
    owned["broker-1"] = [ns + "1"]
    assert should()
    owned["broker-2"] = [ns + "2"]
    assert not should()


@pytest.mark.parametrize("counts, current, expected", [
    (None, "a", True), ({}, "a", True),
    ({"a": 2, "b": 1, "c": 1}, "a", True),    # the owner has more than the least
    ({"a": 1, "b": 1, "c": 2}, "a", True),    # not every candidate is at the least
    ({"a": 1, "b": 1, "c": 1}, "a", False),   # all equal: it would come back
    ({"b": 1, "c": 1}, "a", True),            # the owner holds none: least is 0
])
def test_should_unload_table(counts: dict[str, int] | None, current: str, expected: bool) -> None:
    assert should_anti_affinity_namespace_unload(current, ("a", "b", "c"), counts) is expected
