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
from collections.abc import Iterable, Mapping, Sequence

from msgspec import Struct

from lbctl.model.cluster import ClusterState
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats
from lbctl.records import replace
from lbctl.truth.hosts import KBIT_PER_BYTE, Host, HostUsage, Traffic, total

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
    nics = _nics(state)
    return {b: inferred_host(rep, median, idle, nics.get(b)) for b, rep in state.brokers.items()}


def _implied_nic(rep: LocalBrokerData) -> tuple[float | None, frozenset[float]]:
    """The NIC speed (Kbit/s) a report implies, and the bandwidth limit values it refutes.

    A limit below the kilobits the broker's bundles carried through it is no NIC speed: a history
    rebuilt from Prometheus has only the percentages (``pulsar_lb_bandwidth_in_usage``) and writes
    them over a limit of 100 (docs/prometheus.md, *What is lost*). The NIC is then the one at
    which the reported percentage of that traffic holds (the larger of in and out); ``None`` when
    no direction reports a percentage to scale by. Only the refuted direction's limit is returned:
    the other direction's may be a real NIC speed that other brokers report too."""
    t = traffic_of(rep.lastStats.values())
    implied: list[float] = []
    refuted: set[float] = set()
    for r, carried in ((rep.bandwidthIn, t.throughput_in), (rep.bandwidthOut, t.throughput_out)):
        kbit = carried * KBIT_PER_BYTE
        if 0 < r.limit < kbit:
            refuted.add(r.limit)
            if r.usage > 0:
                implied.append(kbit * r.limit / r.usage)
    return (max(implied) if implied else None), frozenset(refuted)


def _nics(state: ClusterState) -> dict[str, float]:
    """NIC speeds for the brokers whose reported bandwidth limits are not NIC speeds
    (:func:`_implied_nic`). Once one broker's limit is refuted, every broker reporting that same
    limit value shares its fate (one placeholder for all: a broker carrying a few kilobits does
    not refute it on its own); a broker with nothing to scale by takes the median implied NIC.
    A limit value no broker's traffic refutes is no placeholder, even on a broker whose other
    direction's limit is one."""
    seen = {b: _implied_nic(rep) for b, rep in state.brokers.items()}
    placeholders = frozenset().union(*(refuted for _, refuted in seen.values()))
    if not placeholders:
        return {}
    known = sorted(nic for nic, _ in seen.values() if nic is not None)
    median = known[len(known) // 2] if known else Host().nic_gbps * 1e6
    return {b: median if nic is None else nic for b, (nic, refuted) in seen.items()
            if refuted or {state.brokers[b].bandwidthIn.limit,
                           state.brokers[b].bandwidthOut.limit} & placeholders}


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
                  idle: float = INFERRED_IDLE, nic: float | None = None) -> Host:
    """The host a broker's report implies (module docstring); ``fallback`` is the cost factor of
    a broker carrying no traffic (which then idles at its reported CPU); ``nic`` (Kbit/s) replaces
    reported bandwidth limits that are not NIC speeds (:func:`_nics`; on its own report alone,
    :func:`_implied_nic`)."""
    base = Host()
    cores = _cores(rep)
    implied, refuted = _implied_nic(rep)
    nic_kbit = nic if nic is not None else (
        (implied if implied is not None else base.nic_gbps * 1e6) if refuted
        else max(rep.bandwidthIn.limit, rep.bandwidthOut.limit))
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


# --- choosing the truth (simulate/compare --hosts, --host-seed, --noise) -------------------------

#: the named mixes ``--hosts`` takes (anything else is a hosts file)
INFERRED, MIXED = "inferred", "mixed"
HOST_MIXES = (INFERRED, MIXED)

#: a hosts file's keys per host → (Host field, scale from the file's unit, lowest value allowed)
_FIELDS: dict[str, tuple[str, float, float]] = {
    "cores": ("cores", 1.0, 1.0),
    "nicGbps": ("nic_gbps", 1.0, 1e-9),
    "heapMB": ("heap_mb", 1.0, 1e-9),
    "directMB": ("direct_mb", 1.0, 1e-9),
    "idlePercent": ("idle_cpu", 0.01, 0.0),
    "cpuMicrosPerMessage": ("cpu_us_per_msg", 1.0, 0.0),
    "cpuMicrosPerKB": ("cpu_us_per_kb", 1.0, 0.0),
    "heapBaseMB": ("heap_base_mb", 1.0, 0.0),
    "heapMBPerTopic": ("heap_mb_per_topic", 1.0, 0.0),
    "directMBPerMBps": ("direct_mb_per_mbps", 1.0, 0.0),
    "noisePercent": ("noise", 0.01, 0.0),
}
#: the largest report noise taken (relative sd, percent): beyond it a figure is mostly noise
MAX_NOISE_PERCENT = 50.0


