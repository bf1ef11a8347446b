"""The repair pass after the solver (lbctl.planner.repair): nearer the goals one bundle at a time,
never worse than the plan it was given, within the constraints and caps."""

from __future__ import annotations

import pytest

from lbctl.config import resolve
from lbctl.planner.assignment import Assignment
from lbctl.planner.constraints import Rules, build_rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy import Caps
from lbctl.planner.load import LoadView, build
from lbctl.planner.repair import repair
from tests.planner_clusters import random_cluster


def _setup(seed: int) -> tuple[LoadView, Rules, Costs]:
    state = random_cluster(seed, 8, per_broker=8)
    settings = resolve(state.config)
    view = build(state, settings)
    rules = build_rules(state, settings, view)
    return view, rules, Costs.of(view)


@pytest.mark.parametrize("seed", range(4))
def test_repair_levels_an_unplanned_cluster_within_the_rules(seed: int) -> None:
    view, rules, costs = _setup(700 + seed)
    targets = Targets(0.85, 0.05)
    before = Assignment(view, rules, costs).violation(targets)
    assert not before.ok
    moves = repair(view, rules, costs, (), targets, Caps())
    after = Assignment(view, rules, costs)
    after.apply(moves)
    assert after.violation(targets).key() < before.key()
    assert len({i for i, _ in moves}) == len(moves)
    for i, dst in moves:
        assert rules.pinned[i] is None and dst != view.owner[i]
    # deterministic, and capped
    assert repair(view, rules, costs, (), targets, Caps()) == moves
    assert len(repair(view, rules, costs, (), targets, Caps(max_moves=2))) <= 2


def test_a_plan_it_cannot_improve_is_returned_as_it_is() -> None:
    view, rules, costs = _setup(701)
    targets = Targets(0.85, 0.05)
    moves = repair(view, rules, costs, (), targets, Caps())
    # already repaired: no step brings it nearer
    assert repair(view, rules, costs, moves, targets, Caps()) == moves
    # goals met: untouched
    assert repair(view, rules, costs, moves, Targets(5.0, 5.0), Caps()) == moves


def test_an_uncertain_broker_is_given_a_smaller_change() -> None:
    # a broker whose cost is little known (its slope's error 100 %) is predicted anywhere
    # between no change and twice its change: the robust repair moves less onto it
    view, rules, costs = _setup(702)
    targets = Targets(0.85, 0.10)
    start = Assignment(view, rules, costs).u
    low = min(range(len(start)), key=lambda j: start[j])

    def change(uncertainty: list[float] | None) -> float:
        a = Assignment(view, rules, costs)
        a.apply(repair(view, rules, costs, (), targets, Caps(), uncertainty))
        return abs(a.u[low] - start[low])

    unc = [0.0] * len(start)
    unc[low] = 1.0
    assert change(unc) < change(None)
