"""The simulator's loop with the extensible load manager (an extensible snapshot).

The load model, the traffic, the brokers' report writes and the metrics are the modular loop's
(:mod:`lbctl.simulate.engine`); what differs is what the leader sees and how it decides:

* **Reporters.** Each broker keeps its own ``BrokerLoadData``: every
  ``loadBalancerReportUpdateMinIntervalMillis`` a tick of ``BrokerLoadDataReporter`` takes the
  broker's true load into it (``BrokerLoadData.update``: the ``weightedMaxEMA`` and
  ``msgThroughputEMA`` blend with ``loadBalancerHistoryResourcePercentage``) — so one cycle of
  ``loadBalancerSheddingIntervalMinutes`` is that many ticks. It starts from the snapshot's
  published data. A broker publishes when it writes its report (``needBrokerDataUpdate``, as the
  modular loop decides); the leader's store holds what was last published, used as is.
* **Top bundles.** Every broker publishes ``TopKBundles`` of its true bundle stats
  (``loadBalancerMaxNumberOfBundlesInBundleLoadReport``) each cycle.
* **The cycle.** :class:`~lbctl.loadmanager.extensible.ExtensibleLoadManager` with its memory
  (hit count, cool-down, recently unloaded bundles and brokers) carried; its load-data store is
  the published one. A transfer moves its bundle to the shedder's destination; an unload (transfer
  disabled) to the broker ``LeastResourceUsageWithWeight`` would pick at the next lookup (the
  placement preview). Splits are decided but not applied, as in the modular loop.

Cycle 1 is ``lbctl recommend`` on the snapshot as given.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from lbctl.config import Settings
from lbctl.loadmanager.extensible import ExtensibleLoadManager
from lbctl.loadmanager.select import extensible_load_manager
from lbctl.model.brokerload import (
    BrokerLoadData,
    PublishedLoad,
    PublishedTopBundles,
    first_sample,
    top_k_bundles,
)
from lbctl.model.cluster import EXTENSIBLE, ClusterState
from lbctl.model.decision import Label
from lbctl.model.javaorder import java_hash_order
from lbctl.model.load import LocalBrokerData
from lbctl.records import replace


class ExtensibleDriver:
    """The extensible load manager's part of one simulation run (``run`` is the engine's run:
    its states, settings, ownership, true and written reports)."""

    def __init__(self) -> None:
        self.reporter: dict[str, BrokerLoadData] = {}
        self.published: dict[str, BrokerLoadData] = {}
        self.lm: ExtensibleLoadManager | None = None

    def load_manager(self, run: Any) -> ExtensibleLoadManager:
        s0: ClusterState = run.states[0]
        settings: Settings = run.settings0
        # every broker's reporter, from the snapshot's published data
        for b, pub in s0.broker_load_data.items():
            data = pub.data if pub.data.updatedAt else replace(pub.data, updatedAt=s0.captured_at)
            self.reporter[b] = data if pub.has_features else first_sample(
                data, settings, s0.captured_at)
        self.published = dict(self.reporter)
        self.lm = extensible_load_manager(run.opts)
        return self.lm

    @staticmethod
    def _ticks(settings: Settings) -> int:
        every = max(1, int(settings["loadBalancerReportUpdateMinIntervalMillis"]))
        return max(1, (int(settings["loadBalancerSheddingIntervalMinutes"]) * 60_000) // every)

    def report(self, b: str, true: LocalBrokerData, now: int, settings: Settings
               ) -> BrokerLoadData:
        """The broker's reporter after this cycle's ticks on its true load."""
        data = self.reporter.get(b, BrokerLoadData())
        sample = BrokerLoadData(
            true.cpu, true.memory, true.directMemory, true.bandwidthIn, true.bandwidthOut,
            true.msgThroughputIn, true.msgThroughputOut, true.msgRateIn, true.msgRateOut,
            true.numBundles or len(true.lastStats), true.numTopics)
        n = self._ticks(settings)
        step = max(1, (now - data.updatedAt) // n) if data.updatedAt else 0
        for i in range(n):
            at = now - (n - 1 - i) * step if data.updatedAt else now
            data = data.update_from(replace(sample, updatedAt=at, reportedAt=at), settings)
        self.reporter[b] = data
        return data

    def view(self, run: Any, now: int, trace_state: ClusterState, written: int) -> ClusterState:
        """The leader's view at ``now``: the published load data and every broker's top bundles."""
        s0: ClusterState = run.states[0]
        settings: Settings = run.settings(run.trace_index)
        k = int(settings["loadBalancerMaxNumberOfBundlesInBundleLoadReport"])
        tops: dict[str, PublishedTopBundles] = {}
        for b in run.owned:
            true = run.true[b]
            data = self.report(b, true, now, settings)
            if run.written[b].lastUpdate == now:  # published with this cycle's write
                self.published[b] = data
            stats = true.lastStats
            tops[b] = PublishedTopBundles(top_k_bundles(
                ((x, stats[x]) for x in java_hash_order(stats)), k, settings,
                trace_state.policies.has_policies if trace_state.policies else None))
        return ClusterState(
            cluster=s0.cluster, captured_at=now,
            brokers=MappingProxyType({b: run.true[b] for b in run.owned}),
            load_manager=EXTENSIBLE, config=trace_state.config,
            namespaces=trace_state.namespaces, topics=trace_state.topics,
            broker_load_data=MappingProxyType({b: PublishedLoad(self.published[b], True)
                                               for b in run.owned if b in self.published}),
            top_bundles_load_data=MappingProxyType(tops),
            policies=trace_state.policies, namespace_topics=trace_state.namespace_topics,
            source=s0.source)

    def decide(self, run: Any, k: int, view: ClusterState, settings: Settings, memory: Any
               ) -> tuple[Any, list[tuple[str, str | None, str]], dict[str, float | None], int,
                          str | None]:
        """One extensible cycle; a transfer goes to the shedder's destination, an unload to the
        placement preview's broker."""
        assert self.lm is not None
        if memory is not None:  # the store is what the brokers published, used as is
            memory = replace(memory, broker_load=MappingProxyType({}))
        result = self.lm.run_cycle(view, settings, memory)
        moves: list[tuple[str, str | None, str]] = []
        for a in result.actions:
            u = a.decision.unload
            dest = u.destination or (a.preview.broker if a.preview is not None else None)
            moves.append((u.bundle, dest, str(a.decision.reason)))
        skipped = sum(1 for d in (result.shed.decisions if result.shed else ())
                      if d.label is not Label.SUCCESS)
        scores: dict[str, float | None] = {b: d.weightedMaxEMA for b, d in result.store.items()}
        return result.memory, moves, scores, skipped, result.gate
