"""Pulsar's legacy ``SimpleLoadManagerImpl`` (Pulsar master 0058e734): one cycle and the plan of
each, behind the same protocol as the modular and extensible load managers.

Pulsar runs it when ``loadManagerClassName`` names it, and falls back to it when the configured
class cannot be created (``LoadManager.create``: a blank name, a class not found, one that fails to
initialise). A cycle is what the leader does between two shedding runs:

1. ``updateRanking`` on the brokers' load reports (:func:`lbctl.strategies.simple.decide.rank`):
   the realtime resource quotas and load factors, each broker's ranking and final rank; bundles
   preallocated by earlier lookups stay preallocated until their broker reports them.
2. ``doLoadShedding`` (:func:`~lbctl.strategies.simple.decide.shed`): nothing when
   ``loadBalancerEnabled`` is off; one bundle per overloaded broker. A bundle unloaded less than
   ``loadBalancerSheddingGracePeriodMinutes`` ago (Guava's ``expireAfterWrite`` cache
   ``unloadedHotNamespaceCache``) is skipped; with ``loadBalancerSheddingEnabled`` off the unload
   is only logged (a dry run) — and still remembered in that cache.
3. The destination is not the leader's choice: the next lookup asks ``getLeastLoadedBroker``.
   lbctl shows that lookup's answer (:func:`~lbctl.strategies.simple.decide.least_loaded`, on the
   rankings of this cycle, each lookup preallocating its pick as Pulsar does).
4. ``doNamespaceBundleSplit`` (:func:`auto_splits`): not the leader's. Every broker runs it on its
   own report right after ``writeLoadReportOnZookeeper`` wrote one (``needUpdate``), so lbctl runs
   it for each broker whose report is newer than the one the previous cycle saw (every broker on
   a first sight), on that report's short-term bundle stats
   (:func:`lbctl.strategies.simple.split.simple_split_candidates`). ``LoadReportUpdaterTask`` is
   scheduled only when ``loadBalancerEnabled`` (``PulsarService.startLoadManagementService``), so
   with it off nothing splits. The bundles picked go into a fresh ``HashSet`` and are split in its
   order through the admin API with no algorithm (the broker's
   ``defaultNamespaceBundleSplitAlgorithm``), their children unloaded when
   ``loadBalancerAutoUnloadSplitBundlesEnabled`` — with no namespace-policy check, unlike the
   modular ``checkNamespaceBundleSplit``. After splitting, Pulsar forces the broker's next
   report (``setLoadReportForceUpdateFlag``); lbctl reads reports as the snapshots hold them.

The stored resource quotas and load factors come from the snapshot's ``resourceQuotas`` section
(Pulsar's defaults without it). Not modelled: the leader's periodic writes of the realtime quotas
back to the store (``writeResourceQuotasToZooKeeper``), the dynamic settings under
``/loadbalance/settings`` other than the load factors and ``auto_bundle_split_enabled``
(:func:`auto_split_enabled`): the strategy and the thresholds, which lbctl reads from the
configuration. Each cycle's record is a
:class:`~lbctl.model.cycle.ModularCycle` (the same plan and explanation builders serve it).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from random import Random
from types import MappingProxyType
from typing import Any

from msgspec import Struct, UnsetType, field

from lbctl.config import Settings
from lbctl.explain import Explanation
from lbctl.explain.modular import ModularExplanation
from lbctl.loadmanager.base import LoadManager
from lbctl.loadmanager.clock import interval_ms, latest, reports_written, shifted
from lbctl.loadmanager.loaddata import build_load_data, update_bundle_data
from lbctl.loadmanager.modular import build_plan, plan_split
from lbctl.model.bundle import namespace_of
from lbctl.model.cluster import SIMPLE, ClusterState
from lbctl.model.cycle import CycleMemory, Elapsed, ModularCycle
from lbctl.model.decision import (
    AutoSplit,
    BrokerVerdict,
    Label,
    PlacementDecision,
    PlacementTrace,
    Reason,
    Selection,
    SheddingDecision,
    UnloadOutcome,
)
from lbctl.model.javaorder import bucket_order, java_hash_order, table_size_for
from lbctl.model.load import LocalBrokerData
from lbctl.model.wire.snapshot import ResourceQuota as WireQuota
from lbctl.plan import Plan
from lbctl.strategies.builtin import algorithm_by_name
from lbctl.strategies.simple.decide import (
    Ranked,
    SimpleWhy,
    least_loaded,
    rank,
    shed,
    unload_order,
)
from lbctl.strategies.simple.quota import INITIAL_QUOTA, QuotaState, ResourceQuota, Stored
from lbctl.strategies.simple.ranking import placement_key
from lbctl.strategies.simple.split import simple_split_candidates

NAME = "SimpleLoadManagerImpl"
class SimpleMemory(Struct, frozen=True):
    """What the leader keeps between cycles besides the grace cache: the realtime quotas, each
    broker's preallocated bundles, the rotation cursor of ``findBrokerForPlacement``; and what
    lbctl keeps to know which brokers wrote a report since: each report's ``lastUpdate`` as the
    last cycle not replayed saw it."""

    quotas: QuotaState = QuotaState()
    preallocated: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}))
    cursor: int = 0
    stamps: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))


class SimpleCycleResult(ModularCycle, frozen=True):
    """A simple load manager cycle's record, with its plan and its explanation."""

    def plan(self) -> Plan:
        return build_plan(self)

    def explanation(self, broker: str | None = None, bundle: str | None = None) -> Explanation:
        return ModularExplanation(self, broker, bundle)


