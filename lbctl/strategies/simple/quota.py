"""Resource quotas of ``SimpleLoadManagerImpl`` (Pulsar master 0058e734): what a bundle is
assumed to need, learnt from the load reports and smoothed in time.

``ResourceQuota`` (``pulsar-client-admin-api``) holds message rates (msg/s), bandwidths
(bytes/s) and memory (MB); a bundle never seen has the stored default quota, else
``BundlesQuotas.INITIAL_QUOTA`` (40 / 120 msg/s, 100000 / 300000 bytes/s, 80 MB, dynamic).
``updateRealtimeResourceQuota`` runs at every ranking: it learns the CPU cost of a message and the
memory of 500 topics and connections (when the cluster is busy enough), and moves each reported
bundle's quota toward what it carries now — upward over 30 minutes, downward over 24 hours
(``timeSmoothValue``), each figure clamped to its minimum and maximum first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from msgspec import Struct, field

from lbctl.model.load import LocalBrokerData, NamespaceBundleStats
from lbctl.strategies.simple.report import copied_order

GO_UP_MS = 30 * 60_000  # RESOURCE_QUOTA_GO_UP_TIMEWINDOW
GO_DOWN_MS = 1440 * 60_000  # RESOURCE_QUOTA_GO_DOWN_TIMEWINDOW
MIN_CPU_FACTOR, MAX_CPU_FACTOR = 0.01, 0.1
MIN_MEM_FACTOR, MAX_MEM_FACTOR = 10.0, 50.0
#: (min, max) of msgRateIn, msgRateOut, bandwidthIn, bandwidthOut, memory; a max of 0: none
LIMITS = ((5.0, 0.0), (5.0, 0.0), (10000.0, 1000000.0), (10000.0, 1000000.0), (2.0, 200.0))
MEM_OBJECT_GROUP = 500  # memObjectGroupSize
DEFAULT_CPU_FACTOR = 0.025  # realtimeCpuLoadFactor before anything is learnt
DEFAULT_MEM_FACTOR = 25.0  # realtimeMemoryLoadFactor


class ResourceQuota(Struct, frozen=True):
    """``ResourceQuota``: a bundle's (or a sum of bundles') assumed needs."""

    msgRateIn: float = 0.0
    msgRateOut: float = 0.0
    bandwidthIn: float = 0.0
    bandwidthOut: float = 0.0
    memory: float = 0.0
    dynamic: bool = True

    def plus(self, o: ResourceQuota) -> ResourceQuota:
        """``add`` (``dynamic`` unchanged)."""
        return ResourceQuota(self.msgRateIn + o.msgRateIn, self.msgRateOut + o.msgRateOut,
                             self.bandwidthIn + o.bandwidthIn, self.bandwidthOut + o.bandwidthOut,
                             self.memory + o.memory, self.dynamic)

    def minus(self, o: ResourceQuota) -> ResourceQuota:
        """``substract``."""
        return ResourceQuota(self.msgRateIn - o.msgRateIn, self.msgRateOut - o.msgRateOut,
                             self.bandwidthIn - o.bandwidthIn, self.bandwidthOut - o.bandwidthOut,
                             self.memory - o.memory, self.dynamic)


INITIAL_QUOTA = ResourceQuota(40.0, 120.0, 100000.0, 300000.0, 80.0, True)


def total(quotas: Iterable[ResourceQuota]) -> ResourceQuota:
    """``getTotalAllocatedQuota``: a fresh ``ResourceQuota`` plus each one, in the given order."""
    out = ResourceQuota()
    for q in quotas:
        out = out.plus(q)
    return out


def time_smooth_value(old: float, sample: float, low: float, high: float, past: int) -> float:
    """``timeSmoothValue``: the sample clamped to [low, high] (no high when it is 0), weighted by
    the time past over the up or down window (at most 1)."""
    sample = _jmax(low, sample)
    if high > 0:
        sample = _jmin(high, sample)
    window = GO_UP_MS if sample >= old else GO_DOWN_MS if sample < old else 0
    weight = _jmin(1.0, _jmax(0.0, past / window)) if window else 0.0
    return (1 - weight) * old + weight * sample


def time_smooth_quota(old: ResourceQuota, figures: tuple[float, float, float, float, float],
                      past: int) -> ResourceQuota:
    """``timeSmoothQuota``: each figure smoothed when the quota is dynamic, else ``old``."""
    if not old.dynamic:
        return old
    olds = (old.msgRateIn, old.msgRateOut, old.bandwidthIn, old.bandwidthOut, old.memory)
    new = [time_smooth_value(o, f, lo, hi, past)
           for o, f, (lo, hi) in zip(olds, figures, LIMITS, strict=True)]
    return ResourceQuota(new[0], new[1], new[2], new[3], new[4], True)


class QuotaState(Struct, frozen=True):
    """What ``updateRealtimeResourceQuota`` keeps between rankings: the load factors, the average
    bundle's quota, each reported bundle's realtime quota and when they were computed (``-1``:
    never; the first ranking then weighs the new figures fully)."""

    cpu_factor: float = DEFAULT_CPU_FACTOR
    memory_factor: float = DEFAULT_MEM_FACTOR
    average: ResourceQuota = INITIAL_QUOTA
    quotas: Mapping[str, ResourceQuota] = field(default_factory=lambda: MappingProxyType({}))
    updated_at: int = -1


class Stored(Struct, frozen=True):
    """The quotas in the metadata store (``/loadbalance/resource-quota``): the default one and
    each bundle's; with the dynamic load factors (``/loadbalance/settings/load_factor_*``)."""

    default: ResourceQuota = INITIAL_QUOTA
    bundles: Mapping[str, ResourceQuota] = field(default_factory=lambda: MappingProxyType({}))
    cpu_factor: float | None = None
    memory_factor: float | None = None

    def quota(self, bundle: str, realtime: Mapping[str, ResourceQuota]) -> ResourceQuota:
        """``getResourceQuota``: the realtime quota, else the stored one, else the default."""
        q = realtime.get(bundle)
        if q is not None:
            return q
        return self.bundles.get(bundle, self.default)


