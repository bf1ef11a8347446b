"""The extensible load manager's data: ``BrokerLoadData`` and top bundles.

Mirrors ``extensions.data.BrokerLoadData``, ``extensions.data.TopBundlesLoadData`` and
``extensions.models.TopKBundles``; :class:`PublishedLoad` and :class:`PublishedTopBundles` are
what a snapshot holds of them (see :mod:`lbctl.sources.snapshot_schema`). Values are immutable;
``update`` returns a new :class:`BrokerLoadData`. Resource percentages are 32-bit floats exactly as
``ResourceUsage.percentUsage()`` computes them (:class:`lbctl.model.load.ResourceUsage`), widened to
double when weighted, so the EMA reproduces Pulsar's tests bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from lbctl.config import Settings
from lbctl.model.bundle import is_system_service_namespace, namespace_of
from lbctl.model.javaint import int_add
from lbctl.model.javasort import ComparisonContractViolation, java_sort
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats, ResourceUsage, java_max
from lbctl.records import replace

#: ``BrokerLoadData.DEFAULT_RESOURCE_USAGE``: a broker without a sample counts as fully loaded
DEFAULT_RESOURCE_USAGE = 1.0
RESOURCES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")


@dataclass(frozen=True, slots=True)
class SystemUsage:
    """``SystemResourceUsage``: the five usage/limit pairs a broker samples."""

    cpu: ResourceUsage = ResourceUsage()
    memory: ResourceUsage = ResourceUsage()
    directMemory: ResourceUsage = ResourceUsage()
    bandwidthIn: ResourceUsage = ResourceUsage()
    bandwidthOut: ResourceUsage = ResourceUsage()


def weights5(settings: Settings) -> tuple[float, float, float, float, float]:
    """(cpu, memory, directMemory, bandwidthIn, bandwidthOut) weights as ``LoadBalancerConfiguration``
    returns them; the bandwidth ones honour the deprecated ``…Bandwith…`` keys."""
    cpu, dm, bw_in, bw_out = settings.weights4()
    return cpu, settings.memory_weight(), dm, bw_in, bw_out


def _max_usage(cpu: ResourceUsage, direct: ResourceUsage, bw_in: ResourceUsage,
               bw_out: ResourceUsage) -> float:
    """``BrokerLoadData.updateMaxResourceUsage``'s figure (see :meth:`BrokerLoadData.max_resource_usage`)."""
    return java_max(cpu.percent, direct.percent, bw_in.percent, bw_out.percent) / 100


def _weighted_max(cpu: ResourceUsage, memory: ResourceUsage, direct: ResourceUsage,
                  bw_in: ResourceUsage, bw_out: ResourceUsage, settings: Settings) -> float:
    """``getMaxResourceUsageWithWeight``'s figure (see :meth:`BrokerLoadData.weighted_max`)."""
    w_cpu, w_mem, w_dm, w_in, w_out = weights5(settings)
    return java_max(cpu.percent * w_cpu, memory.percent * w_mem, direct.percent * w_dm,
                    bw_in.percent * w_in, bw_out.percent * w_out) / 100


