"""LeastResourceUsageWithWeight: place a bundle on a broker well below the candidates' mean usage.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.LeastResourceUsageWithWeight`` (current
master). The strategy keeps a smoothed usage per broker between calls (``memory``).

Rules, for each call:

1. No candidates → no broker.
2. For every candidate, in candidate order: its history is forgotten (restart reset) when it
   reports no bundles or a message rate in and out of exactly 0; its current usage ``r`` is the
   4-argument weighted max ``getMaxResourceUsageWithWeight(cpu, directMemory, bandwidthIn,
   bandwidthOut)`` with ``loadBalancerCPUResourceWeight``, ``loadBalancerDirectMemoryResourceWeight``
   and ``loadBalancerBandwidthIn/OutResourceWeight`` (deprecated ``…Bandwith…`` fallback); the new
   history is ``r`` without history, else ``h × H + (1 - H) × r`` with
   ``H = loadBalancerHistoryResourcePercentage``.
3. ``mean`` = the sum of the candidates' new histories / number of candidates.
4. Best = candidates with ``history + d <= mean``, where
   ``d = loadBalancerAverageResourceUsageDifferenceThresholdPercentage / 100``.
5. No best → all candidates (Pulsar: "all brokers are overloaded").
6. A uniformly random best (``ThreadLocalRandom``; lbctl: ``rng.randrange(len(best))``).

A smoothed usage above ``loadBalancerBrokerOverloadedThresholdPercentage`` is only logged by
Pulsar; lbctl records those brokers in ``why``. ``on_active_brokers_change`` drops the history of brokers that
are gone (``onActiveBrokersChange``).

Ties: candidates are scanned in the order given (Java ``HashSet`` order); the sum of rule 3 is
accumulated in that order and ``best`` keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

from lbctl.config import USAGE_KEYS, Settings
from lbctl.model.decision import PlacementDecision, Why
from lbctl.model.loaddata import LoadData
from lbctl.strategies.base import NO_PLAN, PlacementRequest
from lbctl.strategies.registry import PLACEMENT

NAME = "LeastResourceUsageWithWeight"
#: MAX_RESOURCE_USAGE: the history assumed for a candidate without one (cannot happen after rule 2)
MAX_RESOURCE_USAGE = 1.0

History = Mapping[str, float]
_EMPTY: History = MappingProxyType({})


#: How LeastResourceUsageWithWeight picked.
Weighted = Literal[
    "below",  # among the candidates far enough below the mean
    "all",  # none was (all overloaded, as Pulsar puts it): among all of them
    "no-candidates",
]


class WeightedWhy(Why, frozen=True):
    """A reason of :data:`Weighted`: the candidates' mean smoothed usage, the difference
    threshold (a fraction), the best with their usages and the pick; the candidates whose
    history was reset, those above the overload threshold (Pulsar only logs them) with their
    usages, and those without load data."""

    code: Weighted
    mean: float = 0.0
    diff: float = 0.0
    best: tuple[str, ...] = ()
    best_usage: tuple[float, ...] = ()
    pick: str = ""
    resets: tuple[str, ...] = ()
    overload: float = 0.0
    over: tuple[str, ...] = ()
    over_usage: tuple[float, ...] = ()
    missing: tuple[str, ...] = ()


@PLACEMENT.register(NAME, reads=(
    *USAGE_KEYS, "loadBalancerAverageResourceUsageDifferenceThresholdPercentage",
    "loadBalancerBrokerOverloadedThresholdPercentage", "loadBalancerHistoryResourcePercentage"))
class LeastResourceUsageWithWeight:
    """See the module docstring. Memory: broker → smoothed weighted usage (fraction)."""

    name = NAME

    def initial_memory(self) -> History:
        return _EMPTY

    def select(self, request: PlacementRequest, memory: Any
               ) -> tuple[PlacementDecision, History]:
        """``LeastResourceUsageWithWeight.selectBroker``: every candidate's smoothed usage
        (rule 2), their mean, the best at least the difference threshold below it (rules 3-5),
        and a uniform random pick among them (rule 6)."""
        history: dict[str, float] = dict(memory or {})
        cands = tuple(request.candidates)
        if not cands:
            return PlacementDecision(NAME, request.bundle, None, cands,
                                     why=WeightedWhy("no-candidates")
                                     ), MappingProxyType(history)
        settings, load = request.settings, request.load
        diff = int(settings["loadBalancerAverageResourceUsageDifferenceThresholdPercentage"]) / 100.0
        overload = float(settings["loadBalancerBrokerOverloadedThresholdPercentage"]) / 100.0
        total, resets, missing = _update_histories(cands, load, settings, history)
        mean = total / len(cands)
        scores = {c: history.get(c, MAX_RESOURCE_USAGE) for c in cands}
        best = [c for c in cands if scores[c] + diff <= mean]
        code: Weighted = "below"
        if not best:  # "all brokers are overloaded": every candidate
            best, code = list(cands), "all"
        pick = best[request.rng.randrange(len(best))]
        over = tuple(c for c in cands if c in load.brokers and scores[c] > overload)
        why = WeightedWhy(code, mean, diff, tuple(best), tuple(scores[c] for c in best), pick,
                          tuple(resets), overload, over, tuple(scores[c] for c in over),
                          tuple(missing))
        return PlacementDecision(
            NAME, request.bundle, pick, cands, MappingProxyType(scores), tuple(best), why
        ), MappingProxyType(history)

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> History:
        """``onActiveBrokersChange``: forget the history of brokers that are no longer active."""
        return MappingProxyType({b: h for b, h in dict(memory or {}).items() if b in active})

    def on_unload_attempt_completed(self, memory: Any, planned: Mapping[str, str] = NO_PLAN,
                                    settings: Settings | None = None) -> Any:
        return memory

    def on_bundle_data_update(self, memory: Any, load: LoadData) -> Any:
        return memory


def _update_histories(cands: Sequence[str], load: LoadData, settings: Settings,
                      history: dict[str, float]) -> tuple[float, list[str], list[str]]:
    """``updateAndGetMaxResourceUsageWithWeight`` for every candidate, in order (rule 2), on
    ``history`` in place: the sum of the new histories, the candidates whose history was reset,
    and those without load data (Pulsar would fail on one; lbctl leaves its history alone and
    counts it as fully used)."""
    keep = float(settings["loadBalancerHistoryResourcePercentage"])
    total = 0.0
    resets: list[str] = []
    missing: list[str] = []
    for c in cands:
        bd = load.brokers.get(c)
        if bd is None:
            missing.append(c)
            total += history.get(c, MAX_RESOURCE_USAGE)
            continue
        local = bd.local
        h = history.get(c)
        if len(local.bundles) == 0 or (local.msgRateIn == 0 and local.msgRateOut == 0):
            if h is not None:
                resets.append(c)
            h = None
        r = settings.weighted_usage(local)
        h = r if h is None else h * keep + (1 - keep) * r
        history[c] = h
        total += h
    return total, resets, missing
