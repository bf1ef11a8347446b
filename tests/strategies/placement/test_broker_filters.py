"""Pulsar's extensible ``LeastResourceUsageWithWeightTest`` and the broker filter tests
(``BrokerMaxTopicCountFilterTest`` and its earlier name ``LargeTopicCountFilterTest``,
``BrokerVersionFilterTest``, ``BrokerIsolationPoliciesFilterTest``,
``BrokerLoadManagerClassFilterTest``)."""

from __future__ import annotations

from random import Random

import pytest

from lbctl.config import Settings
from lbctl.model.brokerload import BrokerLoadData, SystemUsage
from lbctl.model.load import ResourceUsage
from lbctl.records import replace
from lbctl.strategies.base import LookupRequest
from lbctl.strategies.placement.broker_filters import (
    BrokerLookup,
    FilterContext,
    FilterError,
    IsolationPoliciesFilter,
    IsolationPolicy,
    LoadManagerClassFilter,
    MaxTopicCountFilter,
    Policies,
    VersionFilter,
)
from lbctl.strategies.placement.extensible_least_resource_usage import select

LRUW_CONF = Settings.defaults().with_values(
    loadBalancerCPUResourceWeight=1.0, loadBalancerMemoryResourceWeight=0.1,
    loadBalancerDirectMemoryResourceWeight=0.1, loadBalancerBandwidthInResourceWeight=1.0,
    loadBalancerBandwidthOutResourceWeight=1.0, loadBalancerHistoryResourcePercentage=0.5,
    loadBalancerAverageResourceUsageDifferenceThresholdPercentage=5)


def usage(u, limit=100.0):
    r = ResourceUsage(u, limit)
    return SystemUsage(r, r, r, r, r)


def broker_data(u):
    return BrokerLoadData().update(usage(u), 1, 1, 1, 1, 1, 1, LRUW_CONF, 1)


def update(store, b, u):
    store[b] = store[b].update(usage(u), 1, 1, 1, 1, 1, 1, LRUW_CONF, store[b].updatedAt + 1)


def setup_store():
    return {"1": broker_data(10), "2": broker_data(30), "3": broker_data(60), "4": broker_data(5)}


CANDS = ["1", "2", "3"]


def pick(store, cands=CANDS, rng=None):
    return select(LookupRequest(cands, "", store, LRUW_CONF, rng or Random(0))).broker


def test_select():
    store = setup_store()
    assert pick(store) == "1"
    store.update({"1": broker_data(20), "2": broker_data(30), "3": broker_data(50)})
    assert pick(store) == "1"
    update(store, "1", 30)
    update(store, "2", 30)
    update(store, "3", 40)
    assert pick(store) == "1"
    update(store, "1", 30)
    update(store, "2", 30)
    update(store, "3", 40)
    assert pick(store) == "1"
    update(store, "1", 35)
    update(store, "2", 20)
    update(store, "3", 45)
    assert pick(store) == "2"
    # a restarted broker (first sample 0) is one of the best
    update(store, "1", 35)
    update(store, "2", 20)
    store["3"] = broker_data(0)
    assert pick(store) == "3"


def test_arithmetic_exception():
    store = setup_store()
    store["1"] = replace(store["1"], weightedMaxEMA=0.1)
    store["2"] = replace(store["2"], weightedMaxEMA=0.3)
    store["4"] = replace(store["4"], weightedMaxEMA=0.05)
    assert pick(store) == "1"


def test_no_load_data_brokers():
    store = {"1": broker_data(50), "2": broker_data(100)}
    cands = ["1", "2", "5"]
    assert pick(store, cands) == "1"
    store["1"] = broker_data(100)
    picks = {pick(store, cands, Random(s)) for s in range(30)}
    assert picks == {"1", "2", "5"}  # no best broker: uniform over every candidate
    sel = select(LookupRequest(cands, "", {}, LRUW_CONF, Random(0)))
    assert sel.no_data == ("1", "2", "5") and sel.average is None


# --- filters --------------------------------------------------------------------------------------
def lookups(*names, version="3.0.0"):
    return {n: BrokerLookup(version) for n in names}


def test_max_topic_count_filter():
    """``BrokerMaxTopicCountFilterTest#test`` (and ``LargeTopicCountFilterTest#test``, the same
    scenario under the filter's earlier name): a broker at the limit is out, one without load data
    stays."""
    conf = Settings.defaults()
    limit = int(conf["loadBalancerBrokerMaxTopics"])
    store = {"broker1": replace(BrokerLoadData(), topics=limit), "broker2": BrokerLoadData(),
             "broker3": replace(BrokerLoadData(), topics=limit * 2)}
    out = MaxTopicCountFilter()(lookups("broker1", "broker2", "broker3", "broker4"), "t/n/x",
                                FilterContext(conf, store))
    assert set(out) == {"broker2", "broker4"}


