"""The simulator's truth: brokers' reports computed by :mod:`lbctl.truth` hosts, not by lbctl's model.

A simulation whose truth is the planner's own load model proves nothing about the planner ("usage
after lands exactly" by construction). With hosts, each broker's report is what its
:class:`~lbctl.truth.hosts.Host` says the traffic it carries costs it — mixed hardware, per-message
and per-byte CPU costs, idle usage, noise — in the units Pulsar's ``LinuxBrokerHostUsageImpl``
reports; lbctl's planner only sees those reports and has to learn the hosts from them.

:func:`hosts_from_limits` infers hosts from a snapshot when none are given: cores, NIC and heap
from each broker's reported limits, and per-message/per-byte costs (in the default host's
proportion) and direct memory scaled so that the host reproduces the broker's reported CPU and
direct memory on the traffic it reports — a different shape of model from lbctl's (no fleet fit,
no per-broker slope), which agrees with it only on the snapshot itself.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from lbctl.model.cluster import ClusterState
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats
from lbctl.records import replace
from lbctl.truth.hosts import Host, Traffic, total

#: the idle share of a host's cores inferred from a snapshot (at most the broker's reported CPU)
INFERRED_IDLE = 0.04


def traffic_of(stats: Iterable[NamespaceBundleStats]) -> Traffic:
    """What a broker carries, from its bundles' stats."""
    return total(Traffic(s.msgRateIn, s.msgRateOut, s.msgThroughputIn, s.msgThroughputOut,
                         s.topics, s.producerCount, s.consumerCount) for s in stats)


def host_report(host: Host, previous: LocalBrokerData,
                stats: Mapping[str, NamespaceBundleStats],
                rng: random.Random | None = None) -> LocalBrokerData:
    """The report a broker on ``host`` computes carrying ``stats``: the message part as
    ``LocalBrokerData.update`` (relative to ``previous``, the last report written), the five
    resources from the host. ``lastUpdate`` is left to the report-update rule."""
    new = previous.with_stats(stats)
    u = host.usage(traffic_of(stats.values()), rng)
    return replace(new, cpu=u.cpu, memory=u.memory, directMemory=u.direct_memory,
                   bandwidthIn=u.bandwidth_in, bandwidthOut=u.bandwidth_out)


def hosts_from_limits(state: ClusterState) -> dict[str, Host]:
    """A host per broker of ``state``, inferred from its report (module docstring)."""
    return {b: _inferred(rep) for b, rep in state.brokers.items()}


def _inferred(rep: LocalBrokerData) -> Host:
    base = Host()
    cores = max(1, round(rep.cpu.limit / 100)) if rep.cpu.limit > 0 else base.cores
    nic_kbit = max(rep.bandwidthIn.limit, rep.bandwidthOut.limit)
    nic = nic_kbit / 1e6 if nic_kbit > 0 else base.nic_gbps
    heap = rep.memory.limit if rep.memory.limit > 0 else base.heap_mb
    direct = rep.directMemory.limit if rep.directMemory.limit > 0 else base.direct_mb
    t = traffic_of(rep.lastStats.values())
    busy = max(0.0, rep.cpu.usage / 100) if rep.cpu.limit > 0 else base.idle_cpu * cores
    idle = min(INFERRED_IDLE, busy / cores)
    msgs = t.msg_rate_in + t.msg_rate_out
    kbytes = (t.throughput_in + t.throughput_out) / 1024
    work = (msgs * base.cpu_us_per_msg + kbytes * base.cpu_us_per_kb) / 1e6  # cores, default host
    factor = (busy - idle * cores) / work if work > 0 else 1.0
    mbps = (t.throughput_in + t.throughput_out) / 1e6
    per_mbps = max(0.0, rep.directMemory.usage - 64.0) / mbps if mbps > 0 \
        and rep.directMemory.limit > 0 else base.direct_mb_per_mbps
    return Host(cores=cores, nic_gbps=nic, heap_mb=heap, direct_mb=direct, idle_cpu=idle,
                cpu_us_per_msg=base.cpu_us_per_msg * factor,
                cpu_us_per_kb=base.cpu_us_per_kb * factor,
                direct_mb_per_mbps=per_mbps, noise=0.0)


def cluster_on_hosts(name: str, at: int, hosts: Mapping[str, Host],
                     owned: Mapping[str, Mapping[str, NamespaceBundleStats]],
                     rng: random.Random | None = None) -> ClusterState:
    """A modular snapshot of brokers on ``hosts`` carrying ``owned[broker]`` (bundle → stats),
    every report written at ``at`` (epoch ms): what the benchmarks and tests plan on."""
    from types import MappingProxyType

    reports = {}
    for b, host in hosts.items():
        stats = owned.get(b, {})
        rep = host_report(host, LocalBrokerData(), stats, rng)
        reports[b] = replace(rep, lastUpdate=at, lastBundleGains=(), lastBundleLosses=())
    return ClusterState(cluster=name, captured_at=at, brokers=MappingProxyType(reports))