@dataclass(frozen=True, slots=True)
class BrokerLoadData:
    """One broker's load as it publishes it on ``loadbalancer-broker-load-data``.

    ``weightedMaxEMA`` is the load TransferShedder and placement compare; ``msgThroughputEMA``
    feeds the underloaded test only.
    """

    cpu: ResourceUsage = ResourceUsage()
    memory: ResourceUsage = ResourceUsage()
    directMemory: ResourceUsage = ResourceUsage()
    bandwidthIn: ResourceUsage = ResourceUsage()
    bandwidthOut: ResourceUsage = ResourceUsage()
    msgThroughputIn: float = 0.0
    msgThroughputOut: float = 0.0
    msgRateIn: float = 0.0
    msgRateOut: float = 0.0
    bundleCount: int = 0
    topics: int = 0
    maxResourceUsage: float = DEFAULT_RESOURCE_USAGE
    weightedMaxEMA: float = DEFAULT_RESOURCE_USAGE
    msgThroughputEMA: float = 0.0
    updatedAt: int = 0
    reportedAt: int = 0

    @property
    def throughput(self) -> float:
        """Current ``msgThroughputIn + msgThroughputOut`` (not the EMA)."""
        return self.msgThroughputIn + self.msgThroughputOut

    @property
    def msg_rate(self) -> float:
        return self.msgRateIn + self.msgRateOut

    def usage(self) -> SystemUsage:
        return SystemUsage(self.cpu, self.memory, self.directMemory, self.bandwidthIn,
                           self.bandwidthOut)

    def max_resource_usage(self) -> float:
        """``updateMaxResourceUsage``: max(cpu, directMemory, bwIn, bwOut) % / 100 — no memory,
        no weights, no cap."""
        return _max_usage(self.cpu, self.directMemory, self.bandwidthIn, self.bandwidthOut)

    def weighted_max(self, settings: Settings) -> float:
        """``getMaxResourceUsageWithWeight``: the five percentages times their weights, max / 100."""
        return _weighted_max(self.cpu, self.memory, self.directMemory, self.bandwidthIn,
                             self.bandwidthOut, settings)

    def update(
        self,
        usage: SystemUsage,
        msg_throughput_in: float,
        msg_throughput_out: float,
        msg_rate_in: float,
        msg_rate_out: float,
        bundle_count: int,
        topics: int,
        settings: Settings,
        now: int,
    ) -> BrokerLoadData:
        """``update(usage, tIn, tOut, rIn, rOut, bundleCount, topics, conf)`` sampled at ``now``.

        The first sample (``updatedAt == 0``) sets both EMAs; later ones blend with the history
        weight ``h = loadBalancerHistoryResourcePercentage``: ``ema = ema·h + (1−h)·new``.
        """
        return self._next(usage.cpu, usage.memory, usage.directMemory, usage.bandwidthIn,
                          usage.bandwidthOut, msg_throughput_in, msg_throughput_out, msg_rate_in,
                          msg_rate_out, bundle_count, topics, settings, now, self.reportedAt)

    def update_from(self, sample: BrokerLoadData, settings: Settings) -> BrokerLoadData:
        """This (carried) data taking ``sample``'s raw figures as its next reporter tick, at
        ``sample.updatedAt``; ``reportedAt`` follows the sample."""
        return self._next(sample.cpu, sample.memory, sample.directMemory, sample.bandwidthIn,
                          sample.bandwidthOut, sample.msgThroughputIn, sample.msgThroughputOut,
                          sample.msgRateIn, sample.msgRateOut, sample.bundleCount, sample.topics,
                          settings, sample.updatedAt, sample.reportedAt)

    def _next(self, cpu: ResourceUsage, memory: ResourceUsage, direct: ResourceUsage,
              bw_in: ResourceUsage, bw_out: ResourceUsage, msg_throughput_in: float,
              msg_throughput_out: float, msg_rate_in: float, msg_rate_out: float,
              bundle_count: int, topics: int, settings: Settings, now: int,
              reported_at: int) -> BrokerLoadData:
        """:meth:`update` as one new object (``reportedAt`` given): the extensible cycle updates
        every broker's data, and explain projects four more cycles, so at 10,000 brokers the
        two or three ``dataclasses.replace`` copies an update used to make (each walking the
        16 fields) were most of what the projection cost (issue 30: explain at 1.52× the CPU
        of recommend with TransferShedder). The figures are the same expressions on the same
        values: :func:`_weighted_max` and :func:`_max_usage` of the new usages, then the EMAs."""
        h = float(settings["loadBalancerHistoryResourcePercentage"])
        weighted = _weighted_max(cpu, memory, direct, bw_in, bw_out, settings)
        tp = msg_throughput_in + msg_throughput_out
        first = self.updatedAt == 0
        return BrokerLoadData(
            cpu, memory, direct, bw_in, bw_out, msg_throughput_in, msg_throughput_out,
            msg_rate_in, msg_rate_out, bundle_count, topics,
            _max_usage(cpu, direct, bw_in, bw_out),
            weighted if first else self.weightedMaxEMA * h + (1 - h) * weighted,
            tp if first else self.msgThroughputEMA * h + (1 - h) * tp,
            now, reported_at,
        )

    def clear(self) -> BrokerLoadData:
        """``clear()``: back to a new object's defaults."""
        return BrokerLoadData()

    def to_string(self, settings: Settings) -> str:
        """``toString(conf)``: the one-line form Pulsar logs (and its tests assert)."""
        w_cpu, w_mem, w_dm, w_in, w_out = weights5(settings)
        return (
            f"cpu= {self.cpu.percent:.2f}%, memory= {self.memory.percent:.2f}%, "
            f"directMemory= {self.directMemory.percent:.2f}%, "
            f"bandwidthIn= {self.bandwidthIn.percent:.2f}%, "
            f"bandwidthOut= {self.bandwidthOut.percent:.2f}%, "
            f"cpuWeight= {w_cpu:f}, memoryWeight= {w_mem:f}, directMemoryWeight= {w_dm:f}, "
            f"bandwidthInResourceWeight= {w_in:f}, bandwidthOutResourceWeight= {w_out:f}, "
            f"msgThroughputIn= {self.msgThroughputIn:.2f}, "
            f"msgThroughputOut= {self.msgThroughputOut:.2f}, msgRateIn= {self.msgRateIn:.2f}, "
            f"msgRateOut= {self.msgRateOut:.2f}, bundleCount= {self.bundleCount}, "
            f"maxResourceUsage= {self.maxResourceUsage * 100:.2f}%, "
            f"weightedMaxEMA= {self.weightedMaxEMA * 100:.2f}%, "
            f"msgThroughputEMA= {self.msgThroughputEMA:.2f}, "
            f"updatedAt= {self.updatedAt}, reportedAt= {self.reportedAt}"
        )

    def resource_percents(self) -> dict[str, float]:
        return {r: getattr(self, r).percent for r in RESOURCES}

    def to_json(self) -> dict[str, Any]:
        """The JSON Pulsar publishes (field names as in the Java class)."""
        out: dict[str, Any] = {
            r: {"usage": getattr(self, r).usage, "limit": getattr(self, r).limit}
            for r in RESOURCES
        }
        for k in ("msgThroughputIn", "msgThroughputOut", "msgRateIn", "msgRateOut",
                  "bundleCount", "topics", "maxResourceUsage", "weightedMaxEMA",
                  "msgThroughputEMA", "updatedAt", "reportedAt"):
            out[k] = getattr(self, k)
        return out


