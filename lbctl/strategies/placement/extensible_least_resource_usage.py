"""``extensions.strategy.LeastResourceUsageWithWeight``: where a lookup assigns an unowned bundle.

Unlike the modular strategy of the same name it keeps no history of its own: the broker's
``weightedMaxEMA`` *is* the smoothed figure. Candidates with load data are averaged; those at
least ``loadBalancerAverageResourceUsageDifferenceThresholdPercentage`` below the average are the
best; with none, every candidate (with or without data) is. The pick among the best is uniform
(``ThreadLocalRandom`` in Pulsar, a seeded ``random.Random`` here). Candidates iterate in the
caller's order (a Java ``HashSet`` in Pulsar).
"""

from __future__ import annotations

from typing import Literal

from lbctl.model.decision import PlacementDecision, Why
from lbctl.strategies.base import LookupRequest

NAME = "LeastResourceUsageWithWeight"


#: How the extensible LeastResourceUsageWithWeight picked.
Lookup = Literal[
    "below",  # count brokers at least threshold below the average
    "all",  # none clearly below: every candidate
    "no-candidates",
]


class LookupWhy(Why, frozen=True):
    code: Lookup
    count: int = 0
    threshold: float = 0.0
    average: float | None = None


def select(request: LookupRequest) -> PlacementDecision:
    """``LeastResourceUsageWithWeight.select`` (extensible): the average ``weightedMaxEMA`` of
    the candidates with load data, the best at least the difference threshold below it (else
    every candidate), and a uniform random pick."""
    cands = tuple(request.candidates)
    bundle = request.bundle
    if not cands:
        return PlacementDecision(NAME, bundle, None, cands, why=LookupWhy("no-candidates"))
    scores: dict[str, float] = {}
    no_data: list[str] = []
    total = 0.0
    for b in cands:
        data = request.store.get(b)
        if data is None:
            no_data.append(b)
            continue
        scores[b] = data.weightedMaxEMA
        total += data.weightedMaxEMA
    best: list[str] = []
    avg = None
    thr = int(request.settings[
        "loadBalancerAverageResourceUsageDifferenceThresholdPercentage"]) / 100.0
    if len(cands) > len(no_data):
        avg = total / (len(cands) - len(no_data))
        best = [b for b in cands if b in scores and scores[b] + thr <= avg]
    if best:
        why = LookupWhy("below", len(best), thr, avg)
    else:
        best = list(cands)
        why = LookupWhy("all")
    pick = best[request.rng.randrange(len(best))]
    return PlacementDecision(NAME, bundle, pick, cands, scores, tuple(best), why, tuple(no_data),
                             avg)
