"""Pulsar's ``BrokerLoadDataTest`` and ``TopKBundlesTest``, and the snapshot JSON of both."""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest

from lbctl.config import Settings
from lbctl.model import brokerload
from lbctl.model.brokerload import (
    BrokerLoadData,
    SystemUsage,
    compare_stats,
    compare_stats_threshold,
    partition_sort,
    top_k_bundles,
)
from lbctl.model.javasort import java_sort
from lbctl.model.load import NamespaceBundleStats, ResourceUsage
from lbctl.strategies.placement.broker_filters import IsolationPolicy, Policies
from lbctl.versions import resolve

WEIGHTS = {"loadBalancerCPUResourceWeight": 0.5, "loadBalancerMemoryResourceWeight": 0.5,
           "loadBalancerDirectMemoryResourceWeight": 0.5,
           "loadBalancerBandwidthInResourceWeight": 0.5,
           "loadBalancerBandwidthOutResourceWeight": 0.5,
           "loadBalancerHistoryResourcePercentage": 0.75}


def usage(cpu, mem, dm, bw_in, bw_out):
    return SystemUsage(ResourceUsage(*cpu), ResourceUsage(*mem), ResourceUsage(*dm),
                       ResourceUsage(*bw_in), ResourceUsage(*bw_out))


def test_update_by_system_resource_usage():
    conf = Settings.defaults().with_values(**WEIGHTS)
    data = BrokerLoadData().update(
        usage((1.0, 100.0), (800.0, 200.0), (2.0, 100.0), (3.0, 100.0), (4.0, 100.0)),
        1, 2, 3, 4, 5, 6, conf, now=1000)
    assert (data.msgThroughputIn, data.msgThroughputOut, data.msgRateIn, data.msgRateOut) == (
        1.0, 2.0, 3.0, 4.0)
    assert (data.bundleCount, data.topics) == (5, 6)
    assert data.maxResourceUsage == 0.04  # skips memory usage
    assert data.weightedMaxEMA == 2
    assert data.msgThroughputEMA == 3
    assert data.updatedAt == 1000

    data = data.update(
        usage((300.0, 100.0), (200.0, 200.0), (2.0, 100.0), (3.0, 100.0), (4.0, 100.0)),
        5, 6, 7, 8, 9, 10, conf, now=2000)
    assert data.maxResourceUsage == 3.0
    assert data.weightedMaxEMA == 1.875
    assert data.msgThroughputEMA == 5
    assert data.reportedAt == 0
    assert data.to_string(conf) == (
        "cpu= 300.00%, memory= 100.00%, directMemory= 2.00%, bandwidthIn= 3.00%, "
        "bandwidthOut= 4.00%, cpuWeight= 0.500000, memoryWeight= 0.500000, "
        "directMemoryWeight= 0.500000, bandwidthInResourceWeight= 0.500000, "
        "bandwidthOutResourceWeight= 0.500000, msgThroughputIn= 5.00, msgThroughputOut= 6.00, "
        "msgRateIn= 7.00, msgRateOut= 8.00, bundleCount= 9, maxResourceUsage= 300.00%, "
        "weightedMaxEMA= 187.50%, msgThroughputEMA= 5.00, updatedAt= 2000, reportedAt= 0")
    assert data.clear() == BrokerLoadData()


def test_update_by_broker_load_data():
    conf = Settings.defaults().with_values(**WEIGHTS)
    other = BrokerLoadData().update(
        usage((1.0, 100.0), (800.0, 200.0), (2.0, 100.0), (3.0, 100.0), (4.0, 100.0)),
        1, 2, 3, 4, 5, 6, conf, now=1000)
    # update(other) copies every field verbatim: a value copy here
    assert BrokerLoadData(**{f: getattr(other, f) for f in other.__slots__}) == other


def test_percentages_are_float32():
    """30/100 is 0.30000001907… once widened from a Java float: the average is Pulsar's."""
    conf = Settings.defaults()
    loads = [BrokerLoadData().update(usage((x, 100.0), (0, 100.0), (0, 100.0), (0, 100.0),
                                           (0, 100.0)), 0, 0, 0, 0, 0, 0, conf, 1)
             for x in (10, 20, 30)]
    assert loads[2].weightedMaxEMA == 0.30000001907348633
    assert sum(d.weightedMaxEMA for d in loads) / 3 == 0.2000000063578288


