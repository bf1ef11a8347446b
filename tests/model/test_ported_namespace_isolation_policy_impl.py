"""One isolation policy: which brokers are its primaries, secondaries and shared brokers.

Ported from Pulsar's ``NamespaceIsolationPolicyImplTest`` (pulsar-common/src/test/java/org/apache/
pulsar/common/policies/impl/, b3659d4a, the version with ``BrokerStatus.builder()``) and
``NamespaceIsolationPoliciesTest#testBrokerAssignment`` (same package, 1d2acb49; its other methods
are ported in tests/strategies/placement/test_namespace_policies.py or check JSON), on their
default policy: namespaces ``pulsar/use/test.*``, primaries
``prod1-broker[1-3].messaging.use.example.com``, secondaries ``prod1-broker.*.use.example.com``,
``min_available`` with ``min_limit`` 3. The load managers match a broker's *host* against the
regexes (``LoadManagerShared.applyNamespacePolicies``), as ``findPrimaryBrokers`` does with
``URL.getHost()``.

Not ported: ``testShouldFailover`` and ``testGetAvailablePrimaryBrokers`` check the
``SortedSet<BrokerStatus>`` overloads (``MinAvailablePolicy.isBrokerAvailable``: active and load
factor below ``usage_threshold``), which no load manager calls: they call
``shouldFailoverToSecondaries(namespace, primariesCount)`` (``applyNamespacePolicies``), the
count-only overload, so ``usage_threshold`` decides nothing in lbctl (its count form is
``test_namespace_policies.py::test_min_available_failover``). ``testConstructor`` and the two
getters check the policy's JSON form (tests/sources/test_snapshot_policies.py).
"""

from __future__ import annotations

from lbctl.model.policies import ClusterPolicies, IsolationPolicy, broker_host
from lbctl.strategies.placement.namespace_policies import apply_namespace_policies

DEFAULT = IsolationPolicy(("pulsar/use/test.*",), ("prod1-broker[1-3].messaging.use.example.com",),
                          ("prod1-broker.*.use.example.com",), 3, 90, "default")


def test_is_primary_or_secondary_broker() -> None:
    """``testIsPrimaryOrSecondaryBroker``."""
    assert DEFAULT.is_primary("prod1-broker2.messaging.use.example.com")
    assert not DEFAULT.is_primary("prod1-broker5.messaging.use.example.com")
    assert DEFAULT.is_secondary("prod1-broker5.messaging.use.example.com")
    assert not DEFAULT.is_secondary("broker-X.messaging.use.example.com")


def find(brokers: list[str], namespace: str, primary: bool) -> list[str] | None:
    """``findPrimaryBrokers`` / ``findSecondaryBrokers``: ``None`` where Java throws
    ``IllegalArgumentException`` (the policy does not apply to the namespace)."""
    policy = ClusterPolicies((DEFAULT,)).isolation_for(namespace)
    if policy is None:
        return None
    match = policy.is_primary if primary else policy.is_secondary
    return [b for b in brokers if match(broker_host(b) or "")]


def test_find_brokers() -> None:
    """``testFindBrokers``: of prod1-broker0..9 in ``use`` and in ``usw`` (the Java test adds both
    tens to one list and leaves ``otherBrokers`` empty), the primaries are brokers 1-3 of ``use``
    and the secondaries all ten of ``use`` (``usw.example.com`` does not end the secondary regex);
    an empty list finds none; a namespace outside the policy is refused."""
    use = [f"prod1-broker{i}.messaging.use.example.com:8080" for i in range(10)]
    usw = [f"prod1-broker{i}.messaging.usw.example.com:8080" for i in range(10)]
    brokers = use + usw
    assert find(brokers, "pulsar/use/testns-1", True) == use[1:4]
    assert find([], "pulsar/use/testns-1", True) == []
    assert find(brokers, "no/such/namespace", True) is None
    assert find(brokers, "pulsar/use/testns-1", False) == use
    assert find([], "pulsar/use/testns-1", False) == []
    assert find(brokers, "no/such/namespace", False) is None


def test_broker_assignment() -> None:
    """``NamespaceIsolationPoliciesTest#testBrokerAssignment`` (``assignBroker``, whose sorting
    of brokers into primaries, secondaries and shared brokers is the first half of
    ``LoadManagerShared.applyNamespacePolicies``): for ``pulsar/use/testns-1`` prod1-broker1 is a
    primary and prod1-broker4 a secondary; for ``pulsar/use1/testns-1``, which no policy names,
    ``use.example.com`` is a shared broker. Policy 1's ``min_limit`` (3) is above its one primary,
    so its secondary is a candidate too; the primary of a policy is never a shared broker."""
    policy1 = IsolationPolicy(("pulsar/use/test.*",),
                              ("prod1-broker[1-3].messaging.use.example.com",),
                              ("prod1-broker.*.use.example.com",), 3, 100, "policy1")
    policies = ClusterPolicies((policy1,))
    primary = "prod1-broker1.messaging.use.example.com:8080"
    secondary = "prod1-broker4.messaging.use.example.com:8080"
    shared = "use.example.com:8080"
    brokers = (primary, secondary, shared)

    def everyone(_broker: str, _non_persistent: bool) -> bool:
        return True

    got = apply_namespace_policies("pulsar/use/testns-1", brokers, policies, everyone)
    assert got.policy == "policy1"
    assert got.why is not None
    assert (got.why.names, got.why.others, got.why.failover) == ((primary,), (secondary,), True)
    assert got.brokers == (primary, secondary)
    other = apply_namespace_policies("pulsar/use1/testns-1", brokers, policies, everyone)
    assert other.policy is None
    assert shared in other.brokers
    assert primary not in other.brokers