def stored_quotas(state: ClusterState) -> Stored:
    """The snapshot's ``resourceQuotas`` (Pulsar's defaults where it says nothing)."""
    rq = state.resource_quotas
    if rq is None:
        return Stored()

    def q(w: WireQuota) -> ResourceQuota:
        return ResourceQuota(w.msgRateIn, w.msgRateOut, w.bandwidthIn, w.bandwidthOut, w.memory,
                             w.dynamic)

    default = q(rq.default) if isinstance(rq.default, WireQuota) else INITIAL_QUOTA
    return Stored(default, MappingProxyType({b: q(x) for b, x in rq.bundles.items()}),
                  rq.loadFactorCPU if isinstance(rq.loadFactorCPU, float) else None,
                  rq.loadFactorMemory if isinstance(rq.loadFactorMemory, float) else None)


class SimpleLoadManager(LoadManager[CycleMemory]):
    """Runs ``SimpleLoadManagerImpl`` cycles (module docstring)."""

    kind = SIMPLE

    def __init__(self, settings: Settings, *, seed: int | None = None,
                 warnings: Sequence[str] = ()):
        self.key = placement_key(settings["loadBalancerPlacementStrategy"])
        self.rng = Random(seed if seed is not None else 0)
        self.warnings = tuple(warnings)

    @property
    def strategies(self) -> tuple[str, str]:
        return NAME, self.key

    @property
    def label(self) -> str:
        return f"{NAME} ({self.key})"

    def initial_memory(self) -> CycleMemory:
        return CycleMemory(shedding=SimpleMemory())

    def run_cycle(self, state: ClusterState, settings: Settings, memory: CycleMemory | None = None,
                  elapsed: Elapsed | None = None) -> SimpleCycleResult:
        mem = memory or self.initial_memory()
        sm: SimpleMemory = mem.shedding if isinstance(mem.shedding, SimpleMemory) \
            else SimpleMemory()
        elapsed = elapsed or Elapsed(interval_ms=interval_ms(settings))
        now = state.captured_at
        bundle_data = update_bundle_data(state, mem.bundle_data, elapsed.samples)
        load = build_load_data(state, bundle_data)
        recently = latest(mem.recently_unloaded, state.recently_unloaded)
        expired = _expire(recently, now, settings)
        key = placement_key(settings["loadBalancerPlacementStrategy"])
        active = set(state.available())
        reports = {b: local for b, local in state.brokers.items() if b in active}
        stamps = {b: local.lastUpdate or now for b, local in reports.items()}
        ranked = rank(reports, stamps, stored_quotas(state), sm.quotas, sm.preallocated, key)
        policies = state.cluster_policies()

        def loads_topics(broker: str, non_persistent: bool) -> bool:
            local = reports.get(broker)
            if local is None:
                return False
            return local.nonPersistentTopicsEnabled if non_persistent \
                else local.persistentTopicsEnabled

        gate = None if settings["loadBalancerEnabled"] else \
            "loadBalancerEnabled is false: the load manager does nothing"
        selected, verdict_whys = ([], {}) if gate else shed(reports, ranked, settings, policies,
                                                            loads_topics)
        written = () if elapsed.replaying or not settings["loadBalancerEnabled"] else \
            _written(reports, sm.stamps, elapsed)
        splits = auto_splits(state, settings, reports, written)
        split_away = {s.candidate.bundle for s in splits if s.skipped is None}
        rankings = ranked.rankings
        cursor = sm.cursor
        outcomes: list[UnloadOutcome] = []
        dry = not settings["loadBalancerSheddingEnabled"]
        for s in unload_order(selected):
            assert s.bundle is not None
            st = reports[s.broker].lastStats[s.bundle]
            sel = Selection(s.broker, s.bundle, Reason.OVERLOADED, st.msg_rate, st.throughput)
            if s.bundle in recently:
                outcomes.append(UnloadOutcome(sel, None, SimpleWhy("grace", s.broker,
                                                                   names=(s.bundle,))))
                continue
            if dry:
                recently[s.bundle] = now  # unloadedHotNamespaceCache.put, after the log
                outcomes.append(UnloadOutcome(sel, None, SimpleWhy("dry-run", s.broker)))
                continue
            if s.bundle in split_away:  # the admin unload throws before the cache's put
                outcomes.append(UnloadOutcome(sel, None, SimpleWhy("split-away", s.broker,
                                                                   names=(s.bundle,))))
                continue
            recently[s.bundle] = now  # unloadedHotNamespaceCache.put after the unload
            before = rankings
            placed = least_loaded(s.bundle, ranked, rankings, cursor, settings, policies,
                                  tuple(active), loads_topics, self.rng)
            rankings, cursor = placed.rankings, placed.cursor
            # the candidates' estimated loads as the lookup compared them
            pick = PlacementDecision(key, s.bundle, placed.broker, placed.candidates,
                                     MappingProxyType({b: before[b].estimated / 100
                                                       for b in placed.candidates}),
                                     why=placed.why)
            trace = PlacementTrace(s.bundle, (), pick, None, placed.broker, placed.why)
            outcomes.append(UnloadOutcome(sel, placed.broker, None, trace))
            if elapsed.replaying:
                break
        decision = None if gate else _decision(ranked, verdict_whys, tuple(
            Selection(s.broker, s.bundle, Reason.OVERLOADED,
                      reports[s.broker].lastStats[s.bundle].msg_rate,
                      reports[s.broker].lastStats[s.bundle].throughput)
            for s in selected if s.bundle is not None))
        seen = sm.stamps if elapsed.replaying else MappingProxyType(
            {b: local.lastUpdate for b, local in reports.items()})
        new_sm = SimpleMemory(ranked.quotas, MappingProxyType(
            {b: r.preallocated for b, r in rankings.items() if r.preallocated}), cursor, seen)
        memory_out = CycleMemory(bundle_data, MappingProxyType(recently), new_sm)
        return SimpleCycleResult(
            state, settings, NAME, key, load, decision, tuple(outcomes), gate, expired,
            memory_out, splits, elapsed, self.warnings)

    # --- what lbctl.loadmanager.clock needs -------------------------------------------------------
    def memory_key(self, memory: CycleMemory) -> Any:
        sm = memory.shedding
        return (dict(memory.recently_unloaded), None if not isinstance(sm, SimpleMemory) else (
            sm.cursor, dict(sm.preallocated), sm.quotas.cpu_factor, sm.quotas.memory_factor,
            dict(sm.quotas.quotas)))

    def held(self, state: ClusterState, at: int) -> ClusterState:
        return shifted(state, at)

    def samples(self, earlier: ClusterState, later: ClusterState) -> int:
        return reports_written(earlier, later)

    def timers(self, memory: CycleMemory) -> bool:
        return bool(memory.recently_unloaded)


