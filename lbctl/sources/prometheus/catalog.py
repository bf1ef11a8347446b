"""The metrics lbctl reads, with the Pulsar class that emits each and their renames across
versions, and :func:`discover`: which of them Prometheus holds for a cluster (``/api/v1/series``
only).

Read in Pulsar's source: ``ModularLoadManagerImpl`` (``updateLoadBalancingMetrics``,
``updateLoadBalancingBundlesMetrics``, ``updateBundleUnloadingMetrics``,
``updateBundleSplitMetrics``, ``getLoadBalancingMetrics``; apache/pulsar@009a9bf2), the extensible
``UnloadCounter`` (@1a5df8f3), ``SplitCounter`` (@6a01f9de), ``BrokerLoadData.toMetrics`` and
``ExtensibleLoadManagerImpl.getMetrics``, ``PrometheusMetricsGenerator
.parseMetricsToPrometheusMetrics`` (``brk_`` → ``pulsar_``, the ``cluster`` label),
``TopicStats.printTopicStats``, ``LoadManagerShared.getSystemResourceUsage`` (memory limits in
MiB); the ``*_count`` → ``*_total`` rename of apache/pulsar#16611 (Pulsar 2.11).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lbctl.errors import SnapshotError, UsageError
from lbctl.model.cluster import EXTENSIBLE, MODULAR, iso_time
from lbctl.sources.prometheus.request import HistoryRequest

if TYPE_CHECKING:
    from lbctl.admin.prometheus import PrometheusClient

MIB = 1024 * 1024
RECONSTRUCTED = "reconstructed"
GAPS = "gaps"
RESOURCES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")
RATES = ("msgRateIn", "msgThroughputIn", "msgRateOut", "msgThroughputOut")
STAT_COUNTS = ("consumerCount", "producerCount", "topics")


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
                       for r, n in zip(RESOURCES, (
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
RENAMED_REASONS = {("unloadBreakdown", "Skip/Balanced"): "Skip/HitCount"}


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


def selector(name: str, cluster: str, matchers: str) -> str:
    inner = ",".join(x for x in (f'cluster="{_escape(cluster)}"', matchers) if x)
    return f"{name}{{{inner}}}"


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"')


def discover(client: PrometheusClient, req: HistoryRequest) -> Layout:
    """The cluster, its load manager and which metrics exist (``/api/v1/series`` only)."""
    start, end = req.start_ms, req.read_end_ms
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
    wanted = [(f"{group}.{m.field}", name, m.matchers)
              for group, metrics in CATALOG.items() for m in metrics for name in m.names]
    found_sets = client.series_many([[selector(name, cluster, matchers)]
                                     for _, name, matchers in wanted], start, end)
    for (key, name, matchers), sets in zip(wanted, found_sets, strict=True):
        if sets:
            names.setdefault(key, []).append(name)
            counts[f"{name}{{{matchers}}}"] = len(sets)
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
