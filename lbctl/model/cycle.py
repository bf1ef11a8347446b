"""What one load-manager cycle saw and decided: the records both load managers produce.

A cycle record holds the inputs (the snapshot, the settings, the load data the strategies read),
every decision (records of :mod:`lbctl.model.decision`), and the memory carried to the next cycle
(what the leader keeps between cycles: strategy state, bundle time averages, the recently unloaded
bundles). Plans and explanations are built from these records and never re-derive a decision.

    ModularCycle     ``ModularLoadManagerImpl``: doLoadShedding + selectBroker + checkNamespaceBundleSplit
    ExtensibleCycle  ``ExtensibleLoadManagerImpl``: UnloadScheduler + SplitScheduler
    Effect           what a cycle does to the cluster, as the simulator carries it out
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from msgspec import Struct, field

from lbctl.config import Settings
from lbctl.model.brokerload import BrokerLoadData, TopBundle
from lbctl.model.cluster import ClusterState
from lbctl.model.decision import (
    AutoSplit,
    Label,
    PlacementDecision,
    SheddingDecision,
    ShedResult,
    SplitResult,
    UnloadDecision,
    UnloadOutcome,
)
from lbctl.model.javaorder import MapHistory
from lbctl.model.load import BundleData
from lbctl.model.loaddata import LoadData

_EMPTY: Mapping[str, Any] = MappingProxyType({})


# --- what a cycle does ----------------------------------------------------------------------------
class Moved(Struct, frozen=True):
    """A bundle a cycle moves off its broker: to ``destination`` (``None``: no broker known) and
    why (the selection's reason)."""

    bundle: str
    destination: str | None
    reason: str


class Split(Struct, frozen=True):
    """A bundle a cycle splits: its children, which its owner keeps
    (``NamespaceService.splitAndOwnBundle``), unloaded right after when ``unload``
    (``loadBalancerAutoUnloadSplitBundlesEnabled``: the next lookup places each)."""

    bundle: str
    children: tuple[str, ...]
    unload: bool = False


class Effect(Struct, frozen=True):
    """What one cycle does to the cluster, as a simulation carries it out and records it: the
    bundles it moves, each broker's score as the load manager ranked it (``None``: it keeps
    none), how many of its selections it did not carry out, and the bundles it splits (before
    its moves: ``checkNamespaceBundleSplit`` runs on the reports before shedding)."""

    moves: tuple[Moved, ...]
    scores: Mapping[str, float | None]
    skipped: int
    splits: tuple[Split, ...] = ()


def unload_effect(decision: SheddingDecision | None,
                  outcomes: tuple[UnloadOutcome, ...],
                  splits: tuple[Split, ...] = ()) -> Effect:
    """The effect of a modular cycle (or of lbctl's planner, which answers in its records): every
    unload carried out, to its destination; the shedder's smoothed score per broker; the splits
    made."""
    done = [o for o in outcomes if o.skipped is None]
    verdicts = decision.brokers if decision is not None else _EMPTY
    return Effect(tuple(Moved(o.selection.bundle, o.destination, str(o.selection.reason))
                        for o in done),
                  {b: v.score for b, v in verdicts.items()}, len(outcomes) - len(done), splits)


# --- the modular load manager -------------------------------------------------------------------
class LeaderMaps(Struct, frozen=True):
    """The leader's two long-lived ``ConcurrentHashMap`` s of ``LoadData``, as histories:
    ``brokerData`` (broker → data) and ``bundleData`` (bundle → data). Their iteration orders
    break ties and depend on what was put and removed, cycle after cycle
    (:func:`lbctl.loadmanager.loaddata.leader_maps_and_reports`)."""

    brokers: MapHistory = field(default_factory=MapHistory)
    bundles: MapHistory = field(default_factory=MapHistory)


class CycleMemory(Struct, frozen=True):
    """What the leader broker keeps between two cycles."""

    bundle_data: Mapping[str, BundleData] = field(default_factory=lambda: _EMPTY)
    recently_unloaded: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    shedding: Any = None
    placement: Any = None
    round_robin: Any = None
    #: the table length the shedder's reused ``ArrayListMultimap`` grew to (0: never used)
    multimap_capacity: int = 0
    #: ``LoadData``'s broker and bundle maps as the leader has kept them so far
    maps: LeaderMaps = field(default_factory=LeaderMaps)
    #: the table length ``ModularLoadManagerImpl.brokerCandidateCache`` (a field ``HashSet``,
    #: cleared and refilled at each use) grew to (0: never filled)
    candidate_capacity: int = 0
    #: the table length ``BundleSplitterTask.bundleCache`` (a field ``HashMap``, cleared at each
    #: ``findBundlesToSplit``) grew to (0: 16 or never filled)
    split_capacity: int = 0
    #: the table length the shedding thread's thread-local secondaries set
    #: (``LoadManagerShared.localSecondaryCache``, cleared at each ``applyNamespacePolicies``)
    #: grew to (0: 16 or never filled)
    secondaries_capacity: int = 0
    #: the same for the shedding thread's thread-local primaries set
    #: (``LoadManagerShared.localPrimariesCache``); longer than ``candidate_capacity`` only when
    #: a chain of 9 colliding names grew it early
    primaries_capacity: int = 0


class Elapsed(Struct, frozen=True):
    """How the leader's clock moved before a cycle (:mod:`lbctl.loadmanager.clock`).

    ``cycles``: shedding cycles the leader ran since the previous snapshot, this one included;
    ``replayed``: of those before this one, how many lbctl replayed on the earlier state (memory
    only: they stopped before the first that would have acted); ``would_act_at``: when that first
    acting cycle would have run (epoch ms), if catching up stopped there; ``samples``: bundle-data
    samples taken for this snapshot (one per broker report written since the previous one);
    ``steady``: ``--assume-steady`` warm-up cycles run on this very state; ``first_sight``: no
    history before this cycle (a single snapshot, a live read, the first of a sequence).
    """

    cycles: int = 1
    replayed: int = 0
    capped: bool = False
    would_act_at: int | None = None
    samples: int = 1
    steady: int = 0
    assumed_steady: bool = False
    first_sight: bool = True
    interval_ms: int = 60_000
    #: ``--watch``: cycles followed so far, and how many the strategy's memory needs (0: no watch)
    followed: int = 0
    warm_up: int = 0
    #: a cycle replayed on a held state for its memory only (no sample, no split, no output)
    replaying: bool = False

    @property
    def warming_up(self) -> bool:
        return self.followed < self.warm_up


class ModularCycle(Struct, frozen=True):
    """Everything one modular load-manager cycle decided, with the inputs it decided on."""

    state: ClusterState
    settings: Settings
    shedding: str
    placement: str
    load: LoadData
    decision: SheddingDecision | None
    outcomes: tuple[UnloadOutcome, ...]
    gate: str | None  # why shedding did not run at all
    expired_grace: tuple[str, ...]  # bundles whose grace period ended this cycle
    memory: CycleMemory
    #: ``checkNamespaceBundleSplit``: the automatic splits of this cycle
    splits: tuple[AutoSplit, ...] = ()
    elapsed: Elapsed = Elapsed()
    warnings: tuple[str, ...] = ()
    #: ``explain``'s projection: more cycles of this state before the leader acts (``None``: not
    #: within the limit, or never); only meaningful when ``projected``
    opens_in: int | None = None
    projected: bool = False

    @property
    def unloads(self) -> tuple[UnloadOutcome, ...]:
        return tuple(o for o in self.outcomes if o.skipped is None)

    @property
    def acted(self) -> bool:
        return any(o.skipped is None for o in self.outcomes)

    def effect(self) -> Effect:
        """Every unload carried out, and every automatic split made (its children unloaded when
        the split says so)."""
        return unload_effect(self.decision, self.outcomes, tuple(
            Split(s.candidate.bundle, s.children, s.unload) for s in self.splits
            if s.skipped is None and s.children))


# --- the extensible load manager ----------------------------------------------------------------
class ExtensibleMemory(Struct, frozen=True):
    """What the brokers keep between cycles: the shedder's hit count, each broker's load data (its
    EMAs), the recently unloaded bundles and brokers, the split strategies' hit counts."""

    hit_count: int = 0
    broker_load: Mapping[str, BrokerLoadData] = field(default_factory=lambda: _EMPTY)
    recently_unloaded: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    recently_unloaded_brokers: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    split_hits: Mapping[str, Mapping[str, int]] = field(default_factory=lambda: _EMPTY)
    started: bool = False
    #: the broker load-data store's ``ConcurrentHashMap`` (the ``TableView`` behind
    #: ``brokerLoadDataStore``) as the leader has kept it: brokers keep their place while they
    #: publish, leave it on a tombstone
    store_map: MapHistory = field(default_factory=MapHistory)
    #: shedding-cycle time (ms) since the brokers' ``SplitScheduler`` last ran: it runs every
    #: ``loadBalancerSplitIntervalMinutes``, not every cycle (:mod:`lbctl.loadmanager.extensible`)
    split_wait_ms: int = 0


class ExtAction(Struct, frozen=True):
    """One decision of the cycle as the plan shows it."""

    decision: UnloadDecision
    msg_rate: float | None
    throughput: float | None
    preview: PlacementDecision | None = None  # unload mode: the next lookup's likely pick


class ExtensibleCycle(Struct, frozen=True):
    """Everything one extensible cycle decided, with the inputs it decided on."""

    state: ClusterState
    settings: Settings
    store: Mapping[str, BrokerLoadData]
    top_bundles: Mapping[str, tuple[TopBundle, ...]]
    derived: bool  # load data derived from modular reports
    gate: str | None
    shed: ShedResult | None
    actions: tuple[ExtAction, ...]
    splits: tuple[SplitResult, ...]
    expired_grace: tuple[str, ...]
    recently_unloaded: Mapping[str, int]
    recently_unloaded_brokers: Mapping[str, int]
    memory: ExtensibleMemory
    shedding: str = "TransferShedder"
    placement: str = "LeastResourceUsageWithWeight"
    elapsed: Elapsed = Elapsed()
    warnings: tuple[str, ...] = ()
    opens_in: int | None = None
    projected: bool = False

    @property
    def acted(self) -> bool:
        return bool(self.actions)

    def effect(self) -> Effect:
        """Every Success decision carried out: a transfer to the shedder's destination, an unload
        to the broker the placement preview picks at the next lookup; the brokers'
        ``weightedMaxEMA`` as their scores; every Success split, its children owned by the
        parent's owner (``ServiceUnitStateChannelImpl.splitServiceUnitOnceAndRetry``)."""
        moves = []
        for a in self.actions:
            u = a.decision.unload
            dest = u.destination or (a.preview.broker if a.preview is not None else None)
            moves.append(Moved(u.bundle, dest, str(a.decision.reason)))
        skipped = sum(1 for d in (self.shed.decisions if self.shed else ())
                      if d.label is not Label.SUCCESS)
        splits = tuple(Split(d.bundle, d.children) for r in self.splits for d in r.decisions
                       if d.label is Label.SUCCESS and d.children)
        return Effect(tuple(moves), {b: d.weightedMaxEMA for b, d in self.store.items()}, skipped,
                      splits)

    def bundle_names(self) -> set[str]:
        names = set(self.state.owners())
        for tops in self.top_bundles.values():
            names.update(t.bundleName for t in tops)
        return names

    def bundle_stats(self, bundle: str) -> TopBundle | None:
        for tops in self.top_bundles.values():
            for t in tops:
                if t.bundleName == bundle:
                    return t
        st = self.state.bundle_stats(bundle)
        return TopBundle(bundle, st) if st is not None else None
