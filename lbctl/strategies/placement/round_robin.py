"""RoundRobinBrokerSelector: hand out candidates in turn.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.RoundRobinBrokerSelector``. Pulsar uses it for
namespaces listed in ``loadBalancerSheddingExcludedNamespaces`` (PIP-380), and it can be the
configured placement strategy. It reads no settings and no load.

State (lbctl's ``memory``): a counter and a cached list of candidates.

1. No candidates → no broker, and the counter does not move.
2. ``index = counter % n`` (n = number of candidates), then the counter advances, wrapping from
   ``Integer.MAX_VALUE`` (2^31 - 1) to 0.
3. The cache is replaced by the candidates (in their order) when it is shorter than ``index + 1``
   or its size differs from n.
4. The pick is ``cache[index]``; if that broker is not a candidate, the cache is replaced by the
   candidates and the pick is taken again at the same index.

So a reordered but equal candidate set keeps the old rotation; a changed set restarts it at the
current counter. Order: candidates in the order given (Java ``Set`` iteration order).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.decision import PlacementDecision, Why
from lbctl.model.loaddata import LoadData
from lbctl.strategies.base import NO_PLAN, PlacementRequest
from lbctl.strategies.registry import PLACEMENT

NAME = "RoundRobinBrokerSelector"
INT_MAX = 2**31 - 1


class RoundRobinMemory(Struct, frozen=True):
    """``count`` (``AtomicInteger``) and ``cache`` (``AtomicReference<List<String>>``)."""

    count: int = 0
    cache: tuple[str, ...] = ()


#: How the rotation list was used.
Rotation = Literal[
    "kept",  # the list as it was
    "resized",  # rebuilt from the candidates: too short, or another size
    "stale",  # rebuilt: the broker at the index is no longer a candidate (stale)
    "no-candidates",
]


class RotationWhy(Why, frozen=True):
    """A reason of :data:`Rotation`: the counter, the number of candidates, the index, the
    rotation list and the pick (``stale``: the broker the old list had there)."""

    code: Rotation
    counter: int = 0
    size: int = 0
    index: int = 0
    cache: tuple[str, ...] = ()
    pick: str = ""
    stale: str = ""


@PLACEMENT.register(NAME)
class RoundRobinBrokerSelector:
    """See the module docstring. Scores are each candidate's position in the rotation list."""

    name = NAME

    def initial_memory(self) -> RoundRobinMemory:
        return RoundRobinMemory()

    def select(self, request: PlacementRequest, memory: Any
               ) -> tuple[PlacementDecision, RoundRobinMemory]:
        """``RoundRobinBrokerSelector.selectBroker`` (rules 1-4 of the module docstring)."""
        mem = memory if isinstance(memory, RoundRobinMemory) else RoundRobinMemory()
        cands = tuple(request.candidates)
        n = len(cands)
        if n == 0:
            return PlacementDecision(NAME, request.bundle, None, cands,
                                     why=RotationWhy("no-candidates")), mem

        counter = mem.count
        index = counter % n
        next_count = 0 if counter == INT_MAX else counter + 1
        cache = mem.cache
        code: Rotation = "kept"
        stale = ""
        if len(cache) <= index or len(cache) != n:
            cache = cands
            code = "resized"
        pick = cache[index]
        if pick not in cands:
            stale = pick
            cache = cands
            pick = cache[index]
            code = "stale"

        scores = MappingProxyType({c: float(i) for i, c in enumerate(cache)})
        why = RotationWhy(code, counter, n, index, cache, pick, stale)
        return (
            PlacementDecision(NAME, request.bundle, pick, cands, scores, (pick,), why),
            RoundRobinMemory(next_count, cache),
        )

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> Any:
        return memory

    def on_unload_attempt_completed(self, memory: Any, planned: Mapping[str, str] = NO_PLAN,
                                    settings: Settings | None = None) -> Any:
        return memory

    def on_bundle_data_update(self, memory: Any, load: LoadData) -> Any:
        return memory
