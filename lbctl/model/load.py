"""Broker and bundle load, with Pulsar's arithmetic.

Mirrors ``org.apache.pulsar.policies.data.loadbalancer.ResourceUsage``, ``LocalBrokerData``,
``NamespaceBundleStats``, ``TimeAverageMessageData``, ``BundleData`` and
``TimeAverageBrokerData``. Everything here is an immutable value; updates return new values.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from lbctl.model.wire.snapshot import NamespaceBundleStats as NamespaceBundleStats  # one record
from lbctl.records import replace

_F32 = struct.Struct("<f")

#: ModularLoadManagerImpl.NUM_SHORT_SAMPLES / NUM_LONG_SAMPLES
NUM_SHORT_SAMPLES = 10
NUM_LONG_SAMPLES = 1000
#: ModularLoadManagerImpl.DEFAULT_MESSAGE_RATE (msg/s) and DEFAULT_MESSAGE_THROUGHPUT (bytes/s)
DEFAULT_MESSAGE_RATE = 50.0
DEFAULT_MESSAGE_THROUGHPUT = 50000.0


def f32(x: float) -> float:
    """Round a double to the nearest Java ``float`` (IEEE binary32), saturating to ±infinity."""
    try:
        return float(_F32.unpack(_F32.pack(x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def java_max(*values: float) -> float:
    """``LocalBrokerData.max``: start at -inf and keep a value only if it is strictly greater.

    NaN therefore never wins, and all-NaN gives -inf.
    """
    best = -math.inf
    for v in values:
        if v > best:
            best = v
    return best


@dataclass(frozen=True, slots=True)
class ResourceUsage:
    """A ``{usage, limit}`` pair; ``percent`` is computed in 32-bit float exactly as Pulsar does."""

    usage: float = 0.0
    limit: float = 0.0

    @property
    def percent(self) -> float:
        """``ResourceUsage.percentUsage()``: ``(float)usage / (float)limit * 100f``; limit <= 0 → 0.

        Both operands are rounded to float before the division and the product is a float too;
        products and quotients of two floats are exact in double before that final rounding, so
        rounding each step with :func:`f32` reproduces Java bit for bit. No clamping: a usage over
        its limit gives more than 100 %. A zero usage is not memoised: ``0.0 == -0.0`` as a
        key, and Java's ``-0.0f / limit * 100f`` is ``-0.0``, so the memo would hand back the sign
        of whichever zero came first in the process.
        """
        u = self.usage
        return _percent_usage(u, self.limit) if u else _percent_of(u, self.limit)


def trim_percent_memo(keep: int = 4096) -> None:
    """Forget the memoised percentages (:func:`_percent_usage`) when more than ``keep`` are held.
    A long replay sees new figures every cycle, and the memo, sized for one cycle of 10,000+
    brokers, would grow to its bound (65,536 entries, about 10 MB) over thousands of snapshots;
    a streamed replay calls this between cycles so that its memory stays flat (issue 30). The
    values are a pure function of their arguments: forgetting them changes no figure."""
    if _percent_usage.cache_info().currsize > keep:
        _percent_usage.cache_clear()
    if len(_WEIGHTED) > keep:
        _WEIGHTED.clear()


def _percent_of(usage: float, limit: float) -> float:
    """``ResourceUsage.percentUsage()`` of a usage and its limit (:attr:`ResourceUsage.percent`)."""
    p = 0.0
    if limit > 0:
        num, den = f32(usage), f32(limit)
        if den == 0.0:
            p = math.nan if num == 0.0 else math.copysign(math.inf, num)
        else:
            p = f32(num / den)
    return f32(p * 100.0)


#: memoised: brokers' usages are read many times per cycle (every placement scores them). The
#: size holds the five resources of 10,000+ brokers: a smaller cache thrashes on such a cycle.
_percent_usage = lru_cache(maxsize=1 << 16)(_percent_of)

#: :meth:`LocalBrokerData.max_resource_usage_with_weight` by (the report's id, the weights) →
#: (the report, kept so that its id is not reused, its usage). A cycle over 10,000 brokers asks
#: for each broker's usage three or four times with the same weights (the shedder, each
#: placement's scores and overload check, the plan's rows): 3 µs each time, 0.1 CPU-s at
#: 1,000,000 bundles (issue 30, item 5). Reports are frozen, so a report and its weights give
#: one value; cleared when full, and by :func:`trim_percent_memo` between a replay's cycles.
_WEIGHTED: dict[tuple[int, float, float, float, float, float | None],
                tuple[LocalBrokerData, float]] = {}
_WEIGHTED_SIZE = 1 << 16


DEFAULT_BUNDLE_STATS = NamespaceBundleStats(
    msgRateIn=DEFAULT_MESSAGE_RATE,
    msgThroughputIn=DEFAULT_MESSAGE_THROUGHPUT,
    msgRateOut=DEFAULT_MESSAGE_RATE,
    msgThroughputOut=DEFAULT_MESSAGE_THROUGHPUT,
)
"""``ModularLoadManagerImpl.defaultStats``: what a never-seen bundle is assumed to carry."""


_NO_STATS: Mapping[str, NamespaceBundleStats] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class LocalBrokerData:
    """A broker's load report (``LocalBrokerData``), as ``/admin/v2/broker-stats/load-report`` gives it.

    ``bundles`` keeps the report's order; ``lastStats`` maps full bundle name → stats.
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
    numTopics: int = 0
    numBundles: int = 0
    numConsumers: int = 0
    numProducers: int = 0
    bundles: tuple[str, ...] = ()
    lastBundleGains: tuple[str, ...] = ()
    lastBundleLosses: tuple[str, ...] = ()
    lastStats: Mapping[str, NamespaceBundleStats] = field(default_factory=lambda: _NO_STATS)
    lastUpdate: int = 0
    brokerVersionString: str | None = None
    persistentTopicsEnabled: bool = True
    nonPersistentTopicsEnabled: bool = True
    #: the broker's configured load manager (``BrokerLoadManagerClassFilter``); ``None`` when the
    #: report does not say (brokers older than the field, or a hand-made snapshot)
    loadManagerClassName: str | None = None

    # --- LocalBrokerData.getMaxResourceUsage* ---------------------------------------------
    def max_resource_usage(self) -> float:
        """``getMaxResourceUsage()``: max of cpu, direct memory, bandwidth in/out percent / 100.

        JVM heap memory is excluded, as in current Pulsar (``LocalBrokerDataTest`` "skips memory").
        """
        return (
            java_max(
                self.cpu.percent,
                self.directMemory.percent,
                self.bandwidthIn.percent,
                self.bandwidthOut.percent,
            )
            / 100
        )

    def max_resource_usage_with_weight(
        self,
        cpu_weight: float,
        direct_memory_weight: float,
        bandwidth_in_weight: float,
        bandwidth_out_weight: float,
        memory_weight: float | None = None,
    ) -> float:
        """``getMaxResourceUsageWithWeight``: the max of each percent times its weight, / 100.

        The 4-argument form (cpu, direct memory, bandwidth in, bandwidth out) is the current API;
        passing ``memory_weight`` gives the deprecated 5-argument form that also weighs JVM heap.
        """
        # a weight of -0.0 is not memoised: it is one key with 0.0, but a percent times -0.0
        # is -0.0, and java_max keeps the sign of the first zero it meets
        memo = ((cpu_weight or math.copysign(1.0, cpu_weight) > 0)
                and (direct_memory_weight or math.copysign(1.0, direct_memory_weight) > 0)
                and (bandwidth_in_weight or math.copysign(1.0, bandwidth_in_weight) > 0)
                and (bandwidth_out_weight or math.copysign(1.0, bandwidth_out_weight) > 0)
                and (memory_weight is None or memory_weight
                     or math.copysign(1.0, memory_weight) > 0))
        key = (id(self), cpu_weight, direct_memory_weight, bandwidth_in_weight,
               bandwidth_out_weight, memory_weight)
        if memo:
            hit = _WEIGHTED.get(key)
            if hit is not None and hit[0] is self:
                return hit[1]
        terms = [
            self.cpu.percent * cpu_weight,
            self.directMemory.percent * direct_memory_weight,
            self.bandwidthIn.percent * bandwidth_in_weight,
            self.bandwidthOut.percent * bandwidth_out_weight,
        ]
        if memory_weight is not None:
            terms.insert(1, self.memory.percent * memory_weight)
        value = java_max(*terms) / 100
        if memo:
            if len(_WEIGHTED) >= _WEIGHTED_SIZE:
                _WEIGHTED.clear()
            _WEIGHTED[key] = (self, value)
        return value

    def resource_percents(self) -> dict[str, float]:
        """The five resource percentages, in Pulsar's order."""
        return {
            "cpu": self.cpu.percent,
            "memory": self.memory.percent,
            "directMemory": self.directMemory.percent,
            "bandwidthIn": self.bandwidthIn.percent,
            "bandwidthOut": self.bandwidthOut.percent,
        }

    @property
    def msg_rate(self) -> float:
        return self.msgRateIn + self.msgRateOut

    @property
    def throughput(self) -> float:
        return self.msgThroughputIn + self.msgThroughputOut

    def with_stats(self, stats: Mapping[str, NamespaceBundleStats]) -> LocalBrokerData:
        """``LocalBrokerData.update(systemResourceUsage, bundleStats)`` for the message part:
        aggregates are re-summed from ``stats`` and gains/losses computed against ``bundles``."""
        old = set(self.bundles)
        new = tuple(stats)
        # A plain left-to-right loop, as Java adds: Python 3.12's sum() of floats compensates
        # rounding errors and would differ from Java in the last bits.
        rin = rout = tin = tout = 0.0
        topics = consumers = producers = 0
        for s in stats.values():
            rin += s.msgRateIn
            rout += s.msgRateOut
            tin += s.msgThroughputIn
            tout += s.msgThroughputOut
            topics += s.topics
            consumers += s.consumerCount
            producers += s.producerCount
        return replace(
            self,
            lastStats=MappingProxyType(dict(stats)),
            bundles=new,
            numBundles=len(new),
            msgRateIn=rin,
            msgRateOut=rout,
            msgThroughputIn=tin,
            msgThroughputOut=tout,
            numTopics=topics,
            numConsumers=consumers,
            numProducers=producers,
            lastBundleGains=tuple(b for b in new if b not in old),
            lastBundleLosses=tuple(b for b in self.bundles if b not in stats),
        )


