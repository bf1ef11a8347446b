"""The simulator's truth: brokers' reports computed by :mod:`lbctl.truth` hosts, not by lbctl's model.

A simulation whose truth is the planner's own load model proves nothing about the planner ("usage
after lands exactly" by construction). With hosts, each broker's report is what its
:class:`~lbctl.truth.hosts.Host` says the traffic it carries costs it — mixed hardware, per-message
and per-byte CPU costs, idle usage, noise — in the units Pulsar's ``LinuxBrokerHostUsageImpl``
reports; lbctl's planner only sees those reports and has to learn the hosts from them.

:func:`inferred_hosts` infers hosts from a snapshot when none are given: cores, NIC and heap
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

#: the idle share of a host's cores inferred from a snapshot: one report cannot tell idle usage
#: from the cost of traffic, so an inferred host's CPU is all traffic (a proportional cluster stays
#: proportional, as Pulsar's published scenarios assume); give hosts to simulate idle usage
INFERRED_IDLE = 0.0


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


def inferred_hosts(state: ClusterState, idle: float = INFERRED_IDLE) -> dict[str, Host]:
    """A host per broker of ``state``, inferred from its report (module docstring), idling at
    ``idle`` of its cores (``simulate --idle-usage``; at most its reported CPU); a broker carrying
    no traffic idles at its reported CPU, with the median cost factor of the others."""
    factors = sorted(f for rep in state.brokers.values()
                     if (f := _factor(rep, idle)) is not None)
    median = factors[len(factors) // 2] if factors else 1.0
    return {b: inferred_host(rep, median, idle) for b, rep in state.brokers.items()}


def _busy(rep: LocalBrokerData) -> float:
    return max(0.0, rep.cpu.usage / 100) if rep.cpu.limit > 0 else 0.0


def _cores(rep: LocalBrokerData) -> int:
    return max(1, round(rep.cpu.limit / 100)) if rep.cpu.limit > 0 else Host().cores


def _work(t: Traffic) -> float:
    """Cores the default host spends on ``t``."""
    base = Host()
    msgs = t.msg_rate_in + t.msg_rate_out
    kbytes = (t.throughput_in + t.throughput_out) / 1024
    return (msgs * base.cpu_us_per_msg + kbytes * base.cpu_us_per_kb) / 1e6


def _idle(rep: LocalBrokerData, idle: float) -> float:
    return min(idle, _busy(rep) / _cores(rep))


def _factor(rep: LocalBrokerData, idle: float = INFERRED_IDLE) -> float | None:
    """The broker's CPU cost relative to the default host's (None: it carries nothing)."""
    work = _work(traffic_of(rep.lastStats.values()))
    if work <= 0 or rep.cpu.limit <= 0:
        return None
    return (_busy(rep) - _idle(rep, idle) * _cores(rep)) / work


def inferred_host(rep: LocalBrokerData, fallback: float = 1.0,
                  idle: float = INFERRED_IDLE) -> Host:
    """The host a broker's report implies (module docstring); ``fallback`` is the cost factor of
    a broker carrying no traffic (which then idles at its reported CPU)."""
    base = Host()
    cores = _cores(rep)
    nic_kbit = max(rep.bandwidthIn.limit, rep.bandwidthOut.limit)
    nic = nic_kbit / 1e6 if nic_kbit > 0 else base.nic_gbps
    heap = rep.memory.limit if rep.memory.limit > 0 else base.heap_mb
    direct = rep.directMemory.limit if rep.directMemory.limit > 0 else base.direct_mb
    t = traffic_of(rep.lastStats.values())
    factor = _factor(rep, idle)
    idle = _idle(rep, idle)
    if factor is None:
        factor = fallback
        idle = _busy(rep) / cores
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