def test_default_ema_alpha_is_point_one():
    conf = Settings.defaults()
    zero = usage((0, 100.0), (0, 100.0), (0, 100.0), (0, 100.0), (0, 100.0))
    full = usage((100, 100.0), (0, 100.0), (0, 100.0), (0, 100.0), (0, 100.0))
    d = BrokerLoadData().update(zero, 0, 0, 0, 0, 0, 0, conf, 1)
    d = d.update(full, 10, 0, 0, 0, 0, 0, conf, 2)
    assert d.weightedMaxEMA == pytest.approx(0.1)
    assert d.msgThroughputEMA == pytest.approx(1.0)


# --- TopKBundlesTest ------------------------------------------------------------------------------
B1 = "my-tenant/my-namespace1/0x00000000_0x0FFFFFFF"
B2 = "my-tenant/my-namespace2/0x00000000_0x0FFFFFFF"
B3 = "my-tenant/my-namespace3/0x00000000_0x0FFFFFFF"
B4 = "my-tenant/my-namespace4/0x00000000_0x0FFFFFFF"
TOPK_CONF = Settings.defaults().with_values(loadBalancerSheddingBundlesWithPoliciesEnabled=False)


def rate(x):
    """Pulsar's test sets ``msgRateIn`` alone; from PR #23626 (``topKSkipsZeroThroughput``)
    TopKBundles drops a bundle without throughput, so the figure is its throughput in too."""
    return NamespaceBundleStats(msgRateIn=x, msgThroughputIn=x)


def names(tops):
    return [t.bundleName for t in tops]


def test_top_bundles_load_data():
    tops = top_k_bundles([(B1, rate(100000)), (B2, rate(500)), (B3, rate(10000)), (B4, rate(0))],
                         3, TOPK_CONF)
    assert names(tops) == [B2, B3, B1]  # ascending


def test_system_namespace():
    tops = top_k_bundles([("pulsar/system/0x00000000_0x0FFFFFFF", rate(500)), (B1, rate(10000))],
                         2, TOPK_CONF)
    assert names(tops) == [B1]
    heartbeat = "pulsar/b1.svc:8080/0x00000000_0xffffffff"
    assert names(top_k_bundles([(heartbeat, rate(1)), (B1, rate(2))], 2, TOPK_CONF)) == [B1]


def test_shedding_excluded_namespaces():
    conf = TOPK_CONF.with_values(loadBalancerSheddingExcludedNamespaces="my-tenant/my-namespace2")
    assert names(top_k_bundles([(B2, rate(500)), (B1, rate(10000))], 2, conf)) == [B1]


ISOLATION = Policies((IsolationPolicy(("my-tenant/my-namespace1.*",),
                                      ("prod1-broker[1-3].messaging.use.example.com",),
                                      ("prod1-broker.*.use.example.com",), 3),))
ANTI_AFFINITY = Policies(anti_affinity={"my-tenant/my-namespace2": "namespaceAntiAffinityGroup"})


def test_isolation_policy():
    tops = top_k_bundles([(B1, rate(500)), (B2, rate(10000))], 2, TOPK_CONF,
                         ISOLATION.has_policies)
    assert names(tops) == [B2]


def test_anti_affinity_group_policy():
    tops = top_k_bundles([(B1, rate(500)), (B2, rate(10000))], 2, TOPK_CONF,
                         ANTI_AFFINITY.has_policies)
    assert names(tops) == [B1]


def test_shedding_bundles_with_policies_enabled_config():
    both = Policies(ISOLATION.isolation, ANTI_AFFINITY.anti_affinity)
    on = TOPK_CONF.with_values(loadBalancerSheddingBundlesWithPoliciesEnabled=True)
    stats = [(B1, rate(500)), (B2, rate(10000))]
    assert names(top_k_bundles(stats, 2, on, both.has_policies)) == [B1, B2]
    assert top_k_bundles(stats, 2, TOPK_CONF, both.has_policies) == ()


def test_partition_sort():
    rng = random.Random(3)

    def cmp(a, b):
        return (a > b) - (a < b)

    for _ in range(100):
        n = rng.randrange(10) + 1
        arr = [(str(i), rng.randrange(n)) for i in range(n)]
        k = rng.randrange(n) + 1
        expected = sorted((v for _, v in arr), reverse=True)
        partition_sort(arr, k, cmp)
        assert [v for _, v in arr[:k]] == expected[:k]


