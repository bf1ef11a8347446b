"""The bucketed repair step makes the very plan the full scan made (issue 30, perf19).

``repair._best_step`` reads a source with many movable bundles a bucket at a time
(:mod:`lbctl.planner.repair_index`) and skips the buckets whose bound cannot beat the best change
found. Here the buckets are made tiny (a broker is bucketed from 1 bundle, buckets of 1–4) so
that random clusters, small enough to plan in a test, take the bucketed path at every step; the
moves must equal those of the full scan and of the step before perf17
(``tests/planner/repair_reference.py``), in order. ``bound`` is also checked on its own: no
bundle in a box scores under the box's bound.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lbctl.model.cluster import ClusterState
from lbctl.planner import greedy, repair, repair_index
from lbctl.planner.goals import Targets
from tests.planner import repair_reference as old
from tests.planner.test_greedy_equality import _inputs, caps, clusters, deep_cluster
from tests.planner.test_repair_equality import targets

EXAMPLES = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture()
def tiny_buckets(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(repair_index, "MIN_BUNDLES", 1)
    monkeypatch.setattr(repair_index, "MIN_BUCKET", 1)
    yield


def _plans(state: ClusterState, t: Targets, cap: greedy.Caps, seed: int,
           step: object) -> list[tuple[tuple[int, int], ...]]:
    view, rules, costs = _inputs(state)
    rng = random.Random(seed)
    unc = [rng.choice((0.0, 0.05, 0.3, 1.5)) for _ in view.brokers]
    saved = repair._best_step
    repair._best_step = step  # type: ignore[assignment]
    try:
        start = repair.repair(view, rules, costs, (), t.inside(0.02, t.max_usage), cap)
        runs = [((), None), ((), unc), (start, None), (start, unc)]
        return [start, *(repair.repair(view, rules, costs, m, t, cap, u) for m, u in runs)]
    finally:
        repair._best_step = saved


def _check(state: ClusterState, t: Targets, cap: greedy.Caps, seed: int) -> None:
    bucketed = repair._best_step
    full = _plans(state, t, cap, seed, lambda *a: bucketed(*a[:8], None))  # type: ignore[call-arg]
    before = _plans(state, t, cap, seed, lambda *a: old._best_step(*a[:8]))
    new = _plans(state, t, cap, seed, bucketed)
    assert new == full
    assert new == before


@EXAMPLES
@given(clusters, targets, caps, st.integers(0, 1000), st.integers(1, 4))
def test_bucketed_step_makes_the_full_scans_plan(state: ClusterState, t: Targets,
                                                 cap: greedy.Caps, seed: int,
                                                 size: int) -> None:
    saved = repair_index.MIN_BUNDLES, repair_index.MIN_BUCKET
    repair_index.MIN_BUNDLES, repair_index.MIN_BUCKET = 1, size
    try:
        _check(state, t, cap, seed)
    finally:
        repair_index.MIN_BUNDLES, repair_index.MIN_BUCKET = saved


@pytest.mark.parametrize("seed", range(6))
def test_deep_broker_plans_equal_and_buckets_are_skipped(seed: int,
                                                         tiny_buckets: None) -> None:
    """The growth benchmark's shape, small: the plans are equal, and the steps read fewer than
    half of the bucketed bundles (every one of them without the bounds)."""
    state = deep_cluster(seed, 8, 600, 5 / 6)
    t = Targets(0.85, 0.05)
    _check(state, t, greedy.Caps(None, None), seed)
    view, rules, costs = _inputs(state)
    read, held = [0], [0]
    orig = repair._bucketed

    def counting(weigh: Any, groups: Any, buckets: Any, tail: Any,
                 *rest: Any) -> Iterator[int]:
        held[0] += len(tail) + sum(len(b.ids) for b in buckets)
        for i in orig(weigh, groups, buckets, tail, *rest):
            read[0] += 1
            yield i

    repair_index.MIN_BUCKET = 16
    repair._bucketed = counting  # type: ignore[assignment]
    try:
        repair.repair(view, rules, costs, (), t, greedy.Caps(None, None))
    finally:
        repair._bucketed = orig
    assert held[0] > 0
    assert read[0] < held[0] / 2, (read, held)


boxes = st.lists(st.tuples(*(st.floats(0, 1e4) for _ in range(3))), min_size=1, max_size=8)
terms = st.tuples(st.floats(-2, 2), st.floats(-1e-3, 1e-2), st.floats(-1e4, 1e4))
side = st.tuples(st.floats(-1, 2), st.lists(terms, min_size=0, max_size=3),
                 st.floats(0, 2), st.floats(-1, 3), st.floats(-1, 3))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(boxes, side, side, st.one_of(st.none(), st.floats(-1, 3)),
       st.one_of(st.none(), st.floats(-1, 3)), st.floats(0, 2), st.floats(0, 1),
       st.floats(-1, 3), st.floats(0, 4), st.floats(0, 4))
def test_no_bundle_scores_under_its_buckets_bound(
        ds: list[tuple[float, float, float]],
        s: tuple[float, list[tuple[float, float, float]], float, float, float],
        d: tuple[float, list[tuple[float, float, float]], float, float, float],
        other_hi: float | None, other_lo: float | None, max_usage: float, width: float,
        mean: float, now_s: float, now_d: float) -> None:
    """The step's own arithmetic (``repair._best_step``, band goal) on each bundle of a box is
    never lexicographically under the box's bound."""
    b = repair_index.Bucket(list(range(len(ds))), ds, [1.0] * len(ds), [1] * len(ds))
    res_s, res_d = list(range(len(s[1]))), list(range(len(d[1])))
    sides = ((s[0], tuple(s[1]), res_s, *s[2:]), (d[0], tuple(d[1]), res_d, *d[2:]))
    lb = repair_index.bound(b, *sides, other_hi, other_lo, max_usage, width, mean, now_s,
                            now_d)
    for x in ds:
        us = s[0]
        for r, (x0, per, y) in zip(res_s, s[1], strict=True):
            us = max(us, x0 + per * (y - x[r]))
        ud = d[0]
        for r, (x0, per, y) in zip(res_d, d[1], strict=True):
            ud = max(ud, x0 + per * (y + x[r]))
        sp_s = s[2] * min(abs(us - s[3]), max(0.0, us - s[4]))
        sp_d = d[2] * min(abs(ud - d[3]), max(0.0, ud - d[4]))
        hs, ls = us + sp_s, us - sp_s
        hi = max(hs, ud + sp_d, hs if other_hi is None else other_hi)
        lo = min(ls, ud - sp_d, ls if other_lo is None else other_lo)
        cap, band = max(0.0, hi - max_usage), max(0.0, hi - lo - width)
        spread = (us - mean) ** 2 + (ud - mean) ** 2 - now_s - now_d
        key = (round(cap, 8), round(band, 8), round(spread, 10))
        assert lb <= key, (lb, key)
        assert all(not math.isnan(v) for v in lb)


@pytest.mark.parametrize("limit", [70, 90, 110, 140])
@pytest.mark.parametrize("seed", range(3))
def test_destinations_near_the_topic_limit(seed: int, limit: int, tiny_buckets: None) -> None:
    """A step reads of a bucket only the bundles the destination has topic room for: the
    lightest brokers near ``loadBalancerBrokerMaxTopics`` take some of the deep broker's bundles
    and refuse the rest; the plans are still the full scan's."""
    state = deep_cluster(seed, 8, 600, 5 / 6, config={"loadBalancerBrokerMaxTopics": limit})
    for t in (Targets(0.85, 0.05), Targets(0.6, 0.02)):
        _check(state, t, greedy.Caps(None, None), seed)
