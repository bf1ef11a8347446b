"""The contracts of the modular strategies: what they receive and what they return.

A strategy is pure: ``(LoadData, Settings, memory) -> (decision, new memory)``. The memory is the
state Pulsar keeps inside the strategy instance between cycles (ThresholdShedder's usage EWMA,
AvgShedder's hit counters, LeastResourceUsageWithWeight's history…); lbctl passes it in and gets it
back, so a sequence of snapshots replays exactly as the leader broker would, and one snapshot starts
from Pulsar's initial (empty) state. Decisions are the records of :mod:`lbctl.model.decision`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from random import Random
from typing import Any, Protocol

from lbctl.config import Settings
from lbctl.model.decision import PlacementDecision, SheddingDecision
from lbctl.model.load import BundleData
from lbctl.model.loaddata import LoadData


class SheddingStrategy(Protocol):
    """A modular load-shedding strategy (``LoadSheddingStrategy``)."""

    name: str

    def initial_memory(self) -> Any: ...

    def shed(
        self, load: LoadData, settings: Settings, memory: Any
    ) -> tuple[SheddingDecision, Any]: ...


# --- what placement strategies return -----------------------------------------------------------


class PlacementStrategy(Protocol):
    """A modular placement strategy (``ModularLoadManagerStrategy``).

    ``candidates`` come in Java ``HashSet`` order. ``rng`` replaces ``ThreadLocalRandom`` for the
    uniform pick among equally good brokers (``--seed``). ``planned`` carries a shedder's own
    destinations (AvgShedder as placement).
    """

    name: str

    def initial_memory(self) -> Any: ...

    def select(
        self,
        candidates: Sequence[str],
        bundle: str,
        data: BundleData,
        load: LoadData,
        settings: Settings,
        memory: Any,
        rng: Random,
        planned: Mapping[str, str],
    ) -> tuple[PlacementDecision, Any]: ...

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> Any: ...
