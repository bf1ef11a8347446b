"""``Assignment.usage_swap`` (unrolled for speed, perf17) gives exactly the usage the broker's
terms give for the swapped drivers: same float operations, same order, resources that do not
count (``-inf``) skipped, either bundle absent (-1)."""

from __future__ import annotations

import math
import random

import pytest

from lbctl.planner.assignment import Assignment
from lbctl.planner.load import BrokerTerms
from tests.planner.test_greedy_equality import _inputs, deep_cluster
from tests.planner_clusters import random_cluster


@pytest.mark.parametrize("seed", range(6))
def test_usage_swap_is_the_terms_usage_of_the_swapped_drivers(seed: int) -> None:
    state = (random_cluster(900 + seed, 7, 9) if seed % 2 else
             deep_cluster(900 + seed, 5, 60, 0.83))
    view, rules, costs = _inputs(state)
    a = Assignment(view, rules, costs)
    rng = random.Random(seed)
    movable = [i for i, p in enumerate(rules.pinned) if p is None]
    for i in rng.sample(movable, min(8, len(movable))):  # deltas that are not all zero
        dst = rng.randrange(len(a.u))
        if dst != a.owner[i]:
            a.move(i, dst)
    # terms where each resource may be the heaviest, some not counted: the cluster's own have
    # CPU on top everywhere, which would hide the network terms
    inf = -math.inf
    def now() -> float:
        return rng.choice((inf, rng.uniform(0.1, 0.9)))

    a.terms = tuple(BrokerTerms(t.name, rng.choice((0.0, 0.3)), (now(), now(), now()),
                                (rng.uniform(0, 0.05), rng.uniform(0, 1e-5), rng.uniform(0, 1e-5)))
                    for t in a.terms)
    n = len(view.owner)
    checked = 0
    for _ in range(2000):
        j = rng.randrange(len(a.u))
        out, into = rng.randrange(-1, n), rng.randrange(-1, n)
        x = list(a.delta[j])
        for r in range(3):
            if out >= 0:
                x[r] -= view.drivers[out][r]
            if into >= 0:
                x[r] += view.drivers[into][r]
        assert a.usage_swap(j, out, into) == a.terms[j].usage(x)
        checked += 1
    assert checked == 2000
