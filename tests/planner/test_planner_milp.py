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


def _problem(seed: int, brokers: int, per: int):  # type: ignore[no-untyped-def]
    state = random_cluster(seed, brokers, per_broker=per)
    settings = resolve(state.config)
    view = build(state, settings)
    return view, build_rules(state, settings, view), Costs.of(view)


@pytest.mark.parametrize("seed", range(6))
def test_a_pruned_binary_never_held_a_broker_up(seed: int) -> None:
    """:class:`milp.Reach` drops a term's binary only when another kept term is never below it,
    and gives each kept one a big-M no plan exceeds: on random plans (each bundle moved at most
    once, to a destination the model allows) every broker's usage is the max of its kept terms,
    and ``lub - t_r <= M``."""
    import random

    import numpy as np

    view, rules, costs = _problem(seed, 3 + seed % 4, 3 + seed)
    m = milp.build_model(view, rules, costs, Targets(0.85, 0.10), WIDTH, Caps())
    full = milp.build_model(view, rules, costs, Targets(0.85, 0.10), WIDTH, Caps(), prune=False)
    assert sum(map(len, m.y_index)) <= sum(map(len, full.y_index))
    lub = max(view.usages())
    rng = random.Random(seed)
    by_bundle: dict[int, list[int]] = {}
    for i, j in m.pairs:
        by_bundle.setdefault(i, []).append(j)
    drivers = np.asarray(view.drivers, dtype=float).reshape(-1, 3)
    reach = [milp.Reach(t, drivers[[i for i, js in by_bundle.items() if j in js]],
                           drivers[[i for i in by_bundle if view.owner[i] == j]])
             for j, t in enumerate(view.terms)]
    pruned_somewhere = False
    for _ in range(200):
        moves = [(i, rng.choice(js)) for i, js in by_bundle.items() if rng.random() < 0.4]
        delta = view.after(moves)
        for j, (t, ys, all_ys) in enumerate(zip(view.terms, m.y_index, full.y_index,
                                                strict=True)):
            value = {r: t.floor if r == -1 else t.resource(r, delta[j][r]) for r, _ in all_ys}
            kept = [r for r, _ in ys]
            pruned_somewhere |= len(kept) < len(all_ys)
            assert max(value[r] for r in kept) == pytest.approx(t.usage(delta[j]), abs=1e-12)
            for r in kept:
                assert lub - value[r] <= reach[j].big_m(r, lub) - 1e-4
    assert pruned_somewhere or seed >= 4


@pytest.mark.parametrize("seed", range(4))
def test_the_pruned_model_has_the_full_model_s_optimum(seed: int) -> None:
    """Fewer binaries, the same problem: HiGHS proves the same optimal objective on both."""
    from scipy.optimize import Bounds, LinearConstraint
    from scipy.optimize import milp as highs

    view, rules, costs = _problem(200 + seed, 4, 4)
    objective = []
    for prune in (True, False):
        m = milp.build_model(view, rules, costs, Targets(0.85, 0.10), WIDTH, Caps(),
                             prune=prune)
        res = highs(m.c, constraints=LinearConstraint(m.a, m.lb, m.ub),
                    integrality=m.integrality, bounds=Bounds(m.lower, m.upper),
                    options={"mip_rel_gap": 0.0, "time_limit": 120})
        assert res.status == 0
        objective.append(float(res.fun))
    assert objective[0] == pytest.approx(objective[1], rel=1e-6, abs=1e-9)