def test_load_manager_class_filter():
    """``extensions.filter.BrokerLoadManagerClassFilterTest#test`` (2cd18d860af5): the brokers on
    the leader's ``loadManagerClassName`` stay, a broker reporting no class never does."""
    ext = "org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl"
    mod = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"
    brokers = {"broker1": BrokerLookup("3.0.0", loadManagerClassName=ext),
               "broker2": BrokerLookup("3.0.0", loadManagerClassName=ext),
               "broker3": BrokerLookup("3.0.0", loadManagerClassName=mod),
               "broker4": BrokerLookup("3.0.0", loadManagerClassName=mod),
               "broker5": BrokerLookup("3.0.0", loadManagerClassName=None)}

    def kept(leader):
        ctx = FilterContext(Settings.defaults(), {}, leader_class=leader)
        return LoadManagerClassFilter()(dict(brokers), "t/n/x", ctx)

    assert kept(ext) == {"broker1": brokers["broker1"], "broker2": brokers["broker2"]}
    assert kept(mod) == {"broker3": brokers["broker3"], "broker4": brokers["broker4"]}


VERSION_CONF = Settings.defaults().with_values(preferLaterVersions=True)


def versions(**v):
    return {k.replace("_", ":"): BrokerLookup(x) for k, x in v.items()}


def vfilter(brokers, conf=VERSION_CONF):
    return VersionFilter()(brokers, "t/n/x", FilterContext(conf, {}))


def test_version_filter_empty_and_disabled():
    assert vfilter({}) == {}
    off = Settings.defaults().with_values(preferLaterVersions=False)
    brokers = versions(localhost_6650="2.10.0", localhost_6651="2.10.1")
    assert vfilter(brokers, off) == brokers


def test_version_filter():
    assert set(vfilter(versions(localhost_6650="2.10.0", localhost_6651="2.10.1",
                                localhost_6652="2.10.1", localhost_6653="2.10.1"))) == {
        "localhost:6651", "localhost:6652", "localhost:6653"}
    assert set(vfilter(versions(localhost_6650="2.10.0", localhost_6651="2.10.1-SNAPSHOT",
                                localhost_6652="2.10.1", localhost_6653="2.10.1"))) == {
        "localhost:6652", "localhost:6653"}
    assert set(vfilter(versions(localhost_6650="2.10.0", localhost_6651="2.10.1-SNAPSHOT",
                                localhost_6652="2.10.1", localhost_6653="2.10.2-SNAPSHOT"))) == {
        "localhost:6653"}


def test_invalid_version_string():
    with pytest.raises(FilterError, match="Invalid version string"):
        vfilter(versions(localhost_6650="xxx"))
    with pytest.raises(FilterError, match="No version string"):
        vfilter({"localhost:6650": BrokerLookup(None)})


def iso(brokers, policy, non_persistent=False):
    ctx = FilterContext(Settings.defaults(), {}, Policies((policy,)) if policy else Policies(),
                        lambda b: non_persistent)
    return set(IsolationPoliciesFilter()(brokers, "my-tenant/my-ns/0x00000000_0xffffffff", ctx))


def test_isolation_primary_and_secondary():
    """``BrokerIsolationPoliciesFilterTest.testFilterWithNamespaceIsolationPoliciesForPrimaryAnd
    SecondaryBrokers``: the policies are asked about hosts (``broker1``) for ids ``broker1:8080``
    (``LoadManagerShared.applyNamespacePoliciesAsync`` → ``parseBrokerHost``)."""
    b123 = lookups("broker1:8080", "broker2:8080", "broker3:8080")
    b23 = lookups("broker2:8080", "broker3:8080")
    b3 = lookups("broker3:8080")
    p1 = IsolationPolicy(("my-tenant/my-ns",), ("broker1",), ("broker2",), 1)
    assert iso(b123, p1) == {"broker1:8080"}
    assert iso(b23, p1) == {"broker2:8080"}
    assert iso(b3, p1) == set()
    p2 = replace(p1, min_limit=2)
    assert iso(b123, p2) == {"broker1:8080", "broker2:8080"}
    assert iso(b23, p2) == {"broker2:8080"}
    assert iso(b3, p2) == set()


def test_isolation_policy_naming_host_port_matches_nothing():
    """A policy naming ``broker1:8080`` (Pulsar issue #15795) matches no host: no primary, no
    secondary, so the namespace has no candidate; every other namespace keeps broker1 (shared)."""
    b123 = lookups("broker1:8080", "broker2:8080", "broker3:8080")
    p = IsolationPolicy(("my-tenant/my-ns",), ("broker1:8080",), ("broker2:8080",), 1)
    assert iso(b123, p) == set()
    ctx = FilterContext(Settings.defaults(), {}, Policies((p,)))
    other = IsolationPoliciesFilter()(b123, "other/ns/0x00000000_0xffffffff", ctx)
    assert set(other) == set(b123)


def test_isolation_persistent_or_non_persistent_disabled():
    all3 = lookups("broker1:8080", "broker2:8080", "broker3:8080")
    assert iso(all3, None, non_persistent=True) == set(all3)
    mixed = {"broker1:8080": BrokerLookup("3.0.0", True, False),
             "broker2:8080": BrokerLookup("3.0.0", True, False),
             "broker3:8080": BrokerLookup("3.0.0")}
    assert iso(mixed, None, non_persistent=True) == {"broker3:8080"}
    assert iso(all3, None) == set(all3)
    mixed = {"broker1:8080": BrokerLookup("3.0.0", False, True),
             "broker2:8080": BrokerLookup("3.0.0"), "broker3:8080": BrokerLookup("3.0.0")}
    assert iso(mixed, None) == {"broker2:8080", "broker3:8080"}
