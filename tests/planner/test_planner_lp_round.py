"""The rounded LP plan (:mod:`lbctl.planner.lp_round`, issue 29 "bytes moved"): where ``auto`` is
over ``--exact-limit`` and would run greedy alone, the exact model's LP relaxation, rounded and
mended, replaces greedy's plan when it meets the same goals for fewer bytes.

What must hold: ``solve`` keeps it only when it beats greedy's (never dearer, never further from
the goals); it never moves a pinned bundle nor sends one where the rules refuse it, counts
``--max-moves`` and ``--max-throughput``; the plan is the same whatever the order of the input
file; ``--solver greedy`` is greedy alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lbctl.config import resolve
from lbctl.model.cluster import ClusterState
from lbctl.planner import lp_round, milp
from lbctl.planner import solve as solve_module
from lbctl.planner.assignment import EPS
from lbctl.planner.constraints import build_rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy import Caps
from lbctl.planner.load import build
from lbctl.planner.propose import ProposeOptions, propose
from lbctl.planner.solve import SolveOptions, solve
from lbctl.sources.snapshot import read_snapshots
from tests.planner.test_greedy_equality import caps, clusters
from tests.planner.test_planner_determinism import _shuffled
from tests.planner.test_planner_solve_determinism import _document
from tests.planner.test_planner_solve_refine import keeps_rules_and_caps
from tests.planner_clusters import random_cluster

pytestmark = pytest.mark.skipif(not milp.available(), reason="scipy is not installed")

BAND = Targets(0.85, 0.10)
#: auto over --exact-limit: greedy's plan, and the rounded LP plan when it beats it
OVER = SolveOptions(exact_limit=0)


def _solved(state: ClusterState, options: SolveOptions = OVER
            ) -> tuple[float, bool, list[tuple[int, int]]]:
    s = resolve(state.config)
    view = build(state, s)
    rules = build_rules(state, s, view)
    sol = solve(view, rules, Costs.of(view), BAND, Caps(), options)
    return sum(view.throughput[i] for i, _ in sol.moves), sol.violation.ok, list(sol.moves)


@pytest.mark.parametrize("seed", [5, 11, 24])
def test_the_rounded_lp_plan_moves_fewer_bytes_than_greedy(
        monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """12 brokers of 10 bundles (1,320 pairs): greedy's plan moved 11.5, 12.3, 12.0 MB/s, the
    rounded LP plan 8.0, 9.9, 8.7 (0.69-0.81x) for the same band and cap."""
    state = random_cluster(seed, 12, 10)
    lp_bytes, lp_ok, _ = _solved(state)
    monkeypatch.setattr(solve_module, "lp_plan", lambda *a, **k: None)
    greedy_bytes, greedy_ok, _ = _solved(state)
    assert greedy_ok and lp_ok
    assert lp_bytes < 0.9 * greedy_bytes


def test_greedy_solver_is_greedy_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    state = random_cluster(5, 12, 10)
    plan = _solved(state, SolveOptions(solver="greedy"))
    monkeypatch.setattr(solve_module, "lp_plan", lambda *a, **k: None)
    assert _solved(state, SolveOptions(solver="greedy")) == plan


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(clusters, caps, st.sampled_from([0.05, 0.10, 0.20]), st.sampled_from([0.6, 0.85]))
def test_the_rounded_plan_keeps_every_rule(state: ClusterState, limits: Caps, width: float,
                                           umax: float) -> None:
    s = resolve(state.config)
    view = build(state, s)
    rules = build_rules(state, s, view)
    costs = Costs.of(view)
    targets = Targets(umax, width)
    p = lp_round.lp_plan(view, rules, costs, targets, width, limits)
    if p is None:
        return
    keeps_rules_and_caps(p, limits)
    # what solve keeps is never further from the goals, nor dearer, than greedy's plan
    greedy_solve = SolveOptions(solver="greedy")
    g = solve(view, rules, costs, targets, limits, greedy_solve)
    a = solve(view, rules, costs, targets, limits, OVER)
    assert (a.violation.capacity, a.violation.band) <= (g.violation.capacity + EPS,
                                                       g.violation.band + EPS) or a.moves == g.moves
    if a.violation.ok:
        assert sum(costs.cost[i] for i, _ in a.moves) <= sum(
            costs.cost[i] for i, _ in g.moves) + EPS


def test_the_rounded_plan_does_not_depend_on_the_file_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A random cluster whose plan the LP rounding changes: every shuffle of its file gives the
    same plan."""
    doc = _document(monkeypatch, 5, 12, 10)
    plans = []
    for seed in range(4):
        path = tmp_path / f"shuffled-{seed}.json"
        path.write_text(json.dumps(doc if seed == 0 else _shuffled(doc, seed)))
        state = read_snapshots([path])[-1]
        p = propose(state, resolve(state.config), ProposeOptions(exact_limit=0))
        plans.append(sorted((a.bundle, a.broker, a.destinationBroker or "")
                            for a in p.plan().actions))
        assert "LP relaxation rounded" in p.solution.status
    assert plans[0]
    assert all(p == plans[0] for p in plans[1:])


