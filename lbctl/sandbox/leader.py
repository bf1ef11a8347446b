"""The sandbox's leader broker: lbctl's own load managers, run on Pulsar's cadence, acting.

Every ``loadBalancerSheddingIntervalMinutes`` of cluster time (``LoadSheddingTask``) the leader
observes the cluster as the metadata store holds it — each live broker's report *as last written*
(:mod:`lbctl.sandbox.life`), the namespaces' boundaries, the topics, the runtime configuration
with its dynamic overrides — decoded by the very functions a live read uses
(:func:`lbctl.sources.live_data.live_snapshot`, ``reconcile``), so that ``lbctl snapshot export``
at that instant captures the same state. It then runs one cycle of the load manager
:func:`lbctl.loadmanager.select.choose` picks for that state and configuration, on the leader's
clock (:class:`lbctl.loadmanager.clock.Follower`, which carries its memory: bundle time averages,
recently unloaded bundles, the shedder's and the placement's state), and carries the cycle's plan
out: each unload goes to its destination (the bundle unowned until its clients look it up again,
``bundleBrokerAffinityMap``), each split divides the bundle at the plan's boundaries (children
unloaded when ``loadBalancerAutoUnloadSplitBundlesEnabled``). The configuration governs it: with
``loadBalancerSheddingEnabled=false`` the cycle is gated and nothing moves; a changed strategy makes
a new load manager at the next cycle (Pulsar recreates the strategy on the dynamic update), with a
fresh memory.

On an extensible cluster the state is the one ``ExtensibleReader`` rebuilds (each broker's
``BrokerLoadData`` and ``TopBundlesLoadData`` from its metrics and topic stats, the functions of
:mod:`lbctl.sources.live_extensible`), the load manager is the extensible one (TransferShedder),
and its transfers go straight to their destination.

Each cycle is logged (:attr:`Leader.decisions`), so a test can hold the leader's own decisions
against ``lbctl recommend --all-cycles`` over an exported history.

**Faults** (:class:`LeaderFault`) make it deviate on purpose: settings other than those it
advertises (``deviate``), a stuck leader (no cycle at all), or every n-th cycle skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lbctl.model.cluster import EXTENSIBLE, MODULAR, ClusterState
from lbctl.sandbox.server import fmt

if TYPE_CHECKING:
    from lbctl.config import Settings
    from lbctl.loadmanager.base import CycleResult, LoadManager
    from lbctl.loadmanager.clock import Follower
    from lbctl.sandbox.life import Life
    from lbctl.sandbox.server import TestCluster


@dataclass
class LeaderFault:
    """How the leader deviates on purpose (all off by default)."""

    deviate: dict[str, str] = field(default_factory=dict)  # settings used but not advertised
    stuck: bool = False  # runs no cycle
    skip_every: int = 0  # skips every n-th cycle (0: none)


@dataclass(frozen=True)
class Decision:
    """One cycle of the leader: when (cluster epoch ms), its gate, and its plan's actions as
    plan@1 writes them."""

    at: int
    leader: str
    shedding: str
    placement: str
    gate: str | None
    actions: tuple[dict[str, Any], ...]


class Leader:
    """Runs the load manager on the cluster's clock (module docstring)."""

    def __init__(self, cluster: TestCluster, life: Life):
        self.cluster = cluster
        self.life = life
        self.fault = LeaderFault()
        self.decisions: list[Decision] = []
        # LoadSheddingTask's first run comes one interval after the start
        self.next_cycle = life.now + 60.0 * max(1, int(life.setting(
            "loadBalancerSheddingIntervalMinutes")))
        self.cycles = 0
        self._follower: Follower | None = None
        self._key: tuple[Any, ...] | None = None
        self._last: CycleResult | None = None

    # ---- who leads ------------------------------------------------------------------------------
    def broker(self) -> str | None:
        """The leader broker: the one named, else the first live broker (the oldest lock)."""
        c = self.cluster
        if c.leader is not None and c.leader in c.brokers:
            return c.leader
        return next(iter(c.brokers), None)

    def broker_left(self, broker: str) -> None:
        """A broker left; if it led, the next leader starts with an empty memory."""
        if self._key is not None and self._key[0] == broker:
            self._follower = None
            self._key = None
            self._last = None

    # ---- the cycle ------------------------------------------------------------------------------
    def observe(self, now_ms: int) -> ClusterState:
        """The cluster as a live read at ``now_ms`` would capture it (module docstring)."""
        from lbctl.sources.live_data import lb_settings, live_snapshot, reconcile
        from lbctl.sources.snapshot_schema import state_from_wire

        c, life = self.cluster, self.life
        first = next(iter(c.brokers))
        runtime = {**c.config, **c.dynamic, "loadManagerClassName": c.broker_lm_class(first)}
        config, _ = lb_settings(runtime)
        dynamic, _ = lb_settings(dict(c.dynamic))  # what /configuration/values lists
        namespaces = {ns: {"boundaries": [fmt(x) for x in bounds], "numBundles": len(bounds) - 1}
                      for ns, bounds in c.namespaces.items()}
        sections: dict[str, Any] = {"availableBrokers": list(c.brokers), "policies": {
            "namespaceIsolationPolicies": dict(c.isolation_policies),
            "antiAffinityGroups": dict(c.anti_affinity),
            "failureDomains": {d: {"brokers": list(b)} for d, b in c.failure_domains.items()}}}
        if dynamic:
            sections["dynamicConfig"] = dynamic
        brokers: dict[str, Any] = {}
        topics: dict[str, Any] = {}
        if c.extensible:
            kind = EXTENSIBLE
            self._extensible(now_ms, config, brokers, topics, namespaces, sections)
        else:
            kind = MODULAR
            for b in c.brokers:
                report = life.report(b)
                if report is not None:
                    brokers[b] = {**report, "lastStats": dict(report["lastStats"]),
                                  "bundles": list(report["bundles"])}
            for b in brokers:
                topics.update(life.topic_stats(b))  # = flatten_topics(broker_topics(b))
            reconcile(brokers, namespaces)
        if namespaces:
            sections["namespaces"] = namespaces
        if topics:
            sections["topics"] = topics
        name = f"live:{c.cluster}"
        snap = live_snapshot(name, cluster=c.cluster, captured_at=now_ms, load_manager=kind,
                             config=config, brokers=brokers, sections=sections)
        return state_from_wire(snap, name)

    def _extensible(self, now_ms: int, config: dict[str, Any], brokers: dict[str, Any],
                    topics: dict[str, Any], namespaces: dict[str, Any],
                    sections: dict[str, Any]) -> None:
        """An extensible cluster's state as ``ExtensibleReader.read`` rebuilds it: each broker's
        ``BrokerLoadData`` and ``TopBundlesLoadData`` from its ``/broker-stats/metrics`` and
        ``/broker-stats/topics`` (the leader of a real one reads them from system topics)."""
        from lbctl.sources.live_data import live_settings, reconcile
        from lbctl.sources.live_extensible import (
            _has_policies,
            broker_load_data,
            bundle_stats,
            local_broker_data,
            parse_lb_metrics,
            top_bundles_load_data,
        )

        c, life = self.cluster, self.life
        bounds = {ns: list(b) for ns, b in c.namespaces.items()}
        metrics = {}
        for b in c.brokers:
            m = parse_lb_metrics(c.metrics(b), f"{b} metrics")
            stats, of_broker, _ = bundle_stats(life.broker_topics(b), bounds)
            topics.update(of_broker)
            brokers[b] = local_broker_data(m, stats, now_ms)
            metrics[b] = m
        reconcile(brokers, namespaces)
        settings = live_settings(config, sections.get("dynamicConfig"))
        has_policies = _has_policies(sections.get("policies"))
        load, tops = {}, {}
        for b, rep in brokers.items():
            load[b] = broker_load_data(metrics[b], rep["lastStats"], settings, now_ms)
            tops[b] = top_bundles_load_data(rep["lastStats"], settings, has_policies)
            rep.update({"brokerVersionString": c.brokers[b].version,
                        "loadManagerClassName": c.broker_lm_class(b)})
        sections["brokerLoadData"] = load
        sections["topBundlesLoadData"] = tops

    def due(self, t: float) -> None:
        """The cycle due at cluster time ``t`` (called under the cluster's lock)."""
        self.cycles += 1
        self.next_cycle = t + 60.0 * max(1, int(self.life.setting(
            "loadBalancerSheddingIntervalMinutes")))
        f = self.fault
        leader = self.broker()
        if leader is None or f.stuck or (f.skip_every and self.cycles % f.skip_every == 0):
            return
        self.run(leader, int(t * 1000))

    def run(self, leader: str, now_ms: int) -> CycleResult:
        from lbctl.loadmanager.clock import Follower
        from lbctl.loadmanager.select import Options, choose, settings_for

        state = self.observe(now_ms)
        opts = Options(overrides=dict(self.fault.deviate) or None)
        settings = settings_for(state, opts, {})
        key = (leader, settings["loadBalancerLoadSheddingStrategy"],
               settings["loadBalancerLoadPlacementStrategy"])
        if self._follower is None or key != self._key:
            self._follower = Follower(choose([state], opts, settings))
            self._key = key
        result = self._follower.step(state, settings)
        self._last = result
        plan = result.plan()
        self.decisions.append(Decision(now_ms, leader, plan.shedding, plan.placement, plan.gate,
                                       tuple(a.to_dict() for a in plan.actions)))
        self._carry_out(plan.actions)
        return result

    def _carry_out(self, actions: Any) -> None:
        c, life = self.cluster, self.life
        sources: set[str] = set()
        for a in actions:
            if a.skipped is not None or c.owners.get(a.bundle) != a.broker:
                continue
            if a.action == "split":
                ns = a.bundle.rsplit("/", 1)[0]
                positions = [int(x, 16) for x in a.boundaries or ()]
                status = c._split(a.bundle, {"splitAlgorithmName": "specified_positions_divide",
                                             "unload": "true" if a.unload else "false"},
                                  json.dumps(positions).encode(), _refused)[0]
                if status < 300:
                    life.counters.split += 1
                    life.split_done(ns)
                continue
            if a.destinationBroker is None:
                continue
            c._move(a.bundle, a.destinationBroker)
            life.counters.unload_bundle += 1
            if c.extensible:
                why = a.reason if a.reason in ("Overloaded", "Underloaded") else "Overloaded"
                life.counters.reasons[why] = life.counters.reasons.get(why, 0) + 1
            sources.add(a.broker)
        life.counters.unload_broker += len(sources)
        life.ownership_changed()

    # ---- placement on lookup --------------------------------------------------------------------
    def place(self, bundle: str) -> str | None:
        """Where a lookup assigns an unowned bundle with no destination: the placement strategy's
        ``selectBroker`` over the last cycle's load data (its memory is not carried back: lbctl
        models no preallocation); None before the first cycle or when it picks a broker gone."""
        last = self._last
        follower = self._follower
        if last is None or follower is None or not hasattr(follower.lm, "select_broker"):
            return None
        lm: LoadManager[Any] = follower.lm
        memory = last.memory
        settings: Settings = last.settings
        trace, _, _ = lm.select_broker(  # type: ignore[attr-defined]
            bundle, last.load, settings, memory.placement, memory.round_robin)  # type: ignore[attr-defined]
        broker = trace.broker
        return broker if broker in self.cluster.brokers else None


def _refused(status: int, reason: str) -> tuple[int, bytes, str, dict[str, str]]:
    return status, reason.encode(), "text/plain", {}