def _written(reports: Mapping[str, LocalBrokerData], stamps: Mapping[str, int],
             elapsed: Elapsed) -> tuple[str, ...]:
    """The brokers that wrote their report since the last cycle lbctl saw: a broker not seen
    before, or whose ``lastUpdate`` advanced; without timestamps, every broker when some report
    changed (``elapsed.samples``)."""
    out = []
    for b, local in reports.items():
        seen = stamps.get(b)
        if seen is None or local.lastUpdate > seen or (
                local.lastUpdate == seen == 0 and elapsed.samples > 0):
            out.append(b)
    return tuple(out)


def auto_splits(state: ClusterState, settings: Settings,
                reports: Mapping[str, LocalBrokerData], written: Sequence[str]
                ) -> tuple[AutoSplit, ...]:
    """``doNamespaceBundleSplit`` on each broker of ``written``, in the order they wrote their
    reports (``lastUpdate``; the snapshot's order among equal times): the bundles of its report
    picked by :func:`~lbctl.strategies.simple.split.simple_split_candidates`, in the order of the
    ``HashSet`` they are put in (one ``add`` each in the order the report's ``bundleStats``
    ``HashMap`` iterates), each split as ``plan_split`` (the modular load manager's) does it with
    the broker's default algorithm. Nothing when ``loadBalancerAutoBundleSplitEnabled`` is off
    (Pulsar logs a dry run).

    The namespace's bundle count (``NamespaceService.getBundleCount``, compared with
    ``loadBalancerNamespaceMaximumBundles``) is read for each hot bundle during the scan, and a
    broker splits only after its scan: two bundles of one namespace in one broker's report both
    see the count from before either split, so both may split past the maximum. The admin splits
    are synchronous (``splitNamespaceBundle`` returns once done), so a broker that writes its
    report later in the cycle reads the count the earlier brokers' splits left (each split
    adds its children less the parent)."""
    if not written or not auto_split_enabled(state, settings):
        return ()
    algorithm = algorithm_by_name(None, settings)
    unload = bool(settings["loadBalancerAutoUnloadSplitBundlesEnabled"])
    out: list[AutoSplit] = []
    counts: dict[str, int] = {}  # namespaces split by an earlier broker this cycle

    def bundle_count(ns: str) -> int:
        got = counts.get(ns)
        return state.namespace_bundle_count(ns) if got is None else got

    for b in sorted(written, key=lambda x: reports[x].lastUpdate):  # stable: ties keep order
        stats = reports[b].lastStats
        picked = {c.bundle: c for c in simple_split_candidates(
            b, stats, settings, bundle_count) if c.selected}
        if not picked:
            continue
        # the picks as the report's HashMap walks them (bucket order in its table; the scan
        # itself needs no order), then as the HashSet they are added to iterates them
        walked = bucket_order(picked, _report_table(len(stats)))
        done = [plan_split(state, settings, picked[k], algorithm, unload)
                for k in java_hash_order(walked)]
        for s in done:  # the admin splits return before the next broker's scan reads the count
            if s.skipped is None and s.children:
                ns = namespace_of(s.candidate.bundle)
                counts[ns] = bundle_count(ns) + len(s.children) - 1
        out.extend(done)
    return tuple(out)


