"""History without exports: snapshot sequences rebuilt from the Prometheus that scrapes Pulsar.

Every Pulsar broker publishes its load-balancing figures on ``/metrics``
(``PrometheusMetricsGenerator.generateBrokerBasicMetrics`` writes the load manager's
``getLoadBalancingMetrics()`` with ``brk_`` renamed ``pulsar_`` and a ``cluster`` label added to
each entry's dimensions). This module reads them back at every ``step`` of a time range
(:class:`lbctl.admin.prometheus.PrometheusClient`) and writes one snapshot v1 per step. The catalog
of metrics, with the Pulsar class that emits each, is :data:`CATALOG`; ``docs/prometheus.md`` lists
which field each feeds and what is lost.

* **Modular brokers** (``LocalBrokerData``): the five resource percentages
  ``pulsar_lb_{cpu,memory,directMemory,bandwidth_in,bandwidth_out}_usage``
  (``ModularLoadManagerImpl.updateLoadBalancingMetrics``: ``ResourceUsage.percentUsage()``, a
  Java ``float``). The usage/limit pairs are not exported: each is written so that Pulsar's 32-bit
  ``percentUsage`` gives the exported percentage back exactly, against the heap and direct-memory
  limits where the JVM exports them (``jvm_memory_bytes_max{area="heap"}`` /MiB and
  ``jvm_memory_direct_bytes_max`` /MiB, as ``LoadManagerShared.getSystemResourceUsage`` computes
  them), else against a limit of 100. Rates, throughputs and counts are the sums over the bundles,
  as ``LocalBrokerData.update`` makes them.
* **Bundles** (``NamespaceBundleStats`` of each broker's ``lastStats``): from the per-bundle metrics
  ``pulsar_bundle_{msg_rate_in,msg_rate_out,msg_throughput_in,msg_throughput_out,topics_count,
  consumer_count,producer_count}{bundle=…}`` (``ModularLoadManagerImpl
  .updateLoadBalancingBundlesMetrics``, with ``exposeBundlesMetricsInPrometheus=true``), else from
  the per-topic metrics ``pulsar_{rate_in,rate_out,throughput_in,throughput_out,producers_count,
  consumers_count}{topic=…}`` (``TopicStats.printTopicStats``, ``exposeTopicLevelMetricsInPrometheus``)
  summed per bundle as ``PulsarStats`` sums topic stats into bundle stats: a topic's bundle is the
  range of its namespace's boundaries holding the CRC-32 of its name (the boundaries come from a
  reference — a snapshot, or the admin API). A bundle's owner is the broker whose ``/metrics``
  carried it.
* **Extensible brokers** (``BrokerLoadData``, ``TopBundlesLoadData``): the same percentages and
  ``pulsar_lb_resource_usage{feature="max_ema"|"max"}`` (``BrokerLoadData.toMetrics``: the
  ``weightedMaxEMA`` and ``maxResourceUsage`` the broker computed), rebuilt as the live capture
  rebuilds them (:mod:`lbctl.sources.live_extensible`).
* **Observed decisions** (``observed``, :mod:`lbctl.model.observed`): the increase, between a step
  and the next, of the leader's counters ``pulsar_lb_unload_bundle_total``,
  ``pulsar_lb_unload_broker_total``, ``pulsar_lb_bundles_split_total`` (named ``*_count`` before
  Pulsar 2.11, apache/pulsar#16611; both are read) and of the extensible load manager's
  ``pulsar_lb_unload_broker_breakdown_total`` / ``pulsar_lb_bundles_split_breakdown_total``
  (``UnloadCounter``, ``SplitCounter``; the unload skip once labelled ``Balanced`` is
  ``HitCount`` since). The counters are the leader's: every broker exports its own, only the
  leader's moves, a new leader counts from its own value and a restarted broker from zero, so the
  increase is summed per series with counter resets honoured (as PromQL's ``increase`` without
  its extrapolation). Ownership changes and splits between the two steps are listed too.

Each step reads, for every series, its latest sample in ``(t − step, t]`` (``last_over_time``):
a sample is never reused at two steps, so a broker that was not scraped is *missing* at that step,
never silently carried. Missing data is marked, never filled: a broker without a sample is left
out of that snapshot and named under the snapshot's ``gaps``; a step without any sample is left
out and named under the next snapshot's ``gaps``; Prometheus' own partial-data warnings (accepted
with ``allow_partial``) are copied there too. Every rebuilt field is listed under
``"reconstructed"``, as the live extensible capture lists its own.

Sources never decide: nothing here looks at load beyond copying it.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from lbctl.errors import SnapshotError, UsageError
from lbctl.model.cluster import EXTENSIBLE, MODULAR, iso_time

if TYPE_CHECKING:
    from lbctl.admin.prometheus import PrometheusClient, Series
    from lbctl.model.cluster import ClusterState

MIB = 1024 * 1024
RECONSTRUCTED = "reconstructed"
GAPS = "gaps"
_RESOURCES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")
_RATES = ("msgRateIn", "msgThroughputIn", "msgRateOut", "msgThroughputOut")
_STAT_COUNTS = ("consumerCount", "producerCount", "topics")


@dataclass(frozen=True)
class Metric:
    """One figure lbctl reads: the field it feeds, its Prometheus names (newest first: a rename
    across Pulsar versions lists both) and extra label matchers."""

    field: str
    names: tuple[str, ...]
    matchers: str = ""
    source: str = ""  # the Pulsar class that emits it


#: every metric read, by group (docs/prometheus.md is this table in prose)
CATALOG: dict[str, tuple[Metric, ...]] = {
    "resources": tuple(Metric(r, (n,), source="ModularLoadManagerImpl / BrokerLoadData.toMetrics")
                       for r, n in zip(_RESOURCES, (
                           "pulsar_lb_cpu_usage", "pulsar_lb_memory_usage",
                           "pulsar_lb_directMemory_usage", "pulsar_lb_bandwidth_in_usage",
                           "pulsar_lb_bandwidth_out_usage"), strict=True)),
    "features": (
        Metric("weightedMaxEMA", ("pulsar_lb_resource_usage",), 'feature="max_ema"',
               "BrokerLoadData.toMetrics"),
        Metric("maxResourceUsage", ("pulsar_lb_resource_usage",), 'feature="max"',
               "BrokerLoadData.toMetrics"),
    ),
    "limits": (
        Metric("memory", ("jvm_memory_bytes_max",), 'area="heap"', "hotspot MemoryPoolsExports"),
        Metric("directMemory", ("jvm_memory_direct_bytes_max",), "",
               "PrometheusMetricsGenerator"),
    ),
    "bundles": tuple(Metric(f, (n,), source="ModularLoadManagerImpl.updateLoadBalancingBundlesMetrics")
                     for f, n in (
                         ("msgRateIn", "pulsar_bundle_msg_rate_in"),
                         ("msgRateOut", "pulsar_bundle_msg_rate_out"),
                         ("msgThroughputIn", "pulsar_bundle_msg_throughput_in"),
                         ("msgThroughputOut", "pulsar_bundle_msg_throughput_out"),
                         ("topics", "pulsar_bundle_topics_count"),
                         ("consumerCount", "pulsar_bundle_consumer_count"),
                         ("producerCount", "pulsar_bundle_producer_count"))),
    "topics": tuple(Metric(f, (n,), 'topic!=""', "TopicStats.printTopicStats")
                    for f, n in (
                        ("msgRateIn", "pulsar_rate_in"), ("msgRateOut", "pulsar_rate_out"),
                        ("msgThroughputIn", "pulsar_throughput_in"),
                        ("msgThroughputOut", "pulsar_throughput_out"),
                        ("producerCount", "pulsar_producers_count"),
                        ("consumerCount", "pulsar_consumers_count"))),
    "counters": (
        Metric("unloadedBundles", ("pulsar_lb_unload_bundle_total", "pulsar_lb_unload_bundle_count"),
               source="ModularLoadManagerImpl.updateBundleUnloadingMetrics / UnloadCounter"),
        Metric("unloadedBrokers", ("pulsar_lb_unload_broker_total", "pulsar_lb_unload_broker_count"),
               source="ModularLoadManagerImpl.updateBundleUnloadingMetrics / UnloadCounter"),
        Metric("splitBundles", ("pulsar_lb_bundles_split_total", "pulsar_lb_bundles_split_count"),
               source="ModularLoadManagerImpl.updateBundleSplitMetrics / SplitCounter"),
    ),
    "breakdowns": (
        Metric("unloadBreakdown", ("pulsar_lb_unload_broker_breakdown_total",),
               source="UnloadCounter"),
        Metric("splitBreakdown", ("pulsar_lb_bundles_split_breakdown_total",),
               source="SplitCounter"),
    ),
}
#: older releases labelled the hit-count skip of an unload ``Balanced`` (now ``HitCount``)
_RENAMED_REASONS = {("unloadBreakdown", "Skip/Balanced"): "Skip/HitCount"}


# ---- time and durations --------------------------------------------------------------------------
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000,
            "w": 604_800_000, "y": 31_536_000_000}


def parse_duration(text: str, what: str = "duration") -> int:
    """Prometheus' durations (``90s``, ``1m``, ``1h30m``, ``7d``; a bare number is seconds) → ms."""
    s = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", s):
        ms = round(float(s) * 1000)
    else:
        pos, ms = 0, 0
        for m in _DURATION.finditer(s):
            if m.start() != pos:
                break
            ms += round(float(m.group(1)) * _UNIT_MS[m.group(2)])
            pos = m.end()
        if pos != len(s) or not s:
            raise UsageError(f"bad {what} {text!r}: expected e.g. 30s, 1m, 2h, 7d")
    if ms <= 0:
        raise UsageError(f"bad {what} {text!r}: must be more than zero")
    return ms


