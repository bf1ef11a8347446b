"""``BrokerLoadData.update`` / ``update_from`` build the next data as one object (issue 30: the
explain projection's cost); this checks the result field by field, to the bit, against the copy-
with-changes definition they had: ``replace`` the raw figures, then the EMAs from the new object's
own ``weighted_max`` / ``max_resource_usage``, ``updatedAt`` the sample's time, ``reportedAt``
kept by ``update`` and the sample's by ``update_from``."""

from __future__ import annotations

import math
import random
import struct

from lbctl.config import Settings
from lbctl.model.brokerload import BrokerLoadData, SystemUsage
from lbctl.model.load import ResourceUsage
from lbctl.records import replace


def reference_update(prev: BrokerLoadData, usage: SystemUsage, tin: float, tout: float,
                     rin: float, rout: float, bundles: int, topics: int, settings: Settings,
                     now: int) -> BrokerLoadData:
    """The definition, as two copies with changes (how lbctl computed it before)."""
    h = float(settings["loadBalancerHistoryResourcePercentage"])
    nxt = replace(prev, cpu=usage.cpu, memory=usage.memory, directMemory=usage.directMemory,
                  bandwidthIn=usage.bandwidthIn, bandwidthOut=usage.bandwidthOut,
                  msgThroughputIn=tin, msgThroughputOut=tout, msgRateIn=rin, msgRateOut=rout,
                  bundleCount=bundles, topics=topics)
    weighted = nxt.weighted_max(settings)
    tp = tin + tout
    first = prev.updatedAt == 0
    return replace(nxt, maxResourceUsage=nxt.max_resource_usage(),
                   weightedMaxEMA=weighted if first else prev.weightedMaxEMA * h + (1 - h) * weighted,
                   msgThroughputEMA=tp if first else prev.msgThroughputEMA * h + (1 - h) * tp,
                   updatedAt=now)


def bits(data: BrokerLoadData) -> tuple[object, ...]:
    """Every field, floats as their bit patterns (-0.0 ≠ 0.0, each NaN itself)."""
    def one(v: object) -> object:
        if isinstance(v, float):
            return struct.pack("<d", v)
        if isinstance(v, ResourceUsage):
            return (one(v.usage), one(v.limit))
        return v
    return tuple(one(getattr(data, f)) for f in BrokerLoadData.__dataclass_fields__)


def figure(rng: random.Random) -> float:
    return rng.choice([0.0, -0.0, math.nan, math.inf, 1e-300, 7.0, rng.uniform(0, 1e6),
                       rng.uniform(-5, 5)])


def resource(rng: random.Random) -> ResourceUsage:
    return ResourceUsage(figure(rng), rng.choice([0.0, -1.0, 100.0, 1600.0, figure(rng)]))


def random_data(rng: random.Random) -> BrokerLoadData:
    return BrokerLoadData(*(resource(rng) for _ in range(5)),
                          *(figure(rng) for _ in range(4)), rng.randint(0, 9), rng.randint(0, 9),
                          figure(rng), figure(rng), figure(rng),
                          rng.choice([0, 0, 1, 1_795_000_000_000]), rng.randint(0, 10**12))


def settings_of(rng: random.Random) -> Settings:
    return Settings.defaults().with_values(
        loadBalancerHistoryResourcePercentage=rng.choice([0.0, 0.9, 0.75, 1.0]),
        loadBalancerCPUResourceWeight=rng.choice([1.0, 0.5, 0.0]),
        loadBalancerMemoryResourceWeight=rng.choice([1.0, 0.0, 2.5]),
        loadBalancerDirectMemoryResourceWeight=rng.choice([1.0, 0.3]),
        loadBalancerBandwidthInResourceWeight=rng.choice([1.0, 0.7]),
        loadBalancerBandwidthOutResourceWeight=rng.choice([1.0, 0.0]))


def test_update_is_the_two_copies_bit_for_bit() -> None:
    rng = random.Random(46)
    for _ in range(2000):
        prev, settings = random_data(rng), settings_of(rng)
        usage = SystemUsage(*(resource(rng) for _ in range(5)))
        args = (usage, figure(rng), figure(rng), figure(rng), figure(rng), rng.randint(0, 99),
                rng.randint(0, 99), settings, rng.randint(1, 10**13))
        assert bits(prev.update(*args)) == bits(reference_update(prev, *args))


def test_update_from_takes_the_samples_figures_time_and_report_time() -> None:
    rng = random.Random(30)
    for _ in range(2000):
        prev, sample, settings = random_data(rng), random_data(rng), settings_of(rng)
        want = replace(reference_update(
            prev, sample.usage(), sample.msgThroughputIn, sample.msgThroughputOut,
            sample.msgRateIn, sample.msgRateOut, sample.bundleCount, sample.topics, settings,
            sample.updatedAt), reportedAt=sample.reportedAt)
        assert bits(prev.update_from(sample, settings)) == bits(want)