def auto_split_enabled(state: ClusterState, settings: Settings) -> bool:
    """``SimpleLoadManagerImpl.getLoadBalancerAutoBundleSplitEnabled``: the
    ``autoBundleSplitEnabled`` entry of ``/loadbalance/settings/auto_bundle_split_enabled`` (the
    snapshot's ``resourceQuotas.autoBundleSplitEnabled``), read with ``Boolean.parseBoolean``
    (only ``"true"``, in any case, is true); without it, ``loadBalancerAutoBundleSplitEnabled``
    as the broker's configuration holds it — a dynamic setting
    (``@FieldContext(dynamic = true)``), so the value set with ``update-dynamic-config`` over
    broker.conf's, which is what a live snapshot's runtime configuration reports."""
    rq = state.resource_quotas
    stored = None if rq is None or isinstance(rq.autoBundleSplitEnabled, UnsetType) \
        else rq.autoBundleSplitEnabled
    if isinstance(stored, bool):
        return stored
    if isinstance(stored, str):
        return stored.isascii() and stored.lower() == "true"  # "true".equalsIgnoreCase(s)
    return bool(settings["loadBalancerAutoBundleSplitEnabled"])


def _f32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _report_table(n: int) -> int:
    """The table length of the report's ``bundleStats``: ``LoadReport.setBundleStats`` copies the
    map with ``new HashMap<>(stats)`` (``putMapEntries``: ``tableSizeFor((int) (n / 0.75f +
    1.0f))``, in ``float``), not one ``put`` at a time (12 bundles: 32 buckets, not 16)."""
    return table_size_for(int(_f32(_f32(_f32(float(n)) / _f32(0.75)) + 1.0)))