class ResourcePercents(Mapping[str, float]):
    """A report's :meth:`LocalBrokerData.resource_percents`, computed when first read: a plan
    keeps one per broker row, but only an explained plan (or a usage that is NaN) reads it, and
    computing the five percentages of 10,000 brokers up front cost 0.03 CPU-s of a 1,000,000-bundle
    ``recommend`` (issue 30, item 5). The report is frozen: the same figures whenever read."""

    __slots__ = ("_local", "_values")

    def __init__(self, local: LocalBrokerData) -> None:
        self._local = local
        self._values: dict[str, float] | None = None

    def _percents(self) -> dict[str, float]:
        if self._values is None:
            self._values = self._local.resource_percents()
        return self._values

    def __getitem__(self, key: str) -> float:
        return self._percents()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._percents())

    def __len__(self) -> int:
        return len(self._percents())

    def __repr__(self) -> str:
        return repr(self._percents())


@dataclass(frozen=True, slots=True)
class TimeAverageMessageData:
    """A windowed average of a bundle's rates (``TimeAverageMessageData``).

    ``update`` follows Pulsar's rule ``x = ((n - 1) * x + new) / n`` with ``n = min(n + 1, max)``:
    an exact mean until the window is full, an exponential average with weight ``1/max`` after, and
    the first sample overwrites the defaults.
    """

    maxSamples: int
    numSamples: int = 0
    msgThroughputIn: float = 0.0
    msgThroughputOut: float = 0.0
    msgRateIn: float = 0.0
    msgRateOut: float = 0.0

    @classmethod
    def with_defaults(
        cls, max_samples: int, defaults: NamespaceBundleStats = DEFAULT_BUNDLE_STATS
    ) -> TimeAverageMessageData:
        return cls(
            max_samples,
            0,
            defaults.msgThroughputIn,
            defaults.msgThroughputOut,
            defaults.msgRateIn,
            defaults.msgRateOut,
        )

    def update(self, stats: NamespaceBundleStats) -> TimeAverageMessageData:
        n = min(self.numSamples + 1, self.maxSamples)

        def upd(old: float, new: float) -> float:
            return ((n - 1) * old + new) / n

        return TimeAverageMessageData(
            self.maxSamples,
            n,
            upd(self.msgThroughputIn, stats.msgThroughputIn),
            upd(self.msgThroughputOut, stats.msgThroughputOut),
            upd(self.msgRateIn, stats.msgRateIn),
            upd(self.msgRateOut, stats.msgRateOut),
        )

    @property
    def msg_rate(self) -> float:
        return self.msgRateIn + self.msgRateOut

    @property
    def throughput(self) -> float:
        return self.msgThroughputIn + self.msgThroughputOut


