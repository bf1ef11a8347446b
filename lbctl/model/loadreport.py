"""The legacy ``SimpleLoadManagerImpl``'s load report (``org.apache.pulsar.policies.data.loadbalancer
.LoadReport``, ``"loadReportType": "LoadReport"``): what a broker on that load manager serves at
``/admin/v2/broker-stats/load-report``, and what ``pulsar-perf monitor-brokers`` prints for it.

Only the fields ``BrokerMonitor.printLoadReport`` and its overall table read are modelled: the
``systemResourceUsage`` (five ``ResourceUsage``), message rates, counts, bundle gains and losses,
and the resource quotas' *allocated* CPU, memory, bandwidth and message rates; ``overLoaded`` is
the broker's own verdict (``SimpleLoadManagerImpl`` sets it from its resource usage).
"""

from __future__ import annotations

from dataclasses import dataclass

from lbctl.model.load import ResourceUsage, java_max


@dataclass(frozen=True, slots=True)
class SimpleLoadReport:
    cpu: ResourceUsage = ResourceUsage()
    memory: ResourceUsage = ResourceUsage()
    directMemory: ResourceUsage = ResourceUsage()
    bandwidthIn: ResourceUsage = ResourceUsage()
    bandwidthOut: ResourceUsage = ResourceUsage()
    msgRateIn: float = 0.0
    msgRateOut: float = 0.0
    numTopics: int = 0
    numBundles: int = 0
    numConsumers: int = 0
    numProducers: int = 0
    bundleGains: int = 0
    bundleLosses: int = 0
    allocatedCPU: float = 0.0
    allocatedMemory: float = 0.0
    allocatedBandwidthIn: float = 0.0
    allocatedBandwidthOut: float = 0.0
    allocatedMsgRateIn: float = 0.0
    allocatedMsgRateOut: float = 0.0
    overLoaded: bool = False
    timestamp: int = 0

    def raw_percents(self) -> tuple[float, float, float, float, float]:
        """cpu, memory, direct memory, bandwidth in, out: ``percentUsage()`` (32-bit float)."""
        return (self.cpu.percent, self.memory.percent, self.directMemory.percent,
                self.bandwidthIn.percent, self.bandwidthOut.percent)

    def raw_max(self) -> float:
        """``Math.max`` of the five percentages (memory included, as ``BrokerMonitor`` does)."""
        return java_max(*self.raw_percents())

    def allocated_percents(self) -> tuple[float, float, float, float]:
        """Allocated CPU, memory, bandwidth in, out against the limits, as ``BrokerMonitor``'s own
        ``percentUsage``: ``100 · min(1, usage / limit)`` in double when the limit is positive and
        the usage not negative, else 0."""
        def pct(usage: float, limit: float) -> float:
            return 100 * min(1.0, usage / limit) if limit > 0 and usage >= 0 else 0.0

        return (pct(self.allocatedCPU, self.cpu.limit), pct(self.allocatedMemory, self.memory.limit),
                pct(self.allocatedBandwidthIn, self.bandwidthIn.limit),
                pct(self.allocatedBandwidthOut, self.bandwidthOut.limit))
