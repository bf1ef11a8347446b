"""The one protocol every load manager implements, and the result each cycle gives.

    LoadManager ─┬─ ModularLoadManager     (lbctl.loadmanager.modular)    ModularLoadManagerImpl
                 ├─ ExtensibleLoadManager  (lbctl.loadmanager.extensible) ExtensibleLoadManagerImpl
                 └─ PlannerLoadManager     (lbctl.planner.cycle)          lbctl's planner, cycle
                                                                          after cycle (simulator)

A load manager runs **one cycle** on a state with the memory the leader carried from the previous
one (:meth:`LoadManager.run_cycle`; the first starts from :meth:`~LoadManager.initial_memory`),
and **replays a sequence** of snapshots on the leader's clock (:meth:`~LoadManager.run_sequence`,
:func:`lbctl.loadmanager.clock.replay`). The clock also asks it how a state looks when observed
again later (:meth:`~LoadManager.held`), how many samples a snapshot gave (``samples``), whether
the clock alone can still change its memory (``timers``) and what of its memory changes from
cycle to cycle (``memory_key``). Each cycle's :class:`CycleResult` carries the memory for the
next, and offers the views every command needs: its plan (plan@1), its explanation, and its
effect (what a simulation carries out).

Each implementation subclasses :class:`LoadManager` explicitly, with its memory type
(``ModularLoadManager(LoadManager[CycleMemory])``), so mypy checks every method of it against the
protocol: a signature that drifts is a type error, not a surprise at run time. The memory is the
one type parameter: a caller that does not know which load manager serves it holds a
``LoadManager[Any]`` (:func:`lbctl.loadmanager.select.choose` returns one).

Which one serves a request is decided in :mod:`lbctl.loadmanager.select`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from lbctl.loadmanager.clock import replay

if TYPE_CHECKING:
    from lbctl.config import Settings
    from lbctl.explain import Explanation
    from lbctl.model.cluster import ClusterState
    from lbctl.model.cycle import Effect, Elapsed
    from lbctl.plan import Plan

M = TypeVar("M")


class CycleResult(Protocol):
    """What one cycle decided, on which state and settings, with the memory for the next cycle;
    its plan, its explanation and its effect."""

    @property
    def state(self) -> ClusterState: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def shedding(self) -> str: ...

    @property
    def placement(self) -> str: ...

    @property
    def gate(self) -> str | None:
        """Why the cycle did nothing at all (the load manager's own gate), else ``None``."""

    @property
    def elapsed(self) -> Elapsed: ...

    @property
    def memory(self) -> Any:
        """What the leader carries to the next cycle (the load manager's memory type)."""

    @property
    def acted(self) -> bool:
        """Whether the cycle moved a bundle (the leader's clock stops replaying before one)."""

    @property
    def opens_in(self) -> int | None: ...

    @property
    def projected(self) -> bool: ...

    def plan(self) -> Plan: ...

    def explanation(self, broker: str | None = None, bundle: str | None = None) -> Explanation: ...

    def effect(self) -> Effect:
        """The bundles the cycle moves and where, each broker's score, the selections not carried
        out: what the simulator applies and records."""


class LoadManager(Protocol[M]):
    """Runs cycles over snapshots, memory ``M`` carried from each to the next (module docstring)."""

    @property
    def label(self) -> str:
        """How a simulation or a comparison names it (``ThresholdShedder + LeastLongTermMessageRate``;
        ``lbctl`` for the planner, which decides both)."""

    @property
    def strategies(self) -> tuple[str, str]:
        """The shedding and the placement strategy, as plans name them."""

    @property
    def kind(self) -> str:
        """The load reports it decides on: :data:`~lbctl.model.cluster.MODULAR` (brokers'
        ``LocalBrokerData``) or :data:`~lbctl.model.cluster.EXTENSIBLE` (``BrokerLoadData``)."""

    def initial_memory(self) -> M:
        """The leader's memory before its first cycle."""

    def run_cycle(self, state: ClusterState, settings: Settings, memory: M | None = None,
                  elapsed: Elapsed | None = None) -> CycleResult:
        """One cycle on ``state`` with the memory of the previous one (``None``: the initial
        memory); ``elapsed``: how the leader's clock moved before it (``None``: a first sight)."""

    def run_sequence(self, states: Sequence[ClusterState], settings: Sequence[Settings], *,
                     assume_steady: bool = False) -> list[CycleResult]:
        """Each snapshot's cycle, on the leader's clock (:func:`lbctl.loadmanager.clock.replay`);
        the same for every load manager."""
        return replay(self, states, settings, assume_steady=assume_steady)

    def memory_key(self, memory: M) -> object:
        """What of the memory changes from cycle to cycle on a held state (equal keys: a fixed
        point, every later cycle is the same)."""

    def held(self, state: ClusterState, at: int) -> ClusterState:
        """``state`` observed again at ``at`` (brokers republished the same figures)."""

    def samples(self, earlier: ClusterState, later: ClusterState) -> int:
        """Samples the leader took of the bundles between two snapshots."""

    def timers(self, memory: M) -> bool:
        """Whether the clock alone can still change the memory (grace periods, cool-downs)."""

    def projected_cycle(self, state: ClusterState, settings: Settings, memory: M,
                        elapsed: Elapsed, last: CycleResult) -> CycleResult:
        """One held cycle of ``explain``'s projection (:func:`lbctl.loadmanager.clock.
        cycles_to_open`), of which only whether it acts and its memory are read, never its plan
        or explanation: a load manager may skip what decides neither, and reuse what ``last``
        (the snapshot's own cycle, on the same state) computed. By default the whole cycle."""
        return self.run_cycle(state, settings, memory, elapsed)

    def acting_key(self, memory: M, settings: Settings, at: int) -> object:
        """What of the memory a held cycle at ``at`` left decides whether the later ones act (the
        projection's fixed point: two successive cycles that did not act, with equal keys and no
        timer running, mean no later one acts). By default :meth:`memory_key`; a load manager
        may leave out what changes without changing whether a cycle acts, so that the projection
        stops sooner with the same answer."""
        return self.memory_key(memory)
