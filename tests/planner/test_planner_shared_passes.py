"""Greedy's set-up and levelling made once for propose's margin passes (issue 30, perf21):
:class:`lbctl.planner.greedy.Shared` is made once per propose and once per solve otherwise; the
levelling (which reads neither the width nor the cap) runs once per :class:`Caps`, the hosted
pass's hosts and ceiling once, the candidates once — and the plans are those of a propose that
makes everything again in every pass."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from lbctl.config import resolve
from lbctl.model.cluster import ClusterState
from lbctl.planner import greedy
from lbctl.planner.assignment import Assignment
from lbctl.planner.constraints import build_rules
from lbctl.planner.cost import Costs
from lbctl.planner.greedy import Caps, Hosts, Shared, candidates_by_broker, level
from lbctl.planner.load import build, canonical
from lbctl.planner.propose import Proposal, ProposeOptions, propose
from tests.planner_clusters import random_cluster

#: clusters and options under which propose misses the goals in its first pass, so that the
#: narrower passes run (``max_moves`` 2 keeps every window out of reach: greedy levels)
_SHAPES: list[tuple[int, int, dict[str, Any]]] = [(6, 8, {}), (8, 5, {"skew": 0.3}),
                                                  (5, 12, {"strong": 0.6})]
CASES = [
    (random_cluster(seed, n, per, **kw), opts)
    for seed in range(4)
    for n, per, kw in _SHAPES
    for opts in (ProposeOptions(solver="greedy", max_moves=2),
                 ProposeOptions(solver="greedy", max_moves=3, target_std=3.0),
                 ProposeOptions(solver="greedy"))
]


def _counting(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts of the shared work's computations, by name."""
    calls: Counter[str] = Counter()
    real_level, real_cands, real_ceiling = greedy.level, greedy.candidates_by_broker, \
        Hosts.ceiling

    def counted_level(*a: Any, **k: Any) -> None:
        calls["level"] += 1
        real_level(*a, **k)

    def counted_cands(*a: Any, **k: Any) -> list[list[int]]:
        calls["cands"] += 1
        return real_cands(*a, **k)

    def counted_ceiling(self: Hosts, *a: Any, **k: Any) -> float:
        calls["ceiling"] += 1
        return real_ceiling(self, *a, **k)

    monkeypatch.setattr(greedy, "level", counted_level)
    monkeypatch.setattr(greedy, "candidates_by_broker", counted_cands)
    monkeypatch.setattr(Hosts, "ceiling", counted_ceiling)
    return calls


def _unshared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every solve_greedy / solve_hosted call makes its own set-up again (the code before the
    sharing: each made its candidates, sorts, levelling and hosts)."""
    monkeypatch.setattr(Shared, "of", classmethod(lambda cls, shared, view, rules, costs:
                                                  cls(view, rules, costs)))


def _solves(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the greedy solves (one per margin pass and width)."""
    made: list[int] = []
    real = greedy.solve_greedy

    def counted(*a: Any, **k: Any) -> Any:
        made.append(1)
        return real(*a, **k)

    monkeypatch.setattr("lbctl.planner.solve.solve_greedy", counted)
    return made


def _figures(p: Proposal) -> str:
    """The plan as the CLI writes it, the moves in order and the solution's words (repr: every
    float to the bit)."""
    plan = p.plan()
    return repr((plan.to_dict(), p.moves, p.order, p.solution, p.notes))


def test_the_margin_passes_level_and_set_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    state, opts = CASES[0]
    solves = _solves(monkeypatch)
    calls = _counting(monkeypatch)
    p = propose(state, resolve(state.config), opts)
    assert not p.solution.violation.ok
    assert len(solves) == 3  # the passes at 1, 0.5 and 0 of the margin all ran
    # once for the whole propose (refine's polish takes its own candidates: not shared here)
    assert calls["level"] == 1
    assert calls["ceiling"] == 1
    unshared = Counter(calls)
    calls.clear()
    _unshared(monkeypatch)
    propose(state, resolve(state.config), opts)
    assert calls["level"] == 3 and calls["ceiling"] == 3  # what the sharing saves
    assert calls["cands"] >= unshared["cands"] + 4


def test_a_std_targets_widths_share_within_one_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four widths × three passes: twelve greedy solves, one levelling."""
    state, opts = CASES[1]
    assert opts.target_std is not None
    solves = _solves(monkeypatch)
    calls = _counting(monkeypatch)
    p = propose(state, resolve(state.config), opts)
    assert not p.solution.violation.ok
    assert len(solves) == 12
    assert calls["level"] == 1 and calls["ceiling"] <= 1


def test_a_solve_without_a_shared_one_still_shares_across_its_widths(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from lbctl.planner.solve import SolveOptions, solve

    state = canonical(CASES[1][0])
    settings = resolve(state.config)
    view = build(state, settings, None)
    rules = build_rules(state, settings, view, None, None)
    costs = Costs.of(view)
    targets = ProposeOptions(target_std=3.0, max_moves=3).targets(settings)
    calls = _counting(monkeypatch)
    solve(view, rules, costs, targets, Caps(3), SolveOptions("greedy"))
    assert calls["level"] == 1


@pytest.mark.parametrize("k", range(len(CASES)))
def test_plans_are_identical_with_and_without_the_sharing(
        monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    state, opts = CASES[k]
    shared = _figures(propose(state, resolve(state.config), opts))
    with monkeypatch.context() as m:
        _unshared(m)
        alone = _figures(propose(state, resolve(state.config), opts))
    assert shared == alone


def _cluster(state: ClusterState) -> tuple[Any, Any, Costs]:
    state = canonical(state)
    settings = resolve(state.config)
    view = build(state, settings, None)
    rules = build_rules(state, settings, view, None, None)
    return view, rules, Costs.of(view)


def _state(a: Assignment) -> tuple[Any, ...]:
    return (a.moves(), a.u, a.delta, a.owner, a.topics, a.groups, a.cost, a.throughput)


@pytest.mark.parametrize("seed", range(6))
def test_a_levelled_plan_is_handed_out_fresh_and_per_caps(seed: int) -> None:
    """Each call gets its own assignment, to the bit the levelling's, whatever the caller did to
    an earlier one; another Caps is levelled again (a move cap stops the levelling sooner)."""
    view, rules, costs = _cluster(random_cluster(500 + seed, 7, 7))
    shared = Shared(view, rules, costs)
    for caps in (Caps(), Caps(max_moves=2), Caps(max_throughput=1e5), Caps()):
        fresh = Assignment(view, rules, costs)
        level(fresh, candidates_by_broker(view, rules, costs), caps)
        got = shared.levelled(caps)
        assert _state(got) == _state(fresh)
        if got.moved:  # the caller's changes stay its own
            got.undo(next(iter(got.moved)))
            assert _state(shared.levelled(caps)) == _state(fresh)
    assert shared.made["level"] == 3 and shared.made["cands"] == 1


def test_a_shared_one_made_for_other_objects_is_not_read() -> None:
    view, rules, costs = _cluster(random_cluster(7, 6, 8))
    shared = Shared(view, rules, costs)
    view2, rules2, costs2 = _cluster(random_cluster(8, 6, 8))
    assert Shared.of(shared, view, rules, costs) is shared
    assert Shared.of(shared, view2, rules2, costs2) is not shared
    assert Shared.of(shared, view, rules2, costs) is not shared
    assert Shared.of(None, view, rules, costs).view is view
