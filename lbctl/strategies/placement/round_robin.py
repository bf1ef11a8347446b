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

from collections.abc import Mapping, Sequence
from random import Random
from types import MappingProxyType
from typing import Any

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.decision import PlacementDecision
from lbctl.model.load import BundleData
from lbctl.model.loaddata import LoadData
from lbctl.strategies.registry import PLACEMENT

NAME = "RoundRobinBrokerSelector"
INT_MAX = 2**31 - 1


class RoundRobinMemory(Struct, frozen=True):
    """``count`` (``AtomicInteger``) and ``cache`` (``AtomicReference<List<String>>``)."""

    count: int = 0
    cache: tuple[str, ...] = ()


@PLACEMENT.register(NAME)
class RoundRobinBrokerSelector:
    """See the module docstring. Scores are each candidate's position in the rotation list."""

    name = NAME

    def initial_memory(self) -> RoundRobinMemory:
        return RoundRobinMemory()

    def select(
        self,
        candidates: Sequence[str],
        bundle: str,
        data: BundleData | None,
        load: LoadData | None,
        settings: Settings | None,
        memory: Any,
        rng: Random | None,
        planned: Mapping[str, str] | None,
    ) -> tuple[PlacementDecision, RoundRobinMemory]:
        mem = memory if isinstance(memory, RoundRobinMemory) else RoundRobinMemory()
        cands = tuple(candidates)
        n = len(cands)
        if n == 0:
            return PlacementDecision(NAME, bundle, None, cands, why="no candidate brokers"), mem

        counter = mem.count
        index = counter % n
        next_count = 0 if counter == INT_MAX else counter + 1
        cache = mem.cache
        refreshed = ""
        if len(cache) <= index or len(cache) != n:
            cache = cands
            refreshed = "rotation list rebuilt from the candidates (size changed)"
        pick = cache[index]
        if pick not in cands:
            stale = pick
            cache = cands
            pick = cache[index]
            refreshed = f"rotation list rebuilt from the candidates ({stale} is no longer one)"

        scores = MappingProxyType({c: float(i) for i, c in enumerate(cache)})
        why = f"counter {counter} → index {counter} % {n} = {index} in [{', '.join(cache)}] → {pick}"
        if refreshed:
            why += f"; {refreshed}"
        return (
            PlacementDecision(NAME, bundle, pick, cands, scores, (pick,), why),
            RoundRobinMemory(next_count, cache),
        )

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> Any:
        return memory