@dataclass(frozen=True, slots=True)
class BundleData:
    """A bundle's short-term (10 samples) and long-term (1000 samples) averages (``BundleData``)."""

    shortTermData: TimeAverageMessageData
    longTermData: TimeAverageMessageData
    topics: int = 0

    @classmethod
    def new(
        cls,
        short_samples: int = NUM_SHORT_SAMPLES,
        long_samples: int = NUM_LONG_SAMPLES,
        defaults: NamespaceBundleStats = DEFAULT_BUNDLE_STATS,
    ) -> BundleData:
        """``new BundleData(10, 1000, defaultStats)``: no samples yet, default figures."""
        return cls(
            TimeAverageMessageData.with_defaults(short_samples, defaults),
            TimeAverageMessageData.with_defaults(long_samples, defaults),
        )

    @classmethod
    def first_sample(
        cls,
        stats: NamespaceBundleStats,
        short_samples: int = NUM_SHORT_SAMPLES,
        long_samples: int = NUM_LONG_SAMPLES,
    ) -> BundleData:
        """``new BundleData(10, 1000, defaultStats).update(stats)`` in one step: the first sample
        overwrites the defaults, so both windows hold exactly ``stats`` with one sample."""
        tin, tout = stats.msgThroughputIn, stats.msgThroughputOut
        rin, rout = stats.msgRateIn, stats.msgRateOut
        return cls(
            TimeAverageMessageData(short_samples, 1, tin, tout, rin, rout),
            TimeAverageMessageData(long_samples, 1, tin, tout, rin, rout),
            stats.topics,
        )

    def update(self, stats: NamespaceBundleStats) -> BundleData:
        """``BundleData.update(stats)``: both windows take the sample; topics = stats.topics."""
        return BundleData(
            self.shortTermData.update(stats), self.longTermData.update(stats), stats.topics
        )


