"""The modular load manager's broker filters, with the inputs and decisions of Pulsar's own tests.

Ported (behaviour only, in lbctl's terms) from apache/pulsar ``pulsar-broker/src/test/java/org/
apache/pulsar/broker/loadbalance/``:

* ``impl/LoadManagerSharedTest#testRemoveMostServicingBrokersForNamespace`` (085e7b8f428f);
* ``impl/BrokerLoadManagerClassFilterTest#test`` (04fc474f2bfa);
* ``BrokerVersionFilterTest#testLatestVersion`` (08920495100d; the modular ``impl.BrokerVersionFilter``);
* ``impl/ModularLoadManagerImplTest#testMaxTopicDistributionToBroker``,
  ``#testNamespaceIsolationPoliciesForPrimaryAndSecondaryBrokers`` and
  ``#testLoadSheddingWithNamespaceIsolationPolicies`` (the version of the index with 55,052
  characters; each runs a broker cluster in Java, here only the decision it checks is kept).

Java's candidate sets are ``HashSet`` s: only membership is compared.
"""

from __future__ import annotations

from collections.abc import Mapping

from lbctl.config import IMPL, Settings
from lbctl.loadmanager.modular import OWNER_ONLY, policies_block_unload
from lbctl.model.decision import FilterStep
from lbctl.model.loaddata import BrokerData, LoadData
from lbctl.model.policies import ClusterPolicies, IsolationPolicy
from lbctl.records import replace
from lbctl.strategies.placement.filters import (
    PlacementEnv,
    filter_large_topic_count,
    filter_load_manager_class,
    filter_versions,
    remove_most_servicing,
)
from lbctl.strategies.placement.namespace_policies import apply_namespace_policies
from lbctl.strategies.placement.versions import Version
from tests.factories import broker, bundle_data

MODULAR = IMPL + "ModularLoadManagerImpl"
EXTENSIBLE = "org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl"


def _load(**reports: Mapping[str, object]) -> LoadData:
    """A ``LoadData`` whose brokers' reports carry the given fields."""
    return LoadData({b: BrokerData(replace(broker(), **fields)) for b, fields in reports.items()},
                    {})


# --- LoadManagerSharedTest ------------------------------------------------------------------------
def test_remove_most_servicing_brokers_for_namespace() -> None:
    """``LoadManagerSharedTest#testRemoveMostServicingBrokersForNamespace``: a candidate owning
    more bundles of the namespace than another candidate is removed; owning none counts 0."""
    ns = "tenant1/ns1"
    owners: dict[str, int] = {}
    index = {ns: owners}

    def keep(*cands: str) -> set[str]:
        return set(remove_most_servicing(cands, ns, index, []))

    assert keep() == set()
    assert keep("broker1") == {"broker1"}
    owners["broker1"] = 1  # 0x40000000_0x80000000
    assert keep("broker1") == {"broker1"}
    assert keep("broker1", "broker2") == {"broker2"}
    owners["broker2"] = 1  # 0x80000000_0xc0000000
    assert keep("broker1", "broker2") == {"broker1", "broker2"}
    owners["broker2"] = 2  # and 0xc0000000_0xd0000000
    assert keep("broker1", "broker2") == {"broker1"}
    owners["broker3"] = 1  # 0xd0000000_0xffffffff
    assert keep("broker1", "broker2", "broker3") == {"broker1", "broker3"}


# --- impl.BrokerLoadManagerClassFilterTest --------------------------------------------------------
def test_load_manager_class_filter() -> None:
    """``impl.BrokerLoadManagerClassFilterTest#test``: only the brokers whose report names the
    leader's ``loadManagerClassName`` stay; a report without a class name is another class."""
    load = _load(broker1={"loadManagerClassName": MODULAR},
                 broker2={"loadManagerClassName": EXTENSIBLE},
                 broker3={"loadManagerClassName": None})
    env = PlacementEnv(("broker1", "broker2", "broker3"), class_known=True)
    cands = ("broker1", "broker2", "broker3")
    modular = Settings.defaults().with_values(loadManagerClassName=MODULAR)
    assert set(filter_load_manager_class(cands, load, modular, env, [])) == {"broker1"}
    extensible = Settings.defaults().with_values(loadManagerClassName=EXTENSIBLE)
    assert set(filter_load_manager_class(cands, load, extensible, env, [])) == {"broker2"}


