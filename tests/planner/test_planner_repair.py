"""The repair pass after the solver (lbctl.planner.repair): nearer the goals one bundle at a time,
never worse than the plan it was given, within the constraints and caps."""

from __future__ import annotations

import random

import pytest

from lbctl.config import resolve
from lbctl.model.cluster import ClusterState
from lbctl.planner.assignment import Assignment
from lbctl.planner.constraints import Rules, build_rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy import Caps
from lbctl.planner.load import LoadView, build
from lbctl.planner.repair import Ends, repair
from tests.planner_clusters import broker, bundle_names, random_cluster, snapshot, stats


def _setup(seed: int) -> tuple[LoadView, Rules, Costs]:
    state = random_cluster(seed, 8, per_broker=8)
    return _built(state)


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


def _hot_broker() -> tuple[LoadView, Rules, Costs]:
    # broker-0 at ~150 % with 24 like bundles, three brokers at ~10 %: a plan must take about
    # 100 points off broker-0, more than any band on an uncertain slope can cover
    names = bundle_names("tenant/ns", 36)
    rates = [200.0 + 10 * k for k in range(36)]
    owned: list[dict[str, dict[str, float]]] = [{}, {}, {}, {}]
    for k, x in enumerate(names):
        owned[0 if k < 24 else 1 + k % 3][x] = stats(rates[k], 1024)
    state = snapshot({f"broker-{j}:8080": broker(o, cost=5.0 if j == 0 else 1.0)
                      for j, o in enumerate(owned)})
    return _built(state)


def _shed_heaviest_first(view: LoadView, rules: Rules, costs: Costs) -> Assignment:
    """broker-0's heaviest bundles, each to the least loaded broker, until broker-0 is no longer
    the most loaded."""
    planned = Assignment(view, rules, costs)
    for i in sorted((i for i, o in enumerate(view.owner) if o == 0),
                    key=lambda i: (-view.throughput[i], i)):
        if planned.u[0] <= min(planned.u[1:]):
            break
        planned.move(i, min(range(1, 4), key=lambda j: (planned.u[j], j)))
    return planned


def test_the_robust_repair_never_makes_the_predicted_plan_miss_what_it_met() -> None:
    # issue 29 (seed 21, n = 12 of benchmarks/plans_on_hardware.py): a broker shedding a
    # hundred points on a slope known to 13 % is predicted anywhere in a 26-point interval, so
    # no plan is in band at its ends; the ends alone were nearer the band the less that broker
    # shed, and the repair moved bundles back to it, turning a plan in band (as predicted) into
    # one 8 points out. A change may now lower the ends' miss only while the plan as predicted
    # misses its goals by no more than it did. (Its ends are now its slope's error times the
    # 22 points it keeps above idle, not the 128 it sheds: a slope known to 50 % spans them.)
    view, rules, costs = _hot_broker()
    start = Assignment(view, rules, costs).u
    assert start[0] > 1.4 and max(start[1:]) < 0.15
    # the plan: broker-0's heaviest bundles, each to the least loaded broker, until broker-0
    # is no longer the most loaded (in band as predicted; its ends 26 points apart)
    planned = _shed_heaviest_first(view, rules, costs)
    targets = Targets(1.0, 0.08)
    assert planned.violation(targets).ok and planned.u[0] < max(planned.u)
    unc = [0.5, 0.0, 0.0, 0.0]
    assert Ends(planned, unc).violation(targets).band > 0.1
    robust = repair(view, rules, costs, tuple(planned.moves()), targets, Caps(), unc)
    after = Assignment(view, rules, costs)
    after.apply(robust)
    # before the fix: 20 moves, broker-0 back up at 33 % against 22-23 %, 3 points out
    assert after.violation(targets).ok, [round(u, 3) for u in after.u]
    assert robust != tuple(planned.moves())  # it still hedges: less of the change on broker-0
    assert Ends(after, unc).violation(targets).key() < Ends(planned, unc).violation(targets).key()


