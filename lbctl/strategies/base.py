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
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from msgspec import Struct, field

from lbctl.config import Settings
from lbctl.model.decision import PlacementDecision, SheddingDecision
from lbctl.model.load import BundleData
from lbctl.model.loaddata import LoadData

if TYPE_CHECKING:  # the extensible store's records, read only by its lookup (imported there)
    from lbctl.model.brokerload import BrokerLoadData


class SheddingStrategy(Protocol):
    """A modular load-shedding strategy (``LoadSheddingStrategy``)."""

    name: str

    def initial_memory(self) -> Any: ...

    def shed(
        self, load: LoadData, settings: Settings, memory: Any
    ) -> tuple[SheddingDecision, Any]: ...


@runtime_checkable
class SelectingShedder(Protocol):
    """A shedding strategy that can also decide without listing every bundle it looked at:
    ``selections`` returns ``shed``'s selections and memory with no ``candidates``, for a cycle
    of which only what it unloads is read (``explain``'s projection,
    :meth:`lbctl.loadmanager.base.LoadManager.projected_cycle`). With ``first_only`` each
    broker's first selection alone; it then also returns the brokers whose selections may go
    on after it."""

    name: str

    def selections(
        self, load: LoadData, settings: Settings, memory: Any, first_only: bool = False
    ) -> tuple[SheddingDecision, Any, frozenset[str]]: ...


# --- what placement strategies receive and return ------------------------------------------------
NO_PLAN: Mapping[str, str] = MappingProxyType({})


class PlacementRequest(Struct, frozen=True):
    """One ``selectBroker(candidates, bundleToAssign, loadData, conf)`` call, as one record.

    ``candidates`` come in Java ``HashSet`` order (a tuple, or an ``Excluding`` view of one:
    :mod:`lbctl.model.candidates`). ``rng`` replaces ``ThreadLocalRandom`` for the uniform pick
    among equally good brokers (``--seed``). ``data`` is ``bundleToAssign``; ``planned`` carries
    a shedder's own destinations for this unload attempt (AvgShedder as placement).
    """

    candidates: Sequence[str]
    bundle: str
    load: LoadData
    settings: Settings
    rng: Random
    data: BundleData | None = None
    planned: Mapping[str, str] = field(default_factory=lambda: NO_PLAN)


class LookupRequest(Struct, frozen=True):
    """One extensible ``BrokerSelectionStrategy.select(candidates, bundle, context)`` call: the
    candidates (Java ``HashSet`` order), the bundle looked up, the broker load-data store the
    context reads, the settings, and ``rng`` for the uniform pick (``--seed``)."""

    candidates: Sequence[str]
    bundle: str
    store: Mapping[str, BrokerLoadData]
    settings: Settings
    rng: Random


class PlacementStrategy(Protocol):
    """A modular placement strategy (``ModularLoadManagerStrategy``): ``select`` is its
    ``selectBroker``, with the strategy's memory passed in and returned."""

    name: str

    def initial_memory(self) -> Any: ...

    def select(self, request: PlacementRequest, memory: Any) -> tuple[PlacementDecision, Any]: ...

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> Any: ...

    def on_unload_attempt_completed(self, memory: Any, planned: Mapping[str, str] = NO_PLAN,
                                    settings: Settings | None = None) -> Any:
        """The memory once ``doLoadShedding``'s unloads are done (AvgShedder forgets its
        per-attempt bundle → broker map, or, in the releases before PR #26246, keeps it with
        the attempt's plans, ``planned``); the other strategies keep theirs."""
        ...

    def on_bundle_data_update(self, memory: Any, load: LoadData) -> Any:
        """The memory once the leader's ``updateBundleData`` (and ``checkNamespaceBundleSplit``)
        made this cycle's ``load``: what a strategy keeps per bundle ``BundleData`` object dies
        with the bundles gone from it (AvgShedder before PR #26246); the others keep theirs."""
        ...