# --- BrokerVersionFilterTest (modular) ------------------------------------------------------------
def test_latest_version() -> None:
    """``BrokerVersionFilterTest#testLatestVersion``: two brokers on ``1.1.0-SNAPSHOT`` and one on
    ``1.2.0-SNAPSHOT``; the latest is 1.2.0 and, with ``preferLaterVersions``, only that broker
    stays."""
    load = _load(broker1={"brokerVersionString": "1.1.0-SNAPSHOT"},
                 broker2={"brokerVersionString": "1.1.0-SNAPSHOT"},
                 broker3={"brokerVersionString": "1.2.0-SNAPSHOT"})
    env = PlacementEnv(("broker1", "broker2", "broker3"), versions_known=True)
    steps: list[FilterStep] = []
    conf = Settings.defaults().with_values(preferLaterVersions=True)
    kept = filter_versions(("broker1", "broker2", "broker3"), load, conf, env, steps)
    assert kept == ("broker3",)
    [step] = steps
    newest = step.why.newest  # type: ignore[union-attr]
    assert isinstance(newest, Version)
    assert (newest.major, newest.minor, newest.patch) == (1, 2, 0)


# --- ModularLoadManagerImplTest -------------------------------------------------------------------
def test_max_topic_distribution_to_broker() -> None:
    """``ModularLoadManagerImplTest#testMaxTopicDistributionToBroker``: the first bundle of a
    namespace carries ``loadBalancerBrokerMaxTopics + 10`` topics; the broker it is preallocated to
    takes none of the 49 bundles that follow (``filterBrokersWithLargeTopicCount`` counts the
    preallocated bundles' topics)."""
    conf = Settings.defaults()
    limit = int(conf["loadBalancerBrokerMaxTopics"])
    big = bundle_data(topics=limit + 10)
    load = LoadData({"b1:8080": BrokerData(broker(), preallocated={"test/test/test/0": big}),
                     "b2:8080": BrokerData(broker())}, {})
    cands = ("b1:8080", "b2:8080")
    for _ in range(1, 50):
        assert filter_large_topic_count(cands, load, conf, []) == ("b2:8080",)
    # every candidate over the limit: the filter gives them all back
    both = replace(load, brokers={b: BrokerData(broker(), preallocated={"x": big}) for b in cands})
    assert filter_large_topic_count(cands, both, conf, []) == cands


def test_namespace_isolation_policies_for_primary_and_secondary_brokers() -> None:
    """``ModularLoadManagerImplTest#testNamespaceIsolationPoliciesForPrimaryAndSecondaryBrokers``
    (``LoadManagerShared.applyNamespacePolicies``): primary ``localhost0``, secondary
    ``localhost1``, ``broker3:8080`` shared; min_limit 1 then 2."""
    ns = "my-property/use/my-ns"
    b1, b2, shared = "localhost0:8080", "localhost1:8080", "broker3:8080"
    policy = IsolationPolicy((f"{ns}.*",), ("localhost0",), ("localhost1",), 1, 80, "p")

    def candidates(p: IsolationPolicy, *available: str) -> set[str]:
        out = apply_namespace_policies(ns, available, ClusterPolicies((p,)), lambda b, n: True)
        return set(out.brokers)

    assert candidates(policy, shared, b1, b2) == {b1}
    assert candidates(policy, shared, b2) == {b2}
    assert candidates(policy, shared) == set()
    two = replace(policy, min_limit=2)
    assert candidates(two, shared, b1, b2) == {b1, b2}
    assert candidates(two, shared, b2) == {b2}
    assert candidates(two, shared) == set()


def test_load_shedding_with_namespace_isolation_policies() -> None:
    """``ModularLoadManagerImplTest#testLoadSheddingWithNamespaceIsolationPolicies``
    (``shouldNamespacePoliciesUnload``): two brokers on host ``localhost``. Without a policy the
    bundle may go; with a policy naming only ``localhost1`` no broker but the owner can take it;
    with a policy naming ``localhost`` the other broker can."""
    ns = "my-tenant/use/my-ns"
    primary, secondary = "localhost:8081", "localhost:8082"
    load = _load(**{primary: {}, secondary: {}})

    def block(owner: str, *policies: IsolationPolicy) -> object:
        env = PlacementEnv((primary, secondary), ClusterPolicies(policies))
        return policies_block_unload(ns, owner, load, env)

    assert block(primary) is None
    elsewhere = IsolationPolicy((f"{ns}.*",), ("localhost1",), ("localhost1",), 1, 80, "p")
    assert block("localhost1:8080", elsewhere) == OWNER_ONLY
    here = replace(elsewhere, primary=("localhost",), secondary=("localhost",))
    assert block(primary, here) is None
