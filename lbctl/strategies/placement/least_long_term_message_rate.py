"""LeastLongTermMessageRate: place a bundle on the broker with the least long-term message rate.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.LeastLongTermMessageRate``, Pulsar's default
``loadBalancerLoadPlacementStrategy``, as of the post-PIP-358 source (commit ``06c80c77``).

Rules:

1. A candidate whose weighted max resource usage is strictly above
   ``loadBalancerBrokerOverloadedThresholdPercentage`` / 100 scores +∞. The usage is the
   deprecated *5-argument* ``getMaxResourceUsageWithWeight(cpu, memory, directMemory, bandwidthIn,
   bandwidthOut)``, weighted by ``loadBalancerCPUResourceWeight``,
   ``loadBalancerMemoryResourceWeight`` (default 0, so JVM heap does not count),
   ``loadBalancerDirectMemoryResourceWeight`` (default 0), and the *raw* deprecated keys
   ``loadBalancerBandwithInResourceWeight`` / ``loadBalancerBandwithOutResourceWeight`` (the
   source calls their Lombok getters, not the ``Bandwidth`` getters with fallback, so the
   correctly spelt keys are not read here).
2. Otherwise the score is the long-term message rate (in + out) of the bundles preallocated to it
   plus its ``TimeAverageBrokerData`` long-term rate in + out.
3. The best set holds every candidate with the minimum score (exact ``==``); since +∞ == +∞, when
   all are overloaded all are best. An empty best set falls back to all candidates.
4. One of the best is picked uniformly at random (``ThreadLocalRandom`` in Java; lbctl uses
   ``rng.randrange(len(best))`` with ``--seed``).

There is no ``1/(threshold - usage)`` weighting any more (removed by PR #442); the +∞ rule is what
is left of it.

Ties: candidates are scanned in the order given (Java ``HashSet`` order), and ``best`` keeps that
order, which is what the random index is drawn over.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from random import Random
from types import MappingProxyType
from typing import Any

from lbctl.config import Settings
from lbctl.model.load import BundleData, LocalBrokerData
from lbctl.strategies.base import BrokerData, LoadData, PlacementDecision
from lbctl.strategies.registry import PLACEMENT

NAME = "LeastLongTermMessageRate"


def weighted_usage5(local: LocalBrokerData, settings: Settings) -> float:
    """Rule 1's usage: the 5-argument weighted max, with the raw deprecated bandwidth weights."""
    return local.max_resource_usage_with_weight(
        float(settings["loadBalancerCPUResourceWeight"]),
        float(settings["loadBalancerDirectMemoryResourceWeight"]),
        float(settings["loadBalancerBandwithInResourceWeight"]),
        float(settings["loadBalancerBandwithOutResourceWeight"]),
        memory_weight=float(settings["loadBalancerMemoryResourceWeight"]),
    )


def long_term_rate(data: BrokerData) -> float:
    """Rule 2: preallocated bundles' long-term rate, then the broker's own long-term rate."""
    total = 0.0
    for bundle in data.preallocated.values():
        lt = bundle.longTermData
        total += lt.msgRateIn + lt.msgRateOut
    ta = data.time_average
    return total + (ta.longTermMsgRateIn + ta.longTermMsgRateOut)


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%" if x * 100 == round(x * 100) else f"{x * 100:.1f}%"


@PLACEMENT.register(NAME)
class LeastLongTermMessageRate:
    """See the module docstring. Keeps no state between calls."""

    name = NAME

    def initial_memory(self) -> None:
        return None

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
    ) -> tuple[PlacementDecision, Any]:
        cands = tuple(candidates)
        threshold = float(settings["loadBalancerBrokerOverloadedThresholdPercentage"]) / 100.0
        scores: dict[str, float] = {}
        overloaded: list[str] = []
        missing: list[str] = []
        best: list[str] = []
        min_score = math.inf
        for c in cands:
            bd = load.brokers.get(c)
            if bd is None:
                # Pulsar would fail on a candidate without load data; lbctl ranks it last.
                score = math.inf
                missing.append(c)
            else:
                usage = weighted_usage5(bd.local, settings)
                if usage > threshold:
                    score = math.inf
                    overloaded.append(f"{c} is overloaded (usage {_pct(usage)} > {_pct(threshold)})")
                else:
                    score = long_term_rate(bd)
            scores[c] = score
            if score < min_score:
                best = [c]
                min_score = score
            elif score == min_score:
                best.append(c)
        if not best:
            best = list(cands)  # NaN scores only; Pulsar's "all overloaded" fallback
        if not best:
            return PlacementDecision(NAME, bundle, None, cands, why="no candidate brokers"), memory

        pick = best[rng.randrange(len(best))]
        parts: list[str] = []
        if math.isinf(min_score) or math.isnan(min_score):
            parts.append(
                "every candidate is overloaded: uniform random pick among all of them"
                f" [{', '.join(best)}] → {pick}"
            )
        elif len(best) == 1:
            parts.append(f"{pick} has the lowest long-term message rate {min_score:.1f} msg/s")
        else:
            parts.append(
                f"{', '.join(best)} tie at the lowest long-term message rate {min_score:.1f} "
                f"msg/s: uniform random pick → {pick}"
            )
        parts.extend(f"{o} → +inf" for o in overloaded)
        parts.extend(f"{m} has no load data → +inf" for m in missing)
        return PlacementDecision(
            NAME, bundle, pick, cands, MappingProxyType(scores), tuple(best), "; ".join(parts)
        ), memory

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> Any:
        return memory
