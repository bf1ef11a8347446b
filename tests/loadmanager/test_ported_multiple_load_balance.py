"""Ported: ``MultipleLoadBalanceTest#testDoNoTUnloadBundleForSystemNameSpace`` (apache/pulsar,
``pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/``, the one stored version,
696877b8ac3a; it carries no licence header, so it comes from a branch, not from a release).

The Java test runs brokers whose ThresholdShedder fires on every broker
(``loadBalancerBrokerThresholdShedderPercentage`` -100, ``loadBalancerBundleUnloadMinThroughputThreshold``
-100), makes a ``pulsar/system`` topic and a common topic on the same broker the busiest, sheds
once, and checks that the common topic's bundle left its broker while the system one stayed.
The same inputs in lbctl's terms: one snapshot, the same two settings, the modular load manager;
the expected decision is the same. ``LoadData.getBundleDataForLoadShedding`` leaves out what
``NamespaceService.isSystemServiceNamespace`` names, ``pulsar/system`` included from Pulsar 2.11
(the ``shedPulsarSystem`` variant), so on 2.10 the system bundle is shed too: that case is the
one that shows this test can fail.

The Java test's second half runs SimpleLoadManagerImpl: its ``doLoadShedding`` (the stored
versions read) has no system-namespace check, so that half rests on a change lbctl does not find
in any release; docs/fidelity.md says so.
"""

from __future__ import annotations

import pytest

from lbctl.loadmanager.select import Options, plans
from lbctl.model.cluster import ClusterState
from tests.factories import MB, broker, state, stats

NOW = 1_763_000_000_000
SYSTEM = "pulsar/system/0x00000000_0x40000000"
COMMON = "public/test/0x00000000_0x19999999"
SETTINGS = {
    "loadBalancerBrokerThresholdShedderPercentage": "-100",
    "loadBalancerBundleUnloadMinThroughputThreshold": "-100",
}


def _cluster() -> ClusterState:
    """Three brokers; ``owner`` holds the system topic's bundle and a common one, both made the
    busiest, as the Java test's step 3 does; the other brokers carry small bundles of another
    namespace (so that ``removeMostServicingBrokersForNamespace`` keeps them as candidates for
    the common namespace: they serve none of its bundles)."""
    rest = [f"other/ns/0x{i * 0x19999999:08x}_0x{(i + 1) * 0x19999999:08x}" for i in range(5)]
    return state({
        "owner:8080": broker(cpu=(60, 100), bandwidth_in=(60, 100), bandwidth_out=(60, 100),
                             bundles={SYSTEM: stats(1000, 1000, 8 * MB, 8 * MB),
                                      COMMON: stats(1000, 1000, 8 * MB, 8 * MB)}),
        "b:8080": broker(cpu=(20, 100), bandwidth_in=(20, 100), bandwidth_out=(20, 100),
                         bundles={n: stats(10, 10, MB / 10, MB / 10) for n in rest[:3]}),
        "c:8080": broker(cpu=(20, 100), bandwidth_in=(20, 100), bandwidth_out=(20, 100),
                         bundles={n: stats(10, 10, MB / 10, MB / 10) for n in rest[3:]}),
    }, now=NOW)


def _moved(version: str) -> dict[str, str]:
    """Bundle → the broker it leaves (an unload the cycle carries out, to another broker), with
    the release's default placement, as the Java test leaves it."""
    (plan,) = plans([_cluster()], Options(strategy="ThresholdShedder", overrides=SETTINGS,
                                          pulsar_version=version))
    return {a.bundle: a.broker for a in plan.actions
            if a.action == "unload" and not a.skipped and a.destinationBroker != a.broker}


@pytest.mark.parametrize("version", ["2.11.0", "3.0.17", "4.0.4", "4.2.5"])
def test_do_not_unload_bundle_for_system_namespace(version: str) -> None:
    moved = _moved(version)
    assert moved.get(COMMON) == "owner:8080"
    assert SYSTEM not in moved


def test_do_not_unload_bundle_for_system_namespace_before_2_11() -> None:
    """Before PR #15252 ``pulsar/system`` was an ordinary namespace to the modular shedders."""
    moved = _moved("2.10.6")
    assert moved.get(COMMON) == "owner:8080"
    assert moved.get(SYSTEM) == "owner:8080"
