"""Anti-affinity groups on the extensible load manager, method by method.

Ported from Pulsar's ``AntiAffinityNamespaceGroupExtensionTest``
(pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/extensions/, 172550e3). It
re-runs ``AntiAffinityNamespaceGroupTest``'s scenarios (their modular ports are in
test_namespace_policies.py) with the ownership kept as the service-unit state channel's entries
(bundle → ``ServiceUnitStateData(Owned, broker)``) instead of ``BundleRangeCache``, and adds
``testAntiAffinityGroupPolicyFilter``. On that side ``LoadManagerShared.
getAntiAffinityNamespaceOwnedBrokers`` counts, per broker, the *owned bundles* of the group (the
modular side counts namespaces); every namespace here has one bundle, so the answers are the
modular ones. lbctl's ownership entries are the bundles each broker reports
(``ClusterState.owners``); ``AntiAffinityGroupFilter`` is ``AntiAffinityGroupPolicyFilter``.

``testLoadSheddingWithAntiAffinityNamespace`` is a no-op in the extension (its
``verifyLoadSheddingWithAntiAffinityNamespace`` does nothing), so nothing is ported for it.
"""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.model.policies import ClusterPolicies
from lbctl.strategies.placement.broker_filters import (
    AntiAffinityGroupFilter,
    BrokerLookup,
    FilterContext,
)
from lbctl.strategies.placement.namespace_policies import (
    bundle_group_counts,
    should_anti_affinity_namespace_unload,
)

FULL = "0x00000000_0xffffffff"
DEFAULTS = Settings.defaults()
DOMAINS_ON = DEFAULTS.with_values(failureDomainsEnabled=True)


def group_of(namespace: str, n: int, group: str) -> ClusterPolicies:
    """``namespace + i`` for i < n in anti-affinity group ``group``."""
    return ClusterPolicies(anti_affinity={f"{namespace}{i}": group for i in range(n)})


def kept(brokers: tuple[str, ...], bundle: str, policies: ClusterPolicies,
         owners: dict[str, str], settings: Settings = DEFAULTS) -> set[str]:
    """``AntiAffinityGroupPolicyFilter.filter`` over ``brokers`` for ``bundle``."""
    ctx = FilterContext(settings, {}, policies, owners=owners)
    return set(AntiAffinityGroupFilter()({b: BrokerLookup() for b in brokers}, bundle, ctx))


def test_anti_affinity_namespace_filtering_with_domain() -> None:
    """``testAntiAffinityNamespaceFilteringWithDomain``: four brokers in two failure domains, five
    namespaces of one group placed one by one: b0, then only domain-1 (b2, b3), then b1 or b3,
    then b3 alone, then all four again."""
    ns = "my-tenant/test/my-ns"
    b = tuple(f"brokerName-{i}" for i in range(4))
    policies = ClusterPolicies(
        anti_affinity={f"{ns}{i}": "my-antiaffinity" for i in range(5)},
        failure_domains={"domain-0": (b[0], b[1]), "domain-1": (b[2], b[3])})
    owners: dict[str, str] = {}
    assert kept(b, f"{ns}0/{FULL}", policies, owners, DOMAINS_ON) == set(b)
    owners[f"{ns}0/{FULL}"] = b[0]
    assert kept(b, f"{ns}1/{FULL}", policies, owners, DOMAINS_ON) == {b[2], b[3]}
    owners[f"{ns}1/{FULL}"] = b[2]
    assert kept(b, f"{ns}2/{FULL}", policies, owners, DOMAINS_ON) == {b[1], b[3]}
    owners[f"{ns}2/{FULL}"] = b[1]
    assert kept(b, f"{ns}3/{FULL}", policies, owners, DOMAINS_ON) == {b[3]}
    owners[f"{ns}3/{FULL}"] = b[3]
    assert kept(b, f"{ns}4/{FULL}", policies, owners, DOMAINS_ON) == set(b)
    # without failureDomainsEnabled the domains are not read: only the owners drop out
    assert kept(b, f"{ns}4/{FULL}", policies, {f"{ns}0/{FULL}": b[0]}) == {b[1], b[2], b[3]}


