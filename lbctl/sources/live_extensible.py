"""A running cluster on the extensible load manager (PIP-192), read over the admin REST API.

There ``GET /admin/v2/broker-stats/load-report`` answers 500 (``ExtensibleLoadManagerWrapper``
does not generate a load report), and the data the leader decides on — each broker's
``BrokerLoadData`` and ``TopBundlesLoadData`` — lives in system topics that REST cannot read. So
lbctl rebuilds them, per broker and on the broker itself, from what REST does serve:

* ``GET /admin/v2/broker-stats/metrics``: the load manager's metrics, which under the extensible
  load manager are ``BrokerLoadData.toMetrics`` of the broker's local load data: one entry with
  ``brk_lb_cpu_usage``, ``brk_lb_memory_usage``, ``brk_lb_directMemory_usage``,
  ``brk_lb_bandwidth_in_usage`` and ``brk_lb_bandwidth_out_usage`` (``ResourceUsage.percentUsage``,
  32-bit floats) and two entries of ``brk_lb_resource_usage`` with dimension ``feature=max_ema``
  (``weightedMaxEMA``, the load TransferShedder and placement compare) and ``feature=max``
  (``maxResourceUsage``);
* ``GET /admin/v2/broker-stats/topics``: the broker's topics, whose rates and counts are summed
  per bundle as ``PulsarStats`` sums them into ``NamespaceBundleStats`` (a topic's bundle is found
  by CRC-32 of its name in the namespace's current boundaries, else the range the broker filed it
  under), and per broker as ``BrokerLoadDataReporter`` sums them into ``brokerStats``.

From these, per broker: ``brokerLoadData`` (resource percentages and both features as the broker
computed them; throughputs, rates, ``bundleCount``, ``topics`` summed from the topic stats;
``msgThroughputEMA`` = the current throughput, its history is not served; ``updatedAt`` and
``reportedAt`` = the capture time), ``topBundlesLoadData`` (``TopKBundles`` of the bundle stats
with ``loadBalancerMaxNumberOfBundlesInBundleLoadReport``, as ``TopBundleLoadDataReporter`` does)
and a ``LocalBrokerData``-shaped ``brokers`` entry (the same percentages, rates and per-bundle
``lastStats``: ownership, automatic splits and monitor-brokers use it). Every rebuilt object
lists its rebuilt fields under ``"reconstructed"`` (:data:`RECONSTRUCTED`), which the snapshot
records of ``brokerLoadData`` / ``topBundlesLoadData`` keep. The rebuilt objects are decoded into
those records as the admin API's own answers are (:func:`~lbctl.sources.live_data.live_snapshot`).

A resource percentage is written as ``{"usage": p, "limit": 100}`` with ``p`` nudged by a float
ulp when needed so that Pulsar's 32-bit ``percentUsage`` of the pair gives the published
percentage back exactly. Sources never decide: nothing here looks at load beyond copying it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lbctl.admin.client import BROKER_METRICS, BROKER_TOPICS, call
from lbctl.admin.errors import AdminError, HttpError
from lbctl.model.cluster import EXTENSIBLE, EXTENSIBLE_CLASS
from lbctl.model.cluster import is_extensible_class as is_extensible_class  # re-exported
from lbctl.model.wire.snapshot import RECONSTRUCTED
from lbctl.sources.percent_usage import usage_for

if TYPE_CHECKING:
    from lbctl.config import Settings
    from lbctl.sources.live import LiveSource
    from lbctl.sources.live_data import BrokerFailure, Discovery, LiveRead

#: ``BrokerLoadData.toMetrics`` metric name → ``BrokerLoadData`` resource
RESOURCE_METRICS: dict[str, str] = {
    "brk_lb_cpu_usage": "cpu",
    "brk_lb_memory_usage": "memory",
    "brk_lb_directMemory_usage": "directMemory",
    "brk_lb_bandwidth_in_usage": "bandwidthIn",
    "brk_lb_bandwidth_out_usage": "bandwidthOut",
}
RESOURCE_USAGE = "brk_lb_resource_usage"
#: ``brk_lb_resource_usage{feature=…}`` → ``BrokerLoadData`` feature
FEATURES: dict[str, str] = {"max_ema": "weightedMaxEMA", "max": "maxResourceUsage"}
_RESOURCES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")
_RATES = ("msgThroughputIn", "msgThroughputOut", "msgRateIn", "msgRateOut")
#: fields of a rebuilt ``BrokerLoadData`` that are never read as published
_ALWAYS_REBUILT = (*_RESOURCES, *_RATES, "bundleCount", "topics", "msgThroughputEMA",
                   "updatedAt", "reportedAt")


# ---- /broker-stats/metrics ---------------------------------------------------------------------
@dataclass(frozen=True)
class LbMetrics:
    """The ``brk_lb_*`` figures of one broker: resource → percent, feature → value."""

    percents: Mapping[str, float]
    features: Mapping[str, float]

    @property
    def extensible(self) -> bool:
        """Only the extensible load manager's ``BrokerLoadData`` emits ``feature=max_ema``."""
        return "weightedMaxEMA" in self.features


