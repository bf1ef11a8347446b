"""Ported: the ``SimpleLoadManagerImpl`` decisions of Pulsar's ``LoadBalancerTest``
(``pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/LoadBalancerTest.java``,
read at 01f1d8fab668; a47c6acb7a25 has the same methods). The Java test starts five brokers
and writes load reports into the metadata store; here the same reports go straight to
``updateRanking``'s parts (:mod:`lbctl.strategies.simple`), with the same figures and the
same expected answers.
"""

from __future__ import annotations

from collections import Counter
from types import MappingProxyType

from lbctl.model.load import LocalBrokerData, NamespaceBundleStats, ResourceUsage
from lbctl.strategies.simple.decide import rank
from lbctl.strategies.simple.quota import (
    GO_DOWN_MS,
    GO_UP_MS,
    QuotaState,
    ResourceQuota,
    Stored,
    update_realtime,
)
from lbctl.strategies.simple.ranking import LLS

BROKERS = [f"localhost{i}:8080" for i in range(5)]
START = 1_763_000_000_000


def test_broker_ranking() -> None:
    """``testBrokerRanking``: no bundles, bandwidth 0 of 1024000, CPU 60 of 400, memory 1024 MB
    of 2048·(i+1): memory is the bottleneck of the first three (50, 25, 16 after the ``(long)``
    cast of 16.67), CPU (15) of the other two. The Java test checks one broker at each of 50,
    25 and 16; the two at 15 follow."""
    reports = {b: LocalBrokerData(cpu=ResourceUsage(60, 400),
                                  memory=ResourceUsage(1024, 2048 * (i + 1)),
                                  bandwidthIn=ResourceUsage(0, 1024000),
                                  bandwidthOut=ResourceUsage(0, 1024000))
               for i, b in enumerate(BROKERS)}
    ranked = rank(reports, dict.fromkeys(BROKERS, START), Stored(), QuotaState(), {}, LLS)
    by_rank = Counter(ranked.ranks.values())
    assert (by_rank[50], by_rank[25], by_rank[16]) == (1, 1, 1)
    assert by_rank[15] == 2
    assert [ranked.ranks[b] for b in BROKERS] == [50, 25, 16, 15, 15]


def _bundle(i: int, j: int) -> str:
    return f"pulsar/use/primary-ns-{i}-{j}/0x00000000_0xffffffff"


def _reports(stamp: int) -> dict[str, tuple[LocalBrokerData, int]]:
    """``writeLoadReportsForDynamicQuota``: broker i's usage and its five bundles' stats, the
    same figures at every timestamp."""
    out: dict[str, tuple[LocalBrokerData, int]] = {}
    for i, b in enumerate(BROKERS):
        stats = {_bundle(i, j): NamespaceBundleStats(
            msgRateIn=5 * (i + j), msgRateOut=15 * (i + j),
            msgThroughputIn=5000 * (i + j), msgThroughputOut=15000 * (i + j),
            topics=25 * (i + j), consumerCount=50 * (i + j), producerCount=50 * (i + j))
            for j in range(5)}
        local = LocalBrokerData(cpu=ResourceUsage(200, 400),
                                memory=ResourceUsage(25 * (10 + i * 5), 2048 * (i + 1)),
                                bandwidthIn=ResourceUsage(5000 * (10 + i * 5), 1024000),
                                bandwidthOut=ResourceUsage(15000 * (10 + i * 5), 1024000),
                                lastStats=MappingProxyType(stats), bundles=tuple(stats))
        out[b] = (local, stamp)
    return out


def _near(q: ResourceQuota, expected: tuple[float, float, float, float, float]) -> bool:
    """``verifyBundleResourceQuota``: each figure within 1 of the expected one."""
    got = (q.msgRateIn, q.msgRateOut, q.bandwidthIn, q.bandwidthOut, q.memory)
    return all(abs(g - e) < 1 for g, e in zip(got, expected, strict=True))


def test_dynamic_namespace_bundle_quota() -> None:
    """``testDynamicNamespaceBundleQuota``: default quota 20/60 msg/s, 20000/60000 B/s, 75 MB.
    The leader ranked once when its brokers started, a moment before the test's first reports
    (here: ``updated_at`` = the first reports' timestamp, so they move nothing); 30 minutes
    later (``RESOURCE_QUOTA_GO_UP_TIMEWINDOW``) a quota rises to what its bundle carries and
    falls by 30 min / 24 h toward it; 24 hours after the start
    (``RESOURCE_QUOTA_GO_DOWN_TIMEWINDOW``) the falling ones are almost there."""
    stored = Stored(default=ResourceQuota(20, 60, 20000, 60000, 75))
    state = update_realtime(_reports(START), stored, QuotaState(updated_at=START))
    state = update_realtime(_reports(START + GO_UP_MS), stored, state)

    def quota(i: int, j: int) -> ResourceQuota:
        return stored.quota(_bundle(i, j), state.quotas)

    assert _near(quota(0, 0), (19.0, 58.0, 19791.0, 58958.0, 74.0))
    assert _near(quota(2, 2), (20.0, 60.0, 20000.0, 60000.0, 100.0))
    assert _near(quota(4, 4), (40.0, 120.0, 40000.0, 120000.0, 150.0))

    state = update_realtime(_reports(START + GO_DOWN_MS), stored, state)
    assert _near(quota(0, 0), (5.0, 6.0, 10203.0, 11019.0, 50.0))
    assert _near(quota(2, 2), (20.0, 60.0, 20000.0, 60000.0, 100.0))
    assert _near(quota(4, 4), (40.0, 120.0, 40000.0, 120000.0, 150.0))