def update_realtime(reports: Mapping[str, tuple[LocalBrokerData, int]], stored: Stored,
                    prev: QuotaState) -> QuotaState:
    """``updateRealtimeResourceQuota`` over ``reports`` (broker → its report and timestamp, in
    ``currentLoadReports``' order); nothing changes without a report."""
    if not reports:
        return prev
    bundles = 0
    mem_groups = 0
    rate_in = rate_out = cpu = memory = bw_in = bw_out = 0.0
    stamp = -1
    for local, ts in reports.values():
        stamp = max(stamp, ts)
        for b in copied_order(list(local.lastStats)):
            st = local.lastStats[b]
            bundles += 1
            mem_groups += 1 + (st.topics + st.producerCount + st.consumerCount) // MEM_OBJECT_GROUP
            bw_in += st.msgThroughputIn
            bw_out += st.msgThroughputOut
        rate_in += _sum(s.msgRateIn for s in _hash_values(local))
        rate_out += _sum(s.msgRateOut for s in _hash_values(local))
        cpu += local.cpu.usage
        memory += local.memory.usage
    rate = rate_in + rate_out
    past = stamp - prev.updated_at
    cpu_factor, memory_factor = prev.cpu_factor, prev.memory_factor
    if rate > 1000 and mem_groups > 30:
        cpu_factor = time_smooth_value(cpu_factor, _div(cpu, rate), MIN_CPU_FACTOR,
                                       MAX_CPU_FACTOR, past)
        memory_factor = time_smooth_value(memory_factor, _div(memory, mem_groups),
                                          MIN_MEM_FACTOR, MAX_MEM_FACTOR, past)
    average = prev.average
    if bundles > 30 and average.dynamic:
        average = time_smooth_quota(average, (rate_in / bundles, rate_out / bundles,
                                              bw_in / bundles, bw_out / bundles,
                                              memory / bundles), past)
    quotas: dict[str, ResourceQuota] = {}
    for local, _ in reports.values():
        for b in copied_order(list(local.lastStats)):
            st = local.lastStats[b]
            groups = 1 + (st.topics + st.producerCount + st.consumerCount) // MEM_OBJECT_GROUP
            old = stored.quota(b, prev.quotas)
            quotas[b] = time_smooth_quota(old, (st.msgRateIn, st.msgRateOut, st.msgThroughputIn,
                                                st.msgThroughputOut, groups * memory_factor),
                                          past)
    return QuotaState(cpu_factor, memory_factor, average, MappingProxyType(quotas), stamp)


def _hash_values(local: LocalBrokerData) -> list[NamespaceBundleStats]:
    """``LoadReport.getMsgRateIn/Out`` walk the report's bundle-stats ``HashMap``."""
    return [local.lastStats[b] for b in copied_order(list(local.lastStats))]


def _sum(values: Iterable[float]) -> float:
    out = 0.0
    for v in values:
        out += v
    return out


def _div(a: float, b: float) -> float:
    """A Java ``double`` division (b may be 0)."""
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)
    return a / b


def _jmax(a: float, b: float) -> float:
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


def _jmin(a: float, b: float) -> float:
    return math.nan if math.isnan(a) or math.isnan(b) else min(a, b)