def _finite(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def parse_lb_metrics(entries: object, where: str) -> LbMetrics:
    """The load-balancing figures of ``/broker-stats/metrics`` (a JSON list of
    ``{"dimensions", "metrics"}``); everything else in it is ignored."""
    if not isinstance(entries, list):
        raise HttpError(f"{where}: expected a JSON array of metrics")
    percents: dict[str, float] = {}
    features: dict[str, float] = {}
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("metrics"), dict):
            continue
        raw_dims = e.get("dimensions")
        dims: dict[str, Any] = raw_dims if isinstance(raw_dims, dict) else {}
        metrics = e["metrics"]
        feature = dims.get("feature")
        if feature is None:
            for name, resource in RESOURCE_METRICS.items():
                v = _finite(metrics.get(name))
                if v is not None and resource not in percents:
                    percents[resource] = v
        elif feature in FEATURES and "stat" not in dims:
            v = _finite(metrics.get(RESOURCE_USAGE))
            if v is not None and v >= 0:
                features.setdefault(FEATURES[feature], v)
    return LbMetrics(percents, features)


# ---- /broker-stats/topics → bundle stats ------------------------------------------------------------
def bundle_stats(nested: object, boundaries: Mapping[str, list[int]]
                 ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], list[str]]:
    """(bundle → ``NamespaceBundleStats``, topic → snapshot topic stats, warnings) of one broker's
    ``/broker-stats/topics`` (namespace → bundle range → domain → topic → stats)."""
    from lbctl.model.bundle import BundleName, BundleNameError, locate, topic_hash
    from lbctl.sources.live_data import flatten_topics

    out: dict[str, dict[str, Any]] = {}
    topics: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    if not isinstance(nested, dict):
        return out, topics, warnings
    for ns, ranges in nested.items():
        if not isinstance(ranges, dict):
            continue
        for rng, domains in ranges.items():
            for name, st in flatten_topics({ns: {rng: domains}}).items():
                bounds = boundaries.get(ns)
                try:
                    bundle = (f"{ns}/{locate(bounds, topic_hash(name))}" if bounds
                              else str(BundleName.parse(f"{ns}/{rng}")))
                except BundleNameError:
                    warnings.append(f"topic {name}: bundle {ns}/{rng} is not a bundle name; "
                                    "left out")
                    continue
                topics[name] = st
                acc = out.setdefault(bundle, {
                    "msgRateIn": 0.0, "msgThroughputIn": 0.0, "msgRateOut": 0.0,
                    "msgThroughputOut": 0.0, "consumerCount": 0, "producerCount": 0,
                    "topics": 0, "cacheSize": 0})
                for k in _RATES:
                    acc[k] += st[k]
                acc["consumerCount"] += st["consumerCount"]
                acc["producerCount"] += st["producerCount"]
                acc["topics"] += 1
    return out, topics, warnings


