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
Pulsar; lbctl says so in ``why``. ``on_active_brokers_change`` drops the history of brokers that
are gone (``onActiveBrokersChange``).

Ties: candidates are scanned in the order given (Java ``HashSet`` order); the sum of rule 3 is
accumulated in that order and ``best`` keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from random import Random
from types import MappingProxyType
from typing import Any

from lbctl.config import USAGE_KEYS, Settings
from lbctl.model.decision import PlacementDecision
from lbctl.model.load import BundleData
from lbctl.model.loaddata import LoadData
from lbctl.strategies.registry import PLACEMENT
from lbctl.units import pct

NAME = "LeastResourceUsageWithWeight"
#: MAX_RESOURCE_USAGE: the history assumed for a candidate without one (cannot happen after rule 2)
MAX_RESOURCE_USAGE = 1.0

History = Mapping[str, float]
_EMPTY: History = MappingProxyType({})


@PLACEMENT.register(NAME, reads=(
    *USAGE_KEYS, "loadBalancerAverageResourceUsageDifferenceThresholdPercentage",
    "loadBalancerBrokerOverloadedThresholdPercentage", "loadBalancerHistoryResourcePercentage"))
class LeastResourceUsageWithWeight:
    """See the module docstring. Memory: broker → smoothed weighted usage (fraction)."""

    name = NAME

    def initial_memory(self) -> History:
        return _EMPTY

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
    ) -> tuple[PlacementDecision, History]:
        history: dict[str, float] = dict(memory or {})
        cands = tuple(candidates)
        if not cands:
            return PlacementDecision(
                NAME, bundle, None, cands, why="no candidate brokers"
            ), MappingProxyType(history)

        keep = float(settings["loadBalancerHistoryResourcePercentage"])
        diff = int(settings["loadBalancerAverageResourceUsageDifferenceThresholdPercentage"]) / 100.0
        overload = float(settings["loadBalancerBrokerOverloadedThresholdPercentage"]) / 100.0

        # Rule 2.
        total = 0.0
        resets: list[str] = []
        missing: list[str] = []
        for c in cands:
            bd = load.brokers.get(c)
            if bd is None:
                # Pulsar would fail on a candidate without load data; lbctl leaves its history
                # alone and counts it as fully used.
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
        # Rules 3-5.
        mean = total / len(cands)
        scores = {c: history.get(c, MAX_RESOURCE_USAGE) for c in cands}
        best = [c for c in cands if scores[c] + diff <= mean]
        fallback = not best
        if fallback:
            best = list(cands)
        pick = best[rng.randrange(len(best))]

        parts = [f"mean smoothed usage of the candidates {pct(mean)}"]
        if fallback:
            parts.append(
                f"no candidate is {diff * 100:g}% below it (all overloaded, as Pulsar puts it): "
                f"uniform random pick among all [{', '.join(best)}] → {pick}"
            )
        else:
            below = ", ".join(f"{c} ({pct(scores[c])})" for c in best)
            parts.append(
                f"at least {diff * 100:g}% below it: {below}"
                + (f" → random pick {pick}" if len(best) > 1 else f" → {pick}")
            )
        if resets:
            parts.append(
                f"history reset (no bundles or zero message rate, e.g. restarted): {', '.join(resets)}"
            )
        over = [c for c in cands if c in load.brokers and scores[c] > overload]
        if over:
            parts.append(
                "above the overload threshold "
                f"{overload * 100:g}% (Pulsar only logs it): "
                + ", ".join(f"{c} ({pct(scores[c])})" for c in over)
            )
        if missing:
            parts.append(f"no load data (counted as 100%): {', '.join(missing)}")
        return PlacementDecision(
            NAME, bundle, pick, cands, MappingProxyType(scores), tuple(best), "; ".join(parts)
        ), MappingProxyType(history)

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> History:
        """``onActiveBrokersChange``: forget the history of brokers that are no longer active."""
        return MappingProxyType({b: h for b, h in dict(memory or {}).items() if b in active})
