"""Ported: the ``SimpleLoadManagerImpl`` decisions of Pulsar's ``LoadBalancerTest``
(``pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/LoadBalancerTest.java``,
read at 01f1d8fab668; a47c6acb7a25 has the same methods). The Java test starts five brokers
and writes load reports into the metadata store; here the same reports go straight to
``updateRanking``'s parts (:mod:`lbctl.strategies.simple`), with the same figures and the
same expected answers. The Java brokers also share a namespace isolation policy whose primaries
are all five brokers (``pulsar/use/primary-ns.*``), which leaves every broker a candidate: the
ports leave it out.
"""

from __future__ import annotations

from collections import Counter
from types import MappingProxyType

from lbctl.config import resolve
from lbctl.loadmanager.simple import lookups
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats, ResourceUsage
from lbctl.model.wire.snapshot import Quota, ResourceQuotas
from lbctl.records import replace
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
from tests.factories import state

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


def _lookups(brokers: dict[str, LocalBrokerData], count: int,
             default: Quota | None = None) -> Counter[str | None]:
    """``getLeastLoaded`` for ``count`` new namespaces' bundles in turn (each pick preallocated),
    ``leastLoadedServer`` as the Java test sets it; how many each broker got."""
    snap = state(brokers, now=START)
    if default is not None:
        snap = replace(snap, resource_quotas=ResourceQuotas(default=default))
    settings = resolve({"loadBalancerPlacementStrategy": "leastLoadedServer"})
    names = [f"pulsar/use/primary-ns-{i}/0x00000000_0x40000000" for i in range(count)]
    return Counter(lk.broker for lk in lookups(snap, settings, names))


def test_update_load_report_and_check_updated_ranking() -> None:
    """``testUpdateLoadReportAndCheckUpdatedRanking``: five equal brokers (bandwidth 256 and 250
    of 1024000, memory 1024 of 8192, CPU 5 of 400), 200 lookups: each broker within 10 % of
    the average 40."""
    brokers = {b: LocalBrokerData(cpu=ResourceUsage(5, 400), memory=ResourceUsage(1024, 8192),
                                  bandwidthIn=ResourceUsage(256, 1024000),
                                  bandwidthOut=ResourceUsage(250, 1024000), lastUpdate=START)
               for b in BROKERS}
    got = _lookups(brokers, 200)
    assert sum(got.values()) == 200
    assert all(36 <= got[b] <= 44 for b in BROKERS), got


def test_topic_assignment_with_existing_bundles() -> None:
    """``testTopicAssignmentWithExistingBundles``: default quota 20/60 msg/s, 20000/60000 B/s,
    87 MB; broker i has memory 0 of 2048·(i+1) MB, CPU 60 of 400 and 5·(i+1) bundles without
    traffic; 250 lookups go to the brokers in proportion to their memory, each within 10 % of
    17, 34, 51, 68, 85."""
    brokers = {}
    for i, b in enumerate(BROKERS):
        stats = {f"pulsar/use/primary-ns-{i}-{j}/0x00000000_0xffffffff": NamespaceBundleStats()
                 for j in range((i + 1) * 5)}
        brokers[b] = LocalBrokerData(cpu=ResourceUsage(60, 400),
                                     memory=ResourceUsage(0, 2048 * (i + 1)),
                                     bandwidthIn=ResourceUsage(0, 1024000),
                                     bandwidthOut=ResourceUsage(0, 1024000),
                                     lastStats=MappingProxyType(stats), bundles=tuple(stats),
                                     lastUpdate=START)
    got = _lookups(brokers, 250, Quota(msgRateIn=20, msgRateOut=60, bandwidthIn=20000,
                                       bandwidthOut=60000, memory=87))
    for b, expected in zip(BROKERS, (17, 34, 51, 68, 85), strict=True):
        assert abs(got[b] - expected) * 100.0 / expected < 10.0, got
