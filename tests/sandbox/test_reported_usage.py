"""A broker cannot report more direct memory (or heap) than its JVM may hold, nor more CPU or
NIC than its host has: the living sandbox holds its hosts' *demand* (``lbctl.truth.hosts``) to what
``LinuxBrokerHostUsageImpl`` and ``LoadManagerShared.getSystemResourceUsage`` would measure
(``lbctl.sandbox.life.reported``). Before, the hot broker of the default sandbox reported its
direct memory at 109.6 % of ``-XX:MaxDirectMemorySize``, which a JVM refuses to allocate."""

from __future__ import annotations

import random

import pytest

from lbctl.sandbox.life import reported
from lbctl.truth.hosts import Host, Traffic
from tests.sandbox.life_helpers import QUIET, living_hot, run_for

#: 1.2 GB/s in and out: 4 MB of direct memory per MB/s asks for more than the 4 GB limit
HEAVY = Traffic(msg_rate_in=50_000, msg_rate_out=50_000, throughput_in=6e8, throughput_out=6e8,
                topics=100)


def test_direct_memory_past_its_limit_spills_onto_the_heap() -> None:
    demand = QUIET.usage(HEAVY)
    assert demand.direct_memory.usage > demand.direct_memory.limit  # the case at hand
    got = reported(QUIET, HEAVY)
    assert got.direct_memory.usage == got.direct_memory.limit == demand.direct_memory.limit
    spill = demand.direct_memory.usage - demand.direct_memory.limit
    # PulsarByteBufAllocator's FallbackToHeap: what direct memory refused lands on the heap
    assert got.memory.usage == pytest.approx(demand.memory.usage + spill)
    assert got.memory.limit == demand.memory.limit


@pytest.mark.parametrize("field", ["cpu", "memory", "direct_memory", "bandwidth_in",
                                   "bandwidth_out"])
def test_no_resource_is_reported_past_its_limit(field: str) -> None:
    small = Host(cores=2, nic_gbps=1.0, heap_mb=1024.0, direct_mb=512.0)
    rng = random.Random(3)
    for scale in (0.5, 1, 4, 40):
        demand = small.usage(HEAVY.scaled(scale))
        got = getattr(reported(small, HEAVY.scaled(scale), rng), field)
        assert got.limit == getattr(demand, field).limit
        assert 0 <= got.usage <= got.limit
    assert getattr(small.usage(HEAVY.scaled(40)), field).usage > got.limit  # demand did exceed


def test_under_its_limits_a_host_reports_its_demand() -> None:
    light = HEAVY.scaled(0.1)
    assert reported(QUIET, light) == QUIET.usage(light)


def test_the_hot_brokers_served_report_stays_within_its_limits() -> None:
    c, life, clock = living_hot(3)
    try:
        run_for(life, clock, 10)
        hot = next(iter(c.brokers))
        traffic = life.broker_traffic(hot, clock.now())
        assert QUIET.usage(traffic).direct_memory.usage > QUIET.direct_mb  # demand > limit
        for broker in c.brokers:
            report = c.served_report(broker)
            for key in ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut"):
                ru = report[key]
                assert ru["usage"] <= ru["limit"], (broker, key, ru)
        assert c.served_report(hot)["directMemory"]["usage"] == QUIET.direct_mb
    finally:
        c.stop()
