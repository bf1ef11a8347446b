"""Swaps where single moves cannot reach the band (issue 29: "b" misses of large one-shot plans).

On ``benchmarks/plans_on_hardware.py``'s mixed 8/16/32-core clusters (n = 120, 300) a 32-core
broker holding one bundle of ~50 points pins the max; 8-core brokers keep 20-30-point bundles at
50-55 % while 32-core brokers sit near 38. No single move helps: an 8-core broker giving its big
bundle away drops far below the window, a 32-core broker giving one drops further below it. An
exchange does: the big bundle to a 32-core broker (where it weighs a quarter) and a smaller one
back. :func:`lbctl.planner.greedy_search.exchange` is that step; the cluster below is that shape
in small: 1 hot 32-core broker at 53 %, 6 8-core brokers at 52 % (bundles of 25 and 24 points),
2 32-core brokers at 38 % (8 bundles of 4.25 points and one of 1). Swaps run by default only
above :data:`lbctl.planner.greedy.SWAP_PAIRS` (bundle, destination) pairs.
"""

from __future__ import annotations

import pytest

from lbctl.model.cluster import ClusterState
from lbctl.planner import greedy
from lbctl.planner.assignment import Assignment
from lbctl.planner.greedy import Caps, candidates_by_broker, solve_greedy
from lbctl.planner.greedy_search import exchange
from lbctl.planner.solve import SolveOptions, solve
from tests.planner.test_planner_greedy_hosts import BAND, POINT, _inputs
from tests.planner_clusters import broker, bundle_names, snapshot, stats


def _cluster() -> ClusterState:
    names = iter(bundle_names("tenant/ns", 32))
    docs = {"broker-0:8080": broker({next(names): stats(200 / POINT, topics=2)}, cores=32,
                                    cost=0.25)}
    for j in range(1, 7):
        docs[f"broker-{j}:8080"] = broker({next(names): stats(w / POINT, topics=2)
                                           for w in (25, 24)}, cores=8)
    for j in (7, 8):
        docs[f"broker-{j}:8080"] = broker({next(names): stats(w / POINT, topics=2)
                                           for w in [17] * 8 + [4]}, cores=32, cost=0.25)
    return snapshot(docs)


def test_single_moves_cannot_reach_the_band_but_swaps_do(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(greedy, "SWAP_PAIRS", 0)  # as on a cluster of 120 brokers and more
    view, rules, costs = _inputs(_cluster())
    start = Assignment(view, rules, costs)
    assert [round(u * 100) for u in start.u] == [53] + [52] * 6 + [38] * 2
    alone = solve_greedy(view, rules, costs, BAND, 0.10, Caps(), swaps=False).assignment
    assert not alone.violation(BAND).ok and not alone.moved  # shed-and-fill: nothing to do

    sol = solve(view, rules, costs, BAND, Caps(), SolveOptions(solver="greedy"))
    assert sol.violation.ok, sol.violation
    a = Assignment(view, rules, costs)
    a.apply(sol.moves)
    assert max(a.u) - min(a.u) <= 0.10 + 1e-9
    assert max(a.u) <= max(start.u) + 1e-9  # the max never raised
    assert a.owner[0] == 0  # the hot bundle stays: it weighs least where it is
    # every 8-core broker gave a big bundle to a 32-core one and took a smaller one back
    for j in range(1, 7):
        gone = [i for i, d in sol.moves if view.owner[i] == j]
        came = [i for i, d in sol.moves if d == j]
        assert len(gone) == 1 and len(came) == 1
        assert a.owner[gone[0]] in (7, 8) and view.owner[came[0]] in (7, 8)


def test_pinned_bundles_never_move_and_the_move_cap_holds() -> None:
    view, rules, costs = _inputs(_cluster())
    for i in range(len(view.bundles)):
        if view.owner[i] in range(1, 7):
            rules.pinned[i] = "pinned (test)"  # the 8-core brokers' big bundles
    g = solve_greedy(view, rules, costs, BAND, 0.10, Caps(), swaps=True).assignment
    assert all(view.owner[i] not in range(1, 7) for i in g.moved)
    assert not g.violation(BAND).ok

    view, rules, costs = _inputs(_cluster())
    a = Assignment(view, rules, costs)
    cands = candidates_by_broker(view, rules, costs)
    exchange(a, cands, 0.10, BAND.max_usage, lambda: len(a.moved) <= 3)
    assert not a.moved  # 3 moves do not reach the band: the swaps made are not kept
    exchange(a, cands, 0.10, BAND.max_usage, lambda: len(a.moved) <= 12)
    assert len(a.moved) == 12 and a.violation_free(0.10, BAND.max_usage)


def test_no_work_no_swaps() -> None:
    view, rules, costs = _inputs(_cluster())
    a = Assignment(view, rules, costs)
    exchange(a, candidates_by_broker(view, rules, costs), 0.10, BAND.max_usage, lambda: True,
             work=0)
    assert not a.moved


def test_small_clusters_are_planned_without_swaps_by_default() -> None:
    view, rules, costs = _inputs(_cluster())
    default = solve_greedy(view, rules, costs, BAND, 0.10, Caps()).assignment
    assert not default.moved and not default.violation(BAND).ok  # 31 x 8 pairs: as before
