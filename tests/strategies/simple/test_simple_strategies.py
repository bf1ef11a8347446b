"""``SimpleLoadManagerImpl``'s figures (:mod:`lbctl.strategies.simple`), ported from Pulsar's
``SimpleLoadManagerImplTest`` (master 01f1d8fa) where it has figures, and from the classes it
tests: ``ResourceUnitRanking`` and ``NamespaceBundleStats`` (master 160e6f8d),
``SimpleLoadManagerImpl`` (master 0058e734), ``BundlesQuotas.INITIAL_QUOTA``."""

from __future__ import annotations

import math

import pytest

from lbctl.model.load import LocalBrokerData, NamespaceBundleStats, ResourceUsage
from lbctl.strategies.simple.decide import _by, above, below, bottleneck
from lbctl.strategies.simple.quota import (
    GO_DOWN_MS,
    GO_UP_MS,
    INITIAL_QUOTA,
    QuotaState,
    ResourceQuota,
    Stored,
    time_smooth_value,
    update_realtime,
)
from lbctl.strategies.simple.ranking import LEAST_MSG, LLS, RAND, placement_key, ranking
from lbctl.strategies.simple.report import copied_order

#: testBasicBrokerSelection's PulsarResourceDescription: memory 1024/4096, cpu 10/100,
#: bandwidth in 250 Ki / 1 Mi, out 550 Ki / 1 Mi
RD = LocalBrokerData(cpu=ResourceUsage(10, 100), memory=ResourceUsage(1024, 4096),
                     bandwidthIn=ResourceUsage(250 * 1024, 1024 * 1024),
                     bandwidthOut=ResourceUsage(550 * 1024, 1024 * 1024))


def test_ranking_of_the_test_resource_description() -> None:
    """No bundle: each estimate is the usage over the limit; bandwidth out (53.7 %) is the
    load. Capacity with INITIAL_QUOTA and 0.025 CPU per msg/s: CPU (100 / 0.025) / 160 = 25 bundles
    is the least (memory 4096 / 80 = 51.2, bandwidth 2^20 × 128 / 300000 = 447)."""
    r = ranking(RD, frozenset(), ResourceQuota(), (), ResourceQuota(), 0.025)
    assert (r.est_cpu, r.est_memory, r.est_in) == (10.0, 25.0, 100 * 250 / 1024)
    assert r.estimated == r.est_out == 100 * 550 / 1024
    assert r.max_capacity(INITIAL_QUOTA) == 25
    assert r.final_rank(LLS, INITIAL_QUOTA) == 53
    assert r.final_rank(LEAST_MSG, INITIAL_QUOTA) == 0
    idle = (100 - 100 * 550 / 1024) / 100
    assert r.final_rank(RAND, INITIAL_QUOTA) == int(25 * idle * idle) == 5
    assert r.idle


def test_allocated_and_preallocated_quotas_raise_the_estimate() -> None:
    """max(used, allocated) + preallocated: 2 bundles of INITIAL_QUOTA allocated (320 msg/s →
    8 % CPU at 0.025 < 10 % used), 1 preallocated (+4 %); bandwidth out allocated
    600000 / 128 = 4687.5 < used, preallocated +2343.75."""
    two = INITIAL_QUOTA.plus(INITIAL_QUOTA)
    r = ranking(RD, frozenset({"a/b/0x00000000_0x80000000", "a/b/0x80000000_0xffffffff"}), two,
                ("a/c/0x00000000_0xffffffff",), INITIAL_QUOTA, 0.025)
    assert r.est_cpu == pytest.approx(14.0)
    assert r.est_out == pytest.approx(100 * (550 * 1024 + 300000 / 128) / (1024 * 1024))
    assert r.msg_rate == 480.0 and not r.idle
    gone = r.without_loaded("a/b/0x00000000_0x80000000", INITIAL_QUOTA)
    assert gone.allocated.msgRateIn == 40.0 and len(gone.loaded) == 1
    assert r.with_preallocated("x/y/0x00000000_0xffffffff", INITIAL_QUOTA).pre_quota.memory == 160


def test_compare_to_uses_five_point_bands() -> None:
    """compareTo: a load difference within 5 points falls through to memory, CPU, bandwidth in
    and out, then the load itself."""
    def at(cpu: float, mem: float) -> object:
        local = LocalBrokerData(cpu=ResourceUsage(cpu, 100), memory=ResourceUsage(mem, 100))
        return ranking(local, frozenset(), ResourceQuota(), (), ResourceQuota(), 0.025)

    a, b = at(50, 10), at(53, 40)  # loads 50 / 53 (CPU), memory 10 / 40
    assert a.compare_to(b) == -1 and b.compare_to(a) == 1  # memory decides: 30 points apart
    c, d = at(50, 10), at(52, 12)
    assert c.compare_to(d) == -1  # nothing beyond 5 points: the load percentage
    assert at(60, 10).compare_to(at(50, 10)) == 1