def host_figures(host: Host) -> dict[str, float]:
    """``host`` in a hosts file's keys and units (what ``--hosts FILE`` reads back)."""
    return {key: (host.cores if name == "cores" else getattr(host, name) / scale)
            for key, (name, scale, _) in _FIELDS.items()}


class HostSpec(Struct, frozen=True):
    """A host as a hosts file describes it: the fields it gives (Host field → value); the others
    come from the broker's inferred host (:func:`inferred_host`), so ``{cores: 32}`` is "the same
    work on 32 cores"."""

    fields: Mapping[str, float]

    def over(self, base: Host) -> Host:
        values = {f: int(v) if f == "cores" else v for f, v in self.fields.items()}
        return replace(base, **values)


class HostsFile(Struct, frozen=True):
    """A parsed hosts file: a host per broker and, optionally, one for every broker not named."""

    name: str
    brokers: Mapping[str, HostSpec]
    default: HostSpec | None = None


def _spec(value: object, where: str) -> HostSpec:
    import math

    from lbctl.errors import UsageError

    if not isinstance(value, dict):
        raise UsageError(f"{where}: expected a mapping of host figures "
                         f"({', '.join(_FIELDS)})")
    fields: dict[str, float] = {}
    for key, v in value.items():
        spec = _FIELDS.get(str(key))
        if spec is None:
            raise UsageError(f"{where}: unknown key {key!r}; expected {', '.join(_FIELDS)}")
        name, scale, low = spec
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise UsageError(f"{where}.{key}: expected a number, got {v!r}")
        if key == "cores" and v != int(v):
            raise UsageError(f"{where}.cores: expected a whole number, got {v!r}")
        if v < low or (key == "idlePercent" and v > 100) or (
                key == "noisePercent" and v > MAX_NOISE_PERCENT):
            top = {"idlePercent": " and <= 100",
                   "noisePercent": f" and <= {MAX_NOISE_PERCENT:g}"}.get(key, "")
            above = ">= 1" if key == "cores" else (">= 0" if low == 0 else "> 0")
            raise UsageError(f"{where}.{key}: must be {above}{top}, got {v!r}")
        fields[name] = float(v) * scale
    return HostSpec(fields)


def read_hosts_file(path: str) -> HostsFile:
    """A hosts file (YAML or JSON): ``brokers`` maps a broker id to its host, ``default`` (optional)
    is the host of every broker not named; a broker named in neither is inferred from its report.
    Bad input is a one-line :class:`~lbctl.errors.UsageError`."""
    from lbctl.errors import SnapshotError, UsageError
    from lbctl.safe.files import read_regular
    from lbctl.sources.snapshot_yaml import load_yaml

    data = read_regular(path, what="a hosts file (YAML or JSON)", error=UsageError)
    try:  # bounded as a YAML snapshot is: depth, aliases, no key twice
        doc = load_yaml(path, data)
    except SnapshotError as e:
        raise UsageError(f"{e} (expected a hosts file, YAML or JSON)") from None
    if not isinstance(doc, dict) or not ("brokers" in doc or "default" in doc):
        raise UsageError(f"{path}: expected a mapping with 'brokers' (broker id → host) and/or "
                         "'default'")
    unknown = sorted(str(k) for k in doc if k not in ("brokers", "default"))
    if unknown:
        raise UsageError(f"{path}: unknown key(s) {', '.join(unknown)}; expected brokers, default")
    brokers = doc.get("brokers") or {}
    if not isinstance(brokers, dict):
        raise UsageError(f"{path}: brokers: expected a mapping of broker id → host")
    default = doc.get("default")
    return HostsFile(path, {str(b): _spec(v, f"{path}: brokers[{b}]") for b, v in brokers.items()},
                     None if default is None else _spec(default, f"{path}: default"))


