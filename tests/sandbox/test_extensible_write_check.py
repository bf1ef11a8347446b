"""An extensible broker publishes its ``BrokerLoadData`` when ``BrokerLoadDataReporter
.needBrokerDataUpdate`` says so (apache/pulsar, ``extensions/reporter/BrokerLoadDataReporter``):
more than ``loadBalancerReportUpdateMaxIntervalMinutes`` since its last push, or a change above
``loadBalancerReportUpdateThresholdPercentage`` in the message rate, the throughput, the bundle
count or, in points, the **unweighted** ``getMaxResourceUsage`` (``BrokerLoadData
.updateMaxResourceUsage``: CPU, direct memory and the NICs; no heap, no weights). The sandbox
compared modular's weighted maximum, so a broker whose direct memory (weight 0 by default) filled
up never published it, and one whose weights changed published though nothing it measures did.

Its ``weightedMaxEMA`` is ``BrokerLoadData.updateWeightedMaxEMA``: the 5-weight
``getMaxResourceUsageWithWeight``, the heap weighed by ``loadBalancerMemoryResourceWeight``."""

from __future__ import annotations

import pytest

from lbctl.model.load import ResourceUsage
from lbctl.records import replace
from lbctl.sandbox import TestCluster
from lbctl.sandbox.clock import SteppedClock
from lbctl.sandbox.life import Life
from tests.sandbox.life_helpers import run_for

pytestmark = pytest.mark.live


def _quiet(**dynamic: str) -> tuple[TestCluster, Life, SteppedClock, str]:
    """The extensible cluster alive on noiseless uniform hosts, shedding and splits off, with
    ``dynamic`` settings; and its coolest broker."""
    from lbctl.sandbox.scenarios import extensible_cluster, living

    c = extensible_cluster()
    c.set_dynamic(loadBalancerSheddingEnabled="false", loadBalancerAutoBundleSplitEnabled="false",
                  **dynamic)
    clock = SteppedClock()
    life = living(c, clock, hosts="uniform")
    for b, host in life.hosts.items():
        life.hosts[b] = replace(host, noise=0.0)
    run_for(life, clock, 5)
    return c, life, clock, list(c.brokers)[-1]


def _pct(ru: ResourceUsage) -> float:
    return 100.0 * ru.usage / ru.limit


def test_direct_memory_filling_up_is_published() -> None:
    """Same traffic, same CPU, a direct memory that fills up (weight 0): the unweighted maximum
    moves by more than the threshold, so the broker publishes at its next tick."""
    c, life, clock, cool = _quiet()
    try:
        run_for(life, clock, 5)
        first = life.written[cool]
        before = life.sampled[cool]
        host = life.hosts[cool]
        # the same throughput now takes 8x the direct memory: at its limit
        life.hosts[cool] = replace(host, direct_mb_per_mbps=host.direct_mb_per_mbps * 8)
        run_for(life, clock, 5)
        after = life.sampled[cool]
        assert after.cpu == before.cpu and after.bandwidth_out == before.bandwidth_out
        assert _pct(after.direct_memory) - max(_pct(before.cpu), _pct(before.direct_memory),
                                                _pct(before.bandwidth_in),
                                                _pct(before.bandwidth_out)) > 10
        assert life.written[cool].at > first.at
        assert life.written[cool].usage == pytest.approx(_pct(after.direct_memory) / 100)
    finally:
        c.stop()


def test_a_change_of_weights_alone_is_not_published() -> None:
    """The hot broker's CPU weight halved: its weighted maximum falls by about 45 points, but
    nothing it measures changed, so it does not push before the maximum interval."""
    c, life, clock, _ = _quiet()
    hot = next(iter(c.brokers))
    try:
        run_for(life, clock, 5)
        first = life.written[hot]
        assert _pct(life.sampled[hot].cpu) > 80
        c.set_dynamic(loadBalancerCPUResourceWeight="0.5")
        for _ in range(12):
            run_for(life, clock, 5)
        assert life.written[hot].at == first.at
    finally:
        c.stop()


def test_the_ema_weighs_the_heap_with_the_memory_weight() -> None:
    """``loadBalancerMemoryResourceWeight`` 1 (history 0: the EMA is the last sample): the heap,
    the broker's largest figure, is its ``weightedMaxEMA`` (the 5-weight maximum)."""
    c, life, clock, cool = _quiet(loadBalancerMemoryResourceWeight="1.0",
                                  loadBalancerHistoryResourcePercentage="0")
    try:
        run_for(life, clock, 5)
        u = life.sampled[cool]
        heap = _pct(u.memory)
        assert heap > max(_pct(u.cpu), _pct(u.bandwidth_in), _pct(u.bandwidth_out))
        assert life.ema[cool] == pytest.approx(heap / 100)
    finally:
        c.stop()
