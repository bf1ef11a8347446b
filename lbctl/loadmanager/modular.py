"""Pulsar's modular load manager: one cycle, a sequence of them, and the plan of each.

Mirrors the parts of ``ModularLoadManagerImpl`` around the strategies:

1. ``updateBundleData``: every reported bundle takes a sample (:mod:`lbctl.loadmanager.loaddata`).
2. ``cleanupDeadBrokersData``: the placement strategy forgets brokers that are gone
   (``onActiveBrokersChange``).
3. ``doLoadShedding``: nothing when ``loadBalancerEnabled`` (``PulsarService`` then schedules no
   ``LoadSheddingTask``) or ``loadBalancerSheddingEnabled`` is off, or with one broker or fewer; drop grace-period entries older than
   ``loadBalancerSheddingGracePeriodMinutes``; ask the shedding strategy; then for each selected
   bundle (brokers in Java ``HashMap`` order, bundles in selection order): skip namespaces in
   ``loadBalancerSheddingExcludedNamespaces``; skip when no broker other than the owner could take it
   (namespace policies); pick the destination with ``selectBroker``; skip when there is none or it is
   the owner; otherwise unload and remember the bundle as recently unloaded (at the snapshot's time).
4. ``selectBroker``: all brokers → ``filterBrokersWithLargeTopicCount``
   (``loadBalancerBrokerMaxTopics``) → ``removeMostServicingBrokersForNamespace`` (when
   ``loadBalancerDistributeBundlesEvenlyEnabled``, or for ``pulsar/system``) → back to all brokers if
   empty → ``RoundRobinBrokerSelector`` for shedding-excluded namespaces, else the placement strategy →
   if the pick's weighted usage exceeds ``loadBalancerBrokerOverloadedThresholdPercentage``, ask the
   placement strategy again over all brokers and take its answer when it has one (the filters are
   :mod:`lbctl.strategies.placement.filters`).
5. ``checkNamespaceBundleSplit`` (run by ``updateAll``, not behind ``loadBalancerEnabled`` nor the
   shedding gates): only when ``loadBalancerAutoBundleSplitEnabled`` and more than one broker is
   known (since 3.0.1, PR #20190: the ``splitNeedsTwoBrokers`` variant; older releases split
   with one broker too), the bundles ``BundleSplitterTask`` picks (in the result ``HashMap``'s
   order) are split with the broker's ``defaultNamespaceBundleSplitAlgorithm`` (Pulsar passes no
   algorithm), unless their range cannot be split or they no longer exist; the children are
   unloaded when ``loadBalancerAutoUnloadSplitBundlesEnabled``.

Namespace policies (isolation, anti-affinity, failure domains) and the broker-version /
load-manager-class filters apply when the snapshot carries them (``docs/snapshot-policies.md``).
The state carried between cycles (:class:`~lbctl.model.cycle.CycleMemory`) is what the leader keeps
in memory, its ``LoadData`` maps' histories included (:func:`lbctl.loadmanager.loaddata.
leader_maps_and_reports`). Each cycle's record is a :class:`ModularCycleResult`, which builds its
plan (below) and
its explanation (:mod:`lbctl.explain.modular`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from random import Random
from types import MappingProxyType
from typing import Any

from msgspec import Struct

from lbctl.collector import collector_paused
from lbctl.config import Settings
from lbctl.explain import Explanation
from lbctl.explain.modular import NO_SHEDDING_TASK, ModularExplanation
from lbctl.explain.outcome import modular_decision
from lbctl.explain.words import text
from lbctl.loadmanager.base import CycleResult, LoadManager
from lbctl.loadmanager.clock import (
    expire,
    interval_ms,
    latest,
    reports_written,
    shifted,
)
from lbctl.loadmanager.loaddata import (
    build_load_data,
    leader_maps_and_reports,
    map_of,
    update_bundle_data,
)
from lbctl.model.bundle import (
    SYSTEM_NAMESPACE,
    BundleName,
    BundleNameError,
    format_position,
    namespace_of,
)
from lbctl.model.cluster import MODULAR, ClusterState, NameIndex
from lbctl.model.cycle import CycleMemory, Elapsed, LeaderMaps, ModularCycle
from lbctl.model.decision import (
    AutoSplit,
    CycleWhy,
    FilterStep,
    Label,
    PlacementTrace,
    Reason,
    Selection,
    SheddingDecision,
    SplitCandidate,
    UnloadOutcome,
)
from lbctl.model.javaorder import (
    hash_fill,
    hashset_copy_order,
    java_hash_order,
    multimap_key_order,
    refill_fill,
)
from lbctl.model.load import BundleData, LocalBrokerData, ResourcePercents
from lbctl.model.loaddata import BundleDataView, LoadData
from lbctl.model.outcome import history_dict, history_warnings
from lbctl.model.policies import ClusterPolicies
from lbctl.plan import Action, BrokerRow, Plan
from lbctl.records import replace
from lbctl.strategies.base import (
    PlacementRequest,
    PlacementStrategy,
    SelectingShedder,
    SheddingStrategy,
)
from lbctl.strategies.builtin import algorithm_by_name
from lbctl.strategies.placement.filters import (
    ClassesMemo,
    PlacementEnv,
    anti_affinity_counts,
    filter_anti_affinity_modular,
    filter_large_topic_count,
    filter_load_manager_class,
    filter_versions,
    namespace_bundle_counts,
    policy_candidates,
    remove_most_servicing,
)
from lbctl.strategies.placement.namespace_policies import should_anti_affinity_namespace_unload
from lbctl.strategies.split.base import SplitAlgorithm, SplitError, apply_boundaries, option_for
from lbctl.strategies.split.bundle_splitter_task import find_bundles_to_split
from lbctl.units import rounded

_EMPTY: Mapping[str, Any] = MappingProxyType({})
#: the load manager's reasons without figures, one record each
NO_BROKER = CycleWhy("no-broker")
SAME_BROKER = CycleWhy("same-broker")
OWNER_ONLY = CycleWhy("owner-only")
WOULD_COME_BACK = CycleWhy("would-come-back")
STRATEGY_FOUND_NONE = CycleWhy("strategy-found-none")
RESTORED = CycleWhy("restored")


class _Cycle(Struct, frozen=True):
    """What the steps of one cycle share: its state, settings and clock, the load data and
    placement environment built from them, the bundles whose grace period ended, the splits."""

    state: ClusterState
    settings: Settings
    elapsed: Elapsed
    load: LoadData
    env: PlacementEnv
    expired: tuple[str, ...]
    splits: tuple[AutoSplit, ...]
    maps: LeaderMaps
    #: the running tables (``brokerCandidateCache``'s, the shedding thread's secondaries set's
    #: and primaries set's) once the cycle's split checks filled the candidate set: what its
    #: shedding starts from
    tables: tuple[int, int, int] = (0, 0, 0)
    #: ``BundleSplitterTask.bundleCache``'s table length after this cycle's splits
    split_capacity: int = 0


class ModularLoadManager(LoadManager[CycleMemory]):
    """Runs cycles with one shedding and one placement strategy, carrying memory between them."""

    kind = MODULAR

    def __init__(
        self,
        shedding: SheddingStrategy,
        placement: PlacementStrategy,
        round_robin: PlacementStrategy,
        *,
        seed: int | None = None,
        check_splits: bool = True,
        warnings: Sequence[str] = (),
    ):
        """``check_splits=False`` skips ``checkNamespaceBundleSplit`` for callers that would
        throw its answer away (``assign-preview``'s lookups)."""
        self.shedding = shedding
        self.placement = placement
        self.round_robin = round_robin
        self.check_splits = check_splits
        self.rng = Random(seed if seed is not None else 0)
        self.warnings = tuple(warnings)  # e.g. a strategy this Pulsar release does not have
        self._filter_memo: tuple[Any, ...] = (None, None)
        self._env: PlacementEnv | None = None
        #: the running cycle's placement environments, by the tables they are read in
        #: (see _filled), and what they are built from
        self._envs: dict[tuple[int, tuple[int, int, int]], PlacementEnv] = {}
        self._env_base: tuple[tuple[str, ...], LoadData, ClusterPolicies, Settings] | None = None
        self._env_classes: ClassesMemo = {}
        #: the running tables: ``brokerCandidateCache``'s and the shedding thread's secondaries
        #: and primaries sets' lengths so far (see _filled)
        self._tables: tuple[int, int, int] = (0, 0, 0)
        #: the running cycle's state's name index (see _ownership_index)
        self._names: NameIndex | None = None
        #: the namespaces of the bundles the running cycle unloads (None outside its unloads)
        self._unload_namespaces: frozenset[str] | None = None

    @property
    def strategies(self) -> tuple[str, str]:
        return self.shedding.name, self.placement.name

    @property
    def label(self) -> str:
        return f"{self.shedding.name} + {self.placement.name}"

    def initial_memory(self) -> CycleMemory:
        return CycleMemory(
            shedding=self.shedding.initial_memory(),
            placement=self.placement.initial_memory(),
            round_robin=self.round_robin.initial_memory(),
        )

    # --- one cycle -------------------------------------------------------------------------------
    def run_cycle(
        self, state: ClusterState, settings: Settings, memory: CycleMemory | None = None,
        elapsed: Elapsed | None = None,
    ) -> ModularCycleResult:
        with collector_paused():
            return self._run_cycle(state, settings, memory, elapsed)

    def projected_cycle(self, state: ClusterState, settings: Settings, memory: CycleMemory,
                        elapsed: Elapsed, last: CycleResult) -> ModularCycleResult:
        """A held cycle of ``explain``'s projection: when it would rebuild the very leader maps,
        bundle data and load data ``last`` (the snapshot's own cycle) built, it takes ``last``'s
        load data with its own clock and recently unloaded bundles instead
        (:meth:`_held_like`); otherwise the whole cycle. Either way it is lean: its shedder
        lists no candidate bundle when it can (:class:`SelectingShedder`), since only whether
        it acts and its memory are read."""
        assert isinstance(last, ModularCycleResult)
        with collector_paused():
            return self._run_cycle(state, settings, memory, elapsed,
                                   last if self._held_like(state, settings, memory, elapsed, last)
                                   else None, lean=True)

    @staticmethod
    def _held_like(state: ClusterState, settings: Settings, memory: CycleMemory, elapsed: Elapsed,
                   last: ModularCycleResult) -> bool:
        """Whether a held cycle on ``state`` would rebuild ``last``'s load data but for its time
        and recently unloaded bundles. A held cycle takes no sample (``elapsed.samples`` is 0: no
        load report was written, so ``ModularLoadManagerImpl.updateBundleData`` has nothing new
        and the ``TimeAverageMessageData`` keep their sample counts): with the same reports (the
        same ``brokers``) over the maps and bundle data ``last`` left, the leader's maps keep
        every key (:func:`leader_maps_and_reports` returns them as they are) and the bundle data
        is returned as is (:func:`update_bundle_data`), so each broker's time averages, the
        system bundles and the bundle map are ``last``'s. Not when ``last`` split bundles (its
        maps lost them; the held cycle puts them back) or the snapshot carries Pulsar's own
        ``bundleData`` (taken anew each cycle)."""
        return (elapsed.replaying and elapsed.samples == 0 and last.gate is None
                and settings is last.settings and state.brokers is last.state.brokers
                and memory.maps is last.memory.maps
                and memory.bundle_data is last.memory.bundle_data
                and isinstance(memory.bundle_data, BundleDataView) and not state.bundle_data
                and not last.load.split_away)

    def _run_cycle(
        self, state: ClusterState, settings: Settings, memory: CycleMemory | None,
        elapsed: Elapsed | None, last: ModularCycleResult | None = None, *, lean: bool = False,
    ) -> ModularCycleResult:
        """One cycle; ``last``: a cycle whose load data this one takes (:meth:`_held_like`);
        ``lean``: only what it unloads and its memory are read (:meth:`projected_cycle`), so a
        shedder that can leaves out the bundles it looked at (:class:`SelectingShedder`)."""
        mem = memory or self.initial_memory()
        elapsed = elapsed or Elapsed(interval_ms=interval_ms(settings))
        now = state.captured_at
        bundle_data: Mapping[str, BundleData]
        if last is None:
            maps, reports, order = leader_maps_and_reports(state, mem.maps)
            bundle_data = update_bundle_data(state, mem.bundle_data, elapsed.samples, reports,
                                             order)
        else:
            maps, bundle_data = mem.maps, mem.bundle_data
        recently = latest(mem.recently_unloaded, state.recently_unloaded)

        active = frozenset(state.brokers)
        placement_mem = self.placement.on_active_brokers_change(mem.placement, active)
        rr_mem = self.round_robin.on_active_brokers_change(mem.round_robin, active)

        gate = None
        if not settings["loadBalancerEnabled"]:
            # PulsarService schedules no LoadSheddingTask; checkNamespaceBundleSplit, run by
            # updateAll, does not read this key, so the cycle's splits stand (explain says when
            # they run without the brokers' periodic reports).
            gate = NO_SHEDDING_TASK
        elif not settings["loadBalancerSheddingEnabled"]:
            gate = "loadBalancerSheddingEnabled is false: no load shedding"
        elif len(state.available()) <= 1:
            gate = f"only {len(state.available())} broker available: no load shedding is performed"

        expired = expire(recently, now, settings) if gate is None else ()
        cycle = self._prepare(state, settings, elapsed, bundle_data, recently, expired, maps,
                              None if last is None else last.load,
                              (mem.candidate_capacity, mem.secondaries_capacity,
                               mem.primaries_capacity),
                              mem.split_capacity)
        # what the placement keeps per BundleData object dies with the bundles the leader's
        # updateBundleData and checkNamespaceBundleSplit dropped (AvgShedder before PR #26246)
        placement_mem = self.placement.on_bundle_data_update(placement_mem, cycle.load)
        if gate is not None:
            return self._result(cycle, gate, None, (), CycleMemory(
                bundle_data, MappingProxyType(recently), mem.shedding, placement_mem, rr_mem,
                mem.multimap_capacity, cycle.maps, _kept(cycle.tables[0]), cycle.split_capacity,
                _kept(cycle.tables[1]), _kept(cycle.tables[2])))

        shedding = self.shedding
        if lean and elapsed.replaying and isinstance(shedding, SelectingShedder):
            decision, shed_mem, capacity, outcomes, placement_mem, rr_mem = self._lean_unload(
                cycle, shedding, mem, recently, placement_mem, rr_mem)
        else:
            decision, shed_mem = shedding.shed(cycle.load, settings, mem.shedding)
            ordered, capacity = self._unload_order(decision, settings, mem)
            outcomes, placement_mem, rr_mem = self._unload(cycle, ordered, recently,
                                                           placement_mem, rr_mem, decision)
        # onUnloadAttemptCompleted: a shedder's own destinations, and AvgShedder's picks stored
        # at its first ask, live for this attempt only (PR #26246; before it AvgShedder's map
        # keeps them). A strategy that threw never reaches it (doLoadShedding calls it in a
        # finally after the strategy call).
        if not decision.failure:
            planned = {s.bundle: s.destination for s in decision.selections if s.destination}
            placement_mem = self.placement.on_unload_attempt_completed(placement_mem, planned,
                                                                       settings)
        return self._result(cycle, None, decision, outcomes, CycleMemory(
            bundle_data, MappingProxyType(recently), shed_mem, placement_mem, rr_mem, capacity,
            cycle.maps, _kept(self._tables[0]), cycle.split_capacity, _kept(self._tables[1]),
            _kept(self._tables[2])))

    def _prepare(self, state: ClusterState, settings: Settings, elapsed: Elapsed,
                 bundle_data: Mapping[str, BundleData], recently: Mapping[str, int],
                 expired: tuple[str, ...], maps: LeaderMaps,
                 like: LoadData | None = None, tables: tuple[int, int, int] = (0, 0, 0),
                 split_capacity: int = 0) -> _Cycle:
        """The cycle's load data and placement environment, and its automatic splits. ``like``:
        load data built from the same reports, maps and bundle data, taken with this cycle's
        time and recently unloaded bundles (what :func:`build_load_data` takes from them).
        ``tables``: the table lengths ``brokerCandidateCache`` and the shedding thread's
        secondaries and primaries sets kept from earlier cycles (:meth:`_filled`); ``split_capacity``:
        ``BundleSplitterTask``'s result map's (:func:`auto_splits`)."""
        # the reader's name index (None when the state has none): the cycle's bundle data holds
        # exactly the names of the state's reports, so it counts their system bundles too
        self._names = state.name_index()
        if like is not None:
            load = replace(like, recently_unloaded=MappingProxyType(dict(recently)),
                           now=state.captured_at)
        else:
            load = build_load_data(state, bundle_data, recently,
                                   pulsar_system=bool(settings.profile["shedPulsarSystem"]),
                                   maps=maps, names=self._names)
        policies = state.cluster_policies()
        self._env_base = (tuple(hashset_copy_order(state.available())), load, policies, settings)
        self._envs = {}
        self._env_classes = {}  # the brokers' policy classes, shared by the cycle's environments
        self._tables = tables
        env = self._env = self._env_at(tables)
        # a replayed cycle only advances memory; splits (checkNamespaceBundleSplit) leave none.
        # updateAll runs the split check on each load-report write, on no timer of its own: with
        # no report written since the previous cycle (samples 0) none ran (ModularLoadManagerImpl
        # at 009a9bf2cdff, handleDataNotification)
        splits, kept = (_auto_splits(state, load, settings, env, split_capacity)
                        if self.check_splits and not elapsed.replaying and elapsed.samples
                        else ((), split_capacity))
        if splits and settings["loadBalancerAutoUnloadSplitBundlesEnabled"]:
            # each split that reached shouldNamespacePoliciesUnload filled the candidate set, on
            # the load manager's own thread (updateAll): the shedding thread's scratch sets stay
            for s in splits:
                if s.skipped is None or (isinstance(s.skipped, CycleWhy)
                                         and s.skipped.code in ("no-boundary", "split-refused")):
                    self._checked(namespace_of(s.candidate.bundle), s.candidate.broker, load)
        split_away = frozenset(s.candidate.bundle for s in splits if s.skipped is None)
        if split_away:  # checkNamespaceBundleSplit removes their bundle data before shedding
            maps = LeaderMaps(maps.brokers, maps.bundles.then((b, False) for b in split_away))
            load = replace(load, split_away=split_away, bundle_map=map_of(maps.bundles))
        return _Cycle(state, settings, elapsed, load, env, expired, splits, maps, self._tables,
                      kept)

    def _lean_unload(self, cycle: _Cycle, shedding: SelectingShedder, mem: CycleMemory,
                     recently: dict[str, int], placement_mem: Any, rr_mem: Any
                     ) -> tuple[SheddingDecision, Any, int, tuple[UnloadOutcome, ...], Any, Any]:
        """A replaying cycle's shedding and unloads when only whether it acts and its memory
        are read (:meth:`projected_cycle`): the shedder lists no candidate bundle and, at first,
        gives each broker's first selection alone. The unload loop stops at the first unload
        carried out (a replaying cycle), and walks the selections broker after broker in the
        multimap's order (its keys, the brokers with a selection, are the same either way):
        until it has skipped every selection kept of a broker whose list was cut, it walks what
        it would walk over the whole lists. Only when it did skip all of them — or found
        nothing — are the cycle's whole selections taken and the loop run again, from the
        same random generator, placement memory and recently unloaded bundles."""
        load, settings = cycle.load, cycle.settings
        rng = self.rng.getstate()
        for first_only in (True, False):
            tried = dict(recently)
            decision, shed_mem, cut = shedding.selections(load, settings, mem.shedding,
                                                          first_only)
            ordered, capacity = self._unload_order(decision, settings, mem)
            outcomes, p_mem, r_mem = self._unload(cycle, ordered, tried, placement_mem, rr_mem,
                                                  decision)
            skipped = Counter(o.selection.broker for o in outcomes if o.skipped is not None)
            if not first_only or not any(skipped[b] for b in cut):
                recently.update(tried)  # an unload carried out adds its bundle
                return decision, shed_mem, capacity, outcomes, p_mem, r_mem
            self.rng.setstate(rng)
        raise AssertionError("unreachable: the second pass always returns")

    def _unload_order(self, decision: SheddingDecision, settings: Settings,
                      mem: CycleMemory) -> tuple[list[Selection], int]:
        """The selections in the order ``doLoadShedding`` walks them, and the multimap's table
        length to carry. ArrayListMultimap: AvgShedder builds one per call; the other modular
        shedders keep one in a field and clear() it, so its table keeps the length it once grew
        to."""
        avg = self.shedding.name == "AvgShedder"
        ordered, capacity = _multimap_order(decision.selections,
                                            int(settings.profile["guavaMultimapBuckets"]),
                                            0 if avg else mem.multimap_capacity)
        return ordered, mem.multimap_capacity if avg else capacity

    def _result(self, cycle: _Cycle, gate: str | None, decision: SheddingDecision | None,
                outcomes: tuple[UnloadOutcome, ...], memory: CycleMemory) -> ModularCycleResult:
        return ModularCycleResult(
            cycle.state, cycle.settings, self.shedding.name, self.placement.name, cycle.load,
            decision, outcomes, gate, cycle.expired, memory, cycle.splits, cycle.elapsed,
            self.warnings)

    def _unload(self, cycle: _Cycle, ordered: list[Selection], recently: dict[str, int],
                placement_mem: Any, rr_mem: Any, decision: SheddingDecision
                ) -> tuple[tuple[UnloadOutcome, ...], Any, Any]:
        """``doLoadShedding``'s loop over the selections: each bundle unloaded to the broker
        ``selectBroker`` picks, or skipped and why (``recently`` gains the unloaded bundles)."""
        load, settings, now = cycle.load, cycle.settings, cycle.state.captured_at
        elapsed = cycle.elapsed
        self._tables = cycle.tables  # (a lean cycle's second pass starts over)
        self._env = self._env_at(cycle.tables)
        planned = {s.bundle: s.destination for s in decision.selections if s.destination}
        outcomes: list[UnloadOutcome] = []
        excluded = set(settings["loadBalancerSheddingExcludedNamespaces"])
        # the ownership index is built for these namespaces only (see _ownership_index)
        self._unload_namespaces = frozenset(namespace_of(sel.bundle) for sel in ordered)
        try:
            for sel in ordered:
                ns = namespace_of(sel.bundle)
                if ns in excluded:
                    outcomes.append(UnloadOutcome(
                        sel, None, CycleWhy("excluded-namespace", ns)))
                    continue
                # shouldNamespacePoliciesUnload, shouldAntiAffinityNamespaceUnload and
                # selectBroker each clear and fill the candidate set with the same brokers
                why_not = self._checked(ns, sel.broker, load, settings)
                if why_not is not None:
                    outcomes.append(UnloadOutcome(sel, None, why_not))
                    continue
                env = self._filled(ns, load)  # selectBroker's own fill
                trace, placement_mem, rr_mem = self.select_broker(
                    sel.bundle, load, settings, placement_mem, rr_mem, planned, env)
                if trace.broker is None:
                    outcomes.append(UnloadOutcome(sel, None, NO_BROKER, trace))
                elif trace.broker == sel.broker:
                    outcomes.append(UnloadOutcome(sel, trace.broker, SAME_BROKER, trace))
                else:
                    outcomes.append(UnloadOutcome(sel, trace.broker, None, trace))
                    recently[sel.bundle] = now
                    if elapsed.replaying:
                        break  # the replay stops before a cycle that acts: the rest is not needed
        finally:
            self._unload_namespaces = None
        return tuple(outcomes), placement_mem, rr_mem

    # --- placement -------------------------------------------------------------------------------
    def select_broker(
        self,
        bundle: str,
        load: LoadData,
        settings: Settings,
        placement_mem: Any,
        rr_mem: Any,
        planned: Mapping[str, str] | None = None,
        env: PlacementEnv | None = None,
    ) -> tuple[PlacementTrace, Any, Any]:
        """``ModularLoadManagerImpl.selectBroker`` (no preallocation)."""
        planned = planned or {}
        if env is None:
            env = self._env or PlacementEnv(tuple(java_hash_order(load.brokers)))
        data = load.bundle_data.get(bundle) or BundleData.new()
        ns = namespace_of(bundle)
        allowed, cands, steps = self._candidates(ns, load, settings, env)

        use_rr = ns in set(settings["loadBalancerSheddingExcludedNamespaces"])
        strategy = self.round_robin if use_rr else self.placement
        mem = rr_mem if use_rr else placement_mem
        decision, mem = strategy.select(
            PlacementRequest(cands, bundle, load, settings, self.rng, data, planned), mem)
        if use_rr:
            rr_mem = mem
        else:
            placement_mem = mem
        broker = decision.broker
        if broker is None:
            return (PlacementTrace(bundle, tuple(steps), decision, None, None,
                                   STRATEGY_FOUND_NONE),
                    placement_mem, rr_mem)

        recheck = None
        why = decision.why
        threshold = settings["loadBalancerBrokerOverloadedThresholdPercentage"] / 100.0
        usage = settings.overload_usage(load.brokers[broker].local)  # PIP-358: weighted from 4.0
        if usage > threshold:
            # applyNamespacePolicies adds its brokers to the (not cleared) candidate set: every
            # broker the namespace policies allow
            again = self._readded(ns, load, allowed, cands, env)
            recheck, placement_mem = self.placement.select(
                PlacementRequest(again, bundle, load, settings, self.rng, data, planned),
                placement_mem)
            if recheck.broker is not None:
                why = CycleWhy("overloaded-pick", recheck.broker, broker, usage, threshold)
                broker = recheck.broker
        return (PlacementTrace(bundle, tuple(steps), decision, recheck, broker, why),
                placement_mem, rr_mem)

    def _readded(self, namespace: str, load: LoadData, allowed: Sequence[str],
                 cands: Sequence[str], env: PlacementEnv) -> Sequence[str]:
        """``brokerCandidateCache`` once ``applyNamespacePolicies`` added the policy's brokers
        back without clearing it (the overload re-check, and the restore after a filter threw,
        ModularLoadManagerImpl.selectBroker at 009a9bf2cdff): a broker the filters had removed
        goes back at the *end* of its bucket's chain, after the brokers still there (JDK
        ``HashMap.putVal`` appends), not where the first fill put it; in a tree bin where
        ``putTreeVal`` links it (:func:`~lbctl.model.javaorder.refill_fill`). The brokers of
        ``allowed`` in that order; ``allowed`` as is when nothing was removed, or when ``env``
        is not one of the cycle's own (no table known)."""
        kept = set(cands)
        if env.start is None or self._envs.get((env.table, env.start)) is not env or all(
                b in kept for b in allowed):
            return allowed
        fill = policy_candidates(namespace, env, load)
        # the refill walks the thread-local sets again, from the tables the fill left (which
        # only a chain of 9 colliding names changes), and a broker put back can raise a chain
        # to 9 again: what the refill grows, the sets keep for the next fills (refill_fill)
        refilled = None if fill.tables is None else policy_candidates(
            namespace, self._env_at(fill.tables), load)
        order, grown = refill_fill(fill.puts, env.start[0], kept,
                                   None if refilled is None else refilled.puts)
        if refilled is not None and refilled.tables is not None and fill.tables == self._tables:
            self._tables = (grown, refilled.tables[1], refilled.tables[2])  # the latest fill's
        wanted = set(allowed)
        return tuple(b for b in order if b in wanted)

    def _checked(self, namespace: str, owner: str, load: LoadData,
                 settings: Settings | None = None) -> CycleWhy | None:
        """``shouldNamespacePoliciesUnload`` then ``shouldAntiAffinityNamespaceUnload`` for a
        bundle of ``namespace`` on ``owner``, each with its own fill of the candidate set (the
        second only for a namespace of an anti-affinity group, and only when the first lets the
        bundle go): why the bundle stays (``None``: it goes). Their answers depend on which
        brokers the fills hold, not on their order; the fills count for the tables.

        ``settings``: the shedding thread's checks (the policy candidates are those with load
        reports, as the placement reads them); ``None``: the split checks of ``updateAll``
        (:func:`auto_splits` decided them already; here only their fills count)."""
        shedding = settings is not None
        if settings is not None and not settings.profile["namespacePoliciesUnloadCheck"]:
            # before 2.11 (PR #16476) doLoadShedding asked shouldAntiAffinityNamespaceUnload
            # alone: no policies fill, and a bundle only its owner may take is still unloaded
            if self._env_at(self._tables).policies.anti_affinity_group(namespace) is None:
                return None
            env = self._filled(namespace, load)
            cands = self._candidates(namespace, load, settings, env)[0]
            counts = anti_affinity_counts(namespace, env, load)
            return (None if should_anti_affinity_namespace_unload(owner, cands, counts)
                    else WOULD_COME_BACK)
        env = self._filled(namespace, load, shedding=shedding)
        allowed = (self._candidates(namespace, load, settings, env)[0] if settings is not None
                   else None)
        why = policies_block_unload(namespace, owner, load, env, allowed)
        if why is not OWNER_ONLY and env.policies.anti_affinity_group(namespace) is not None:
            self._filled(namespace, load, shedding=shedding)
        return why

    def _filled(self, namespace: str, load: LoadData, *, shedding: bool = True) -> PlacementEnv:
        """``applyNamespacePolicies`` for a bundle of ``namespace`` on the cleared
        ``brokerCandidateCache``: the placement environment whose order this fill iterates.

        The set is one field ``HashSet`` (ModularLoadManagerImpl at 009a9bf2cdff) that
        ``shouldNamespacePoliciesUnload``, ``shouldAntiAffinityNamespaceUnload`` and
        ``selectBroker`` ``clear()`` and refill, and ``clear()`` keeps the table: a fill that
        outnumbers 3/4 of it grows it for this fill and for every later one, in this cycle and
        the next. The fill is the namespace's isolation policy's primaries (plus its
        secondaries on failover), or, without a policy, the shared brokers that load
        persistent topics. ``LoadManagerShared.applyNamespacePolicies`` collects them first in
        two thread-local ``HashSet`` s (``localPrimariesCache``, ``localSecondaryCache``), also
        cleared and refilled; the secondaries' one grows by a policy's secondaries even when
        they are not added (no failover). The fill is followed put by put from the tables the
        earlier fills left, and leaves the tables it grew
        (:func:`~lbctl.strategies.placement.namespace_policies.apply_namespace_policies`), so a
        chain of 9 colliding names, which grows a table below 64 buckets early and makes a tree
        bin from 64 on, orders this fill and the later ones as the JDK would; and a second fill
        of the same brokers can then differ from the first.
        ``shedding``: the fill runs on the shedding thread (``LoadSheddingTask``), whose scratch
        sets lbctl follows; the split checks run on the load manager's own thread
        (``updateAll``), and lookups on others, whose scratch sets never order the shedding's
        fills (the split checks' fills are read with the shedding thread's scratch tables,
        and grow only the candidate set). Tables only grow, so a cycle reads a few
        environments at most, each built once (:meth:`_env_at`)."""
        start = self._tables
        env = self._env_at(start)
        policy = policy_candidates(namespace, env, load)
        assert policy.tables is not None
        tables = policy.tables if shedding else (policy.tables[0], start[1], start[2])
        if tables == start:  # the usual fill: nothing grew
            self._env = env
            return env
        self._tables = tables
        env = self._env_at(start, tables[0])
        self._env = self._env_at(tables)
        return env

    def _env_at(self, start: tuple[int, int, int], table: int = 0) -> PlacementEnv:
        """The cycle's placement environment whose fills start from the tables ``start``
        (the candidate set's, the secondaries set's, the primaries set's) and whose available
        brokers are shown in a candidate table of ``table`` (0: ``start``'s), built at the
        first ask."""
        env = self._envs.get((table, start))  # (as asked: most asks repeat)
        if env is not None:
            return env
        begin = (max(start[0], 16), max(start[1], 16), max(start[2], 16))
        candidates = max(table, begin[0])
        env = self._envs.get((candidates, begin))
        if env is None:
            assert self._env_base is not None, "an environment is asked for before a cycle"
            available, load, policies, settings = self._env_base
            env = self._envs[(candidates, begin)] = PlacementEnv.of(
                available, load, policies, settings, candidates, start=begin,
                classes=self._env_classes)
        self._envs[(table, start)] = env
        return env

    def _candidates(
        self, namespace: str, load: LoadData, settings: Settings, env: PlacementEnv
    ) -> tuple[tuple[str, ...], Sequence[str], list[FilterStep]]:
        """The brokers the namespace policies allow, and the candidates left after the filters,
        for a bundle of ``namespace``: ``applyNamespacePolicies`` → ``loadBalancerBrokerMaxTopics``
        → anti-affinity group → ``removeMostServicingBrokersForNamespace`` → the filter pipeline
        (load manager class, versions; a failing filter restores the policy candidates) → the
        policy candidates again when none is left.

        During shedding nothing is preallocated, so within one cycle the filters' answer depends
        on the namespace alone: it is computed once per namespace and cycle. Brokers without a
        load report only become candidates through an isolation policy; placement strategies
        score brokers from their reports, so such brokers are left to the strategies' own rules.
        """
        if (self._filter_memo[0] is not load or self._filter_memo[1] is not settings
                or self._filter_memo[2] is not env):
            # the ownership index is built at the first namespace that needs it
            # (the ownership index depends on the load data alone: a cycle's fill that grew
            # the candidate set's table gives another env, not another index)
            slot = self._filter_memo[3] if self._filter_memo[0] is load else [None, None]
            self._filter_memo = (load, settings, env, slot, {}, {}, {})
        _, _, _, index_slot, per_ns, per_policy, _ = self._filter_memo
        hit = per_ns.get(namespace)
        if hit is None:
            policy = policy_candidates(namespace, env, load)
            allowed = policy.brokers
            # the policy candidates and the max-topics filter depend on the namespace's isolation
            # policy only: computed once per policy (and once for all namespaces without one)
            base = per_policy.get(id(policy))
            if base is None:
                base_steps: list[FilterStep] = []
                if policy.why:
                    base_steps.append(FilterStep("namespace policies", env.available, allowed,
                                                 policy.why))
                topped = filter_large_topic_count(allowed, load, settings, base_steps)
                base = per_policy[id(policy)] = (topped, tuple(base_steps), policy,
                                                 _with_reports(allowed, load, []))
            steps = list(base[1])
            cands = base[0]
            cands = filter_anti_affinity_modular(cands, namespace, env, load, settings, steps)
            if settings["loadBalancerDistributeBundlesEvenlyEnabled"] or namespace == SYSTEM_NAMESPACE:
                sets = self._filter_memo[6]  # candidates tuple (by identity) → its set
                known = sets.get(id(cands))
                if known is None or known[0] is not cands:
                    known = sets[id(cands)] = (cands, frozenset(cands))
                index = self._ownership_index(namespace, load, index_slot)
                cands = remove_most_servicing(cands, namespace, index, steps, known[1])
            classed = filter_load_manager_class(cands, load, settings, env, steps)
            piped = filter_versions(classed, load, settings, env, steps)
            # the version filter threw: selectBroker adds the policy's brokers back to the set
            # the earlier filters left, without clearing it
            cands = self._readded(namespace, load, allowed, classed, env) if piped is None \
                else piped
            if not cands:
                steps.append(FilterStep("restore", (), allowed, RESTORED))
                cands = allowed
            # the policy's brokers with reports (once per policy); the candidates are among
            # them, so when none lacks a report the candidates need no check either
            reported = base[3]
            if len(reported) < len(allowed):
                cands = _with_reports(cands, load, steps)
            allowed = reported
            hit = per_ns[namespace] = (allowed, cands, tuple(steps))
        return hit[0], hit[1], list(hit[2])

    def _ownership_index(self, namespace: str, load: LoadData,
                         slot: list[Any]) -> Mapping[str, Mapping[str, int]]:
        """The brokers' bundle counts per namespace (:func:`namespace_bundle_counts`) for
        ``namespace``, kept in ``slot`` ([index, the namespaces it holds or None for all]) for
        this load data. During a cycle's unloads only their namespaces are asked for, so the
        index holds those alone; a namespace outside them (a later request over the same load
        data) has the whole index built."""
        index: Mapping[str, Mapping[str, int]] | None = slot[0]
        covered: frozenset[str] | None = slot[1]
        if index is None or (covered is not None and namespace not in covered):
            wanted = self._unload_namespaces
            first = index is None and wanted is not None and namespace in wanted
            covered = wanted if first else None
            index = namespace_bundle_counts(load, covered, self._names)
            slot[:] = [index, covered]
        return index

    # --- what lbctl.loadmanager.clock needs -------------------------------------------------------
    def memory_key(self, memory: CycleMemory) -> Any:
        """Everything that changes from cycle to cycle on a held state (bundle data does not:
        replayed cycles take no sample)."""
        return (memory.shedding, memory.placement, memory.round_robin,
                dict(memory.recently_unloaded), memory.multimap_capacity,
                memory.candidate_capacity, memory.split_capacity, memory.secondaries_capacity,
                memory.primaries_capacity)

    def held(self, state: ClusterState, at: int) -> ClusterState:
        return shifted(state, at)

    def samples(self, earlier: ClusterState, later: ClusterState) -> int:
        return reports_written(earlier, later)

    def timers(self, memory: CycleMemory) -> bool:
        """Whether the clock alone can still change the memory (a grace period to run out)."""
        return bool(memory.recently_unloaded)


def policies_block_unload(namespace: str, owner: str, load: LoadData, env: PlacementEnv,
                          allowed: tuple[str, ...] | None = None) -> CycleWhy | None:
    """Why ``doLoadShedding`` would not unload a bundle of ``namespace`` from ``owner``:
    ``shouldNamespacePoliciesUnload`` (no broker but the owner passes the namespace policies)
    and ``shouldAntiAffinityNamespaceUnload`` (the bundle would come back). ``None``: unload.
    ``allowed``: the namespace's policy candidates when already known."""
    if allowed is None:
        allowed = policy_candidates(namespace, env, load).brokers
    if all(b == owner for b in allowed):  # no broker but the owner (stops at the first other)
        return OWNER_ONLY
    counts = anti_affinity_counts(namespace, env, load)
    if not should_anti_affinity_namespace_unload(owner, allowed, counts):
        return WOULD_COME_BACK
    return None


def _with_reports(cands: Sequence[str], load: LoadData,
                  steps: list[FilterStep]) -> Sequence[str]:
    """The candidates a placement strategy can score: only an isolation policy lets a broker
    without a load report through the filters, and Pulsar's strategies then read its missing
    ``BrokerData`` (and fail); lbctl leaves such a broker out instead, and says so."""
    reports = load.brokers
    if all(map(reports.__contains__, cands)):  # the usual case, at C speed
        return cands
    kept = tuple(b for b in cands if b in reports)
    if len(kept) < len(cands):
        steps.append(FilterStep("load report", cands, kept, CycleWhy(
            "no-report", names=tuple(b for b in cands if b not in load.brokers))))
    return kept


_TOTALS: dict[int, tuple[LocalBrokerData, float]] = {}


def _total_throughput(local: LocalBrokerData) -> float:
    """A broker's reported throughput summed over its bundles (memoised by identity, a few
    reports at a time: a shed broker's many unloads each ask)."""
    hit = _TOTALS.get(id(local))
    if hit is not None and hit[0] is local:
        return hit[1]
    if len(_TOTALS) >= 64:
        _TOTALS.clear()
    total = sum(s.throughput for s in local.lastStats.values())
    _TOTALS[id(local)] = (local, total)
    return total


def _kept(capacity: int) -> int:
    """A table length as :class:`CycleMemory` keeps it (0: 16 or none, which order alike)."""
    return capacity if capacity > 16 else 0


def _multimap_order(selections: Sequence[Selection], buckets: int,
                    reused: int) -> tuple[list[Selection], int]:
    """``Multimap.asMap().forEach``: brokers in the backing ``HashMap``'s order (16 buckets on
    Guava 32+, 32 on Guava ≤ 31.1, or the length a reused multimap grew to), each broker's
    bundles in insertion order; and the table length to carry to the next cycle."""
    by_broker: dict[str, list[Selection]] = {}
    for s in selections:
        by_broker.setdefault(s.broker, []).append(s)
    order, capacity = multimap_key_order(by_broker, buckets, reused)
    return [s for b in order for s in by_broker[b]], capacity


# --- checkNamespaceBundleSplit --------------------------------------------------------------------
def auto_splits(state: ClusterState, load: LoadData, settings: Settings,
                env: PlacementEnv | None = None, capacity: int = 0) -> tuple[AutoSplit, ...]:
    """``checkNamespaceBundleSplit``: the splits the leader would make this cycle, in order. The
    children are unloaded when ``loadBalancerAutoUnloadSplitBundlesEnabled`` and the namespace
    policies would let the bundle be unloaded (``shouldNamespacePoliciesUnload``,
    ``shouldAntiAffinityNamespaceUnload``).

    The order is ``bundlesToBeSplit.keySet()``'s: ``BundleSplitterTask.bundleCache`` is a field
    ``HashMap`` (BundleSplitterTask at 0f6f07c8ef06 and master) ``clear()`` ed at each call, so it
    iterates by the table it kept: ``capacity``, the length it grew to in earlier cycles (0:
    16 or none)."""
    return _auto_splits(state, load, settings, env, capacity)[0]


def _auto_splits(state: ClusterState, load: LoadData, settings: Settings,
                 env: PlacementEnv | None, capacity: int) -> tuple[tuple[AutoSplit, ...], int]:
    """:func:`auto_splits` and the table length ``bundleCache`` is left with (0: 16 or none),
    which the next cycle's check starts from: the map's own, put by put (a chain of 9 colliding
    names grows a table below 64 buckets before 3/4 of it is used, ``HashMap.treeifyBin``)."""
    if not settings["loadBalancerAutoBundleSplitEnabled"]:
        return (), capacity
    if len(state.available()) <= 1 and settings.profile["splitNeedsTwoBrokers"]:
        return (), capacity  # knownBrokers.size() <= 1 (PR #20190; older releases split anyway)
    candidates = find_bundles_to_split(load, settings, state.namespace_bundle_count)
    picked = {c.bundle: c for c in candidates if c.selected}
    if not picked:
        return (), capacity
    unload = bool(settings["loadBalancerAutoUnloadSplitBundlesEnabled"])
    algorithm = algorithm_by_name(None, settings)
    if env is None:
        env = PlacementEnv.of(state.available(), load, state.cluster_policies(), settings)
    order, grown = hash_fill(picked, capacity)
    return tuple(
        plan_split(state, settings, picked[b], algorithm,
                  unload and policies_block_unload(namespace_of(b), picked[b].broker, load,
                                                   env) is None)
        for b in order), _kept(grown)


def plan_split(state: ClusterState, settings: Settings, cand: SplitCandidate,
              algorithm: SplitAlgorithm, unload: bool) -> AutoSplit:
    """One picked bundle's split as ``splitAndUnloadNamespaceBundle`` makes it with
    ``algorithm`` (and its children unloaded when ``unload``), or the reason it is skipped.
    Shared by the modular ``checkNamespaceBundleSplit`` and the simple manager's
    ``doNamespaceBundleSplit``, which split the same way."""
    try:
        name = BundleName.parse(cand.bundle)
    except BundleNameError as e:
        return AutoSplit(cand, algorithm.name, skipped=CycleWhy("bad-name", str(e)))
    rng = name.range
    if not rng.can_split():
        return AutoSplit(cand, algorithm.name,
                         skipped=CycleWhy("cannot-split", str(rng)))
    bounds = state.namespaces.get(name.namespace)
    if bounds is not None and not any(a == rng.lower and b == rng.upper
                                      for a, b in zip(bounds, bounds[1:], strict=False)):
        return AutoSplit(cand, algorithm.name,
                         skipped=CycleWhy("not-a-bundle", cand.bundle))
    topics = state.topics_of_bundle(cand.bundle)
    try:
        result = algorithm.boundaries(option_for(rng, topics, state.topics, settings))
        if not result.boundaries:
            return AutoSplit(cand, algorithm.name, unload=unload, why=result.why,
                             skipped=CycleWhy("no-boundary", algorithm.name,
                                              inner=result.why))
        children = apply_boundaries(rng, result.boundaries)
    except SplitError as e:
        return AutoSplit(cand, algorithm.name, unload=unload,
                         skipped=CycleWhy("split-refused", str(e)))
    return AutoSplit(
        cand, algorithm.name, tuple(sorted(result.boundaries)),
        tuple(f"{name.namespace}/{c}" for c in children), unload, None, result.why)


class ModularCycleResult(ModularCycle, frozen=True):
    """A modular cycle's record, with its plan and its explanation."""

    def plan(self) -> Plan:
        return build_plan(self)

    def explanation(self, broker: str | None = None, bundle: str | None = None) -> Explanation:
        return ModularExplanation(self, broker, bundle)


# --- plan@1 of a cycle ----------------------------------------------------------------------------
def _action(o: UnloadOutcome) -> Action:
    s = o.selection
    return Action(
        action="unload",
        bundle=s.bundle,
        broker=s.broker,
        reason=str(s.reason),
        destinationBroker=o.destination,
        msgRate=rounded(s.msg_rate),
        throughput=rounded(s.throughput),
        skipped=None if o.skipped is None else text(o.skipped),
    )


def build_plan(cycle: ModularCycle) -> Plan:
    """The plan of one cycle: its unload actions and a row per broker (before/after)."""
    with collector_paused():
        return _build_plan(cycle)


def _build_plan(cycle: ModularCycle) -> Plan:
    settings = cycle.settings
    weights = settings.weights4()
    verdicts = cycle.decision.brokers if cycle.decision else {}
    usage: dict[str, float] = {}
    for name, bd in cycle.load.brokers.items():
        usage[name] = bd.local.max_resource_usage_with_weight(*weights)
    after = dict(usage)
    for o in cycle.outcomes:
        if o.skipped is not None or o.destination is None:
            continue
        src = cycle.load.brokers.get(o.selection.broker)
        if src is None:
            continue
        share = _share(src.local, o.selection.bundle) * usage[o.selection.broker]
        after[o.selection.broker] -= share
        after[o.destination] = after.get(o.destination, 0.0) + share
    rows = []
    decision = modular_decision(cycle)
    # a broker the strategy said nothing about was skipped: by the cycle's gate, else as balanced
    unsaid = decision.reason if decision.label is Label.SKIP and not verdicts else Reason.BALANCED
    receivers = {o.destination for o in cycle.unloads}
    for name in cycle.state.brokers:  # the snapshot's order, which a person chose
        bd = cycle.load.brokers[name]
        v = verdicts.get(name)
        label = str(v.label) if v and v.label else None
        reason = str(v.reason) if v and v.reason else None
        if label is None and name not in receivers:
            label, reason = str(Label.SKIP), str(unsaid)
        rows.append(BrokerRow(
            broker=name,
            usage=usage[name],
            usage_after=after[name],
            score=v.score if v else None,
            msg_rate=bd.local.msg_rate,
            throughput=bd.local.throughput,
            bundles=len(bd.local.lastStats) or bd.local.numBundles,
            label=label,
            reason=reason,
            why=partial(text, v.why) if v else "",  # worded when an explanation shows it
            numbers=dict(v.numbers) if v else {},
            resources=ResourcePercents(bd.local),  # worded only when explained
        ))
    splits = tuple(split_action(s) for s in cycle.splits)
    st = cycle.state
    warnings = list(cycle.warnings) + history_warnings(cycle.elapsed)
    for o in cycle.outcomes:
        s = o.selection
        for name, x in (("msgRate", s.msg_rate), ("throughput", s.throughput)):
            if not math.isfinite(x):
                warnings.append(f"{s.bundle}: {name} is {x}; JSON shows null")
    return Plan(st.cluster, st.captured_at_iso, st.load_manager, cycle.shedding, cycle.placement,
                settings, tuple(_action(o) for o in cycle.outcomes) + splits, tuple(rows),
                _bundle_count(cycle), cycle.gate, decision,
                history_dict(cycle.elapsed), tuple(warnings))


def _bundle_count(cycle: ModularCycle) -> int:
    """``ClusterState.bundle_count`` (every bundle a broker reports in ``lastStats`` or lists in
    ``bundles``), from the cycle's bundle data, whose keys are already every ``lastStats`` name:
    only the listed names outside a broker's own stats are looked up, so a large snapshot is not
    hashed into one more set of every name. The reader's name index, when the state has one,
    already counted them."""
    if cycle.state.name_index() is not None:
        return cycle.state.bundle_count()
    view = cycle.load.bundle_data
    if not isinstance(view, BundleDataView):
        return cycle.state.bundle_count()
    reported = view.reported()
    extra: set[str] = set()
    for local in cycle.state.brokers.values():
        own = local.lastStats
        if not all(map(own.__contains__, local.bundles)):  # usually the same names
            extra.update(b for b in local.bundles if b not in reported)
    return len(reported) + len(extra)


def split_action(split: AutoSplit) -> Action:
    """A plan action for one automatic split."""
    from lbctl.explain.words.split import split_detail  # loaded when a cycle splits

    c = split.candidate
    return Action(
        action="split",
        bundle=c.bundle,
        broker=c.broker,
        reason=str(c.reason),
        msgRate=rounded(c.msg_rate),
        throughput=rounded(c.throughput),
        skipped=None if split.skipped is None else text(split.skipped),
        algorithm=split.algorithm,
        boundaries=tuple(format_position(b) for b in split.boundaries),
        children=tuple(split.children),
        unload=split.unload,
        detail=split_detail(c),
    )


def _share(local: LocalBrokerData, bundle: str) -> float:
    stats = local.lastStats
    st = stats.get(bundle)
    if st is None or not stats:
        return 0.0
    total_tp = _total_throughput(local)
    if total_tp > 0:
        return st.throughput / total_tp
    total_rate = sum(s.msg_rate for s in stats.values())
    if total_rate > 0:
        return st.msg_rate / total_rate
    return 1.0 / len(stats)