def test_namespace_bundle_stats_comparisons() -> None:
    """SimpleLoadManagerImplTest.testNamespaceBundleStats: nsb1 below nsb2 on every measure."""
    nsb1 = NamespaceBundleStats(msgRateOut=10000, producerCount=1, consumerCount=1, cacheSize=4,
                                msgRateIn=500, msgThroughputIn=30, msgThroughputOut=30)
    nsb2 = NamespaceBundleStats(msgRateOut=20000, producerCount=300, consumerCount=300,
                                cacheSize=110000, msgRateIn=5000, msgThroughputIn=110000.0,
                                msgThroughputOut=110000.0)
    for kind in ("CPU", "Memory", "BandwidthIn", "BandwidthOut"):
        assert _by(kind)(nsb1, nsb2) == -1, kind
        assert _by(kind)(nsb2, nsb1) == 1, kind
    # within the thresholds: equal (100 msg/s, 500 topics + connections, 1e5 bytes/s)
    assert _by("CPU")(NamespaceBundleStats(msgRateIn=100), NamespaceBundleStats()) == 0
    assert _by("Memory")(NamespaceBundleStats(topics=500), NamespaceBundleStats()) == 0


def test_load_levels_and_bottleneck() -> None:
    """isAboveLoadLevel / isBelowLoadLevel read bandwidth, CPU and direct memory — not the heap;
    getBottleneckResourceType picks CPU unless memory or bandwidth is strictly higher."""
    heap = LocalBrokerData(memory=ResourceUsage(95, 100), cpu=ResourceUsage(10, 100))
    assert not above(heap, 85) and bottleneck(heap) == "Memory"
    bw = LocalBrokerData(bandwidthIn=ResourceUsage(90, 100))  # testDoLoadShedding's figures
    assert above(bw, 85) and bottleneck(bw) == "BandwidthIn" and not below(bw, 65)
    unset = LocalBrokerData(cpu=ResourceUsage(-1, -1))  # new SystemResourceUsage(): 0 %
    assert below(unset, 65) and bottleneck(unset) == "CPU"
    assert not above(LocalBrokerData(cpu=ResourceUsage(85, 100)), 85)  # strictly above


def test_time_smoothing() -> None:
    """timeSmoothValue: up over 30 minutes, down over 24 hours, clamped to [min, max] first."""
    assert time_smooth_value(10, 20, 5, 0, GO_UP_MS // 2) == 15.0
    assert time_smooth_value(20, 10, 5, 0, GO_DOWN_MS // 4) == 17.5
    assert time_smooth_value(10, 1, 5, 0, GO_DOWN_MS) == 5.0  # clamped up to the minimum
    assert time_smooth_value(0, 5e6, 1e4, 1e6, 10 * GO_UP_MS) == 1e6  # weight at most 1
    assert math.isclose(time_smooth_value(10, 20, 5, 0, 0), 10)


def test_first_ranking_weighs_the_reports_fully() -> None:
    """updateRealtimeResourceQuota at the first ranking (its last update at −1): each bundle's
    quota is what it carries, clamped; the load factors need more than 1000 msg/s and 30 memory
    groups, so they stay."""
    st = NamespaceBundleStats(msgRateIn=1, msgRateOut=300, msgThroughputIn=2e6,
                              msgThroughputOut=5000, topics=700)
    local = LocalBrokerData(cpu=ResourceUsage(40, 100), memory=ResourceUsage(1000, 4096),
                            lastStats={"a/b/0x00000000_0xffffffff": st})
    now = 1_773_324_300_000  # epoch ms: since −1, far more than both windows
    q = update_realtime({"b1:8080": (local, now)}, Stored(), QuotaState())
    got = q.quotas["a/b/0x00000000_0xffffffff"]
    assert (got.msgRateIn, got.msgRateOut, got.bandwidthIn, got.bandwidthOut) == \
        (5.0, 300.0, 1e6, 1e4)
    assert got.memory == 2 * 25.0  # (1 + 700 / 500) groups × 25 MB
    assert (q.cpu_factor, q.memory_factor, q.updated_at) == (0.025, 25.0, now)
    # a minute later the bandwidth in drops to 0: down over 24 h, clamped to 10000 first
    later = LocalBrokerData(lastStats={"a/b/0x00000000_0xffffffff": NamespaceBundleStats(
        msgRateIn=1, msgRateOut=300, msgThroughputOut=5000, topics=700)})
    q2 = update_realtime({"b1:8080": (later, now + 60_000)}, Stored(), q)
    assert q2.quotas["a/b/0x00000000_0xffffffff"].bandwidthIn == \
        pytest.approx(1e6 - (1e6 - 1e4) * 60_000 / GO_DOWN_MS)
    fixed = Stored(bundles={"a/b/0x00000000_0xffffffff": ResourceQuota(1, 2, 3, 4, 5, False)})
    assert update_realtime({"b1:8080": (local, now)}, fixed, QuotaState()).quotas[
        "a/b/0x00000000_0xffffffff"] == ResourceQuota(1, 2, 3, 4, 5, False)  # not dynamic


def test_placement_key_falls_back_to_weighted_random() -> None:
    assert placement_key("leastLoadedServer") == LLS
    assert placement_key("leastMsgPerSecond") == LEAST_MSG
    assert placement_key("LeastLongTermMessageRate") == RAND


def test_copied_hashmap_order_differs_from_puts() -> None:
    """new HashMap<>(map) sizes its table from the map (12 keys: 32 buckets), where 12 puts
    leave 16: the copy's order is the one LoadReport walks."""
    keys = [f"t/n/0x{i:08x}_0x{i + 1:08x}" for i in range(12)]
    assert sorted(copied_order(keys)) == sorted(keys)
    from lbctl.model.javaorder import java_hash_order

    assert copied_order(keys) == java_hash_order(keys, capacity=32)