# --- reading the snapshot's JSON ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PublishedLoad:
    """One broker's entry of a snapshot's ``brokerLoadData``, as the broker published it.

    ``has_features`` is False when the JSON carried no ``weightedMaxEMA`` (a hand-made report):
    the cycle then takes the sample as a first one (:func:`first_sample`). ``reconstructed`` names
    the fields a live capture rebuilt rather than read (kept through export and re-reading).
    """

    data: BrokerLoadData
    has_features: bool = True
    reconstructed: tuple[str, ...] = ()


def first_sample(data: BrokerLoadData, settings: Settings, now: int) -> BrokerLoadData:
    """Features of a report that lacks them: ``new BrokerLoadData().update(sample)`` at the
    report's ``updatedAt`` (or ``now``)."""
    at = data.updatedAt or now
    return replace(BrokerLoadData().update_from(replace(data, updatedAt=at), settings),
                   reportedAt=data.reportedAt)


def from_local_broker_data(local: LocalBrokerData, settings: Settings, now: int) -> BrokerLoadData:
    """A modular report (``LocalBrokerData``) as the extensible reporter would have sampled it:
    same resource usages, current throughputs and rates, ``numBundles`` and ``numTopics``, taken
    as a first sample (so ``weightedMaxEMA`` is the weighted max, ``msgThroughputEMA`` the
    throughput) at the report's ``lastUpdate`` (or the snapshot time)."""
    usage = SystemUsage(local.cpu, local.memory, local.directMemory, local.bandwidthIn,
                        local.bandwidthOut)
    return BrokerLoadData().update(
        usage, local.msgThroughputIn, local.msgThroughputOut, local.msgRateIn, local.msgRateOut,
        local.numBundles or len(local.lastStats), local.numTopics, settings,
        local.lastUpdate or now)


