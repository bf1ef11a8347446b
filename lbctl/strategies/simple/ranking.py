"""``ResourceUnitRanking`` (``pulsar-common``, Pulsar master 160e6f8d) and ``doLoadRanking``'s
final rank: how ``SimpleLoadManagerImpl`` sees a broker's load.

A broker's estimated load, per resource, is ``max(used, allocated) + preallocated`` over its limit
(capped at 100 %): CPU allocated is ``cpuUsageByMsgRate`` × the quotas' message rates, memory the
quotas' MB, bandwidth the quotas' bytes/s over 128 (``KBITS_TO_BYTES``); direct memory is only
used. The estimated load percentage is the maximum of the five. Its capacity is how many default
quotas fit its limits (``calculateBrokerMaxCapacity``). All in Java ``double``; ``(long)`` casts
truncate toward zero (NaN → 0).
"""

from __future__ import annotations

import math
from collections.abc import Set as AbstractSet

from msgspec import Struct

from lbctl.model.load import LocalBrokerData, ResourceUsage
from lbctl.records import replace
from lbctl.strategies.simple.quota import ResourceQuota, _div, _jmax, _jmin

KBITS_TO_BYTES = 1024 // 8
PERCENTAGE_DIFFERENCE_THRESHOLD = 5.0
#: loadBalancerPlacementStrategy values (SimpleLoadManagerImpl.LOADBALANCER_STRATEGY_*)
LLS, RAND, LEAST_MSG = "leastLoadedServer", "weightedRandomSelection", "leastMsgPerSecond"
LONG_MAX = (1 << 63) - 1


def java_long(x: float) -> int:
    """``(long) x``: toward zero, NaN → 0, saturating."""
    if math.isnan(x):
        return 0
    if x >= LONG_MAX:
        return LONG_MAX
    if x <= -LONG_MAX - 1:
        return -LONG_MAX - 1
    return int(x)


def placement_key(raw: object) -> str:
    """``getLoadBalancerPlacementStrategy``: the setting when it names one of the three
    strategies, else weightedRandomSelection."""
    return raw if isinstance(raw, str) and raw in (LLS, RAND, LEAST_MSG) else RAND


class Ranking(Struct, frozen=True):
    """One broker's ``ResourceUnitRanking``: its usage, loaded and preallocated bundles and their
    quotas, and the estimated percentages (computed at construction, as Java's constructor does)."""

    cpu: ResourceUsage
    memory: ResourceUsage
    direct: ResourceUsage
    bw_in: ResourceUsage
    bw_out: ResourceUsage
    loaded: frozenset[str]
    allocated: ResourceQuota
    preallocated: tuple[str, ...]
    pre_quota: ResourceQuota
    cpu_by_msg_rate: float
    est_cpu: float = 0.0
    est_memory: float = 0.0
    est_direct: float = 0.0
    est_in: float = 0.0
    est_out: float = 0.0
    estimated: float = 0.0
    msg_rate: float = 0.0

    @property
    def idle(self) -> bool:
        """``isIdle``: no bundle loaded or preallocated."""
        return not self.loaded and not self.preallocated

    def compare_to(self, o: Ranking) -> int:
        """``compareTo``: the first of load, memory, CPU, bandwidth in, out that differs by more
        than 5 points decides; else the load percentage."""
        for a, b in ((self.estimated, o.estimated), (self.est_memory, o.est_memory),
                     (self.est_cpu, o.est_cpu), (self.est_in, o.est_in),
                     (self.est_out, o.est_out)):
            if abs(a - b) > PERCENTAGE_DIFFERENCE_THRESHOLD:
                return _double_compare(a, b)
        return _double_compare(self.estimated, o.estimated)

    def compare_message_rate(self, o: Ranking) -> int:
        """``compareMessageRateTo``."""
        return _double_compare(self.msg_rate, o.msg_rate)

    def max_capacity(self, default: ResourceQuota) -> int:
        """``estimateMaxCapacity``: bundles of ``default`` quota the limits hold (the least of
        CPU, memory, bandwidth out and in), at least 0."""
        cpu = _div(_div(self.cpu.limit, self.cpu_by_msg_rate),
                   default.msgRateIn + default.msgRateOut)
        mem = _div(self.memory.limit, default.memory)
        out = _div(self.bw_out.limit * KBITS_TO_BYTES, default.bandwidthOut)
        inn = _div(self.bw_in.limit * KBITS_TO_BYTES, default.bandwidthIn)
        return java_long(_jmax(_jmin(cpu, _jmin(mem, _jmin(out, inn))), 0.0))

    def final_rank(self, strategy: str, default: ResourceQuota) -> int:
        """``doLoadRanking``'s rank: the load percentage (leastLoadedServer), the estimated
        message rate (leastMsgPerSecond), else capacity × idle ratio² (weightedRandomSelection)."""
        if strategy == LLS:
            return java_long(self.estimated)
        if strategy == LEAST_MSG:
            return java_long(self.msg_rate)
        idle = (100 - self.estimated) / 100
        return java_long(self.max_capacity(default) * idle * idle)

    def without_loaded(self, bundle: str, quota: ResourceQuota) -> Ranking:
        """``removeLoadedServiceUnit``: the bundle and its quota leave the loaded set."""
        if bundle not in self.loaded:
            return self
        return estimate(self, loaded=self.loaded - {bundle}, allocated=self.allocated.minus(quota))

    def with_preallocated(self, bundle: str, quota: ResourceQuota) -> Ranking:
        """``addPreAllocatedServiceUnit``."""
        return estimate(self, preallocated=(*self.preallocated, bundle),
                        pre_quota=self.pre_quota.plus(quota))