def test_over_the_pair_limit_the_lp_is_offered_the_pairs_across_the_mean(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Over ``limit`` pairs (``plans_on_hardware``'s 60-broker clusters, ~50,000 after the mix
    rule), the LP is offered only bundles of brokers above the mean usage going to brokers below
    it, when that brings it within the limit: a plan where there was none (greedy's alone)."""
    state = random_cluster(5, 12, 10)
    s = resolve(state.config)
    view = build(state, s)
    rules = build_rules(state, s, view)
    full = milp.pairs_of(view, rules)
    assert full is not None and len(full) > 700
    offered: list[milp.Pairs] = []
    build_model = milp.build_model

    def spy(*args: object, **kwargs: object) -> milp.Model:
        offered.append(args[6])  # type: ignore[arg-type]
        return build_model(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(milp, "build_model", spy)
    plan = lp_round.lp_plan(view, rules, Costs.of(view), BAND, 0.10, Caps(), limit=700)
    assert plan is not None and plan.moved and plan.violation_free(0.10, 0.85)
    u = view.usages()
    mean = sum(u) / len(u)
    (pairs,) = offered
    assert 0 < len(pairs) <= 700
    assert all(u[view.owner[i]] > mean > u[d] for i, d in pairs.tolist())


@pytest.mark.parametrize("seed", [0, 1])
def test_where_the_tight_mix_budget_leaves_no_lp_point_the_next_one_that_does_is_used(
        monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """12 brokers of 10 bundles, a 10-point band: with :data:`~lbctl.planner.lp_round.MIX_BUDGET`
    alone the LP has no point (greedy's plan, with no bound on the mix, was the only one); the
    ladder :data:`~lbctl.planner.lp_round.MIX_BUDGETS` gives the plan of its tightest budget that
    has one, which meets the band and keeps every rule."""
    state = random_cluster(seed, 12, 10)
    s = resolve(state.config)
    view = build(state, s)
    rules = build_rules(state, s, view)
    costs = Costs.of(view)
    targets = Targets(0.85, 0.10)

    def plan(budgets: tuple[float, ...]) -> list[tuple[int, int]] | None:
        monkeypatch.setattr(lp_round, "MIX_BUDGETS", budgets)
        p = lp_round.lp_plan(view, rules, costs, targets, 0.10, Caps())
        if p is not None:
            keeps_rules_and_caps(p, Caps())
            assert p.violation_free(0.10, 0.85)
        return None if p is None else p.moves()

    ladder = lp_round.MIX_BUDGETS
    assert ladder[0] == lp_round.MIX_BUDGET and list(ladder) == sorted(ladder)
    assert plan((lp_round.MIX_BUDGET,)) is None
    first = next(m for b in ladder[1:] if (m := plan((b,))) is not None)
    assert plan(ladder) == first
