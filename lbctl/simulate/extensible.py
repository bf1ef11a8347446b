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
  placement preview). Every broker's ``SplitScheduler`` runs on its own timer,
  ``loadBalancerSplitIntervalMinutes`` (:func:`lbctl.loadmanager.clock.split_runs`: with
  intervals that differ, a cycle sees no split check or several); its splits are carried out
  as the modular loop's.

Cycle 1 is ``lbctl recommend`` on the snapshot as given.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from lbctl.config import Settings
from lbctl.loadmanager.base import CycleResult
from lbctl.model.brokerload import (
    BrokerLoadData,
    PublishedLoad,
    PublishedTopBundles,
    first_sample,
    top_k_bundles,
)
from lbctl.model.cluster import EXTENSIBLE, ClusterState
from lbctl.model.load import LocalBrokerData
from lbctl.records import replace
from lbctl.strategies.split.default_namespace_bundle_split_strategy import bundle_stats_walk

if TYPE_CHECKING:
    from lbctl.simulate.engine import Tick, _Run


class ExtensibleDriver:
    """The extensible load manager's part of one simulation run (``run`` is the engine's run:
    its load manager, states, settings, ownership, true and written reports)."""

    def __init__(self) -> None:
        self.reporter: dict[str, BrokerLoadData] = {}
        self.published: dict[str, BrokerLoadData] = {}

    def start(self, run: _Run) -> None:
        """Every broker's reporter, from the snapshot's published data."""
        s0 = run.states[0]
        settings = run.settings0
        for b, pub in s0.broker_load_data.items():
            data = pub.data if pub.data.updatedAt else replace(pub.data, updatedAt=s0.captured_at)
            self.reporter[b] = data if pub.has_features else first_sample(
                data, settings, s0.captured_at)
        self.published = dict(self.reporter)

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

    def view(self, run: _Run, tick: Tick) -> ClusterState:
        """The leader's view at the tick: the published load data and every broker's top
        bundles."""
        now, trace_state = tick.now, tick.trace_state
        s0 = run.states[0]
        settings = tick.settings
        k = int(settings["loadBalancerMaxNumberOfBundlesInBundleLoadReport"])
        tops: dict[str, PublishedTopBundles] = {}
        for b in run.owned:
            true = run.true[b]
            data = self.report(b, true, now, settings)
            if run.written[b].lastUpdate == now:  # published with this cycle's write
                self.published[b] = data
            # TopBundleLoadDataReporter walks PulsarStats' bundle-stats ConcurrentHashMap, the
            # map the cycle's split walk reads too: the same order (bundle_stats_walk)
            tops[b] = PublishedTopBundles(top_k_bundles(
                bundle_stats_walk(true.lastStats, iterated=False), k, settings,
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

    def decide(self, run: _Run, tick: Tick, view: ClusterState, memory: Any) -> CycleResult:
        """One extensible cycle (what it moves where: its
        :meth:`~lbctl.model.cycle.ExtensibleCycle.effect`)."""
        if memory is not None:  # the store is what the brokers published, used as is
            memory = replace(memory, broker_load=MappingProxyType({}))
        return run.lm.run_cycle(view, tick.settings, memory)
