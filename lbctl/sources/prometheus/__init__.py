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

from lbctl.sources.prometheus.catalog import CATALOG, Layout, Metric, broker_id, discover
from lbctl.sources.prometheus.history import PrometheusHistory, Step
from lbctl.sources.prometheus.output import read_history, reference_from, write_history
from lbctl.sources.prometheus.request import HistoryRequest, Reference, Report
from lbctl.sources.prometheus.timespec import parse_duration, parse_time

__all__ = [
    "CATALOG", "HistoryRequest", "Layout", "Metric", "PrometheusHistory", "Reference", "Report",
    "Step", "broker_id", "discover", "parse_duration", "parse_time", "read_history",
    "reference_from", "write_history",
]
