"""Pulsar's extensible load manager: one cycle over a snapshot, a sequence of them, and the plan of
each.

Mirrors the leader's ``UnloadScheduler`` and every broker's ``SplitScheduler`` around the
strategies (the extensible counterpart of :mod:`lbctl.loadmanager.modular`):

1. **Load data.** An extensible snapshot's ``brokerLoadData`` is the store, as published; a
   missing ``updatedAt`` is taken as ``capturedAt``, missing features are computed as a first
   sample. The published ``weightedMaxEMA`` and ``msgThroughputEMA`` are what the leader reads,
   so a sequence uses each snapshot's as published; only a report without them (or a modular
   snapshot's derived data) has its EMAs advanced by lbctl, once per snapshot with Pulsar's rule
   (``BrokerLoadData.update``: ``ema = h·ema + (1−h)·new``) from the carried values.
   ``topBundlesLoadData`` is used in its published (ascending) order.
   A **modular** snapshot (``recommend --strategy TransferShedder``) is read as the extensible
   reporters would have sampled it: each ``LocalBrokerData`` gives a ``BrokerLoadData`` with the
   same five resource usages, current throughputs, rates, ``numBundles`` and ``numTopics``, taken
   as a first sample (``weightedMaxEMA`` = the weighted max with the configured weights, JVM heap
   included with ``loadBalancerMemoryResourceWeight``; ``msgThroughputEMA`` = the throughput) at
   the report's ``lastUpdate``; its top bundles are ``TopKBundles`` of ``lastStats``
   (``loadBalancerMaxNumberOfBundlesInBundleLoadReport``, walked in the report's own order:
   ``PulsarStats.bundleStats``' ``ConcurrentHashMap``, which ``lastStats`` is the JSON walk of).
2. **UnloadScheduler.** Nothing when ``loadBalancerEnabled`` or ``loadBalancerSheddingEnabled``
   is off; recently unloaded bundles older than ``loadBalancerSheddingGracePeriodMinutes`` are
   forgotten (also when at most one broker is available, which ends the cycle there:
   ``UnloadScheduler.execute`` at 040a3bcce902 expires them first); TransferShedder runs with its hit
   count carried; every Success decision records the bundle and its source broker as recently
   unloaded at the snapshot's time (the next cycle's cool-down). The store iterates in
   ``ConcurrentHashMap`` order (the table view), which breaks ties between equal loads.
3. **isTransferable** applies the broker filters lbctl can evaluate (max topics, versions,
   isolation without policies: brokers accepting persistent topics). A bundle's owner is the
   broker reporting it in ``lastStats``/``bundles`` when the snapshot says, else the broker
   publishing it in its top bundles.
4. **Placement preview.** In unload mode the new owner is chosen at the next lookup; ``explain``
   shows what ``LeastResourceUsageWithWeight`` would pick then (``--seed``), the plan leaves the
   destination empty as Pulsar does. Its candidates iterate as ``selectAsync``'s map does: the
   registry's ``ConcurrentHashMap`` copied into a new one (a ``HashMap`` in 3.0.0), which decides
   the order of the equally good brokers the random pick indexes (:func:`select_candidates`).
5. **SplitScheduler** on every broker over its bundles (``lastStats`` when the snapshot has them,
   else its top bundles), with per-broker hit counts carried, every
   ``loadBalancerSplitIntervalMinutes`` (its own timer: a cycle may see no split run, or several;
   :func:`~lbctl.loadmanager.clock.split_runs`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from operator import attrgetter
from random import Random
from types import MappingProxyType
from typing import Any

from msgspec import Struct

from lbctl.config import Settings
from lbctl.explain import Explanation
from lbctl.explain.extensible import ExtensibleExplanation
from lbctl.explain.outcome import extensible_decision
from lbctl.explain.words import text
from lbctl.loadmanager.base import CycleResult, LoadManager
from lbctl.loadmanager.clock import expire, interval_ms, latest, shifted, split_runs
from lbctl.loadmanager.loaddata import map_order
from lbctl.model.brokerload import (
    BrokerLoadData,
    TopBundle,
    first_sample,
    from_local_broker_data,
    top_k_bundles,
)
from lbctl.model.bundle import BundleName, format_position, namespace_of
from lbctl.model.cluster import EXTENSIBLE, EXTENSIBLE_CLASS, ClusterState, is_extensible_class
from lbctl.model.cycle import Elapsed, ExtAction, ExtensibleCycle, ExtensibleMemory
from lbctl.model.decision import (
    BrokerStat,
    CycleDecision,
    Label,
    PlacementDecision,
    Reason,
    ShedResult,
    SplitDecision,
    SplitResult,
)
from lbctl.model.javaorder import (
    MapHistory,
    concurrent_copy_order,
    concurrent_order,
    hashmap_copy_order,
    java_sorted,
)
from lbctl.model.outcome import history_dict, history_warnings
from lbctl.plan import Action, BrokerRow, Plan
from lbctl.records import replace
from lbctl.strategies.base import LookupRequest
from lbctl.strategies.builtin import algorithm_by_name
from lbctl.strategies.placement import extensible_least_resource_usage as lruw
from lbctl.strategies.placement.broker_filters import (
    BrokerFilter,
    BrokerLookup,
    FilterContext,
    FilterError,
    default_pipeline,
    make_transferable,
)
from lbctl.strategies.shedding.transfer import NAME as TRANSFER
from lbctl.strategies.shedding.transfer import ShedderInput, TransferShedder, TransferWhy
from lbctl.strategies.split.base import SplitBoundaries, option_for
from lbctl.strategies.split.default_namespace_bundle_split_strategy import (
    bundle_stats_walk,
    find_bundles_to_split,
)
from lbctl.units import rounded

_EMPTY: Mapping[str, Any] = MappingProxyType({})
#: a broker's load data but its ``updatedAt`` (:meth:`ExtensibleLoadManager.acting_key`)
_BUT_UPDATED_AT = attrgetter(*(f.name for f in fields(BrokerLoadData) if f.name != "updatedAt"))


def _store(state: ClusterState, settings: Settings, mem: ExtensibleMemory
           ) -> tuple[dict[str, BrokerLoadData], bool, MapHistory]:
    now = state.captured_at
    out: dict[str, BrokerLoadData] = {}
    derived = state.load_manager != EXTENSIBLE
    published = state.broker_load_data
    if derived:
        samples = {b: from_local_broker_data(local, settings, now)
                   for b, local in state.brokers.items()}
    else:
        samples = {}
        for b, pub in published.items():
            data = pub.data
            if data.updatedAt == 0:
                data = replace(data, updatedAt=now)
            samples[b] = data
    for b, sample in samples.items():
        prev = mem.broker_load.get(b) if mem.started else None
        if not derived and published[b].has_features:
            out[b] = sample  # the leader reads the EMAs each broker published, as published
        elif prev is not None:
            out[b] = prev.update_from(sample, settings) if sample.updatedAt > prev.updatedAt \
                else prev
        elif derived:
            out[b] = sample
        else:
            out[b] = first_sample(sample, settings, now)
    history = store_map(out, mem)
    return {b: out[b] for b in map_order(history)}, derived, history


def store_map(store: Mapping[str, BrokerLoadData], mem: ExtensibleMemory) -> MapHistory:
    """The broker load-data store's map after this snapshot: brokers gone since the last cycle
    removed (their tombstones), new ones put in the snapshot's order (the order their first
    messages arrived is not known); a broker still publishing keeps its place
    (``TableViewLoadDataStoreImpl`` over a ``TableView``'s ``ConcurrentHashMap``)."""
    prev = mem.store_map if mem.started else MapHistory()
    return prev.then([(b, False) for b in prev.live if b not in store]
                     + [(b, True) for b in store])


def _top_bundles(state: ClusterState, settings: Settings, derived: bool,
                 walks: dict[str, list[tuple[str, Any]]]) -> dict[str, tuple[TopBundle, ...]]:
    """The brokers' top bundles: as published, or (derived data) ``TopKBundles.update`` over each
    report's ``lastStats``. ``TopBundleLoadDataReporter`` walks ``PulsarStats.bundleStats``, the
    ``ConcurrentHashMap`` a load report's ``lastStats`` is written from, so the walk is the one
    the split walk takes (:func:`bundle_stats_walk`: the report's own order, not a ``HashMap``
    refilled from it); among equal bundles it decides which fill the top-k slots and in which
    order TransferShedder meets them. ``walks``: the cycle's report walks (:func:`_report_walk`)."""
    if not derived:
        return {b: p.bundles for b, p in state.top_bundles_load_data.items()}
    k = int(settings["loadBalancerMaxNumberOfBundlesInBundleLoadReport"])
    has_policies = state.policies.has_policies if state.policies is not None else None
    return {b: top_k_bundles(_report_walk(state, b, walks), k, settings, has_policies)
            for b in state.brokers}


def _report_walk(state: ClusterState, broker: str, walks: dict[str, list[tuple[str, Any]]]
                 ) -> list[tuple[str, Any]]:
    """:func:`bundle_stats_walk` of ``broker``'s load report ``lastStats`` (``iterated``), made
    once a cycle and kept in ``walks`` (the cycle's): the top bundles and the split strategy
    walk the same map in the same cycle."""
    walk = walks.get(broker)
    if walk is None:
        walk = walks[broker] = bundle_stats_walk(state.brokers[broker].lastStats, iterated=True)
    return walk


def _lookups(state: ClusterState) -> dict[str, BrokerLookup]:
    """``BrokerLookupData`` of every available broker: from its report when the snapshot has one
    (version, topic kinds, load manager class), else the registry's defaults (unknown version and
    class, both topic kinds)."""
    out = {}
    for b in state.available():
        local = state.brokers.get(b)
        out[b] = (BrokerLookup() if local is None else
                  BrokerLookup(local.brokerVersionString, local.persistentTopicsEnabled,
                               local.nonPersistentTopicsEnabled, local.loadManagerClassName))
    return out


def registry_order(brokers: Iterable[str]) -> list[str]:
    """How ``BrokerRegistryImpl.getAvailableBrokerLookupDataAsync``'s map iterates: a
    ``new ConcurrentHashMap<>()`` given one ``put`` per child of ``/loadbalance/brokers``, in the
    order ``MetadataStore.getChildren`` lists them (lexicographically sorted, its contract; the
    lookup data are read through a cache, whose completed futures put them in that order)."""
    return concurrent_order(java_sorted(brokers))


def select_candidates(lookups: Mapping[str, BrokerLookup], source: str | None, bundle: str,
                      fctx: FilterContext, concurrent: bool = True,
                      pipeline: Sequence[BrokerFilter] | None = None) -> list[str]:
    """The brokers ``ExtensibleLoadManagerImpl.selectAsync`` hands the selection strategy, in
    the order its candidate map iterates them (which LeastResourceUsageWithWeight sums them in
    and its random pick indexes).

    ``concurrent`` (3.0.1+, PR #20666; the ``selectCandidateMap`` variant): the map is
    ``new ConcurrentHashMap<>(availableBrokers)`` (:func:`~lbctl.model.javaorder.
    concurrent_copy_order` of :func:`registry_order`), the excluded broker removed (``source``,
    the owner a transfer leaves), then every filter of the pipeline removes brokers from that
    one map (``filterAsync``, all started before any is waited for); removals
    keep the others' order. A filter that fails (``FilterError``) removes nothing and the
    others' removals stand: ``selectAsync`` logs the failure and selects from the map as it is.

    Otherwise (3.0.0): ``new HashMap<>(availableBrokers)`` (:func:`~lbctl.model.javaorder.
    hashmap_copy_order`), filtered one filter at a time; a failing filter makes the candidates a
    fresh ``new HashMap<>`` copy of the registry's map retained to the brokers that passed the
    filters before it (``availableBrokers.keySet().retainAll``), in that copy's order, and the
    next filters go on from there. 3.0.0 has no excluded set; lbctl leaves the owner out all the
    same (a bundle unloaded in unload mode is not previewed back onto its owner)."""
    registry = registry_order(lookups)
    order = concurrent_copy_order(registry) if concurrent else hashmap_copy_order(registry)
    cands = {b: lookups[b] for b in order if b != source}
    for f in default_pipeline() if pipeline is None else pipeline:
        try:
            after = f(dict(cands), bundle, fctx)
        except (FilterError, ValueError):
            if not concurrent:
                cands = {b: lookups[b] for b in hashmap_copy_order(
                    b for b in registry if b in cands)}
            continue
        cands = {b: v for b, v in cands.items() if b in after}
    return list(cands)


def _filter_context(state: ClusterState, settings: Settings, store: Mapping[str, BrokerLoadData],
                    lookups: Mapping[str, BrokerLookup], owners: Mapping[str, str],
                    derived: bool) -> FilterContext:
    """The broker filters' inputs. The load-manager-class filter compares with the leader's
    ``loadManagerClassName`` (an extensible one: a configuration naming another class would not
    run this load manager) and is not applied when no broker's class is known, nor on a modular
    snapshot read as extensible (``--strategy TransferShedder``: its brokers' reports name the
    modular class they run today). The version filter is not applied when no version is known."""
    leader_class = None
    if not derived and any(v.loadManagerClassName is not None for v in lookups.values()):
        configured = str(settings["loadManagerClassName"])
        leader_class = configured if is_extensible_class(configured) else EXTENSIBLE_CLASS
    return FilterContext(settings, store, state.cluster_policies(), owners=owners,
                         leader_class=leader_class,
                         versions_known=any(v.brokerVersion for v in lookups.values()))


def _split_boundaries(state: ClusterState, settings: Settings
                      ) -> Callable[[str], SplitBoundaries]:
    """``NamespaceService.getSplitBoundary(bundle, null, defaultNamespaceBundleSplitAlgorithm)``:
    the default algorithm over the bundle's topics (every topic in metadata when the snapshot
    lists them) and, for ``flow_or_qps_equally_divide``, their stats."""
    algorithm = algorithm_by_name(None, settings)

    def boundaries(bundle: str) -> SplitBoundaries:
        rng = BundleName.parse(bundle).range
        return algorithm.boundaries(option_for(rng, state.topics_of_bundle(bundle), state.topics,
                                               settings))

    return boundaries


def _splits(cycle: _Cycle, carried: Mapping[str, Mapping[str, int]], runs: int = 1
            ) -> tuple[tuple[SplitResult, ...], dict[str, Mapping[str, int]]]:
    """Every broker's ``SplitScheduler`` over its bundles (``lastStats`` when the snapshot has
    them, else its top bundles), with its hit counts carried; and the hit counts to carry on.
    ``runs``: how many times the schedulers ran during the cycle (:func:`~lbctl.loadmanager.clock.
    split_runs`: none, once, or several when ``loadBalancerSplitIntervalMinutes`` is shorter than
    the shedding interval). Each broker's runs read the same snapshot and stop after the first
    that splits (the bundle it splits is gone from the next run's stats, which the snapshot cannot
    show) or that leaves its hit counts as they were (every later run would too); its result is
    its last run's.
    The bundles go in the order ``findBundlesToSplit`` meets them — ``PulsarStats``' bundle stats
    are a ``ConcurrentHashMap`` (at 1710bfdaa85f): a load report's ``lastStats`` (derived data)
    in its own order, which is that map's; rebuilt stats (and top bundles) as put in the
    snapshot's order (:func:`bundle_stats_walk`) — which decides the bundles taken first under
    ``loadBalancerMaxNumberOfBundlesToSplitPerCycle``. (The broker's map is cleared, never shrunk,
    each stats update; for rebuilt stats a fresh map is what can be known.)"""
    state, settings, owners = cycle.state, cycle.settings, cycle.owners
    splits: list[SplitResult] = []
    split_hits = dict(carried)
    if runs < 1 or not (settings["loadBalancerEnabled"]
                        and settings["loadBalancerAutoBundleSplitEnabled"]):
        return (), split_hits
    known = {t.bundleName for ts in cycle.tops.values() for t in ts} | set(state.owners())

    def bundle_count(ns: str) -> int:
        if ns in state.namespaces:
            return len(state.namespaces[ns]) - 1
        return sum(1 for x in known if namespace_of(x) == ns)

    boundaries = _split_boundaries(state, settings)
    for b in cycle.available:
        local = state.brokers.get(b)
        if local is None:
            continue  # a broker without a report has no bundle stats we know of
        if local.lastStats:  # a load report's (derived) is the map's own iteration order
            stats = (_report_walk(state, b, cycle.walks) if cycle.derived
                     else bundle_stats_walk(local.lastStats, iterated=False))
        else:
            top = {t.bundleName: t.stats for t in cycle.tops.get(b, ())}
            stats = [(x, top[x]) for x in concurrent_order(top)]

        def owns(bundle: str, broker: str = b) -> bool:
            return owners.get(bundle, broker) == broker

        hits = split_hits.get(b, {})
        for _ in range(runs):
            res = find_bundles_to_split(b, stats, settings, hits, bundle_count, owns,
                                        boundaries=boundaries)
            if res.decisions or res.hit_counts == hits:
                break
            hits = res.hit_counts
        split_hits[b] = res.hit_counts
        splits.append(res)
    return tuple(splits), split_hits


def _no_split_run(settings: Settings) -> str:
    """Why a cycle shows no split check (:func:`~lbctl.loadmanager.clock.split_runs` gave none)."""
    minutes = int(settings["loadBalancerSplitIntervalMinutes"])
    if minutes <= 0:
        return (f"loadBalancerSplitIntervalMinutes={minutes}: scheduleAtFixedRate refuses the "
                "period, so no broker's SplitScheduler ever runs")
    return (f"no broker's SplitScheduler ran in this cycle: it runs every "
            f"loadBalancerSplitIntervalMinutes={minutes} min, the shedding cycle every "
            f"{interval_ms(settings) // 60_000} min")


class _Cycle(Struct, frozen=True):
    """What the steps of one cycle share: its state, settings and clock, the load-data store and
    top bundles it reads (``derived``: from modular reports), the available brokers, who owns or
    publishes each bundle, and the broker filters' inputs."""

    state: ClusterState
    settings: Settings
    elapsed: Elapsed
    derived: bool
    store: Mapping[str, BrokerLoadData]
    tops: Mapping[str, tuple[TopBundle, ...]]
    available: list[str]
    lookups: Mapping[str, BrokerLookup]
    owners: Mapping[str, str]
    publisher: Mapping[str, str]
    fctx: FilterContext
    store_history: MapHistory
    #: each broker's report walk, made once a cycle (:func:`_report_walk`)
    walks: dict[str, list[tuple[str, Any]]]

    @staticmethod
    def of(state: ClusterState, settings: Settings, elapsed: Elapsed,
           mem: ExtensibleMemory, tops: Mapping[str, tuple[TopBundle, ...]] | None = None
           ) -> _Cycle:
        """``tops``: the top bundles when already known (a held state's are its snapshot's)."""
        store, derived, history = _store(state, settings, mem)
        walks: dict[str, list[tuple[str, Any]]] = {}
        if tops is None:
            tops = _top_bundles(state, settings, derived, walks)
        lookups = _lookups(state)
        owners = state.owners()
        publisher = {t.bundleName: b for b, ts in tops.items() for t in ts}
        fctx = _filter_context(state, settings, store, lookups, {**publisher, **owners}, derived)
        return _Cycle(state, settings, elapsed, derived, store, tops, list(state.available()),
                      lookups, owners, publisher, fctx, history, walks)

    def is_owner(self, bundle: str, broker: str) -> bool:
        owner = self.owners.get(bundle) or self.publisher.get(bundle)
        return owner is None or owner == broker


class ExtensibleLoadManager(LoadManager[ExtensibleMemory]):
    """Runs extensible cycles, carrying :class:`ExtensibleMemory` between them."""

    kind = EXTENSIBLE
    label = f"{TRANSFER} + {lruw.NAME}"
    strategies = (TRANSFER, lruw.NAME)

    def __init__(self, *, seed: int | None = None, warnings: Sequence[str] = ()):
        self.shedder = TransferShedder()
        self.rng = Random(seed if seed is not None else 0)
        self.warnings = tuple(warnings)

    def run_cycle(self, state: ClusterState, settings: Settings,
                  memory: ExtensibleMemory | None = None,
                  elapsed: Elapsed | None = None) -> ExtensibleCycleResult:
        return self._run(state, settings, memory or self.initial_memory(),
                         elapsed or Elapsed(interval_ms=interval_ms(settings)))

    def _run(self, state: ClusterState, settings: Settings, mem: ExtensibleMemory,
             elapsed: Elapsed, last: ExtensibleCycleResult | None = None
             ) -> ExtensibleCycleResult:
        """The cycle; with ``last`` (the snapshot's own cycle: ``state`` is it held), one of
        ``explain``'s projection, which reads only whether it acts and its memory: the top
        bundles are ``last``'s (a held state republishes the same ones), and neither the
        placement previews nor the split strategy run (what they find moves no unload: the
        split hit counts are carried as they were)."""
        now = state.captured_at
        cycle = _Cycle.of(state, settings, elapsed, mem, None if last is None else last.top_bundles)
        recently = latest(mem.recently_unloaded, state.recently_unloaded)
        recent_brokers = latest(mem.recently_unloaded_brokers, state.recently_unloaded_brokers)

        available = cycle.available
        gate = None
        if not settings["loadBalancerEnabled"]:
            gate = "loadBalancerEnabled is false: the load manager does nothing"
        elif not settings["loadBalancerSheddingEnabled"]:
            gate = "loadBalancerSheddingEnabled is false: no load shedding"
        elif len(available) <= 1:
            gate = f"only {len(available)} broker available: the unload scheduler skips the cycle"

        expired: tuple[str, ...] = ()
        shed: ShedResult | None = None
        actions: tuple[ExtAction, ...] = ()
        hit = mem.hit_count
        if settings["loadBalancerEnabled"] and settings["loadBalancerSheddingEnabled"]:
            # UnloadScheduler.execute forgets the bundles past the grace period before it asks
            # for the available brokers, so a cycle with one broker forgets them too
            expired = expire(recently, now, settings)
        if gate is None:
            shed = self._shed(cycle, recently, recent_brokers, hit)
            hit = shed.hit_count
            for b in shed.expired_brokers:
                recent_brokers.pop(b, None)
            actions = self._actions(cycle, shed, recently, recent_brokers,
                                    preview=last is None)

        splits: tuple[SplitResult, ...] = ()
        split_hits: Mapping[str, Mapping[str, int]] = mem.split_hits
        split_wait = mem.split_wait_ms
        warnings = self.warnings
        if last is None:
            runs, split_wait = split_runs(settings, mem.started, mem.split_wait_ms)
            splits, split_hits = _splits(cycle, mem.split_hits, runs)
            if runs == 0 and settings["loadBalancerEnabled"] \
                    and settings["loadBalancerAutoBundleSplitEnabled"]:
                warnings = (*warnings, _no_split_run(settings))
        store = MappingProxyType(cycle.store)
        new_mem = ExtensibleMemory(hit, store, MappingProxyType(recently),
                                   MappingProxyType(recent_brokers), MappingProxyType(split_hits),
                                   True, cycle.store_history, split_wait)
        return ExtensibleCycleResult(
            state, settings, store, MappingProxyType(cycle.tops), cycle.derived, gate,
            shed, actions, splits, expired, MappingProxyType(dict(recently)),
            MappingProxyType(dict(recent_brokers)), new_mem, elapsed=elapsed,
            warnings=warnings)

    def _shed(self, cycle: _Cycle, recently: Mapping[str, int], recent_brokers: Mapping[str, int],
              hit: int) -> ShedResult:
        """TransferShedder's ``findBundlesForUnloading`` with the hit count carried."""
        ctx = ShedderInput(
            cycle.settings, cycle.state.captured_at, cycle.store, cycle.tops,
            list(cycle.available), MappingProxyType(dict(recently)),
            MappingProxyType(dict(recent_brokers)), cycle.is_owner,
            make_transferable(cycle.lookups, cycle.fctx, default_pipeline()))
        return self.shedder.find_bundles_for_unloading(ctx, hit)

    def _actions(self, cycle: _Cycle, shed: ShedResult, recently: dict[str, int],
                 recent_brokers: dict[str, int], *, preview: bool = True
                 ) -> tuple[ExtAction, ...]:
        """Every Success decision as the plan shows it (an unload with its placement preview,
        unless ``preview`` is off), recorded as recently unloaded (the bundle and its source)
        at the snapshot's time."""
        now = cycle.state.captured_at
        actions = []
        for d in shed.decisions:
            if d.label is not Label.SUCCESS:
                continue
            top = next((t for t in cycle.tops.get(d.unload.source, ())
                        if t.bundleName == d.unload.bundle), None)
            placed = None
            if preview and d.unload.destination is None:
                placed = self._preview(d.unload.bundle, d.unload.source, cycle.lookups,
                                        cycle.fctx, cycle.store, cycle.settings)
            actions.append(ExtAction(
                d, top.stats.msgRateIn + top.stats.msgRateOut if top else None,
                top.throughput if top else None, placed))
            recently[d.unload.bundle] = now
            recent_brokers[d.unload.source] = now
        return tuple(actions)

    def _preview(self, bundle: str, source: str, lookups: Mapping[str, BrokerLookup],
                 fctx: FilterContext, store: Mapping[str, BrokerLoadData],
                 settings: Settings) -> PlacementDecision:
        """``ExtensibleLoadManagerImpl.selectAsync`` at the next lookup: the filters over the
        available brokers except the current owner, then LeastResourceUsageWithWeight over the
        survivors in the order the candidate map iterates (:func:`select_candidates`)."""
        order = select_candidates(lookups, source, bundle, fctx,
                                  settings.profile["selectCandidateMap"] == "ConcurrentHashMap")
        return lruw.select(LookupRequest(order, bundle, store, settings, self.rng))

    # --- what lbctl.loadmanager.clock needs -------------------------------------------------------
    def initial_memory(self) -> ExtensibleMemory:
        return ExtensibleMemory()

    def memory_key(self, memory: ExtensibleMemory) -> Any:
        return (memory.hit_count, dict(memory.recently_unloaded),
                dict(memory.recently_unloaded_brokers),
                {b: dict(h) for b, h in memory.split_hits.items()}, dict(memory.broker_load),
                memory.split_wait_ms)  # a cycle without a split run is no fixed point

    def held(self, state: ClusterState, at: int) -> ClusterState:
        """The state observed again at ``at``: brokers republished the same figures (their load
        data carries the new time, so it neither ages past the TTL nor stays cooling down)."""
        published = {b: replace(p, data=replace(p.data, updatedAt=at))
                     for b, p in state.broker_load_data.items()}
        brokers = {b: replace(local, lastUpdate=at) for b, local in state.brokers.items()}
        return replace(shifted(state, at), broker_load_data=MappingProxyType(published),
                       brokers=MappingProxyType(brokers))

    def samples(self, earlier: ClusterState, later: ClusterState) -> int:
        return 1

    def timers(self, memory: ExtensibleMemory) -> bool:
        """Whether the clock alone can still change the memory (grace periods, cool-downs)."""
        return bool(memory.recently_unloaded or memory.recently_unloaded_brokers)

    def projected_cycle(self, state: ClusterState, settings: Settings, memory: ExtensibleMemory,
                        elapsed: Elapsed, last: CycleResult) -> ExtensibleCycleResult:
        assert isinstance(last, ExtensibleCycleResult)
        return self._run(state, settings, memory, elapsed, last)

    def acting_key(self, memory: ExtensibleMemory, settings: Settings, at: int) -> Any:
        """:meth:`memory_key` less what cannot change whether a held cycle unloads:
        TransferShedder compares its hit count only with
        ``loadBalancerSheddingConditionHitCountThreshold`` (from the threshold on, the next
        cycle's rounds run whenever the condition holds: the count is cut there); the split hit
        counts decide splits only; and each broker's ``updatedAt`` counts relative to ``at``
        (a held cycle republishes every broker's data at its own time, so the same offsets give
        the same TTL check and the same EMA update in every later one)."""
        threshold = int(settings["loadBalancerSheddingConditionHitCountThreshold"])
        return (min(memory.hit_count, threshold), dict(memory.recently_unloaded),
                dict(memory.recently_unloaded_brokers),
                {b: (d.updatedAt - at, _BUT_UPDATED_AT(d)) for b, d in memory.broker_load.items()})


class ExtensibleCycleResult(ExtensibleCycle, frozen=True):
    """An extensible cycle's record, with its plan and its explanation."""

    def plan(self) -> Plan:
        return build_plan(self)

    def explanation(self, broker: str | None = None, bundle: str | None = None) -> Explanation:
        return ExtensibleExplanation(self, broker, bundle)


# --- plan@1 of a cycle ----------------------------------------------------------------------------
# A broker's ``usage`` and ``score`` are its ``weightedMaxEMA`` (the load TransferShedder compares;
# it is already history-smoothed). "Usage after" is our estimate, as for the modular plans: a
# broker's load is shared among its bundles in proportion to their throughput (over the broker's
# total throughput), and a moved bundle carries its share to the destination (in unload mode: to
# the broker the placement preview picks). Brokers without load data show no usage.
def build_plan(c: ExtensibleCycle) -> Plan:
    actions: list[Action] = []
    load = {b: d.weightedMaxEMA for b, d in c.store.items()}
    after = dict(load)
    for a in c.actions:
        u = a.decision.unload
        dest = u.destination or (a.preview.broker if a.preview else None)
        src = c.store.get(u.source)
        if src is not None and a.throughput is not None and src.throughput > 0:
            share = a.throughput / src.throughput * load[u.source]
            after[u.source] -= share
            if dest in after:
                after[dest] += share
        actions.append(Action(
            action="transfer" if u.destination else "unload", bundle=u.bundle, broker=u.source,
            reason=str(a.decision.reason), destinationBroker=u.destination,
            msgRate=rounded(a.msg_rate), throughput=rounded(a.throughput)))
    for res in c.splits:
        for s in res.decisions:
            st = c.bundle_stats(s.bundle)
            actions.append(Action(
                action="split", bundle=s.bundle, broker=s.broker, reason=str(s.reason),
                msgRate=rounded(st.stats.msgRateIn + st.stats.msgRateOut) if st else None,
                throughput=rounded(st.throughput) if st else None,
                algorithm=s.algorithm,
                boundaries=(format_position(s.boundary),) if s.boundary is not None else (),
                children=s.children, unload=False, detail=_split_detail(s)))
    decision = extensible_decision(c)
    rows = [_row(c, b, load, after, decision) for b in c.state.brokers]
    state = c.state
    warnings = (*c.warnings, *history_warnings(c.elapsed))
    return Plan(state.cluster, state.captured_at_iso, state.load_manager, c.shedding, c.placement,
                c.settings, tuple(actions), tuple(rows), len(c.bundle_names()), c.gate,
                decision, history_dict(c.elapsed), warnings)


def _split_detail(s: SplitDecision) -> str | None:
    """The condition that fired the split ("Message Rate: 49976/30000 msg/s"), worded as the
    modular split actions' ``detail``."""
    if s.figures is None:
        return None
    from lbctl.explain.words.split import split_detail  # loaded when a cycle splits

    return split_detail(s.figures)


def _row(c: ExtensibleCycle, broker: str, load: dict[str, float],
         after: dict[str, float], decision: CycleDecision) -> BrokerRow:
    """One broker's row: Success and the reason when bundles move off it, else Skip and why
    (no load data, outdated, cooling down, or the cycle's own gate)."""
    data = c.store.get(broker)
    label, reason = _row_verdict(c, broker, decision)
    why = "; ".join(_row_whys(c, broker))
    if data is None:
        why = f"{why}; no load data" if why else "no load data"
        nan = math.nan
        return BrokerRow(broker, nan, nan, None, 0.0, 0.0, len(c.top_bundles.get(broker, ())),
                         label, reason, why)
    numbers = {"weightedMaxEMA": data.weightedMaxEMA, "maxResourceUsage": data.maxResourceUsage,
               "msgThroughputEMA": data.msgThroughputEMA, "updatedAt": float(data.updatedAt)}
    return BrokerRow(
        broker=broker, usage=load[broker], usage_after=after[broker], score=data.weightedMaxEMA,
        msg_rate=data.msg_rate, throughput=data.throughput,
        bundles=data.bundleCount or len(c.top_bundles.get(broker, ())), label=label,
        reason=reason, why=why, numbers=numbers, resources=data.resource_percents())


def _stat(c: ExtensibleCycle, broker: str) -> BrokerStat | None:
    return next((s for s in (c.shed.brokers if c.shed else ()) if s.broker == broker), None)


def _row_verdict(c: ExtensibleCycle, broker: str, decision: CycleDecision
                 ) -> tuple[str | None, str | None]:
    """The row's label and reason: Success when bundles move off it; none when it receives
    load; else Skip with the broker's own reason (no load data, not counted by phase A) or the
    cycle's."""
    moved = {str(a.decision.reason) for a in c.actions if a.decision.unload.source == broker}
    if moved:
        return "Success", (str(Reason.OVERLOADED) if str(Reason.OVERLOADED) in moved
                           else moved.pop())
    rounds = c.shed.rounds if c.shed else ()
    if any(r.min_broker == broker and r.outcome == "offloaded" for r in rounds):
        return None, None  # it receives load: nothing was skipped
    stat = _stat(c, broker)
    if broker not in c.store:
        reason = Reason.NO_LOAD_DATA
    elif stat is not None and not stat.counted:
        cooling = isinstance(stat.why, TransferWhy) and stat.why.code == "cooling"
        reason = Reason.COOL_DOWN if cooling else Reason.OUTDATED_DATA
    else:
        reason = decision.reason if decision.label is not Label.SUCCESS else Reason.BALANCED
    return str(Label.SKIP), str(reason)


def _row_whys(c: ExtensibleCycle, broker: str) -> list[str]:
    """What phase A said of the broker, and each round it was in."""
    stat = _stat(c, broker)
    whys = [text(stat.why)] if stat is not None and stat.why is not None else []
    for r in (c.shed.rounds if c.shed else ()):
        if r.max_broker == broker:
            whys.append(f"max broker of a round ({r.reason}): {text(r.why)}")
        elif r.min_broker == broker and r.outcome == "offloaded":
            whys.append(f"min broker of a round: receives load from {r.max_broker}")
    return whys
