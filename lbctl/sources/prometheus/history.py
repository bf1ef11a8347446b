"""One step's samples, and the snapshots built from them (:class:`PrometheusHistory`)."""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lbctl.model.cluster import EXTENSIBLE, iso_time
from lbctl.sources.prometheus.catalog import (
    CATALOG,
    GAPS,
    MIB,
    RATES,
    RECONSTRUCTED,
    RENAMED_REASONS,
    RESOURCES,
    STAT_COUNTS,
    Metric,
    broker_id,
    discover,
    selector,
)
from lbctl.sources.prometheus.decisions import add_moves, increase, owners_of
from lbctl.sources.prometheus.request import HistoryRequest, Report

if TYPE_CHECKING:
    from lbctl.admin.prometheus import PrometheusClient, Series


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
            q = f"last_over_time({selector(name, self.layout.cluster, m.matchers)}[{self._window()}])"
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
        from lbctl.admin.prometheus import chunk_count, plan_chunks

        req = self.req
        last_t = req.end_ms + req.step_ms  # one step past the end: the last interval's decisions
        # every chunk asks once per metric name found: refused before the first one if too many
        queries = sum(len(names) for names in self.layout.names.values())
        self.client.check_requests(max(1, queries) * chunk_count(
            req.start_ms, last_t, req.step_ms, self.layout.max_series,
            max_points=self.client.max_points, max_samples=self.client.max_samples))
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
            add_moves(snap, next_owners)
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
                        yield emit(ready, owners_of(snap["brokers"]))
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
                yield emit(ready, owners_of(snap["brokers"]))
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
        exported = [r for r in RESOURCES if f"resources.{r}" in layout.names]
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
            snap["topics"] = {name: {**{k: float(stats.get(k, 0.0)) for k in RATES},
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
                    **{k: float(v.get(k, 0.0)) for k in RATES},
                    **{k: _int(v.get(k)) for k in STAT_COUNTS}, "cacheSize": 0}
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
                **dict.fromkeys(RATES, 0.0), "consumerCount": 0, "producerCount": 0,
                "topics": 0, "cacheSize": 0})
            for _, v in per_bundle[name]:
                for k in RATES:
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
        for r in RESOURCES:
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
        out[RECONSTRUCTED] = [*RESOURCES, "msgThroughputIn", "msgThroughputOut", "msgRateIn",
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
            total, who = increase(before, after, notes, m.field)
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
                label = RENAMED_REASONS.get((m.field, label), label)
                inc, who = increase({key: before[key]} if key in before else {},
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
    from lbctl.safe.redact import url_without_userinfo

    return url_without_userinfo(url)


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