def test_a_broker_shedding_most_of_its_load_is_uncertain_by_what_it_keeps() -> None:
    # issue 29: a broker's usage is known now and at no traffic (its idle usage), so its slope's
    # error counts over the distance from the nearer one. broker-0 sheds 128 points to 22: with
    # its slope known to 13 % it lands within 3 points of 22, not 17 (in truth: brokers that
    # only shed missed by 0.55-0.73 of their slope error times their change). The plan is in
    # band at its ends and the robust repair leaves it; before, it took bundles back.
    view, rules, costs = _hot_broker()
    planned = _shed_heaviest_first(view, rules, costs)
    unc = [0.13, 0.13, 0.13, 0.13]
    ends = Ends(planned, unc)
    empty = [0.0, 0.0, 0.0]
    idle = view.terms[0].usage([-sum(view.drivers[i][r] for i, o in enumerate(view.owner)
                                     if o == 0) for r in range(3)])
    u0, start = planned.u[0], ends.start[0]
    assert start - u0 > 1.0 and u0 - idle < 0.3
    assert ends.high(0, u0) - u0 == pytest.approx(0.13 * (u0 - idle))
    assert ends.low(0, u0) == pytest.approx(u0 - 0.13 * (u0 - idle))
    # a receiver from near idle: its change is the nearer distance
    for j in range(1, 4):
        assert ends.high(j, planned.u[j]) - planned.u[j] == pytest.approx(
            0.13 * abs(planned.u[j] - ends.start[j]))
    assert view.terms[0].usage(empty) == start
    targets = Targets(1.0, 0.08)
    assert ends.violation(targets).ok
    moves = tuple(planned.moves())
    assert repair(view, rules, costs, moves, targets, Caps(), unc) == moves


@pytest.mark.parametrize("seed", range(4))
def test_the_robust_repair_never_worsens_the_predicted_plan(seed: int) -> None:
    view, rules, costs = _setup(710 + seed)
    targets = Targets(0.85, 0.08)
    moves = repair(view, rules, costs, (), targets, Caps())
    planned = Assignment(view, rules, costs)
    planned.apply(moves)
    rng = random.Random(seed)
    unc = [rng.choice((0.0, 0.05, 0.3)) for _ in view.brokers]
    after = Assignment(view, rules, costs)
    after.apply(repair(view, rules, costs, moves, targets, Caps(), unc))
    v, w = after.violation(targets), planned.violation(targets)
    assert v.capacity <= w.capacity + 1e-9 and v.band <= w.band + 1e-9


def _two_empty_brokers() -> tuple[LoadView, Rules, Costs]:
    # three brokers at 55-65 % with eight bundles each, two that carry nothing (issue 29: n = 5,
    # seed 26 of benchmarks/plans_on_hardware.py, two idle 8-core hosts whose cost no report
    # showed: taken at the fleet's, they cost twice that)
    names = bundle_names("tenant/ns", 24)
    owned: list[dict[str, dict[str, float]]] = [{}, {}, {}, {}, {}]
    for k, x in enumerate(names):
        owned[k % 3][x] = stats(560.0 + 6 * k + 50 * (k % 3), 4096)
    state = snapshot({f"broker-{j}:8080": broker(o) for j, o in enumerate(owned)})
    return _built(state)


def test_the_robust_repair_keeps_an_unknown_receiver_s_high_end_below_the_max_now() -> None:
    # a plan in band as predicted fills the two empty brokers to the others' level; their
    # slopes known to 100 %, each may land twice as high, above the most loaded broker now (the
    # plan would raise the true max: it did, 50 -> 64 %). Never raising the max outranks the
    # band: the repair takes bundles back from them even though the plan as predicted then
    # misses the band it met, and never lets the plan as predicted exceed the cap it met.
    view, rules, costs = _two_empty_brokers()
    start = Assignment(view, rules, costs).u
    assert max(start[3:]) < 0.05 and min(start[:3]) > 0.3
    targets = Targets(max(start) - 0.005, 0.10)
    planned = Assignment(view, rules, costs)
    planned.apply(repair(view, rules, costs, (), Targets(targets.max_usage, 0.06), Caps()))
    assert planned.violation(targets).ok
    unc = [0.0, 0.0, 0.0, 1.0, 1.0]
    assert Ends(planned, unc).violation(targets).capacity > 0.05
    robust = repair(view, rules, costs, tuple(planned.moves()), targets, Caps(), unc)
    after = Assignment(view, rules, costs)
    after.apply(robust)
    ends = Ends(after, unc)
    assert max(ends.high(j, u) for j, u in enumerate(after.u)) <= max(start)
    assert after.violation(targets).capacity == 0.0  # as predicted, still under the cap
    assert not after.violation(targets).ok  # the band is given up for it


def _built(state: ClusterState) -> tuple[LoadView, Rules, Costs]:
    """The view, rules and costs the planner builds of ``state`` under its own settings."""
    settings = resolve(state.config)
    view = build(state, settings)
    return view, build_rules(state, settings, view), Costs.of(view)
