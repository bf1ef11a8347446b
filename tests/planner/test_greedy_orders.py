"""Greedy's shared sorts, numpy usages and compacted heaps make the very plans of before (perf20).

:class:`lbctl.planner.greedy.Orders` sorts each broker's bundles once per solve (a pass filters
out what it moved), :meth:`_Fill._without` computes a broker's usage without each of its bundles
with numpy at :data:`~lbctl.planner.greedy.VECTOR_MIN` bundles and more, :meth:`_Fill._compact`
drops stale heap entries, and :meth:`_Fill._destination` takes the least loaded broker without
walking the heap when it fits. Each is forced on here (numpy from one bundle, compaction at every
move) on the clusters of ``test_greedy_equality`` and the plans must equal the reference's
(``tests/planner/greedy_reference.py``: greedy before issue 30's changes).
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lbctl.model.cluster import ClusterState
from lbctl.planner import greedy
from lbctl.planner.assignment import Assignment
from lbctl.planner.goals import Targets
from lbctl.planner.load import LoadView
from lbctl.records import replace
from tests.planner import greedy_reference as old
from tests.planner.test_greedy_equality import (
    EXAMPLES,
    _inputs,
    _same_plan,
    caps,
    clusters,
    deep_cluster,
)


@EXAMPLES
@given(clusters, caps, st.sampled_from([0.02, 0.05, 0.1, 0.2]),
       st.sampled_from([0.6, 0.85, 0.95]))
def test_plans_are_unchanged_with_numpy_and_compaction_everywhere(
        state: ClusterState, cap: greedy.Caps, width: float, umax: float) -> None:
    view, rules, costs = _inputs(state)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(greedy, "VECTOR_MIN", 1)
        mp.setattr(greedy, "HEAP_SLACK", 0)
        _same_plan(view, rules, costs, Targets(umax, width), width, cap)


@EXAMPLES
@given(clusters, caps)
def test_levelling_is_unchanged_with_compaction_at_every_move(
        state: ClusterState, cap: greedy.Caps) -> None:
    view, rules, costs = _inputs(state)
    cands = greedy.candidates_by_broker(view, rules, costs)
    new, ref = Assignment(view, rules, costs), Assignment(view, rules, costs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(greedy, "HEAP_SLACK", 0)
        greedy.level(new, cands, cap, greedy.Orders(view, cands))
    old.level(ref, cands, old.Caps(cap.max_moves, cap.max_throughput))
    assert new.moves() == ref.moves()


def _odd_view(view: LoadView, seed: int) -> LoadView:
    """``view`` with drivers and terms the planner may meet at the edges: zero, huge, +inf and
    negative drivers, a resource that does not count (-inf), a negative slope."""
    rng = random.Random(seed)
    drivers = []
    for d in view.drivers:
        pick = rng.random()
        if pick < 0.1:
            d = (0.0, d[1], -0.0)
        elif pick < 0.2:
            d = (d[0] * 1e300, math.inf, d[2])
        elif pick < 0.3:
            d = (-d[0], d[1], d[2] * 3)
        drivers.append(d)
    terms = list(view.terms)
    t = terms[0]
    terms[0] = replace(t, now=(t.now[0], -math.inf, t.now[2]),
                       per_unit=(-t.per_unit[0], t.per_unit[1], t.per_unit[2]))
    return replace(view, drivers=tuple(drivers), terms=tuple(terms))


@pytest.mark.parametrize("seed", range(6))
def test_without_is_usage_if_for_each_bundle(seed: int) -> None:
    """numpy's usages equal ``usage_if(j, i, -1.0)`` bit for bit, also on odd drivers and
    terms, after some moves (a broker's delta not zero), and on a broker's empty list."""
    view, rules, costs = _inputs(deep_cluster(seed, 5, 400, 0.83))
    view = _odd_view(view, seed)
    cands = greedy.candidates_by_broker(view, rules, costs)
    a = Assignment(view, rules, costs)
    a.apply([(i, 1 + k % 4) for k, i in enumerate(cands[0][:7])])
    fill = greedy._Fill(a, cands, 0.0, 1.0, greedy.Caps())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(greedy, "VECTOR_MIN", 1)
        for j in range(len(view.brokers)):
            ids = list(range(len(view.bundles)))  # every bundle, wherever it is
            got = fill._without(j, ids)
            want = [a.usage_if(j, i, -1.0) for i in ids]
            assert [x.hex() for x in got] == [x.hex() for x in want]
        assert fill._without(0, []) == []


def test_a_pass_after_moves_gets_the_sorted_bundles_it_would_sort() -> None:
    """A pass that asks for a broker's sorted bundles after moving some of them gets the shared
    sort less its moves — the list its own sort of the unmoved bundles gives."""
    view, rules, costs = _inputs(deep_cluster(4, 5, 300, 0.83))
    cands = greedy.candidates_by_broker(view, rules, costs)
    orders = greedy.Orders(view, cands)
    first = greedy._Fill(Assignment(view, rules, costs), cands, 0.0, 1.0, greedy.Caps(),
                         orders=orders)
    first._by_driver(0, 0)  # the shared sort made by another pass
    a = Assignment(view, rules, costs)
    a.apply([(i, 2) for i in cands[0][::3]])
    fill = greedy._Fill(a, cands, 0.0, 1.0, greedy.Caps(), orders=orders)
    for r in range(3):
        items = sorted((view.drivers[i][r], i) for i in cands[0] if i not in a.moved)
        assert fill._by_driver(0, r) == ([d for d, _ in items], [i for _, i in items])
    ds, ids = fill._by_driver(0, 0)
    ds.pop(), ids.pop()
    shared = orders.by_driver(0, 0)
    assert shared is not None and len(shared[1]) == len(cands[0])  # (a copy was popped)


def test_a_nan_driver_leaves_the_sort_to_each_pass() -> None:
    """``(nan, i)`` pairs have no order: a broker with a NaN driver is not shared; its pass
    sorts its own bundles, as before."""
    view, rules, costs = _inputs(deep_cluster(5, 4, 120, 0.83))
    cands = greedy.candidates_by_broker(view, rules, costs)
    i0 = cands[0][3]
    drivers = list(view.drivers)
    drivers[i0] = (math.nan, drivers[i0][1], drivers[i0][2])
    view = replace(view, drivers=tuple(drivers))
    orders = greedy.Orders(view, cands)
    assert orders.by_driver(0, 0) is None and orders.by_driver(0, 1) is not None
    a = Assignment(view, rules, costs)
    fill = greedy._Fill(a, cands, 0.0, 1.0, greedy.Caps(), orders=orders)
    items = sorted((view.drivers[i][0], i) for i in cands[0])
    assert fill._by_driver(0, 0) == ([d for d, _ in items], [i for _, i in items])


def test_compaction_keeps_every_current_entry_and_drops_the_stale() -> None:
    view, rules, costs = _inputs(deep_cluster(6, 6, 400, 0.9))
    cands = greedy.candidates_by_broker(view, rules, costs)
    a = Assignment(view, rules, costs)
    fill = greedy._Fill(a, cands, 0.4, 0.5, greedy.Caps())
    for k, i in enumerate(cands[0][:200]):
        fill._move(i, 1 + k % 5)
    n = len(view.brokers)
    for heap in (fill.low, fill.high):
        current = [e for e in heap if e[1] == fill.ver[e[2]]]
        assert sorted(e[2] for e in current) == list(range(n))
        assert len(heap) <= 2 * greedy.HEAP_SLACK * (n + 16) + 2
    assert list(fill._walk(fill.low)) == sorted(range(n), key=lambda j: (a.u[j], j))