def test_comparator_rounds_to_resolutions():
    """``NamespaceBundleStats.compareTo`` after PR #24772: each figure rounded to its resolution
    (``Math.round(v / 1e5)`` for throughputs, ``/ 100`` for rates, long division by 500 and 100 kB
    for counts and cache), throughput in first."""
    a = NamespaceBundleStats(msgThroughputIn=150_000)
    b = NamespaceBundleStats(msgThroughputIn=49_999, msgThroughputOut=1e9)
    assert compare_stats(a, b) == 1  # round(1.5) = 2 > round(0.49999) = 0: in decides first
    c = NamespaceBundleStats(msgThroughputIn=149_999)
    d = NamespaceBundleStats(msgThroughputIn=50_000)
    assert compare_stats(c, d) == 0  # both round to 1
    assert compare_stats(NamespaceBundleStats(topics=499), NamespaceBundleStats()) == 0
    assert compare_stats(NamespaceBundleStats(topics=500), NamespaceBundleStats(topics=499)) == 1
    assert compare_stats(NamespaceBundleStats(msgRateIn=49.9, msgRateOut=0.1),
                         NamespaceBundleStats(msgRateIn=49)) == 1  # 50 → 1 (half up) vs 0


def test_comparator_before_24772_uses_thresholds():
    """The earlier ``compareTo``: equal unless the figures differ by more than the threshold."""
    a = NamespaceBundleStats(msgThroughputIn=150_000)
    b = NamespaceBundleStats(msgThroughputIn=50_000)
    assert compare_stats_threshold(a, b) == 0  # exactly 1e5 apart: not more
    assert compare_stats_threshold(NamespaceBundleStats(msgThroughputIn=150_001), b) == 1
    # not transitive: 0 ~ 60k ~ 120k but 0 < 120k
    x, y, z = (NamespaceBundleStats(msgThroughputIn=v) for v in (0, 60_000, 120_000))
    assert compare_stats_threshold(x, y) == 0 and compare_stats_threshold(y, z) == 0
    assert compare_stats_threshold(x, z) == -1


def test_topic_connections_are_an_int_sum() -> None:
    """``NamespaceBundleStats.compareByTopicConnections`` (apache/pulsar master 2025): ``long
    thisTopicsAndConnections = topics + consumerCount + producerCount`` sums ``int``s before the
    widening, so 2^31 - 1 consumers plus 1 topic compare as -2^31, below a bundle of 1,000."""
    huge = NamespaceBundleStats(topics=1, consumerCount=2**31 - 1)
    small = NamespaceBundleStats(topics=1000)
    assert compare_stats(huge, small) == -1
    assert compare_stats_threshold(huge, small) == -1


# --- TopKBundles' final sort: JDK 17's TimSort over a comparator that is not transitive ---------
def _near_ties(seed: int) -> list[tuple[str, NamespaceBundleStats]]:
    """33-60 bundles whose throughputs sit around NamespaceBundleStats' 100 kB/s threshold."""
    rng = random.Random(seed)
    return [(f"t/ns/0x{i:08x}_0x{i + 1:08x}", NamespaceBundleStats(
        msgThroughputIn=rng.choice([0.0, 5e4, 1e5, 1.5e5, 2e5, 2.5e5]) + rng.uniform(0, 3e4),
        msgRateIn=rng.uniform(0, 300))) for i in range(rng.randint(33, 60))]


def test_top_k_prefix_is_ordered_as_the_jdk_orders_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before PR #24772 (3.0.13 here) ``Collections.sort`` of the quickselected prefix meets
    near-ties that are not transitive: the order is TimSort's (checked against the JDK in
    test_javasort_jdk.py), which Python's own sort does not give on this prefix."""
    seen: list[tuple[list[tuple[str, NamespaceBundleStats]], list[Any]]] = []

    def spy(items, compare):  # type: ignore[no-untyped-def]
        head = list(items)
        out = java_sort(head, compare)
        seen.append((head, out))
        return out

    monkeypatch.setattr(brokerload, "java_sort", spy)
    arr = _near_ties(1)
    tops = top_k_bundles(arr, len(arr), Settings.defaults(resolve("3.0.13")))
    [(head, out)] = seen
    assert len(head) >= 32
    python = sorted(head, key=functools.cmp_to_key(
        lambda x, y: compare_stats_threshold(y[1], x[1])))
    assert out != python
    assert [t.bundleName for t in reversed(tops)][:len(out)] == [b for b, _ in out]


def test_a_top_k_sort_that_throws_publishes_no_top_bundles() -> None:
    """The JDK throws "Comparison method violates its general contract!" on this prefix: the
    broker's ``TopKBundles.update`` has already cleared its list and reports nothing new."""
    arr = _near_ties(2)
    assert top_k_bundles(arr, len(arr), Settings.defaults(resolve("3.0.13"))) == ()
    assert len(top_k_bundles(arr, len(arr), Settings.defaults(resolve("3.0.14")))) == len(arr)