# --- top bundles ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TopBundle:
    """``TopBundlesLoadData.BundleLoadData``: a bundle and its latest stats."""

    bundleName: str
    stats: NamespaceBundleStats

    @property
    def throughput(self) -> float:
        return self.stats.msgThroughputIn + self.stats.msgThroughputOut


@dataclass(frozen=True, slots=True)
class PublishedTopBundles:
    """One broker's entry of a snapshot's ``topBundlesLoadData``: its top bundles in the published
    (ascending) order, and the fields a live capture rebuilt."""

    bundles: tuple[TopBundle, ...] = ()
    reconstructed: tuple[str, ...] = ()


#: NamespaceBundleStats' resolutions (and, before PR #24772, thresholds): throughput in and out
#: (bytes/s), message rate in + out, topics + consumers + producers, cache size (bytes)
_STEPS = (1e5, 1e5, 100.0, 500, 100000)


def _stat_keys(s: NamespaceBundleStats) -> tuple[float, float, float, int, int]:
    return (s.msgThroughputIn, s.msgThroughputOut, s.msgRateIn + s.msgRateOut,
            int_add(s.topics, s.consumerCount, s.producerCount), s.cacheSize)


def java_round(x: float) -> int:
    """``Math.round(double)``: the closest long, halves up; NaN → 0; saturating."""
    if math.isnan(x):
        return 0
    if x >= 2.0**63:
        return 2**63 - 1
    if x < -(2.0**63):
        return -(2**63)
    if abs(x) >= 2.0**52:
        return int(x)
    f = math.floor(x)
    return f + 1 if x - f >= 0.5 else f


def _sign(x: float, y: float) -> int:
    """``Long.compare``, and ``Double.compare`` where neither is NaN (callers make sure)."""
    return (x > y) - (x < y)


