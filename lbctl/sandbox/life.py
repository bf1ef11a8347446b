"""The living sandbox: load that follows bundles, reports on Pulsar's cadence, clients that look
their bundles up again, brokers that crash and come back.

A :class:`Life` attached to a :class:`~lbctl.sandbox.server.TestCluster` (:meth:`Life.attach`)
turns its fixed figures into a running cluster:

* **Traffic lives in topics** (:class:`~lbctl.truth.hosts.Traffic`, one per topic); a bundle
  carries the topics whose CRC-32 falls in its range (``ConsistentHashingTopicBundleAssigner``), so
  a split divides a bundle's topics and its traffic by where their hashes fall. A namespace's
  traffic is scaled by its factor and by the cluster's wave (:mod:`lbctl.sandbox.timeline`).
* **Each broker's usage comes from the bundles it owns**, costed by its own
  :class:`~lbctl.truth.hosts.Host` — the sandbox's truth, never lbctl's planning model, which has
  to learn the hosts from the reports as it would on a real cluster.
* **Reports on Pulsar's cadence**: every ``loadBalancerReportUpdateMinIntervalMillis`` (5 s)
  each broker samples its usage, and writes its ``LocalBrokerData`` when
  ``ModularLoadManagerImpl.needBrokerDataUpdate`` says so — more than
  ``loadBalancerReportUpdateMaxIntervalMinutes`` since the last write, or a change above
  ``loadBalancerReportUpdateThresholdPercentage`` in the message rate, the throughput, the bundle
  count or (in points) the weighted maximum usage. An extensible broker samples on the same
  cadence and publishes when ``BrokerLoadDataReporter.needBrokerDataUpdate`` says so (apache/pulsar
  ``extensions/reporter``, read at 1a5df8f3): the same test on the *unweighted*
  ``BrokerLoadData.getMaxResourceUsage`` (CPU, direct memory and the NICs; no heap, no weights;
  ``extensions/data/BrokerLoadData`` at de4f6200), while every sample moves its
  ``weightedMaxEMA`` (the 5-weight ``getMaxResourceUsageWithWeight``, the heap weighed by
  ``loadBalancerMemoryResourceWeight``). The admin API's ``load-report`` serves the
  report *as written*, which is what the leader reads from the metadata store (Pulsar's endpoint
  refreshes it first, ``ModularLoadManagerWrapper.generateLoadReport``; the sandbox does not, so
  that an export sees exactly what the leader decided on).
* **Ownership like Pulsar's**: an unloaded bundle is owned by nobody until its clients reconnect
  (``reconnect_delay`` cluster seconds later; the sandbox performs their lookup), which assigns it
  to the unload's destination (``bundleBrokerAffinityMap``) or else with the leader's placement
  strategy; a transfer (extensible) goes straight to its destination; a crashed broker's bundles
  are unowned until their clients look them up again.
* **A leader that acts** (:mod:`lbctl.sandbox.leader`) every ``loadBalancerSheddingIntervalMinutes``.

:meth:`Life.advance` runs the cluster up to a time (each sample, cycle and reconnection at its own
cluster time, in order); the server's loop calls it with the running clock (``--speed``), a test
calls it with a stepped one.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lbctl.config import SETTINGS_BY_NAME
from lbctl.model.brokerload import BrokerLoadData
from lbctl.model.load import ResourceUsage
from lbctl.sandbox.clock import Clock
from lbctl.truth.hosts import Host, HostUsage, Traffic, total

if TYPE_CHECKING:
    from lbctl.config import Settings
    from lbctl.sandbox.leader import Leader
    from lbctl.sandbox.server import TestCluster

#: loadBalancerReportUpdateMinIntervalMillis' default: how often a broker samples its usage
SAMPLE_SECONDS = 5.0
_ZERO = Traffic()


@dataclass
class Written:
    """A broker's last report written to the metadata store, and the figures
    ``needBrokerDataUpdate`` compares the next sample with (``lastData``)."""

    report: dict[str, Any]
    at: float
    msg_rate: float
    throughput: float
    bundles: int
    #: the usage figure needBrokerDataUpdate compares, a fraction: modular's 4-weight
    #: LocalBrokerData.getMaxResourceUsageWithWeight, extensible's unweighted
    #: BrokerLoadData.getMaxResourceUsage
    usage: float


@dataclass
class Wave:
    """A traffic wave: ``1 + amplitude · sin(2π (t − start) / period)`` (a diurnal cycle with a
    day's period; shorter ones to see it in a test)."""

    amplitude: float = 0.3
    period: float = 86_400.0
    start: float = 0.0

    def factor(self, t: float) -> float:
        return 1.0 + self.amplitude * math.sin(2 * math.pi * (t - self.start) / self.period)


@dataclass
class Counters:
    """The leader's ``pulsar_lb_*`` counters (``ModularLoadManagerImpl``: ``unloadBundleCount``,
    ``unloadBrokerCount``, ``bundleSplitCount``)."""

    unload_bundle: int = 0
    unload_broker: int = 0
    split: int = 0
    #: the extensible leader's ``UnloadCounter`` breakdown of its own Success decisions by
    #: ``UnloadDecision.Reason`` (Overloaded, Underloaded), and the admin unloads each broker
    #: carried out as the bundle's owner (``ExtensibleLoadManagerImpl.unloadNamespaceBundleAsync``
    #: counts them there as Success/Admin)
    reasons: dict[str, int] = field(default_factory=dict)
    admin: dict[str, int] = field(default_factory=dict)


@dataclass
class Life:
    """The living part of a test cluster (module docstring)."""

    cluster: TestCluster
    clock: Clock
    hosts: dict[str, Host]
    seed: int = 0
    reconnect_delay: float = 1.0
    topic_traffic: dict[str, Traffic] = field(default_factory=dict)
    namespace_factor: dict[str, float] = field(default_factory=dict)
    wave: Wave | None = None
    written: dict[str, Written] = field(default_factory=dict)
    down: dict[str, Any] = field(default_factory=dict)  # crashed brokers → their BrokerState
    #: brokers that serve but no longer write their load report (:meth:`freeze`)
    frozen: set[str] = field(default_factory=set)
    #: each broker's usage at its last sample, written or not (the load-report endpoint's:
    #: ``TestCluster.served_report``)
    sampled: dict[str, Any] = field(default_factory=dict)
    #: extensible mode: each broker's own ``weightedMaxEMA``, which
    #: ``BrokerLoadDataReporter.generateLoadData`` updates at every report tick
    #: (``loadBalancerReportUpdateMinIntervalMillis``), written or not; a write publishes it
    ema: dict[str, float] = field(default_factory=dict)
    counters: Counters = field(default_factory=Counters)
    leader: Leader | None = None
    #: timed events still to run: (cluster time, sequence, callable)
    events: list[tuple[float, int, Any]] = field(default_factory=list)
    now: float = 0.0
    next_sample: float = 0.0
    _rng: random.Random = field(default_factory=random.Random)
    _topic_bundle: dict[str, str] = field(default_factory=dict)
    _bundle_topics: dict[str, list[str]] = field(default_factory=dict)
    _bundle_base: dict[str, Traffic] = field(default_factory=dict)
    _sums: dict[str, dict[str, Traffic]] | None = None
    _owned: dict[str, list[str]] | None = None
    _seq: int = 0

    # ---- set-up ---------------------------------------------------------------------------------
    @classmethod
    def attach(cls, cluster: TestCluster, clock: Clock, *, hosts: Iterable[Host] | None = None,
               seed: int = 0, reconnect_delay: float = 1.0,
               topics: Mapping[str, Traffic] | None = None) -> Life:
        """Bring ``cluster`` to life: ``hosts`` per broker in order (default identical hosts),
        ``topics`` the traffic per topic (default: each bundle's current stats, spread over that
        many topics of its own)."""
        from lbctl.sandbox.leader import Leader
        from lbctl.sandbox.operations import Reassignment

        ids = list(cluster.brokers)
        given = list(hosts or [])
        life = cls(cluster, clock, {b: given[i] if i < len(given) else Host()
                                    for i, b in enumerate(ids)},
                   seed=seed, reconnect_delay=reconnect_delay)
        life._rng = random.Random(seed)
        life.now = clock.now()
        life.next_sample = life.now
        life.topic_traffic = dict(topics) if topics is not None else life._topics_from_stats()
        cluster.topics.clear()
        if topics is None:
            life._calibrate()
        cluster.clock = clock
        cluster.reassignment = Reassignment(delay=reconnect_delay)
        cluster.life = life
        life._index_topics(cluster.namespaces)
        life.leader = Leader(cluster, life)
        life.sample(force=True)
        life.next_sample = life.now + SAMPLE_SECONDS
        return life

    def _topics_from_stats(self) -> dict[str, Traffic]:
        """Each bundle's stats as the traffic of ``topics`` topics (at least one) named so that
        their hash falls in the bundle, sharing the rates equally."""
        c = self.cluster
        out: dict[str, Traffic] = {}
        covered: set[str] = set()
        for topic, st in c.topics.items():  # a scenario's topic stats are topics already
            bundle = c.bundle_of_topic(topic)
            if bundle is None or _has_traffic(c.stats.get(bundle, {})):
                # a bundle with traffic of its own keeps it: hot-broker's topic stats are only
                # the static sandbox's /broker-stats/topics sample, and taking them for their
                # bundles' traffic left the hot broker's load in the few bundles no sample topic
                # falls in (each far over the split thresholds)
                continue
            covered.add(bundle)
            out[topic] = Traffic(
                float(st.get("msgRateIn", 0.0)), float(st.get("msgRateOut", 0.0)),
                float(st.get("msgThroughputIn", 0.0)), float(st.get("msgThroughputOut", 0.0)), 1,
                int(st.get("producerCount", 0)), int(st.get("consumerCount", 0)))
        for ns, bounds in c.namespaces.items():
            names = [f"{ns}/{_range(a, b)}" for a, b in zip(bounds, bounds[1:], strict=False)
                     if f"{ns}/{_range(a, b)}" not in covered]
            if not names:
                continue
            want = {n: max(1, int(c.stats.get(n, {}).get("topics", 1))) for n in names}
            got: dict[str, list[str]] = {n: [] for n in names}
            missing = sum(want.values())
            i = 0
            while missing and i < 200 * missing + 10_000:
                topic = f"persistent://{ns}/t-{i}"
                i += 1
                b = f"{ns}/{_range(*bounds[_slot(bounds, topic):][:2])}"
                if b in got and len(got[b]) < want[b]:
                    got[b].append(topic)
                    missing -= 1
            for b, topics in got.items():
                st = c.stats.get(b, {})
                k = len(topics) or 1
                for t in topics:
                    out[t] = Traffic(
                        float(st.get("msgRateIn", 0.0)) / k, float(st.get("msgRateOut", 0.0)) / k,
                        float(st.get("msgThroughputIn", 0.0)) / k,
                        float(st.get("msgThroughputOut", 0.0)) / k, 1,
                        max(1, int(st.get("producerCount", 0)) // k),
                        max(1, int(st.get("consumerCount", 0)) // k))
        return out

    def _calibrate(self) -> None:
        """Scale each broker's topics so that its host reports the CPU usage the scenario gave it
        (a hot broker stays hot, now because of the traffic it carries) — or less traffic, where
        the host's NIC would then weigh more than that CPU: the load manager compares the weighted
        maximum (``getMaxResourceUsageWithWeight``), and a scenario's figure is the one it should
        see (balanced stays balanced on a big host with a NIC too slow for its cores)."""
        c = self.cluster
        self._index_topics(c.namespaces)
        w_in = float(self.setting("loadBalancerBandwidthInResourceWeight"))
        w_out = float(self.setting("loadBalancerBandwidthOutResourceWeight"))
        w_cpu = float(self.setting("loadBalancerCPUResourceWeight"))
        for broker, bundles in self.owned().items():
            st = c.brokers.get(broker)
            if st is None or not bundles or st.cpu[1] <= 0:
                continue
            host = self.hosts.setdefault(broker, Host())
            traffic = total(self._bundle_base.get(b, _ZERO) for b in bundles)
            idle = host.usage(Traffic()).cpu.usage
            busy = host.usage(traffic).cpu.usage - idle
            target = st.cpu[0] / st.cpu[1] * host.cores * 100
            if busy <= 0:
                continue
            k = (target - idle) / busy
            u = host.usage(traffic)
            nic = max(_pct(u.bandwidth_in) * w_in, _pct(u.bandwidth_out) * w_out)  # linear in k
            want = st.cpu[0] / st.cpu[1] * 100 * w_cpu
            if nic * k > want > 0:
                k = want / nic
            k = max(0.05, k)
            for b in bundles:
                for t in self._bundle_topics.get(b, ()):
                    self.topic_traffic[t] = self.topic_traffic[t].scaled(k)

    def _index_topics(self, namespaces: Mapping[str, list[int]],
                      only: Iterable[str] | None = None) -> None:
        """Which bundle each topic falls in (``only``: these namespaces again, after a split)."""
        redo = set(only) if only is not None else None
        if redo is not None:
            for t in [t for t in self._topic_bundle if _namespace(t) in redo]:
                del self._topic_bundle[t]
        for t in self.topic_traffic:
            ns = _namespace(t)
            if redo is not None and ns not in redo:
                continue
            bounds = namespaces.get(ns)
            if bounds:
                i = _slot(bounds, t)
                self._topic_bundle[t] = f"{ns}/{_range(bounds[i], bounds[i + 1])}"
        self._bundle_topics = {}
        for t, b in self._topic_bundle.items():
            self._bundle_topics.setdefault(b, []).append(t)
        self._bundle_base = {b: total(self.topic_traffic[t] for t in ts)
                             for b, ts in self._bundle_topics.items()}
        self._sums = None

    # ---- what changed ---------------------------------------------------------------------------
    def ownership_changed(self) -> None:
        """A bundle moved, was split or lost its owner: the per-broker sums are rebuilt."""
        self._sums = None
        self._owned = None

    def split_done(self, namespace: str) -> None:
        self._index_topics(self.cluster.namespaces, [namespace])
        self.ownership_changed()

    def set_topic(self, topic: str, traffic: Traffic) -> None:
        """A topic appears or its traffic changes (a burst, a hot namespace)."""
        self.topic_traffic[topic] = traffic
        self._index_topics(self.cluster.namespaces, [_namespace(topic)])

    def add_namespace(self, namespace: str, bundles: int, topics: Mapping[str, Traffic]) -> None:
        """A namespace appears with ``bundles`` equal bundles and these topics; its clients look
        its bundles up at once (each then assigned by the leader's placement)."""
        c = self.cluster
        step = (0xFFFFFFFF + 1) // max(1, bundles)
        bounds = [i * step for i in range(max(1, bundles))] + [0xFFFFFFFF]
        c.namespaces[namespace] = bounds
        for a, b in zip(bounds, bounds[1:], strict=False):
            name = f"{namespace}/{_range(a, b)}"
            c.stats[name] = c._zero()
            c.pending[name] = _pending(self.now)
        self.topic_traffic.update(topics)
        self._index_topics(c.namespaces, [namespace])

    # ---- traffic now ----------------------------------------------------------------------------
    def factor(self, namespace: str, t: float) -> float:
        f = self.namespace_factor.get(namespace, 1.0)
        return f * self.wave.factor(t) if self.wave is not None else f

    def bundle_traffic(self, bundle: str, t: float) -> Traffic:
        base = self._bundle_base.get(bundle, _ZERO)
        return base.scaled(self.factor(_namespace(bundle), t))

    def topic_now(self, topic: str, t: float) -> Traffic:
        return self.topic_traffic[topic].scaled(self.factor(_namespace(topic), t))

    def owned(self) -> dict[str, list[str]]:
        """Broker → the bundles it owns (the cluster's ``owners``, indexed once per change)."""
        if self._owned is None:
            out: dict[str, list[str]] = {b: [] for b in self.cluster.brokers}
            for bundle, o in self.cluster.owners.items():
                out.setdefault(o, []).append(bundle)
            self._owned = out
        return self._owned

    def _broker_sums(self) -> dict[str, dict[str, Traffic]]:
        if self._sums is None:
            sums: dict[str, dict[str, Traffic]] = {}
            for broker, bundles in self.owned().items():
                per_ns: dict[str, list[Traffic]] = {}
                for b in bundles:
                    per_ns.setdefault(_namespace(b), []).append(self._bundle_base.get(b, _ZERO))
                sums[broker] = {ns: total(ts) for ns, ts in per_ns.items()}
            self._sums = sums
        return self._sums

    def broker_traffic(self, broker: str, t: float) -> Traffic:
        return total(base.scaled(self.factor(ns, t))
                     for ns, base in self._broker_sums().get(broker, {}).items())

    # ---- the clock ------------------------------------------------------------------------------
    def at(self, when: float, action: Any) -> None:
        """Run ``action(life)`` at cluster time ``when`` (a scenario's event)."""
        self._seq += 1
        heapq.heappush(self.events, (when, self._seq, action))

    def advance(self, until: float | None = None, budget: float | None = None) -> None:
        """Run everything due up to ``until`` (default: the clock's now), each at its own time;
        at one instant the leader's cycle first (on what an export at that instant reads), then
        the scenario's events, the brokers' samples, the clients' reconnections. ``budget``:
        stop after that many wall seconds and leave the rest for the next call (the server's
        loop stays responsive when the machine cannot keep up with the clock)."""
        until = self.clock.now() if until is None else until
        c = self.cluster
        deadline = None if budget is None else time.monotonic() + budget
        while deadline is None or time.monotonic() < deadline:
            leader_at = self.leader.next_cycle if self.leader is not None else math.inf
            pend = min((p.ready_at for p in c.pending.values()), default=math.inf)
            event = self.events[0][0] if self.events else math.inf
            t = min(leader_at, self.next_sample, pend, event)
            if t > until:
                break
            self.now = t
            with c._lock:
                if leader_at == t and self.leader is not None:
                    self.leader.due(t)
                elif event == t:
                    _, _, action = heapq.heappop(self.events)
                    action(self)
                elif self.next_sample == t:
                    self.sample()
                    self.next_sample = t + SAMPLE_SECONDS
                else:
                    c._settle(t)
                    self.ownership_changed()
        else:
            return  # out of budget: the clock is ahead of the cluster until the next call
        self.now = max(self.now, until)

    # ---- load reports ---------------------------------------------------------------------------
    def setting(self, name: str) -> Any:
        raw = self.cluster.dynamic.get(name, self.cluster.config.get(name))
        s = SETTINGS_BY_NAME[name]
        return s.parse(raw) if raw is not None else s.default

    def sample(self, force: bool = False) -> None:
        """Every live broker samples its usage and writes its report when
        ``needBrokerDataUpdate`` says so (module docstring)."""
        max_age = float(self.setting("loadBalancerReportUpdateMaxIntervalMinutes")) * 60
        threshold = float(self.setting("loadBalancerReportUpdateThresholdPercentage"))
        weights = [float(self.setting(k)) for k in (
            "loadBalancerCPUResourceWeight", "loadBalancerDirectMemoryResourceWeight",
            "loadBalancerBandwidthInResourceWeight", "loadBalancerBandwidthOutResourceWeight")]
        owned = self.owned()
        settings = self._settings() if self.cluster.extensible else None
        for broker in list(self.cluster.brokers):
            if broker in self.frozen:
                continue
            traffic = self.broker_traffic(broker, self.now)
            host = self.hosts.setdefault(broker, Host())
            usage = reported(host, traffic, self._rng)
            self.sampled[broker] = usage
            data = _load_data(usage) if settings is not None else None
            figures = (traffic.msg_rate_in + traffic.msg_rate_out,
                       traffic.throughput_in + traffic.throughput_out,
                       len(owned.get(broker, ())) + 1,
                       data.max_resource_usage() if data is not None
                       else _weighted(usage, weights))
            if data is not None and settings is not None:
                self._update_ema(broker, data.weighted_max(settings))
            last = self.written.get(broker)
            if not force and last is not None and self.now - last.at <= max_age and max(
                    _change(last.msg_rate, figures[0]), _change(last.throughput, figures[1]),
                    _change(last.bundles, figures[2]),
                    100.0 * abs(last.usage - figures[3])) <= threshold:
                continue
            self._write(broker, usage, figures)

    def _write(self, broker: str, usage: Any, figures: tuple[float, float, int, float]) -> None:
        c = self.cluster
        st = c.brokers[broker]
        st.cpu = (usage.cpu.usage, usage.cpu.limit)
        st.memory = (usage.memory.usage, usage.memory.limit)
        st.direct = (usage.direct_memory.usage, usage.direct_memory.limit)
        st.bw_in = (usage.bandwidth_in.usage, usage.bandwidth_in.limit)
        st.bw_out = (usage.bandwidth_out.usage, usage.bandwidth_out.limit)
        for b in self.owned().get(broker, ()):
            tr = self.bundle_traffic(b, self.now)
            c.stats[b] = {"msgRateIn": tr.msg_rate_in, "msgRateOut": tr.msg_rate_out,
                          "msgThroughputIn": tr.throughput_in,
                          "msgThroughputOut": tr.throughput_out,
                          "consumerCount": tr.consumers, "producerCount": tr.producers,
                          "topics": tr.topics, "cacheSize": 0}
        if c.extensible:
            if broker not in self.ema:  # a broker (re)started: its first report
                self._update_ema(broker, _load_data(usage).weighted_max(self._settings()))
            st.ema = self.ema[broker]  # the published weightedMaxEMA: as of this write
        report = c.fresh_report(broker, int(self.now * 1000))
        self.written[broker] = Written(report, self.now, figures[0], figures[1], figures[2],
                                       figures[3])
        st.gains.clear()  # LocalBrokerData.update: gains and losses since the last write
        st.losses.clear()

    def _settings(self) -> Settings:
        """The runtime configuration with its dynamic overrides, resolved as a broker reads it."""
        from lbctl.config import resolve

        return resolve(self.cluster.config, dynamic_config=self.cluster.dynamic)

    def _update_ema(self, broker: str, weighted: float) -> None:
        """``BrokerLoadData.updateWeightedMaxEMA``: the first update takes the weighted maximum
        as it is, each later one moves it by ``1 - loadBalancerHistoryResourcePercentage``."""
        prev = self.ema.get(broker)
        if prev is None:
            self.ema[broker] = weighted
            return
        h = float(self.setting("loadBalancerHistoryResourcePercentage"))
        self.ema[broker] = prev * h + (1 - h) * weighted

    def report(self, broker: str) -> dict[str, Any] | None:
        w = self.written.get(broker)
        return w.report if w is not None else None

    # ---- topics ---------------------------------------------------------------------------------
    def broker_topics(self, broker: str) -> dict[str, Any]:
        """``/broker-stats/topics`` of ``broker`` now: its bundles' topics."""
        out: dict[str, Any] = {}
        for bundle in self.owned().get(broker, ()):
            ns, rng = bundle.rsplit("/", 1)
            f = self.factor(ns, self.now)
            for topic in self._bundle_topics.get(bundle, ()):
                tr = self.topic_traffic[topic].scaled(f)
                subs = {"sub": {"consumers": [{"consumerName": f"c{i}"}
                                              for i in range(tr.consumers)],
                                "msgRateOut": tr.msg_rate_out, "msgBacklog": 0}}
                out.setdefault(ns, {}).setdefault(rng, {}).setdefault("persistent", {})[topic] = {
                    "publishers": [], "replication": {}, "subscriptions": subs,
                    "producerCount": tr.producers, "msgRateIn": tr.msg_rate_in,
                    "msgRateOut": tr.msg_rate_out, "msgThroughputIn": tr.throughput_in,
                    "msgThroughputOut": tr.throughput_out, "storageSize": 0, "backlogSize": 0}
        return out

    def topic_stats(self, broker: str) -> dict[str, dict[str, Any]]:
        """What a live read keeps of :meth:`broker_topics` (``flatten_topics``' records), built
        directly: the leader reads every broker's topics each cycle."""
        out: dict[str, dict[str, Any]] = {}
        for bundle in self.owned().get(broker, ()):
            f = self.factor(_namespace(bundle), self.now)
            for topic in self._bundle_topics.get(bundle, ()):
                tr = self.topic_traffic[topic].scaled(f)
                out[topic] = {"msgRateIn": tr.msg_rate_in, "msgRateOut": tr.msg_rate_out,
                              "msgThroughputIn": tr.throughput_in,
                              "msgThroughputOut": tr.throughput_out,
                              "producerCount": tr.producers, "consumerCount": tr.consumers}
        return out

    def topics_of(self, broker: str) -> list[tuple[str, Traffic]]:
        """``broker``'s topics and their traffic now (``/metrics``)."""
        return [(t, self.topic_now(t, self.now)) for b in self.owned().get(broker, ())
                for t in self._bundle_topics.get(b, ())]

    def all_topics(self) -> list[str]:
        return list(self.topic_traffic)

    # ---- brokers come and go --------------------------------------------------------------------
    def crash(self, broker: str) -> None:
        """The broker stops: its connections drop, its report's znode goes (the leader no longer
        sees it), its bundles are owned by nobody until their clients look them up again."""
        c = self.cluster
        st = c.brokers.pop(broker, None)
        if st is None:
            return
        self.down[broker] = st
        self.written.pop(broker, None)
        self.ema.pop(broker, None)  # its JVM's load data goes with it
        for bundle, owner in list(c.owners.items()):
            if owner == broker:
                del c.owners[bundle]
                c.pending[bundle] = _pending(self.now + self.reconnect_delay)
        self.ownership_changed()
        if self.leader is not None:
            self.leader.broker_left(broker)

    def freeze(self, broker: str) -> None:
        """The broker keeps serving its bundles but stops writing its load report — a stuck
        ``LoadReportUpdaterTask`` or a lost metadata-store session: the report the leader reads
        grows old (``ModularLoadManagerImpl`` goes on deciding on it), which is what ``lbctl
        watch``'s ``report-stale`` looks for. :meth:`thaw` ends it; the next sample writes, its
        report being older than ``loadBalancerReportUpdateMaxIntervalMinutes``."""
        self.frozen.add(broker)

    def thaw(self, broker: str) -> None:
        self.frozen.discard(broker)

    def restart(self, broker: str) -> None:
        """A crashed broker comes back, with no bundle, and writes its first report."""
        st = self.down.pop(broker, None)
        if st is None:
            return
        st.gains.clear()
        st.losses.clear()
        self.cluster.brokers[broker] = st
        self.ownership_changed()
        traffic = self.broker_traffic(broker, self.now)
        usage = reported(self.hosts.setdefault(broker, Host()), traffic, self._rng)
        self._write(broker, usage, self._first(usage))

    def join(self) -> str:
        """A new broker joins (the next host of the fleet's kind), empty, and writes its first
        report; lookups and the leader may give it bundles from then on."""
        from lbctl.truth.hosts import mixed_fleet

        broker = self.cluster.add_broker()
        kinds = {h.cores for h in self.hosts.values()}
        self.hosts[broker] = (mixed_fleet(len(self.hosts) + 1, self.seed)[-1] if len(kinds) > 1
                              else next(iter(self.hosts.values()), Host()))
        self.ownership_changed()
        usage = reported(self.hosts[broker], Traffic(), self._rng)
        self._write(broker, usage, self._first(usage))
        return broker

    def _first(self, usage: HostUsage) -> tuple[float, float, int, float]:
        """What a new broker's next needBrokerDataUpdate compares with after its first report (no
        bundle, no traffic yet). Modular: ``ModularLoadManagerImpl.start`` writes its
        ``localData`` but leaves ``lastData`` a fresh ``LocalBrokerData``, all zero, no bundle
        either, so the next tick writes again (its heartbeat bundle is a change from 0).
        Extensible: ``BrokerLoadDataReporter.reportAsync`` copies the pushed data into
        ``lastData``: the first sample's bundle count and unweighted maximum usage."""
        if self.cluster.extensible:
            return (0.0, 0.0, 1, _load_data(usage).max_resource_usage())
        return (0.0, 0.0, 0, 0.0)

    def drift(self, sigma: float) -> None:
        """Every topic's traffic drifts by a log-normal factor (median 1, ``sigma``)."""
        rng = self._rng
        for t, tr in self.topic_traffic.items():
            self.topic_traffic[t] = tr.scaled(math.exp(rng.gauss(0.0, sigma)))
        self._index_topics(self.cluster.namespaces)


def reported(host: Host, traffic: Traffic, rng: random.Random | None = None) -> HostUsage:
    """What a broker on ``host`` reports for ``traffic``: the host's *demand*
    (:meth:`~lbctl.truth.hosts.Host.usage`, which the simulator keeps uncapped on purpose) held to
    what a running broker can measure, resource by resource.

    * **Direct memory** never exceeds ``-XX:MaxDirectMemorySize``: the JDK's and Netty's direct
      allocators refuse past it (``LoadManagerShared.getSystemResourceUsage`` reports Netty's
      ``usedDirectMemory`` over ``DirectMemoryUtils.jvmMaxDirectMemory``). Pulsar's allocator
      (``PulsarByteBufAllocator``, ``pulsar.allocator.out_of_memory_policy`` default
      ``FallbackToHeap``) then allocates the rest on the heap, so the excess shows there.
    * **Heap** (``Runtime.totalMemory - freeMemory`` over ``maxMemory``) cannot exceed the
      maximum heap either: a JVM at its limit collects or fails, it does not report more.
    * **CPU**: ``LinuxBrokerHostUsageImpl`` reports the busy share of ``/proc/stat``'s ticks times
      ``getTotalCpuLimit`` (or the cgroup's ``cpuacct.usage`` under its CFS quota), so a
      saturated host reports its limit, never more; demand beyond it queues.
    * **Bandwidth**: the NIC counters' rate over the NIC's speed; a NIC does not carry more than
      its line rate (the sandbox sets no ``loadBalancerOverrideBrokerNicSpeedGbps``, the one way a
      real report exceeds 100 %: a limit configured below the real speed).
    """
    u = host.usage(traffic, rng)
    spill = max(0.0, u.direct_memory.usage - u.direct_memory.limit)
    return HostUsage(cpu=_capped(u.cpu), memory=_capped(u.memory, spill),
                     direct_memory=_capped(u.direct_memory), bandwidth_in=_capped(u.bandwidth_in),
                     bandwidth_out=_capped(u.bandwidth_out))


def _capped(ru: ResourceUsage, extra: float = 0.0) -> ResourceUsage:
    if ru.limit <= 0:
        return ru
    return ResourceUsage(min(ru.usage + extra, ru.limit), ru.limit)


def _pending(ready_at: float) -> Any:
    from lbctl.sandbox.operations import Pending

    return Pending(None, ready_at, False)


def _pct(ru: Any) -> float:
    """``ResourceUsage.percentUsage``."""
    return ru.usage / ru.limit * 100 if ru.limit > 0 else 0.0


def _load_data(usage: HostUsage) -> BrokerLoadData:
    """A sample as an extensible broker's ``BrokerLoadData`` holds it, for its usage figures
    (:meth:`~lbctl.model.brokerload.BrokerLoadData.max_resource_usage`, ``weighted_max``): the
    sandbox computes them with lbctl's own model of the class, not a copy."""
    return BrokerLoadData(cpu=usage.cpu, memory=usage.memory, directMemory=usage.direct_memory,
                          bandwidthIn=usage.bandwidth_in, bandwidthOut=usage.bandwidth_out)


def _weighted(usage: Any, weights: list[float]) -> float:
    """``LocalBrokerData.getMaxResourceUsageWithWeight`` (4 arguments), as a fraction."""
    return max(_pct(usage.cpu) * weights[0], _pct(usage.direct_memory) * weights[1],
               _pct(usage.bandwidth_in) * weights[2], _pct(usage.bandwidth_out) * weights[3]) / 100


def _change(old: float, new: float) -> float:
    """``ModularLoadManagerImpl.percentChange``."""
    if old == 0:
        return 0.0 if new == 0 else math.inf
    return 100 * abs((old - new) / old)


def _namespace(name: str) -> str:
    """The namespace of a topic (``persistent://t/ns/x``) or of a bundle (``t/ns/0x…_0x…``)."""
    rest = name.split("://", 1)[1] if "://" in name else name
    tenant, ns = rest.split("/", 2)[:2]
    return f"{tenant}/{ns}"


def _slot(bounds: list[int], topic: str) -> int:
    """The index of the bundle of ``bounds`` holding ``topic``'s CRC-32."""
    h = zlib.crc32(topic.encode()) & 0xFFFFFFFF
    return min(max(0, bisect.bisect_right(bounds, h) - 1), len(bounds) - 2)


def _range(a: int, b: int) -> str:
    return f"0x{a:08x}_0x{b:08x}"


def _has_traffic(stats: Mapping[str, Any]) -> bool:
    """Whether a scenario gave a bundle rates or throughput of its own (``TestCluster.own``'s
    stats; zero where the load is in the scenario's topics, as on the extensible cluster)."""
    return any(float(stats.get(k, 0.0)) for k in
               ("msgRateIn", "msgRateOut", "msgThroughputIn", "msgThroughputOut"))