def _expire(recently: dict[str, int], now: int, settings: Settings) -> tuple[str, ...]:
    """Guava's ``expireAfterWrite(loadBalancerSheddingGracePeriodMinutes)``: an entry written
    that long ago or longer is gone."""
    period = int(settings["loadBalancerSheddingGracePeriodMinutes"]) * 60_000
    gone = tuple(b for b, ts in recently.items() if now - ts >= period)
    for b in gone:
        del recently[b]
    return gone


def _decision(ranked: Ranked, whys: Mapping[str, SimpleWhy], selections: tuple[Selection, ...]
              ) -> SheddingDecision:
    """The cycle's verdicts in the shared vocabulary: each broker's estimated load (its score)
    and the highest of the four usages shedding reads, with the figures behind them."""
    verdicts: dict[str, BrokerVerdict] = {}
    for b, why in whys.items():
        r = ranked.rankings[b]
        shedding = why.code == "overloaded"
        label = Label.SUCCESS if shedding else Label.SKIP
        reason = Reason.OVERLOADED if shedding else (
            Reason.BALANCED if why.code == "fine" else Reason.NO_BUNDLES
            if why.code in ("sole-bundle", "no-bundles") else Reason.NO_BROKERS)
        verdicts[b] = BrokerVerdict(
            b, why.percent / 100, r.estimated / 100, label, reason, why,
            MappingProxyType({"estimatedLoadPercentage": r.estimated,
                              "estimatedCpu": r.est_cpu, "estimatedMemory": r.est_memory,
                              "estimatedDirectMemory": r.est_direct,
                              "estimatedBandwidthIn": r.est_in,
                              "estimatedBandwidthOut": r.est_out,
                              "estimatedMsgRate": r.msg_rate, "rank": float(ranked.ranks[b])}))
    return SheddingDecision(NAME, selections, MappingProxyType(verdicts))


class Lookup(Struct, frozen=True):
    """One ``getLeastLoadedBroker`` answer of :func:`lookups`: the broker (``None``: none), why,
    the candidates and the pick's estimated load before the lookup (a fraction)."""

    bundle: str
    broker: str | None
    why: SimpleWhy
    candidates: tuple[str, ...]
    score: float | None


def lookups(state: ClusterState, settings: Settings, bundles: Sequence[str],
            seed: int | None = None) -> list[Lookup]:
    """``getLeastLoadedBroker`` for each bundle in turn, on the leader's first ranking of
    ``state``: each pick is preallocated (its quota counts for the next lookup, its namespace's
    ranges too) and moves the rotation cursor, as in ``SimpleLoadManagerImplTest
    .testEvenBundleDistribution``."""
    key = placement_key(settings["loadBalancerPlacementStrategy"])
    active = tuple(state.available())
    reports = {b: local for b, local in state.brokers.items() if b in set(active)}
    stamps = {b: local.lastUpdate or state.captured_at for b, local in reports.items()}
    ranked = rank(reports, stamps, stored_quotas(state), QuotaState(), {}, key)
    policies = state.cluster_policies()
    rng = Random(seed if seed is not None else 0)

    def loads_topics(broker: str, non_persistent: bool) -> bool:
        local = reports.get(broker)
        return local is not None and (local.nonPersistentTopicsEnabled if non_persistent
                                      else local.persistentTopicsEnabled)

    rankings, cursor = ranked.rankings, 0
    out: list[Lookup] = []
    for b in bundles:
        before = rankings
        placed = least_loaded(b, ranked, rankings, cursor, settings, policies, active,
                              loads_topics, rng)
        rankings, cursor = placed.rankings, placed.cursor
        pick = placed.broker
        score = before[pick].estimated / 100 if pick is not None and pick in before else None
        out.append(Lookup(b, placed.broker, placed.why, placed.candidates, score))
    return out
