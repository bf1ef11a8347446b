"""Hosts and the usage their traffic costs them: the truth the sandbox and the simulator report.

Why a separate model: a benchmark whose truth is the model under test proves nothing. This one
has what lbctl's linear per-broker model does not assume — mixed hardware (8/16/32 cores), an idle
usage of its own per host, per-message *and* per-byte CPU costs that differ between host
generations, a heap that grows with topics and a direct memory that grows with throughput, and
noise — and it reports usage in the units Pulsar's ``LinuxBrokerHostUsageImpl`` reports:

* CPU: ``usage`` in percent of one core summed over cores, ``limit = 100 · cores``
  (``getTotalCpuLimit``);
* bandwidth in/out: kilobits per second, ``limit`` the NIC speed in Kbit/s
  (``loadBalancerOverrideBrokerNicSpeedGbps`` when set);
* memory: the JVM heap in MB, ``limit`` the maximum heap; direct memory likewise.

Usage is *demand*, not capped at the limit: an overloaded host reports more than 100 %, so a plan
that overloads a broker is seen for what it did rather than hidden at 100 %.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from msgspec import Struct

from lbctl.model.load import ResourceUsage
from lbctl.model.wire.snapshot import NamespaceBundleStats

KBIT_PER_BYTE = 8 / 1000


class Traffic(Struct, frozen=True, gc=False):
    """What a bundle (or a broker, summed) carries: the figures ``NamespaceBundleStats`` reports."""

    msg_rate_in: float = 0.0
    msg_rate_out: float = 0.0
    throughput_in: float = 0.0  # bytes/s
    throughput_out: float = 0.0  # bytes/s
    topics: int = 0
    producers: int = 0
    consumers: int = 0

    def scaled(self, factor: float) -> Traffic:
        """The same traffic ``factor`` times as strong (a diurnal wave, a burst); counts kept."""
        return Traffic(self.msg_rate_in * factor, self.msg_rate_out * factor,
                       self.throughput_in * factor, self.throughput_out * factor,
                       self.topics, self.producers, self.consumers)

    def stats(self) -> NamespaceBundleStats:
        """The bundle's ``NamespaceBundleStats`` as its owner would report it."""
        return NamespaceBundleStats(
            msgRateIn=self.msg_rate_in, msgThroughputIn=self.throughput_in,
            msgRateOut=self.msg_rate_out, msgThroughputOut=self.throughput_out,
            consumerCount=self.consumers, producerCount=self.producers, topics=self.topics)


def total(items: Iterable[Traffic]) -> Traffic:
    """The sum of several bundles' traffic (what their owner carries)."""
    ri = ro = ti = to = 0.0
    topics = producers = consumers = 0
    for t in items:
        ri += t.msg_rate_in
        ro += t.msg_rate_out
        ti += t.throughput_in
        to += t.throughput_out
        topics += t.topics
        producers += t.producers
        consumers += t.consumers
    return Traffic(ri, ro, ti, to, topics, producers, consumers)


class Host(Struct, frozen=True, gc=False):
    """One broker's hardware and what work costs on it (the truth, not lbctl's calibration)."""

    cores: int = 8
    nic_gbps: float = 10.0
    heap_mb: float = 8192.0
    direct_mb: float = 4096.0
    #: fraction of all cores busy with no traffic (GC, ZooKeeper sessions, the JVM)
    idle_cpu: float = 0.04
    #: CPU microseconds per message, in or out
    cpu_us_per_msg: float = 25.0
    #: CPU microseconds per kilobyte, in or out
    cpu_us_per_kb: float = 3.0
    heap_base_mb: float = 1024.0
    heap_mb_per_topic: float = 0.5
    #: direct memory (MB) per MB/s of throughput, in and out
    direct_mb_per_mbps: float = 4.0
    #: relative standard deviation of each reported figure
    noise: float = 0.02

    def usage(self, traffic: Traffic, rng: random.Random | None = None) -> HostUsage:
        """What the broker reports for ``traffic``; ``rng`` adds the host's noise (none when None)."""

        def jitter(x: float) -> float:
            if rng is None or self.noise <= 0 or x == 0:
                return x
            return max(0.0, x * rng.gauss(1.0, self.noise))

        msgs = traffic.msg_rate_in + traffic.msg_rate_out
        kbytes = (traffic.throughput_in + traffic.throughput_out) / 1024
        busy_cores = (self.idle_cpu * self.cores
                      + msgs * self.cpu_us_per_msg / 1e6 + kbytes * self.cpu_us_per_kb / 1e6)
        nic_kbit = self.nic_gbps * 1e6
        mbps = (traffic.throughput_in + traffic.throughput_out) / 1e6
        return HostUsage(
            cpu=ResourceUsage(jitter(100.0 * busy_cores), 100.0 * self.cores),
            memory=ResourceUsage(jitter(self.heap_base_mb + self.heap_mb_per_topic * traffic.topics),
                                 self.heap_mb),
            direct_memory=ResourceUsage(jitter(64.0 + self.direct_mb_per_mbps * mbps), self.direct_mb),
            bandwidth_in=ResourceUsage(jitter(traffic.throughput_in * KBIT_PER_BYTE), nic_kbit),
            bandwidth_out=ResourceUsage(jitter(traffic.throughput_out * KBIT_PER_BYTE), nic_kbit),
        )


class HostUsage(Struct, frozen=True, gc=False):
    """A broker's five reported resources (``LocalBrokerData``'s cpu, memory, directMemory,
    bandwidthIn, bandwidthOut)."""

    cpu: ResourceUsage
    memory: ResourceUsage
    direct_memory: ResourceUsage
    bandwidth_in: ResourceUsage
    bandwidth_out: ResourceUsage


#: host generations of a mixed fleet: (cores, NIC Gbps, heap MB, CPU µs per message, per KB)
_GENERATIONS = ((8, 10.0, 8192.0, 30.0, 3.5), (16, 10.0, 16384.0, 22.0, 2.5),
                (32, 25.0, 32768.0, 16.0, 1.8))


def mixed_fleet(n: int, seed: int) -> list[Host]:
    """``n`` hosts of mixed generations (8/16/32 cores) with 2–8 % idle usage, reproducible by seed.

    Each host's costs vary ±15 % around its generation's (firmware, neighbours, JVM flags), so no
    two brokers cost exactly the same even on equal hardware.
    """
    rng = random.Random(seed)
    hosts = []
    for _ in range(n):
        cores, nic, heap, per_msg, per_kb = rng.choice(_GENERATIONS)
        hosts.append(Host(cores=cores, nic_gbps=nic, heap_mb=heap, direct_mb=heap / 2,
                          idle_cpu=rng.uniform(0.02, 0.08),
                          cpu_us_per_msg=per_msg * rng.uniform(0.85, 1.15),
                          cpu_us_per_kb=per_kb * rng.uniform(0.85, 1.15)))
    return hosts


def uniform_fleet(n: int, host: Host | None = None) -> list[Host]:
    """``n`` identical hosts (the default host unless given): a homogeneous cluster."""
    return [host or Host()] * n
