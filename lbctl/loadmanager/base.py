"""The one protocol both load managers implement, and the result each cycle gives.

``LoadManager.run_sequence(states, settings)`` replays snapshots as successive cycles, carrying
what the leader keeps in memory from each to the next, and returns one :class:`CycleResult` per
snapshot. A result is the cycle's record (:mod:`lbctl.model.cycle`) and offers the two views every
command needs: its :meth:`~CycleResult.plan` (plan@1) and its :meth:`~CycleResult.explanation`.

    LoadManager ─┬─ ModularLoadManager     (lbctl.loadmanager.modular)
                 └─ ExtensibleLoadManager  (lbctl.loadmanager.extensible)

Which one serves a request is decided in :mod:`lbctl.loadmanager.select`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from lbctl.config import Settings
from lbctl.explain import Explanation
from lbctl.model.cluster import ClusterState
from lbctl.plan import Plan


class CycleResult(Protocol):
    """What one cycle decided, with its plan and its explanation."""

    @property
    def state(self) -> ClusterState: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def shedding(self) -> str: ...

    @property
    def placement(self) -> str: ...

    @property
    def gate(self) -> str | None: ...

    def plan(self) -> Plan: ...

    def explanation(self, broker: str | None = None, bundle: str | None = None) -> Explanation: ...


class LoadManager(Protocol):
    """Runs cycles over snapshots, memory carried from each to the next."""

    def run_sequence(
        self, states: Sequence[ClusterState], settings: Sequence[Settings]
    ) -> Sequence[CycleResult]: ...
