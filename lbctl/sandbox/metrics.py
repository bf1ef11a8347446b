"""``GET /metrics`` of the loopback test cluster: each broker's Prometheus endpoint, in Pulsar's text
exposition format, so that a real Prometheus can scrape the sandbox (tests, and trying
``lbctl snapshot from-prometheus`` without a cluster).

What a Pulsar broker writes there for load balancing, with the names and labels of
``PrometheusMetricsGenerator.parseMetricsToPrometheusMetrics`` (``brk_`` → ``pulsar_``, a
``cluster`` label, then the entry's dimensions):

* ``pulsar_lb_{cpu,memory,directMemory,bandwidth_in,bandwidth_out}_usage{broker, metric=
  "loadBalancing"}``: ``ResourceUsage.percentUsage()`` as a Java ``float``
  (``ModularLoadManagerImpl.updateLoadBalancingMetrics``; ``BrokerLoadData.toMetrics`` in
  extensible mode, which adds ``pulsar_lb_resource_usage{feature="max_ema"|"max"}``);
* ``pulsar_bundle_*{broker, bundle, metric="bundle"}`` per owned bundle, heartbeat included
  (``updateLoadBalancingBundlesMetrics``, ``exposeBundlesMetricsInPrometheus=true``);
* ``pulsar_{rate,throughput}_{in,out}``, ``pulsar_{producers,consumers}_count{namespace, topic}``
  per topic (``TopicStats.printTopicStats``);
* on the leader (the first broker): ``pulsar_lb_unload_bundle_total``,
  ``pulsar_lb_unload_broker_total`` and ``pulsar_lb_bundles_split_total{metric=…}``. The sandbox has
  no load manager of its own, so every unload and split it performed counts as the leader's.

As in Pulsar by default (``authenticateMetricsEndpoint=false``), no token is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lbctl.sandbox.server import TestCluster

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_BUNDLE = (("msgRateIn", "pulsar_bundle_msg_rate_in"), ("msgRateOut", "pulsar_bundle_msg_rate_out"),
           ("msgThroughputIn", "pulsar_bundle_msg_throughput_in"),
           ("msgThroughputOut", "pulsar_bundle_msg_throughput_out"),
           ("topics", "pulsar_bundle_topics_count"),
           ("consumerCount", "pulsar_bundle_consumer_count"),
           ("producerCount", "pulsar_bundle_producer_count"))
_TOPIC = (("msgRateIn", "pulsar_rate_in"), ("msgRateOut", "pulsar_rate_out"),
          ("msgThroughputIn", "pulsar_throughput_in"),
          ("msgThroughputOut", "pulsar_throughput_out"),
          ("producerCount", "pulsar_producers_count"),
          ("consumerCount", "pulsar_consumers_count"))


def _labels(**kv: str) -> str:
    return "{" + ",".join(f'{k}="{_esc(v)}"' for k, v in kv.items()) + "}"


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _num(v: float) -> str:
    return repr(float(v))


def exposition(c: TestCluster, broker: str) -> str:
    """The ``/metrics`` text of ``broker`` (the caller holds the cluster's lock)."""
    host = broker.rsplit(":", 1)[0]
    cluster = c.cluster
    families: dict[str, list[str]] = {}

    def put(name: str, labels: str, value: str) -> None:
        families.setdefault(name, []).append(f"{name}{labels} {value}")

    # the load manager's own entries, as /broker-stats/metrics serves them (Java floats)
    for entry in c.metrics(broker):
        dims, values = entry["dimensions"], entry["metrics"]
        if dims.get("metric") != "loadBalancing":
            continue
        feature = dims.get("feature")
        if feature is None:
            labels = _labels(cluster=cluster, broker=host, metric="loadBalancing")
        else:
            labels = _labels(cluster=cluster, broker=host, feature=feature,
                             metric="loadBalancing")
        for key, v in values.items():
            put(key.replace("brk_", "pulsar_", 1), labels, _num(v))
    # ModularLoadManagerImpl.updateLocalBrokerData refreshes the bundle metrics with the
    # broker's bundles at every update, written or not: the load-report's view (served_report)
    report = c.served_report(broker)
    for bundle, stats in report["lastStats"].items():
        labels = _labels(cluster=cluster, broker=host, bundle=bundle, metric="bundle")
        for key, name in _BUNDLE:
            put(name, labels, _num(stats.get(key, 0)))
    if c.life is not None:
        for topic, tr in sorted(c.life.topics_of(broker)):
            ns = "/".join(topic.split("://", 1)[1].split("/")[:2])
            labels = _labels(cluster=cluster, namespace=ns, topic=topic)
            for name, v in (("pulsar_rate_in", tr.msg_rate_in), ("pulsar_rate_out", tr.msg_rate_out),
                            ("pulsar_throughput_in", tr.throughput_in),
                            ("pulsar_throughput_out", tr.throughput_out),
                            ("pulsar_producers_count", tr.producers),
                            ("pulsar_consumers_count", tr.consumers)):
                put(name, labels, _num(v))
    for topic in sorted(c.topics):
        bundle = c.bundle_of_topic(topic)
        if bundle is None or c.owners.get(bundle) != broker:
            continue
        tst = c.topics[topic]
        ns = "/".join(topic.split("://", 1)[1].split("/")[:2])
        labels = _labels(cluster=cluster, namespace=ns, topic=topic)
        for key, name in _TOPIC:
            put(name, labels, _num(tst.get(key, 0)))
    life = c.life
    if life is not None and life.leader is not None:
        if broker == life.leader.broker():  # the living leader's own counters
            n = life.counters
            unload = _labels(cluster=cluster, metric="bundleUnloading")
            put("pulsar_lb_unload_bundle_total", unload, _num(n.unload_bundle))
            put("pulsar_lb_unload_broker_total", unload, _num(n.unload_broker))
            put("pulsar_lb_bundles_split_total", _labels(cluster=cluster, metric="bundlesSplit"),
                _num(n.split))
    elif broker == next(iter(c.brokers)):  # the leader's decision counters
        done = [r for r in c.log if r.method == "PUT" and r.status == 204]
        unloads = [r for r in done if r.path.endswith("/unload")]
        splits = [r for r in done if r.path.endswith("/split")]
        moved = _unloaded_bundles(c, unloads)
        unload = _labels(cluster=cluster, metric="bundleUnloading")
        put("pulsar_lb_unload_bundle_total", unload, _num(moved))
        put("pulsar_lb_unload_broker_total", unload, _num(len(unloads)))
        put("pulsar_lb_bundles_split_total", _labels(cluster=cluster, metric="bundlesSplit"),
            _num(len(splits)))
    out = []
    for name, lines in families.items():
        out.append(f"# TYPE {name} gauge")
        out += lines
    return "\n".join(out) + "\n"


def _unloaded_bundles(c: TestCluster, unloads: Sequence[object]) -> int:
    """A bundle unload moves one bundle; a namespace unload moves all of its bundles."""
    n = 0
    for r in unloads:
        seg = [s for s in getattr(r, "path", "").removeprefix("/admin/v2").split("/") if s]
        if len(seg) == 5:
            n += 1
        elif len(seg) == 4:
            n += len(c.namespaces.get(f"{seg[1]}/{seg[2]}", [0])) - 1
    return n
