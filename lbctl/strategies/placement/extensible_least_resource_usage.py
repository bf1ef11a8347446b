"""``extensions.strategy.LeastResourceUsageWithWeight``: where a lookup assigns an unowned bundle.

Unlike the modular strategy of the same name it keeps no history of its own: the broker's
``weightedMaxEMA`` *is* the smoothed figure. Candidates with load data are averaged; those at
least ``loadBalancerAverageResourceUsageDifferenceThresholdPercentage`` below the average are the
best; with none, every candidate (with or without data) is. The pick among the best is uniform
(``ThreadLocalRandom`` in Pulsar, a seeded ``random.Random`` here). Candidates iterate in the
caller's order (a Java ``HashSet`` in Pulsar).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from random import Random

from lbctl.config import Settings
from lbctl.model.brokerload import BrokerLoadData
from lbctl.model.decision import PlacementDecision

NAME = "LeastResourceUsageWithWeight"


def select(
    candidates: Sequence[str],
    store: Mapping[str, BrokerLoadData],
    settings: Settings,
    rng: Random,
    bundle: str = "",
) -> PlacementDecision:
    cands = tuple(candidates)
    if not cands:
        return PlacementDecision(NAME, bundle, None, cands, why="no candidate broker")
    scores: dict[str, float] = {}
    no_data: list[str] = []
    total = 0.0
    for b in cands:
        data = store.get(b)
        if data is None:
            no_data.append(b)
            continue
        scores[b] = data.weightedMaxEMA
        total += data.weightedMaxEMA
    best: list[str] = []
    avg = None
    thr = int(settings["loadBalancerAverageResourceUsageDifferenceThresholdPercentage"]) / 100.0
    if len(cands) > len(no_data):
        avg = total / (len(cands) - len(no_data))
        best = [b for b in cands if b in scores and scores[b] + thr <= avg]
    if best:
        why = f"{len(best)} broker(s) at least {thr:g} below the average load {avg:.4f}"
    else:
        best = list(cands)
        why = "no broker is clearly below the average: all candidates are equally good"
    pick = best[rng.randrange(len(best))]
    return PlacementDecision(NAME, bundle, pick, cands, scores, tuple(best), why, tuple(no_data),
                             avg)
