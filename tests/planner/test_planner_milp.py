"""The exact model states the problem the greedy solver solves: a greedy plan is a feasible point
of it (every row holds) at the objective its cost gives, and the exact optimum is never costlier."""

from __future__ import annotations

import pytest

from lbctl.config import resolve
from lbctl.planner import milp
from lbctl.planner.constraints import build_rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy import Caps, solve_greedy
from lbctl.planner.load import build
from tests.planner_clusters import random_cluster

pytestmark = pytest.mark.skipif(not milp.available(), reason="scipy (lbctl[propose]) not installed")
WIDTH = 0.099


@pytest.mark.parametrize("seed", range(5))
def test_a_greedy_plan_satisfies_every_row_of_the_model(seed: int) -> None:
    import numpy as np

    state = random_cluster(seed, 3 + seed, per_broker=4)
    settings = resolve(state.config)
    view = build(state, settings)
    rules = build_rules(state, settings, view)
    costs = Costs.of(view)
    targets = Targets(max_usage=0.85, target_range=0.10)
    g = solve_greedy(view, rules, costs, targets, WIDTH, Caps()).assignment
    assert g.moves() and g.violation_free(WIDTH, 0.85)
    m = milp.build_model(view, rules, costs, targets, WIDTH, Caps())
    terms = [[t.resource(r, d[r]) for r in range(3)] for t, d in zip(view.terms, g.delta,
                                                                       strict=True)]
    x = m.vector(g.moves(), min(g.u), max(g.u), terms)
    ax = m.a @ x
    assert np.all(ax >= m.lb - 1e-9) and np.all(ax <= m.ub + 1e-9)
    assert np.all(x >= m.lower - 1e-12) and np.all(x <= m.upper + 1e-12)
    assert float(m.c @ x) == pytest.approx(g.cost / m.norm)
    # …and a plan outside the band needs the band slack
    x2 = m.vector([], min(view.usages()), max(view.usages()),
                  [[t.resource(r) for r in range(3)] for t in view.terms])
    assert np.any(m.a @ x2 > m.ub + 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_the_exact_optimum_is_no_costlier_than_greedy(seed: int) -> None:
    state = random_cluster(100 + seed, 4, per_broker=4)
    settings = resolve(state.config)
    view = build(state, settings)
    rules = build_rules(state, settings, view)
    costs = Costs.of(view)
    targets = Targets(max_usage=0.85, target_range=0.10)
    g = solve_greedy(view, rules, costs, targets, WIDTH, Caps()).assignment
    res = milp.solve_milp(view, rules, costs, targets, WIDTH, Caps(), time_limit=60,
                          node_limit=100_000)
    assert res.status == "optimal" and res.moves is not None
    assert res.objective is not None and res.objective <= g.cost / res.norm + 1e-6
    assert res.gap is not None and res.gap <= 1e-4