def parse_time(text: str, what: str = "time") -> int:
    """RFC 3339 (``2026-03-01T10:00:00Z``, an offset required) or Unix seconds → epoch ms."""
    s = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", s):
        return round(float(s) * 1000)
    try:
        dt = datetime.fromisoformat(s.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        dt = None
    if dt is None or dt.tzinfo is None:
        raise UsageError(f"bad {what} {text!r}: expected RFC 3339 with an offset "
                         "(2026-03-01T10:00:00Z) or Unix seconds")
    return round(dt.astimezone(UTC).timestamp() * 1000)


# ---- what to read ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reference:
    """Bundle boundaries (namespace → positions) and settings of the cluster, from a snapshot or
    the admin API: topic metrics need the boundaries; the settings go into every snapshot."""

    namespaces: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""

    @classmethod
    def of(cls, state: ClusterState, origin: str) -> Reference:
        return cls(dict(state.namespaces), dict(state.config), origin)


@dataclass(frozen=True)
class HistoryRequest:
    start_ms: int
    end_ms: int
    step_ms: int = 60_000
    cluster: str | None = None
    reference: Reference | None = None

    def __post_init__(self) -> None:
        if self.end_ms < self.start_ms:
            raise UsageError(f"the end ({iso_time(max(self.end_ms, 0))}) is before the start "
                             f"({iso_time(max(self.start_ms, 0))})")
        if self.step_ms <= 0:
            raise UsageError("--step must be more than zero")


@dataclass
class Layout:
    """What Prometheus holds for the cluster, found with ``/api/v1/series`` before any sample is
    read: the metric names present and how many series each has."""

    cluster: str
    load_manager: str
    bundles_from: str  # "bundles" or "topics"
    names: dict[str, list[str]]  # Metric.field/group key → names present
    series: dict[str, int]  # name → series count
    max_series: int = 1


@dataclass
class Report:
    """What the build saw: snapshots written, gaps, warnings (one line each)."""

    snapshots: int = 0
    steps: int = 0
    empty_steps: int = 0
    broker_gaps: dict[str, int] = field(default_factory=dict)  # broker → steps missing
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = list(dict.fromkeys(self.warnings))
        if self.empty_steps:
            out.append(f"{self.empty_steps} of {self.steps} step(s) had no sample at all and "
                       "were left out (marked under the next snapshot's \"gaps\")")
        if self.broker_gaps:
            worst = sorted(self.broker_gaps.items(), key=lambda kv: (-kv[1], kv[0]))
            shown = ", ".join(f"{b} at {n} step(s)" for b, n in worst[:5])
            more = f" and {len(worst) - 5} more" if len(worst) > 5 else ""
            out.append(f"brokers missing from some steps (left out there, marked under "
                       f"\"gaps\"): {shown}{more}")
        return out


def _selector(name: str, cluster: str, matchers: str) -> str:
    inner = ",".join(x for x in (f'cluster="{_escape(cluster)}"', matchers) if x)
    return f"{name}{{{inner}}}"


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"')


def discover(client: PrometheusClient, req: HistoryRequest) -> Layout:
    """The cluster, its load manager and which metrics exist (``/api/v1/series`` only)."""
    start, end = req.start_ms, req.end_ms + req.step_ms
    cluster = req.cluster
    if cluster is None:
        found = sorted({s.get("cluster", "") for s in client.series(
            ["pulsar_lb_cpu_usage"], start, end)} - {""})
        if not found:
            raise SnapshotError(f"Prometheus at {client.url} has no pulsar_lb_cpu_usage series "
                                f"between {iso_time(start)} and {iso_time(end)}: no Pulsar "
                                "broker was scraped then (check the time range)")
        if len(found) > 1:
            raise UsageError(f"Prometheus holds several Pulsar clusters ({', '.join(found)}); "
                             "choose one with --cluster")
        cluster = found[0]
    names: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    for group, metrics in CATALOG.items():
        for m in metrics:
            key = f"{group}.{m.field}"
            for name in m.names:
                n = len(client.series([_selector(name, cluster, m.matchers)], start, end))
                if n:
                    names.setdefault(key, []).append(name)
                    counts[f"{name}{{{m.matchers}}}"] = n
    if not any(k.startswith("resources.") for k in names):
        raise SnapshotError(f"Prometheus at {client.url} has no pulsar_lb_* series of cluster "
                            f"{cluster!r} between {iso_time(start)} and {iso_time(end)}")
    extensible = "features.weightedMaxEMA" in names
    if "bundles.msgRateIn" in names:
        bundles_from = "bundles"
    elif "topics.msgRateIn" in names:
        bundles_from = "topics"
        if req.reference is None or not req.reference.namespaces:
            raise UsageError(
                "Prometheus has per-topic but no per-bundle metrics "
                "(exposeBundlesMetricsInPrometheus=false): topics are summed into bundles with "
                "the namespaces' bundle boundaries; give --reference SNAPSHOT or --reference live")
    else:
        raise SnapshotError(
            f"Prometheus has neither per-bundle (pulsar_bundle_msg_rate_in) nor per-topic "
            f"(pulsar_rate_in{{topic=…}}) metrics of cluster {cluster!r}: bundles cannot be "
            "rebuilt (enable exposeBundlesMetricsInPrometheus or "
            "exposeTopicLevelMetricsInPrometheus on the brokers)")
    return Layout(cluster, EXTENSIBLE if extensible else MODULAR, bundles_from, names, counts,
                  max(counts.values(), default=1))


# ---- one step's samples --------------------------------------------------------------------------
@dataclass
class Step:
    """Every sample found at one evaluation time, by broker."""

    t: int
    resources: dict[str, dict[str, float]] = field(default_factory=dict)
    features: dict[str, dict[str, float]] = field(default_factory=dict)
    limits: dict[str, dict[str, float]] = field(default_factory=dict)
    bundles: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: topic → broker → stats (a topic moving between two scrapes shows under both)
    topics: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    counters: dict[str, dict[tuple[tuple[str, str], ...], float]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.resources


def broker_id(labels: Mapping[str, str]) -> str:
    """A broker's id (``host:port``, as Pulsar's ``brokerId``): the ``broker`` label when it has a
    port (the extensible load manager's), else its host (the modular load manager writes the
    advertised address alone) with the port of the scrape target ``instance``; else the target."""
    broker = labels.get("broker", "")
    instance = labels.get("instance", "")
    if broker and ":" in broker:
        return broker
    if broker and ":" in instance:
        return f"{broker}:{instance.rsplit(':', 1)[1]}"
    return broker or instance or "unknown"


class PrometheusHistory:
    """Builds the snapshots of a :class:`HistoryRequest`, step by step, chunk by chunk."""

    def __init__(self, client: PrometheusClient, req: HistoryRequest,
                 progress: Callable[[str, int, int], None] | None = None):
        self.client = client
        self.req = req
        self.progress = progress
        self.layout = discover(client, req)
        self.report = Report()
        for m in CATALOG["resources"]:
            if f"resources.{m.field}" not in self.layout.names:
                self.report.warnings.append(
                    f"{m.names[0]} is not exported by cluster {self.layout.cluster}: "
                    f"{m.field} taken as 0 % in every snapshot")
        self._instance_broker: dict[str, str] = {}
        self._chunk_warnings: list[str] = []
        self._bounds = dict(req.reference.namespaces) if req.reference else {}

    # ---- reading -------------------------------------------------------------------------------
    def _window(self) -> str:
        """``(t − step, t]``: one step minus a millisecond, so no sample serves two steps."""
        return f"{max(1, self.req.step_ms - 1)}ms"

    def _read(self, group: str, m: Metric, s: int, e: int) -> Iterator[Series]:
        for name in self.layout.names.get(f"{group}.{m.field}", []):
            q = f"last_over_time({_selector(name, self.layout.cluster, m.matchers)}[{self._window()}])"
            n = self.layout.series.get(f"{name}{{{m.matchers}}}", 1)
            res = self.client.query_range(q, s, e, self.req.step_ms, series=n)
            for w in res.warnings:
                self.report.warnings.append(f"Prometheus warned (partial data, {iso_time(s)} to "
                                            f"{iso_time(e)}): {w}")
                self._chunk_warnings.append(f"Prometheus warned: {w}")
            yield from res.series

    def _fetch(self, s: int, e: int) -> dict[int, Step]:
        from lbctl.model.bundle import BundleName, BundleNameError

        step = self.req.step_ms
        steps = {t: Step(t) for t in range(s, e + 1, step)}
        self._chunk_warnings = []

        def at(t: int) -> Step | None:
            return steps.get(t)

        for m in CATALOG["resources"]:
            for ser in self._read("resources", m, s, e):
                b = broker_id(ser.labels)
                if "instance" in ser.labels:
                    self._instance_broker[ser.labels["instance"]] = b
                for t, v in ser.points.items():
                    st = at(t)
                    if st is not None:
                        st.resources.setdefault(b, {}).setdefault(m.field, v)
        for group, target in (("features", "features"), ("limits", "limits")):
            for m in CATALOG[group]:
                for ser in self._read(group, m, s, e):
                    if "stat" in ser.labels:
                        continue
                    b = self._broker_of(ser.labels)
                    for t, v in ser.points.items():
                        st = at(t)
                        if st is not None:
                            getattr(st, target).setdefault(b, {}).setdefault(m.field, v)
        bad: set[str] = set()
        if self.layout.bundles_from == "bundles":
            for m in CATALOG["bundles"]:
                for ser in self._read("bundles", m, s, e):
                    name = ser.labels.get("bundle", "")
                    try:
                        name = str(BundleName.parse(name))
                    except BundleNameError:
                        bad.add(name)
                        continue
                    b = self._broker_of(ser.labels)
                    for t, v in ser.points.items():
                        st = at(t)
                        if st is not None:
                            st.bundles.setdefault(b, {}).setdefault(name, {}).setdefault(m.field, v)
        else:
            for m in CATALOG["topics"]:
                for ser in self._read("topics", m, s, e):
                    topic = ser.labels.get("topic", "")
                    if ser.labels.get("partition"):
                        topic = f"{topic}-partition-{ser.labels['partition']}"
                    b = self._broker_of(ser.labels)
                    for t, v in ser.points.items():
                        st = at(t)
                        if st is not None:
                            st.topics.setdefault(topic, {}).setdefault(b, {}).setdefault(
                                m.field, v)
        for bn in sorted(bad)[:3]:
            self.report.warnings.append(f"bundle label {bn!r} is not a bundle name; left out")
        for group in ("counters", "breakdowns"):
            for m in CATALOG[group]:
                for ser in self._read(group, m, s, e):
                    key = tuple(sorted((k, v) for k, v in ser.labels.items()))
                    for t, v in ser.points.items():
                        st = at(t)
                        if st is not None:
                            st.counters.setdefault(m.field, {})[key] = v
        for st in steps.values():
            st.warnings = list(dict.fromkeys(self._chunk_warnings))
        return steps

    def _broker_of(self, labels: Mapping[str, str]) -> str:
        if labels.get("broker"):
            return broker_id(labels)
        inst = labels.get("instance", "")
        return self._instance_broker.get(inst) or inst or "unknown"

    # ---- building ------------------------------------------------------------------------------
    def snapshots(self) -> Iterator[dict[str, Any]]:
        """Snapshot v1 objects, in time order (streamed: one chunk of steps in memory at once)."""
        from lbctl.admin.prometheus import plan_chunks

        req = self.req
        last_t = req.end_ms + req.step_ms  # one step past the end: the last interval's decisions
        chunks = plan_chunks(req.start_ms, last_t, req.step_ms, self.layout.max_series,
                             max_points=self.client.max_points,
                             max_samples=self.client.max_samples)
        total = (req.end_ms - req.start_ms) // req.step_ms + 1
        self.report.steps = total
        pending: Step | None = None  # the step whose snapshot waits for the next step
        ready: dict[str, Any] | None = None  # built; its moves wait for the next snapshot
        skipped: list[int] = []
        known: set[str] = set()
        done = 0

        def emit(snap: dict[str, Any], next_owners: Mapping[str, str]) -> dict[str, Any]:
            nonlocal done
            _add_moves(snap, next_owners)
            done += 1
            if self.progress:
                self.progress("prometheus", done, total)
            return snap

        for s, e in chunks:
            steps = self._fetch(s, e)
            for t in sorted(steps):
                st = steps[t]
                beyond = t > req.end_ms
                if st.empty:
                    if not beyond:
                        skipped.append(t)
                        self.report.empty_steps += 1
                    continue
                if pending is not None:
                    snap = self._snapshot(pending, st, known)
                    if ready is not None:
                        yield emit(ready, _owners(snap["brokers"]))
                    ready = snap
                if beyond:  # only read for the last snapshot's observed decisions
                    if ready is not None:
                        extra = self._bundle_stats(st, None)
                        yield emit(ready, {n: b for b, per in extra.items() for n in per
                                           if b in st.resources})
                    pending = ready = None
                    break
                st.warnings += _skipped_note(skipped)
                skipped = []
                pending = st
        if pending is not None:
            snap = self._snapshot(pending, None, known)
            if ready is not None:
                yield emit(ready, _owners(snap["brokers"]))
            ready = snap
        if ready is not None:
            yield emit(ready, {})
        if self.progress:
            self.progress("prometheus", total, total)
        self.report.snapshots = done

    def _snapshot(self, st: Step, nxt: Step | None, known: set[str]) -> dict[str, Any]:
        layout = self.layout
        at = st.t
        gaps = list(st.warnings)
        brokers_stats = self._bundle_stats(st, gaps, self._raw_owners(nxt) if nxt else None)
        exported = [r for r in _RESOURCES if f"resources.{r}" in layout.names]
        present = []
        missing: dict[str, str] = {}
        for b in sorted(st.resources):
            lacking = [r for r in exported if r not in st.resources[b]]
            if lacking:  # a partial scrape: the report would be half made up
                missing[b] = f"no sample of {', '.join(lacking)} in the step"
            else:
                present.append(b)
        for b in sorted(known - set(st.resources)):
            missing[b] = "no pulsar_lb_* sample in the step (down, or not scraped)"
        for b in sorted(set(brokers_stats) - set(st.resources)):
            missing.setdefault(b, "bundle samples without pulsar_lb_* samples")
        for b, why in sorted(missing.items()):
            gaps.append(f"broker {b}: {why} before {iso_time(at)}; left out")
            self.report.broker_gaps[b] = self.report.broker_gaps.get(b, 0) + 1
        known.update(st.resources)
        brokers: dict[str, Any] = {}
        for b in present:
            brokers[b] = self._local_broker_data(b, st, brokers_stats.get(b, {}))
        snap: dict[str, Any] = {
            "format": "lbctl/snapshot@1", "cluster": layout.cluster, "capturedAt": iso_time(at),
            "loadManager": layout.load_manager,
            "config": dict(self.req.reference.config) if self.req.reference else {},
            "brokers": brokers,
        }
        namespaces = self._namespaces(brokers_stats, gaps)
        if namespaces:
            snap["namespaces"] = namespaces
        if layout.bundles_from == "topics" and st.topics:
            snap["topics"] = {name: {**{k: float(stats.get(k, 0.0)) for k in _RATES},
                                     "producerCount": _int(stats.get("producerCount")),
                                     "consumerCount": _int(stats.get("consumerCount"))}
                              for name, per in sorted(st.topics.items()) if _topic_ok(name)
                              for stats in [per[max(per)]]}
        if layout.load_manager == EXTENSIBLE:
            self._extensible(snap, st)
        rebuilt = ["brokers"]
        if nxt is not None:
            snap["observed"] = self._observed(st, nxt)
            rebuilt.append("observed")
        if layout.load_manager == EXTENSIBLE:
            rebuilt += ["brokerLoadData", "topBundlesLoadData"]
        if "topics" in snap:
            rebuilt.append("topics")
        snap[RECONSTRUCTED] = rebuilt
        snap["rebuiltFrom"] = {
            "prometheus": _safe(self.client.url), "stepSeconds": self.req.step_ms / 1000,
            "bundles": "pulsar_bundle_* (per-bundle metrics)" if layout.bundles_from == "bundles"
            else "pulsar_* per-topic metrics summed per bundle"}
        if gaps:
            snap[GAPS] = gaps
        return snap

    def _raw_owners(self, st: Step) -> dict[str, set[str]]:
        """Bundle (or topic) → the brokers whose samples carry it at ``st``, unreconciled."""
        out: dict[str, set[str]] = {}
        if self.layout.bundles_from == "bundles":
            for b, per in st.bundles.items():
                for name in per:
                    out.setdefault(name, set()).add(b)
        else:
            for topic, per_broker in st.topics.items():
                out[topic] = set(per_broker)
        return out

    def _pick(self, what: str, brokers: set[str], st: Step, hint: dict[str, set[str]] | None,
              gaps: list[str] | None) -> str:
        """One owner for a bundle (or topic) two brokers' samples carry in the same step — it
        moved between their scrapes: the one that still carries it at the next step, else the
        one with load-balancing samples, else the last by name; said under ``gaps``."""
        ranked = sorted(brokers, key=lambda b: (b in (hint or {}).get(what, ()),
                                                b in st.resources, b))
        chosen = ranked[-1]
        if gaps is not None:
            gaps.append(f"{what} carried by {', '.join(sorted(brokers))} in the same step (moving);"
                        f" kept with {chosen}")
        return chosen

    def _bundle_stats(self, st: Step, gaps: list[str] | None,
                      hint: dict[str, set[str]] | None = None
                      ) -> dict[str, dict[str, dict[str, Any]]]:
        """Broker → bundle → ``NamespaceBundleStats`` JSON, one owner per bundle (``hint``: the
        raw owners at the next step, to settle a bundle two brokers carry)."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        if self.layout.bundles_from == "bundles":
            owners = self._raw_owners(st)
            for name in sorted(owners):
                brokers = owners[name]
                b = next(iter(brokers)) if len(brokers) == 1 else self._pick(
                    name, brokers, st, hint, gaps)
                v = st.bundles[b][name]
                out.setdefault(b, {})[name] = {
                    **{k: float(v.get(k, 0.0)) for k in _RATES},
                    **{k: _int(v.get(k)) for k in _STAT_COUNTS}, "cacheSize": 0}
            return {b: dict(sorted(per.items())) for b, per in sorted(out.items())}
        from lbctl.model.bundle import locate, topic_hash

        unknown: set[str] = set()
        bundle_owner: dict[str, str] = {}
        per_bundle: dict[str, list[tuple[str, dict[str, float]]]] = {}
        for topic in sorted(st.topics):
            ns = _topic_ns(topic)
            bounds = self._bounds.get(ns) if ns else None
            if bounds is None:
                unknown.add(ns or topic)
                continue
            per_broker = st.topics[topic]
            b = next(iter(per_broker)) if len(per_broker) == 1 else self._pick(
                topic, set(per_broker), st, hint, gaps)
            name = f"{ns}/{locate(bounds, topic_hash(topic))}"
            per_bundle.setdefault(name, []).append((b, per_broker[b]))
        for name, items in per_bundle.items():
            brokers = {b for b, _ in items}
            # every topic of a bundle is served by its owner; topics on two brokers: it moved
            bundle_owner[name] = next(iter(brokers)) if len(brokers) == 1 else self._pick(
                name, brokers, st, None, gaps)
        for name in sorted(per_bundle):
            acc = out.setdefault(bundle_owner[name], {}).setdefault(name, {
                **dict.fromkeys(_RATES, 0.0), "consumerCount": 0, "producerCount": 0,
                "topics": 0, "cacheSize": 0})
            for _, v in per_bundle[name]:
                for k in _RATES:
                    acc[k] += float(v.get(k, 0.0))
                acc["consumerCount"] += _int(v.get("consumerCount"))
                acc["producerCount"] += _int(v.get("producerCount"))
                acc["topics"] += 1
        if unknown and gaps is not None:
            shown = ", ".join(sorted(unknown)[:3])
            gaps.append(f"topics of {len(unknown)} namespace(s) without boundaries in the "
                        f"reference ({shown}{', …' if len(unknown) > 3 else ''}); left out")
        return {b: out[b] for b in sorted(out)}

    def _local_broker_data(self, b: str, st: Step, stats: dict[str, dict[str, Any]]
                           ) -> dict[str, Any]:
        limits = st.limits.get(b, {})
        out: dict[str, Any] = {}
        for r in _RESOURCES:
            limit = _limit(r, limits.get(r))
            out[r] = usage_for(st.resources[b].get(r, 0.0), limit)
        for k in ("msgThroughputIn", "msgThroughputOut", "msgRateIn", "msgRateOut"):
            total = 0.0
            for s in stats.values():
                total += s[k]
            out[k] = total
        out["numTopics"] = sum(s["topics"] for s in stats.values())
        out["numBundles"] = len(stats)
        out["numConsumers"] = sum(s["consumerCount"] for s in stats.values())
        out["numProducers"] = sum(s["producerCount"] for s in stats.values())
        out["bundles"] = list(stats)
        out["lastStats"] = stats
        out["lastUpdate"] = st.t
        out[RECONSTRUCTED] = [*_RESOURCES, "msgThroughputIn", "msgThroughputOut", "msgRateIn",
                              "msgRateOut", "numTopics", "numBundles", "numConsumers",
                              "numProducers", "bundles", "lastStats", "lastUpdate"]
        return out

    def _namespaces(self, stats: Mapping[str, Mapping[str, Any]], gaps: list[str]
                    ) -> dict[str, Any]:
        """The reference's boundaries of each namespace whose bundles this step agrees with
        (a split since then makes them disagree: those are left out, and said so)."""
        from lbctl.model.bundle import format_position

        if not self._bounds:
            return {}
        owned: dict[str, set[str]] = {}
        for per in stats.values():
            for name in per:
                ns, _, rng = name.rpartition("/")
                owned.setdefault(ns, set()).add(rng)
        out: dict[str, Any] = {}
        for ns, bounds in sorted(self._bounds.items()):
            text = [format_position(x) for x in bounds]
            ranges = {f"{a}_{b}" for a, b in zip(text, text[1:], strict=False)}
            if owned.get(ns, set()) <= ranges:
                out[ns] = {"boundaries": text, "numBundles": len(text) - 1}
            else:
                gaps.append(f"namespace {ns}: its bundles differ from the reference's boundaries "
                            "(split since?); boundaries left out")
        return out

    def _extensible(self, snap: dict[str, Any], st: Step) -> None:
        from lbctl.config import resolve
        from lbctl.sources.live_extensible import (
            LbMetrics,
            broker_load_data,
            top_bundles_load_data,
        )

        settings = resolve(snap["config"])
        load: dict[str, Any] = {}
        tops: dict[str, Any] = {}
        for b, rep in snap["brokers"].items():
            m = LbMetrics(dict(st.resources[b]), dict(st.features.get(b, {})))
            stats = rep["lastStats"]
            load[b] = broker_load_data(m, stats, settings, st.t)
            tops[b] = top_bundles_load_data(stats, settings)
            rep["loadManagerClassName"] = ("org.apache.pulsar.broker.loadbalance.extensions."
                                           "ExtensibleLoadManagerImpl")
        snap["brokerLoadData"] = load
        snap["topBundlesLoadData"] = tops

    # ---- observed decisions ------------------------------------------------------------------------
    def _observed(self, st: Step, nxt: Step) -> dict[str, Any]:
        out: dict[str, Any] = {"until": iso_time(nxt.t)}
        notes: list[str] = []
        leaders: set[str] = set()
        for m in CATALOG["counters"]:
            if f"counters.{m.field}" not in self.layout.names:
                continue
            before, after = st.counters.get(m.field, {}), nxt.counters.get(m.field, {})
            if not before and not after:
                continue  # not exported in this interval (no leader yet, or not scraped)
            total, who = _increase(before, after, notes, m.field)
            out[m.field] = int(total)
            leaders |= who
        for m in CATALOG["breakdowns"]:
            if f"breakdowns.{m.field}" not in self.layout.names:
                continue
            before, after = st.counters.get(m.field, {}), nxt.counters.get(m.field, {})
            per: dict[str, int] = {}
            for key in sorted(set(before) | set(after)):
                labels = dict(key)
                label = f"{labels.get('result', '?')}/{labels.get('reason', '?')}"
                label = _RENAMED_REASONS.get((m.field, label), label)
                inc, who = _increase({key: before[key]} if key in before else {},
                                     {key: after[key]} if key in after else {}, notes, m.field)
                if inc:
                    per[label] = per.get(label, 0) + int(inc)
                    leaders |= who
            out[m.field] = per
        if leaders:
            notes.append("decisions counted on " + ", ".join(sorted(leaders)))
        if notes:
            out["notes"] = list(dict.fromkeys(notes))
        return out


def _owners(brokers: Mapping[str, Any]) -> dict[str, str]:
    return {name: b for b, rep in brokers.items() for name in rep["lastStats"]}


def _add_moves(snap: dict[str, Any], next_owner: Mapping[str, str]) -> None:
    """The ownership changes and splits between ``snap`` and the next snapshot (its bundles'
    owners, ``next_owner``), added to ``snap``'s observed decisions — both sides with their
    owners settled the same way (see :meth:`PrometheusHistory._pick`)."""
    observed = snap.get("observed")
    if observed is None:
        return
    now_owner = _owners(snap["brokers"])
    moves = [{"bundle": name, "from": b, "to": next_owner[name]}
             for name, b in sorted(now_owner.items())
             if name in next_owner and next_owner[name] != b]
    splits = _splits(set(now_owner), set(next_owner))
    if moves:
        observed["moves"] = moves
    if splits:
        observed["splits"] = splits


def _increase(before: Mapping[Any, float], after: Mapping[Any, float], notes: list[str],
              what: str) -> tuple[float, set[str]]:
    """Sum over series of each counter's increase, a decrease being a restart from zero; the
    brokers (scrape targets) whose counter moved."""
    total = 0.0
    who: set[str] = set()
    for key in set(before) | set(after):
        if key not in after or key not in before:
            # as PromQL's increase(): a series needs a sample at both ends; a leader's first
            # decisions (the modular load manager exports its counters from its first cycle on)
            # or a missed scrape leave this interval uncounted for that broker: said so
            notes.append(f"{what}: the counter of {broker_id(dict(key))} has no sample at "
                         f"{'the start' if key not in before else 'the end'} of the interval; "
                         "its decisions there are not counted")
            continue
        a = after[key]
        if a >= before[key]:
            inc = a - before[key]
        else:
            inc = a
            notes.append(f"{what}: a counter restarted (broker restart)")
        if inc:
            total += inc
            labels = dict(key)
            who.add(broker_id(labels))
    return total, who


def _splits(now: set[str], nxt: set[str]) -> list[str]:
    from lbctl.model.bundle import BundleName, BundleNameError

    gone = sorted(now - nxt)
    if not gone:
        return []
    new: dict[str, list[Any]] = {}
    for n in nxt - now:
        try:
            bn = BundleName.parse(n)
        except BundleNameError:
            continue
        new.setdefault(bn.namespace, []).append(bn.range)
    out = []
    for g in gone:
        try:
            bn = BundleName.parse(g)
        except BundleNameError:
            continue
        r = bn.range
        if any(r.lower <= c.lower and c.upper <= r.upper and c != r
               for c in new.get(bn.namespace, [])):
            out.append(g)
    return out


def _skipped_note(skipped: list[int]) -> list[str]:
    if not skipped:
        return []
    return [f"no sample from any broker at {len(skipped)} step(s) before this one "
            f"({iso_time(skipped[0])} to {iso_time(skipped[-1])}): those steps were left out"]


def _topic_ns(topic: str) -> str | None:
    m = re.fullmatch(r"(?:non-)?persistent://([^/]+)/([^/]+)/.+", topic, re.DOTALL)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def _topic_ok(name: str) -> bool:
    return _topic_ns(name) is not None


def _int(v: float | None) -> int:
    if v is None or not math.isfinite(v) or v < 0:
        return 0
    return int(round(v))


def _safe(url: str) -> str:
    from lbctl.admin.clientconf import _safe_url

    return _safe_url(url)


def _limit(resource: str, raw: float | None) -> float:
    """The limit Pulsar divides by, in MiB: heap max / MiB (a double), direct max / MiB (Java
    ``long`` division, as ``LoadManagerShared.getSystemResourceUsage``); 100 when unknown."""
    if raw is None or not math.isfinite(raw) or raw <= 0:
        return 100.0
    if resource == "memory":
        return raw / MIB
    return float(int(raw) // MIB) or 100.0


def usage_for(percent: float, limit: float = 100.0) -> dict[str, float]:
    """``{"usage", "limit"}`` whose 32-bit ``percentUsage`` is ``percent`` exactly (the exported
    figure is that float): the float nearest ``percent/100 × limit``, nudged by a few ulps when
    rounding needs it; against a limit of 100 when no usage over ``limit`` gives it back."""
    from lbctl.model.load import ResourceUsage, f32

    target = f32(percent)
    if limit != 100.0:
        base = f32(target / 100.0 * f32(limit))
        bits = struct.unpack("<i", struct.pack("<f", base))[0]
        for step in (0, 1, -1, 2, -2, 3, -3, 4, -4):
            u = struct.unpack("<f", struct.pack("<i", bits + step))[0] if step else base
            if math.isfinite(u) and ResourceUsage(u, limit).percent == target:
                return {"usage": u, "limit": limit}
    from lbctl.sources.live_extensible import usage_for_percent

    return usage_for_percent(target)


# ---- whole sequences -----------------------------------------------------------------------------
def read_history(client: PrometheusClient, req: HistoryRequest,
                 progress: Callable[[str, int, int], None] | None = None
                 ) -> tuple[list[ClusterState], Report]:
    """The sequence in memory (what ``recommend --prometheus-url`` replays), and the report."""
    from lbctl.sources.snapshot_schema import parse_snapshot

    hist = PrometheusHistory(client, req, progress)
    states = [parse_snapshot(snap, f"prometheus:{snap['capturedAt']}")
              for snap in hist.snapshots()]
    if not states:
        raise SnapshotError(f"no snapshot could be built from Prometheus between "
                            f"{iso_time(req.start_ms)} and {iso_time(req.end_ms)}")
    return states, hist.report


def write_history(client: PrometheusClient, req: HistoryRequest, path: str,
                  progress: Callable[[str, int, int], None] | None = None) -> Report:
    """The sequence as a ``.jsonl`` (optionally ``.gz``), streamed, each snapshot validated,
    written atomically (a temporary file renamed at the end: never half a file)."""
    import contextlib
    import gzip
    import os
    import tempfile

    import orjson

    from lbctl.sources.snapshot_schema import parse_snapshot

    lower = path.lower()
    gz = lower.endswith(".gz")
    if not lower.removesuffix(".gz").endswith((".jsonl", ".ndjson")):
        raise UsageError(f"{path}: a sequence is written as .jsonl (optionally .jsonl.gz)")
    hist = PrometheusHistory(client, req, progress)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                               suffix=".tmp")
    ok = False
    try:
        with os.fdopen(fd, "wb") as raw:
            out: Any = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if gz else raw
            for snap in hist.snapshots():
                parse_snapshot(snap, f"prometheus:{snap['capturedAt']}")
                out.write(orjson.dumps(snap, option=orjson.OPT_APPEND_NEWLINE))
            if gz:
                out.close()
            raw.flush()
            os.fsync(raw.fileno())
        if hist.report.snapshots == 0:
            raise SnapshotError(f"no snapshot could be built from Prometheus between "
                                f"{iso_time(req.start_ms)} and {iso_time(req.end_ms)}")
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
        ok = True
    except OSError as e:
        raise SnapshotError(f"{path}: cannot write: {e.strerror or e}") from None
    finally:
        if not ok:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return hist.report


def reference_from(states: Sequence[ClusterState], origin: str) -> Reference:
    """The reference of a snapshot file (its last snapshot)."""
    if not states:
        raise UsageError(f"{origin}: no snapshot in the reference")
    return Reference.of(states[-1], origin)
