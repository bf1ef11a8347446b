"""Goals, their statuses, and the balancedness score (Cruise Control's formula)."""

from __future__ import annotations

import pytest

from lbctl.planner.goals import (
    GoalResult,
    Stats,
    Targets,
    balancedness,
    band_met,
    evaluate,
    goal_costs,
)


def test_stats_are_population_figures() -> None:
    s = Stats.of([0.9, 0.1])
    assert (s.max, s.min, s.range, s.std, s.mean) == pytest.approx((0.9, 0.1, 0.8, 0.4, 0.5))
    assert Stats.of([]).range == 0.0


def test_goal_costs_follow_cruise_controls_weights() -> None:
    # KafkaCruiseControlUtils.balancednessCostByGoal with priority 1.1, strictness 1.5:
    # three goals (hard, hard, soft) weigh 1.1^2*1.5, 1.1*1.5, 1 before scaling to 100
    s = Stats.of([0.5])
    goals = [GoalResult("a", True, "", s, s, True, True), GoalResult("b", True, "", s, s, True, True),
             GoalResult("c", False, "", s, s, True, True)]
    raw = [1.21 * 1.5, 1.1 * 1.5, 1.0]
    assert goal_costs(goals) == pytest.approx([100 * r / sum(raw) for r in raw])
    assert sum(goal_costs(goals)) == pytest.approx(100)


def test_balancedness_drops_by_the_cost_of_each_unmet_goal() -> None:
    t = Targets(max_usage=0.85, target_range=0.10)
    goals = evaluate([0.9, 0.1], [0.5, 0.48], {"cpu": [90, 10]}, {"cpu": [50, 48]}, t)
    assert [g.status for g in goals] == ["FIXED", "FIXED", "FIXED"]
    costs = goal_costs(goals)
    assert balancedness(goals, after=False) == pytest.approx(0.0)
    assert balancedness(goals, after=True) == 100.0
    # the band met, capacity not: only capacity's cost is lost
    goals = evaluate([0.9, 0.86], [0.9, 0.86], {"cpu": [90, 86]}, {"cpu": [90, 86]}, t)
    assert [g.status for g in goals] == ["VIOLATED", "NO-ACTION", "NO-ACTION"]
    assert balancedness(goals, after=True) == pytest.approx(100 - costs[0], abs=1e-3)


def test_std_target_replaces_the_range() -> None:
    t = Targets(max_usage=1.0, target_range=None, target_std=0.05)
    assert band_met(Stats.of([0.5, 0.55, 0.6]), t)  # std 4.1 points, range 10
    assert not band_met(Stats.of([0.4, 0.6]), t)
    assert Targets(1.0, 0.1).band_words() == "range <= 10 points"
    assert t.band_words() == "std <= 5 points"