def compare_stats(a: NamespaceBundleStats, b: NamespaceBundleStats) -> int:
    """``NamespaceBundleStats.compareTo`` since PR #24772: throughput in, throughput out, msg rate
    in+out, topics+consumers+producers and cache size in turn, each rounded to its resolution
    first (``Math.round(v / resolution)`` for doubles, ``v / resolution`` for longs)."""
    for i, (x, y, step) in enumerate(zip(_stat_keys(a), _stat_keys(b), _STEPS, strict=True)):
        if i < 3:
            c = _sign(java_round(x / step), java_round(y / step))
        else:
            c = _sign(int(x) // int(step) if x >= 0 else -(-int(x) // int(step)),
                      int(y) // int(step) if y >= 0 else -(-int(y) // int(step)))
        if c:
            return c
    return 0


def compare_stats_threshold(a: NamespaceBundleStats, b: NamespaceBundleStats) -> int:
    """``NamespaceBundleStats.compareTo`` before PR #24772: each figure compares equal unless the
    two differ by more than its threshold (not transitive: the order ``Collections.sort`` makes
    of it depends on TimSort's steps, and it may throw; :func:`partition_sort` runs the JDK's
    algorithm, :mod:`lbctl.model.javasort`)."""
    for x, y, step in zip(_stat_keys(a), _stat_keys(b), _STEPS, strict=True):
        if abs(x - y) > step:
            return _sign(x, y)
    return 0


def partition_sort(arr: list[tuple[str, NamespaceBundleStats]], k: int,
                   compare: Callable[[NamespaceBundleStats, NamespaceBundleStats], int]) -> None:
    """``TopKBundles.partitionSort`` (TopKBundles at 028ed6295a34): a three-way quickselect that
    puts the ``k`` largest first, then ``Collections.sort`` of that prefix, descending — JDK 17's
    TimSort (:func:`~lbctl.model.javasort.java_sort`), which with the threshold comparator of the
    releases before PR #24772 gives its own order to near-ties and, from 32 bundles in the prefix
    (``loadBalancerMaxNumberOfBundlesInBundleLoadReport`` above 32), may raise
    :class:`~lbctl.model.javasort.ComparisonContractViolation` as Java throws. ``arr`` holds
    ``(key, value)`` pairs; ``compare(x, y)`` compares values."""
    start, end, target = 0, len(arr) - 1, k - 1
    while start < end:
        lo, hi, mid = start, end, start
        pivot = arr[hi][1]
        while mid <= hi:
            cmp = compare(pivot, arr[mid][1])
            if cmp < 0:
                arr[lo], arr[mid] = arr[mid], arr[lo]
                lo += 1
                mid += 1
            elif cmp > 0:
                arr[mid], arr[hi] = arr[hi], arr[mid]
                hi -= 1
            else:
                mid += 1
        if lo <= target < mid:
            end = lo
            break
        if target < lo:
            end = lo - 1
        else:
            start = mid
    def descending(x: tuple[str, NamespaceBundleStats], y: tuple[str, NamespaceBundleStats]) -> int:
        return compare(y[1], x[1])

    arr[:end] = java_sort(arr[:end], descending)


def top_k_bundles(
    bundle_stats: Iterable[tuple[str, NamespaceBundleStats]],
    k: int,
    settings: Settings,
    has_policies: Callable[[str], bool] | None = None,
) -> tuple[TopBundle, ...]:
    """``TopKBundles.update(bundleStats, k)``: drop bundles without throughput (from PR #23626,
    the ``topKSkipsZeroThroughput`` variant: ``msgThroughputIn + msgThroughputOut == 0`` in
    ``double``, so -0.0 counts as none and NaN as some), system-service namespaces, bundles with
    isolation or anti-affinity policies (unless ``loadBalancerSheddingBundlesWithPoliciesEnabled``)
    and ``loadBalancerSheddingExcludedNamespaces``; keep the ``k`` largest and return them in
    **ascending** order (smallest first). ``bundle_stats`` comes in the broker's map order.

    Before PR #23626 a bundle without traffic could fill a top-k slot and count among the
    broker's top bundles (TransferShedder leaves a broker's last top bundle in place, and a
    broker with one top bundle alone); the TopKBundles of release branches with the change
    (a stored version without PIP-380's exclusions) skip it before any other filter."""
    compare = (compare_stats if settings.profile["topKComparator"] == "resolution"
               else compare_stats_threshold)
    skip_zero = bool(settings.profile["topKSkipsZeroThroughput"])
    with_policies = bool(settings["loadBalancerSheddingBundlesWithPoliciesEnabled"])
    excluded = set(settings["loadBalancerSheddingExcludedNamespaces"])
    arr: list[tuple[str, NamespaceBundleStats]] = []
    for bundle, st in bundle_stats:
        if skip_zero and st.msgThroughputIn + st.msgThroughputOut == 0:
            continue
        ns = namespace_of(bundle)
        if is_system_service_namespace(ns):
            continue
        if not with_policies and has_policies is not None and has_policies(bundle):
            continue
        if ns in excluded:
            continue
        arr.append((bundle, st))
    if not arr:
        return ()
    k = min(k, len(arr))
    try:
        partition_sort(arr, k, compare)
    except ComparisonContractViolation:
        # update() cleared the broker's top bundles before sorting and the exception leaves
        # generateLoadData, so the broker pushes nothing new; the leader keeps its last push,
        # which lbctl does not have: none
        return ()
    return tuple(TopBundle(b, s) for b, s in reversed(arr[:k]))


# --- decisions ------------------------------------------------------------------------------------