# ---- the rebuilt objects ---------------------------------------------------------------------------
def _totals(stats: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    t: dict[str, Any] = dict.fromkeys(_RATES, 0.0)
    for st in stats.values():
        for k in _RATES:
            t[k] += st[k]
    t["topics"] = sum(st["topics"] for st in stats.values())
    t["consumers"] = sum(st["consumerCount"] for st in stats.values())
    t["producers"] = sum(st["producerCount"] for st in stats.values())
    return t


def local_broker_data(m: LbMetrics, stats: Mapping[str, Mapping[str, Any]], at: int
                      ) -> dict[str, Any]:
    """A ``LocalBrokerData``-shaped report (what the modular load-report would have held)."""
    t = _totals(stats)
    out: dict[str, Any] = {r: usage_for(m.percents.get(r, 0.0)) for r in _RESOURCES}
    out.update({k: t[k] for k in _RATES})
    out.update({
        "lastUpdate": at, "lastStats": {b: dict(s) for b, s in stats.items()},
        "bundles": list(stats), "numTopics": t["topics"], "numBundles": len(stats),
        "numConsumers": t["consumers"], "numProducers": t["producers"],
        "loadManagerClassName": EXTENSIBLE_CLASS,
    })
    return out


def broker_load_data(m: LbMetrics, stats: Mapping[str, Mapping[str, Any]], settings: Settings,
                     at: int) -> dict[str, Any]:
    """``BrokerLoadData`` JSON rebuilt from the metrics and the bundle stats (module docstring)."""
    from lbctl.model.brokerload import BrokerLoadData
    from lbctl.model.load import ResourceUsage

    t = _totals(stats)
    res = {r: usage_for(m.percents.get(r, 0.0)) for r in _RESOURCES}
    data = BrokerLoadData(
        **{r: ResourceUsage(u["usage"], u["limit"]) for r, u in res.items()},  # type: ignore[arg-type]  # resources only
        msgThroughputIn=t["msgThroughputIn"], msgThroughputOut=t["msgThroughputOut"],
        msgRateIn=t["msgRateIn"], msgRateOut=t["msgRateOut"], bundleCount=len(stats),
        topics=t["topics"], msgThroughputEMA=t["msgThroughputIn"] + t["msgThroughputOut"],
        updatedAt=at, reportedAt=at)
    rebuilt = list(_ALWAYS_REBUILT)
    # the features as the broker computed them; a first sample's values when not served
    max_usage = m.features.get("maxResourceUsage")
    if max_usage is None:
        max_usage = data.max_resource_usage()
        rebuilt.append("maxResourceUsage")
    ema = m.features.get("weightedMaxEMA")
    if ema is None:
        ema = data.weighted_max(settings)
        rebuilt.append("weightedMaxEMA")
    out = data.to_json()
    out.update(res)
    out["maxResourceUsage"] = max_usage
    out["weightedMaxEMA"] = ema
    out[RECONSTRUCTED] = rebuilt
    return out


def top_bundles_load_data(stats: Mapping[str, Mapping[str, Any]], settings: Settings,
                          has_policies: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """``TopBundlesLoadData`` of the bundle stats: ``TopKBundles.update(bundleStats, k)`` (bundles
    of namespaces with policies left out, as ``hasPolicies``, when the policies are known)."""
    from lbctl.model.brokerload import top_k_bundles
    from lbctl.model.javaorder import concurrent_order
    from lbctl.model.load import NamespaceBundleStats

    k = int(settings["loadBalancerMaxNumberOfBundlesInBundleLoadReport"])
    # TopKBundles walks PulsarStats.bundleStats, a ConcurrentHashMap filled in the topics'
    # order, which these rebuilt stats keep: a fresh ConcurrentHashMap's order (as the split
    # walk's bundle_stats_walk of rebuilt stats), not a HashMap's
    tops = top_k_bundles(((b, NamespaceBundleStats(**stats[b])) for b in concurrent_order(stats)),
                         k, settings, has_policies)
    return {"topBundlesLoadData": [{"bundleName": t.bundleName, "stats": dict(stats[t.bundleName])}
                                   for t in tops],
            RECONSTRUCTED: ["topBundlesLoadData"]}


def _has_policies(raw: object) -> Callable[[str], bool] | None:
    """``TopKBundles.hasPolicies`` of a captured ``policies`` section (``None``: not captured)."""
    if not isinstance(raw, dict):
        return None
    from lbctl.model.wire.snapshot import Policies
    from lbctl.sources.snapshot_schema import _Checker, convert, policies_from_wire

    policies = convert(raw, Policies, "live", "policies")
    return policies_from_wire(_Checker("live"), policies).has_policies  # type: ignore[no-any-return]  # ClusterPolicies


# ---- reading -----------------------------------------------------------------------------------------
@dataclass
class BrokerReads:
    """One broker's two answers (each the JSON or its :class:`AdminError`)."""

    metrics: Any
    topics: Any


class ExtensibleReader:
    """The extensible side of :class:`~lbctl.sources.live.LiveSource` (same client and options)."""

    def __init__(self, src: LiveSource):
        self.src = src
        self.client = src.client

    def fetch(self, brokers: list[str]) -> dict[str, BrokerReads]:
        """Every broker's metrics and topic stats, concurrently, each from the broker itself."""
        calls = []
        for b in brokers:
            base = self.client.broker_url(b)
            calls += [call(BROKER_METRICS, base=base), call(BROKER_TOPICS, base=base)]
        results = self.client.gather(calls)
        return {b: BrokerReads(results[2 * i], results[2 * i + 1]) for i, b in enumerate(brokers)}

    def _metrics(self, b: str, raw: Any) -> LbMetrics | AdminError:
        if isinstance(raw, AdminError):
            return raw
        where = f"GET {self.client.broker_url(b)}/admin/v2/broker-stats/metrics"
        try:
            m = parse_lb_metrics(raw, where)
        except HttpError as e:
            return e
        if not m.percents:
            return HttpError(f"{where}: no brk_lb_* load-balancing metrics (the load manager "
                             "does not publish them)")
        return m

    def local_reports(self, brokers: list[str], *, probe: bool = False
                      ) -> dict[str, dict[str, Any] | AdminError] | None:
        """``LocalBrokerData``-shaped reports (monitor-brokers), or each broker's error. With
        ``probe`` (every load report answered 500 on a cluster whose configuration names another
        load manager): ``None`` unless some broker's metrics carry the extensible load manager's
        ``feature=max_ema``."""
        at = int(self.src.clock() * 1000)
        reads = self.fetch(brokers)
        metrics = {b: self._metrics(b, r.metrics) for b, r in reads.items()}
        if probe and not any(isinstance(m, LbMetrics) and m.extensible for m in metrics.values()):
            return None
        out: dict[str, dict[str, Any] | AdminError] = {}
        loads: dict[str, dict[str, Any]] = {}
        settings = self._settings()
        for b, r in reads.items():
            m = metrics[b]
            if isinstance(m, AdminError):
                out[b] = m
                continue
            stats = {} if isinstance(r.topics, AdminError) else bundle_stats(r.topics, {})[0]
            out[b] = local_broker_data(m, stats, at)
            loads[b] = broker_load_data(m, stats, settings, at)
        self.src.last_broker_load = loads  # monitor-brokers' extensible view reads these
        return out

    def _settings(self) -> Settings:
        """The settings of the runtime configuration the last discovery read (the weights of a
        ``weightedMaxEMA`` a broker does not publish)."""
        from lbctl.sources.live_data import live_settings

        return live_settings(self.src.last_config, self.src.last_dynamic)

    def read(self, d: Discovery, captured: int, config: dict[str, Any],
             failures: list[BrokerFailure], warnings: list[str]) -> LiveRead:
        """The cluster as an extensible snapshot (``loadManager: "extensible"``)."""
        from lbctl.model.bundle import parse_position
        from lbctl.sources.live_data import (
            BrokerFailure,
            LiveRead,
            live_settings,
            live_snapshot,
            reconcile,
        )
        from lbctl.sources.snapshot_schema import state_from_wire

        src = self.src
        src.progress("broker metrics", 0, len(d.brokers))
        reads = self.fetch(d.brokers)
        src.progress("broker metrics", len(d.brokers), len(d.brokers))
        metrics = {b: self._metrics(b, r.metrics) for b, r in reads.items()}
        good = {b: m for b, m in metrics.items() if isinstance(m, LbMetrics)}
        errors = [m for m in metrics.values() if isinstance(m, AdminError)]
        if errors and not good:
            raise errors[0]  # no broker answered: that is the cluster's answer, not one broker's

        namespaces: dict[str, Any] = src._namespaces(failures) if src.namespaces else {}
        bounds = {ns: [parse_position(x) for x in v["boundaries"]] for ns, v in namespaces.items()}
        settings = live_settings(config, d.dynamic)
        brokers: dict[str, Any] = {}
        load: dict[str, Any] = {}
        tops: dict[str, Any] = {}
        topics: dict[str, Any] = {}
        for b in d.brokers:
            m, r = metrics[b], reads[b]
            if isinstance(m, AdminError):
                if isinstance(r.metrics, AdminError):  # unreachable: left out, as a modular broker
                    failures.append(BrokerFailure(b, str(m), m.exit_code))
                    continue
                failures.append(BrokerFailure(b, f"{m} — listed without load data", m.exit_code))
                brokers[b] = {}
                continue
            if isinstance(r.topics, AdminError):
                failures.append(BrokerFailure(b, f"topic stats: {r.topics} — listed without load "
                                                 "data", r.topics.exit_code))
                brokers[b] = {}
                continue
            stats, broker_topics, notes = bundle_stats(r.topics, bounds)
            warnings += notes
            topics.update(broker_topics)
            brokers[b] = local_broker_data(m, stats, captured)
        warnings += reconcile(brokers, namespaces)  # a bundle two brokers report stays with one
        placement = src.placement_sections(d, warnings)
        # an unreachable broker is left out, as before: listed as available without load data,
        # it would make TransferShedder skip every cycle (NoLoadData) for lbctl's failed read
        placement["availableBrokers"] = [b for b in d.brokers if b in brokers]
        has_policies = _has_policies(placement.get("policies"))
        for b, rep in brokers.items():
            m = metrics[b]
            if not rep or not isinstance(m, LbMetrics):
                continue
            stats = rep["lastStats"]
            load[b] = broker_load_data(m, stats, settings, captured)
            tops[b] = top_bundles_load_data(stats, settings, has_policies)

        from lbctl.sources.live_policies import read_broker_identity

        for b, ident in read_broker_identity(self.client, list(brokers)).items():
            brokers[b].update(ident)  # the real version and class of each broker's lookup data
        sections: dict[str, Any] = {"brokerLoadData": load, "topBundlesLoadData": tops,
                                    **placement}
        if namespaces:
            sections["namespaces"] = namespaces
        if topics and src.topics:
            sections["topics"] = topics
        if load:
            warnings.append("extensible load manager: brokerLoadData and topBundlesLoadData rebuilt "
                            "from /broker-stats/metrics and /broker-stats/topics (the fields listed "
                            "under \"reconstructed\"; msgThroughputEMA = the current throughput)")
        name = f"live:{d.cluster}"
        snap = live_snapshot(name, cluster=d.cluster, captured_at=captured,
                             load_manager=EXTENSIBLE, config=config, brokers=brokers,
                             sections=sections)
        return LiveRead(state_from_wire(snap, name), snap, failures, warnings)