def mixed_hosts(state: ClusterState, seed: int, idle: float = INFERRED_IDLE) -> dict[str, Host]:
    """``--hosts mixed``: the brokers of ``state`` (in name order) on a mixed fleet
    (:func:`~lbctl.truth.hosts.mixed_fleet`: 8/16/32 cores, 2–8 % idle, per-generation costs),
    every host's per-message and per-byte costs scaled by one factor so that the fleet spends, on
    the snapshot's traffic, the CPU cores the snapshot reports in all — the cluster as loaded as
    it says, its brokers as different as real hardware is."""
    from lbctl.truth.hosts import mixed_fleet

    names = sorted(state.brokers)
    fleet = dict(zip(names, mixed_fleet(len(names), seed), strict=True))
    reported = sum(_busy(rep) for rep in state.brokers.values())
    idle_cores = sum(h.idle_cpu * h.cores for h in fleet.values())
    work = 0.0
    for b, host in fleet.items():
        t = traffic_of(state.brokers[b].lastStats.values())
        idle_free = replace(host, idle_cpu=0.0, noise=0.0)
        work += idle_free.usage(t).cpu.usage / 100
    factor = max(reported - idle_cores, 0.1 * reported) / work if work > 0 and reported > 0 \
        else 1.0
    return {b: replace(h, cpu_us_per_msg=h.cpu_us_per_msg * factor,
                       cpu_us_per_kb=h.cpu_us_per_kb * factor) for b, h in fleet.items()}


def chosen_hosts(states: Sequence[ClusterState], choice: str, seed: int = 0,
                 noise: float | None = None, idle: float = INFERRED_IDLE,
                 hosts_file: HostsFile | None = None) -> dict[str, Host] | None:
    """The hosts ``--hosts`` names for a run from ``states[0]`` (``None``: inferred, the engine's
    default, unless ``noise`` is given); ``noise`` (a fraction) replaces every host's noise. A
    broker that first appears later in the sequence gets its host from that first report."""
    from lbctl.errors import UsageError

    if choice == INFERRED and hosts_file is None and noise is None:
        return None
    first: dict[str, LocalBrokerData] = {}
    for st in states:
        for b, rep in st.brokers.items():
            first.setdefault(b, rep)
    s0 = states[0]
    inferred = inferred_hosts(s0, idle)
    for b, rep in first.items():
        if b not in inferred:
            inferred[b] = inferred_host(rep, idle=idle)
    hosts: dict[str, Host]
    if hosts_file is not None:
        missing = sorted(b for b in hosts_file.brokers if b not in first)
        if missing:
            raise UsageError(f"{hosts_file.name}: broker {missing[0]!r} is in no snapshot given"
                             + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        hosts = {}
        for b, base in inferred.items():
            spec = hosts_file.brokers.get(b, hosts_file.default)
            hosts[b] = base if spec is None else spec.over(base)
    elif choice == MIXED:
        hosts = {**inferred, **mixed_hosts(s0, seed, idle)}
    else:
        hosts = inferred
    if noise is not None:
        hosts = {b: replace(h, noise=noise) for b, h in hosts.items()}
    return hosts


def reported_by(state: ClusterState, hosts: Mapping[str, Host],
                rng: random.Random | None = None) -> ClusterState:
    """``state`` with each broker's five resources as its host reports the traffic the snapshot
    gives it (``lastUpdate``, gains and losses kept): with hosts that are not the snapshot's own
    (``--hosts mixed``, a hosts file), the leader's first view is the truth's reports too, not
    figures of other hardware. An extensible snapshot's published ``BrokerLoadData`` takes the
    same figures and becomes a first sample (its features — ``weightedMaxEMA`` — computed from
    them, as ``PublishedLoad.has_features`` False makes the cycle do), not EMAs of other hosts."""
    from types import MappingProxyType

    reports = {}
    usages: dict[str, HostUsage] = {}
    for b, rep in state.brokers.items():
        host = hosts.get(b)
        if host is None:
            reports[b] = rep
            continue
        u = usages[b] = host.usage(traffic_of(rep.lastStats.values()), rng)
        reports[b] = replace(rep, cpu=u.cpu, memory=u.memory, directMemory=u.direct_memory,
                             bandwidthIn=u.bandwidth_in, bandwidthOut=u.bandwidth_out)
    published = dict(state.broker_load_data)
    for b, pub in state.broker_load_data.items():
        got = usages.get(b)
        if got is not None:
            published[b] = replace(pub, has_features=False, data=replace(
                pub.data, cpu=got.cpu, memory=got.memory, directMemory=got.direct_memory,
                bandwidthIn=got.bandwidth_in, bandwidthOut=got.bandwidth_out))
    return replace(state, brokers=MappingProxyType(reports),
                   broker_load_data=MappingProxyType(published))