def ranking(local: LocalBrokerData, loaded: AbstractSet[str], allocated: ResourceQuota,
            preallocated: tuple[str, ...], pre_quota: ResourceQuota,
            cpu_by_msg_rate: float) -> Ranking:
    """``new ResourceUnitRanking(systemResourceUsage, loaded, allocatedQuota, preallocated,
    preAllocatedQuota)`` with the static ``cpuUsageByMsgRate`` of the ranking."""
    base = Ranking(local.cpu, local.memory, local.directMemory, local.bandwidthIn,
                   local.bandwidthOut, frozenset(loaded), allocated, preallocated, pre_quota,
                   cpu_by_msg_rate)
    return estimate(base)


def estimate(r: Ranking, **changes: object) -> Ranking:
    """``estimateLoadPercentage`` of ``r`` with ``changes`` applied."""
    r = replace(r, **changes) if changes else r
    a, p, k = r.allocated, r.pre_quota, r.cpu_by_msg_rate

    def pct(limit: float, used: float, alloc: float, pre: float) -> float:
        if limit <= 0:
            return 0.0
        return _jmin(100.0, _div(100 * (_jmax(used, alloc) + pre), limit))

    est_cpu = pct(r.cpu.limit, r.cpu.usage, k * (a.msgRateIn + a.msgRateOut),
                             k * (p.msgRateIn + p.msgRateOut))
    est_mem = pct(r.memory.limit, r.memory.usage, a.memory, p.memory)
    est_in = pct(r.bw_in.limit, r.bw_in.usage, a.bandwidthIn / KBITS_TO_BYTES,
                           p.bandwidthIn / KBITS_TO_BYTES)
    est_out = pct(r.bw_out.limit, r.bw_out.usage, a.bandwidthOut / KBITS_TO_BYTES,
                             p.bandwidthOut / KBITS_TO_BYTES)
    est_direct = 0.0 if r.direct.limit <= 0 else _jmin(100.0, _div(100 * r.direct.usage,
                                                                   r.direct.limit))
    estimated = _jmax(est_cpu, _jmax(est_mem, _jmax(est_direct, _jmax(est_in, est_out))))
    rate = a.msgRateIn + a.msgRateOut + p.msgRateIn + p.msgRateOut
    return replace(r, est_cpu=est_cpu, est_memory=est_mem, est_direct=est_direct, est_in=est_in,
                   est_out=est_out, estimated=estimated, msg_rate=rate)


def _double_compare(a: float, b: float) -> int:
    """``Double.compare``: NaN above everything, −0.0 below 0.0."""
    if math.isnan(a) or math.isnan(b):
        return 0 if math.isnan(a) and math.isnan(b) else (1 if math.isnan(a) else -1)
    if a < b:
        return -1
    if a > b:
        return 1
    sa, sb = math.copysign(1, a), math.copysign(1, b)
    return 0 if sa == sb else (-1 if sa < sb else 1)