@dataclass(frozen=True, slots=True)
class TimeAverageBrokerData:
    """Sums of a broker's bundles' averages (``TimeAverageBrokerData.reset``)."""

    shortTermMsgThroughputIn: float = 0.0
    shortTermMsgThroughputOut: float = 0.0
    shortTermMsgRateIn: float = 0.0
    shortTermMsgRateOut: float = 0.0
    longTermMsgThroughputIn: float = 0.0
    longTermMsgThroughputOut: float = 0.0
    longTermMsgRateIn: float = 0.0
    longTermMsgRateOut: float = 0.0

    @classmethod
    def of(
        cls,
        bundles: Iterable[str],
        bundle_data: Mapping[str, BundleData],
        defaults: NamespaceBundleStats = DEFAULT_BUNDLE_STATS,
    ) -> TimeAverageBrokerData:
        """A bundle with no ``BundleData`` contributes the default stats to both windows."""
        s_tin = s_tout = s_rin = s_rout = 0.0
        l_tin = l_tout = l_rin = l_rout = 0.0
        for b in bundles:
            data = bundle_data.get(b)
            # NamespaceBundleStats and TimeAverageMessageData share the four field names.
            st: NamespaceBundleStats | TimeAverageMessageData = defaults
            lt: NamespaceBundleStats | TimeAverageMessageData = defaults
            if data is not None:
                st, lt = data.shortTermData, data.longTermData
            s_tin += st.msgThroughputIn
            s_tout += st.msgThroughputOut
            s_rin += st.msgRateIn
            s_rout += st.msgRateOut
            l_tin += lt.msgThroughputIn
            l_tout += lt.msgThroughputOut
            l_rin += lt.msgRateIn
            l_rout += lt.msgRateOut
        return cls(s_tin, s_tout, s_rin, s_rout, l_tin, l_tout, l_rin, l_rout)