def test_anti_affinity_namespace_filtering_without_domain() -> None:
    """``testAntiAffinityNamespaceFilteringWithoutDomain``: three brokers, no domains: each
    namespace of the group goes to a broker owning none until every broker owns one."""
    ns = "my-tenant/test/my-ns-wo-domain"
    b = ("broker-0", "broker-1", "broker-2")
    policies = group_of(ns, 5, "my-antiaffinity-wo-domain")
    owners: dict[str, str] = {}
    assert kept(b, f"{ns}0/{FULL}", policies, owners) == set(b)
    owners[f"{ns}0/{FULL}"] = b[0]
    assert kept(b, f"{ns}1/{FULL}", policies, owners) == {b[1], b[2]}
    owners[f"{ns}1/{FULL}"] = b[1]
    assert kept(b, f"{ns}2/{FULL}", policies, owners) == {b[2]}
    owners[f"{ns}2/{FULL}"] = b[2]
    assert kept(b, f"{ns}3/{FULL}", policies, owners) == set(b)


def test_broker_selection_for_anti_affinity_group() -> None:
    """``testBrokerSelectionForAntiAffinityGroup``: two brokers, each its own failure domain, and
    two namespaces of one group: once ns1's bundle is owned, ns2's bundle can only go to the other
    broker (``assertNotEquals(selectedBroker1, selectedBroker2)``)."""
    tenant, cluster = "tenant-x", "test"
    b = ("primary:8080", "secondary:8080")
    policies = ClusterPolicies(
        anti_affinity={f"{tenant}/{cluster}/ns1": "group", f"{tenant}/{cluster}/ns2": "group"},
        failure_domains={"domain1": (b[0],), "domain2": (b[1],)})
    for first, other in ((b[0], b[1]), (b[1], b[0])):
        owners = {f"{tenant}/{cluster}/ns1/{FULL}": first}
        assert kept(b, f"{tenant}/{cluster}/ns2/{FULL}", policies, owners, DOMAINS_ON) == {other}


def test_load_shedding_util_with_anti_affinity_namespace() -> None:
    """``testLoadSheddingUtilWithAntiAffinityNamespace`` over ownership entries: broker-0 owns
    ns-0's bundle and may unload it while another broker owns fewer bundles of the group, not once
    each of the three owns one."""
    ns = "my-tenant/test/my-ns-load-shedding-util"
    cands = ("broker-0", "broker-1", "broker-2")
    policies = group_of(ns, 5, "my-antiaffinity-load-shedding-util")
    owners = {f"{ns}0/{FULL}": "broker-0"}

    def should() -> bool:
        counts = bundle_group_counts(f"{ns}0", policies, owners)
        return should_anti_affinity_namespace_unload("broker-0", cands, counts)

    assert should()
    owners[f"{ns}1/{FULL}"] = "broker-1"
    assert should()
    owners[f"{ns}2/{FULL}"] = "broker-2"
    assert not should()


def test_anti_affinity_group_policy_filter() -> None:
    """``testAntiAffinityGroupPolicyFilter``: for a namespace without a group the filter keeps
    every broker; for the namespace of a group whose one bundle a broker owns (a producer made it
    owned), that owner is removed and the others stay."""
    plain = "my-tenant/test/my-ns-filter"
    grouped = plain + "-antiaffinity-enabled"
    policies = ClusterPolicies(anti_affinity={grouped: "my-antiaffinity-filter"})
    brokers = ("broker-a:8080", "broker-b:8080")
    for src in brokers:
        owners = {f"{grouped}/{FULL}": src}
        assert kept(brokers, f"{plain}/{FULL}", policies, owners) == set(brokers)
        assert kept(brokers, f"{grouped}/{FULL}", policies, owners) == set(brokers) - {src}


def test_only_owned_bundles_of_the_group_count() -> None:
    """Beyond the Java test: the count is per owned bundle of any namespace of the group (the
    group's name compared ignoring case), so a broker owning two bundles of the group loses to one
    owning one, and bundles of namespaces outside the group are not counted."""
    policies = ClusterPolicies(anti_affinity={"t/a": "Grp", "t/b": "grp"})
    owners = {"t/a/0x00000000_0x80000000": "x", "t/a/0x80000000_0xffffffff": "x",
              "t/b/0x00000000_0xffffffff": "y", "t/c/0x00000000_0xffffffff": "z"}
    assert bundle_group_counts("t/b", policies, owners) == {"x": 2, "y": 1}
    assert kept(("x", "y"), "t/b/0x00000000_0xffffffff", policies, owners) == {"y"}
    assert kept(("x", "y", "z"), "t/b/0x00000000_0xffffffff", policies, owners) == {"z"}
