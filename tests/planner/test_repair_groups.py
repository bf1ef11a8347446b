"""The repair step weighs a deep source's buckets a group at a time (perf20): the bundles it
reads, in their order, are those of weighing every bucket and sorting them (perf19's step).

:class:`lbctl.planner.repair_index.Group` boxes consecutive buckets; :func:`repair._bucketed`
keeps a heap of groups and weighed buckets. The checks: a group's bound is never above one of
its buckets' (the heap's order rests on it); the bundles read equal those of the sort over
all buckets for any keys (ties everywhere) and any best change found on the way; and whole
repair plans with groups of 1, 2 and 3 buckets equal the full scan and the pre-perf17 step.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lbctl.model.cluster import ClusterState
from lbctl.planner import greedy, repair, repair_index
from lbctl.planner.goals import Targets
from lbctl.planner.repair_index import Bucket, Group
from tests.planner.test_greedy_equality import caps, clusters, deep_cluster
from tests.planner.test_repair_equality import targets
from tests.planner.test_repair_index import _check

Key = tuple[float, float, float]


def _sorted_reading(keys: list[Key], buckets: list[Bucket], tail: list[int], here: Key,
                    best: Callable[[], Any], room: int) -> Iterator[int]:
    """perf19's reading: every bucket weighed, sorted by (bound, -cmax, bucket)."""
    yield from list(tail)
    bounds = sorted((keys[k], -b.cmax, k) for k, b in enumerate(buckets) if b.ids)
    for lb, c, k in bounds:
        if not lb < here:
            return
        b = best()
        if b is not None and (lb, c) > (b[0], b[1]):
            return
        bk = buckets[k]
        yield from bk.ids[:bisect_right(bk.tops, room)]


part = st.sampled_from([0.0, 0.5, 1.0, 2.0])
keys = st.tuples(part, part, part)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.tuples(keys, st.sampled_from([0.5, 1.0, 3.0]), st.integers(0, 3)),
                min_size=1, max_size=14),
       st.integers(1, 5), keys, st.integers(0, 30), keys, st.sampled_from([-1.0, -2.0, 0.0]),
       st.integers(0, 3), st.lists(st.integers(0, 3), max_size=2))
def test_groups_read_the_bundles_the_sort_reads(
        spec: list[tuple[Key, float, int]], size: int, here: Key, after: int, best_key: Key,
        best_cost: float, room: int, tail_spec: list[int]) -> None:
    """Buckets with any keys (many equal) and costs, some empty; groups of ``size`` whose key
    lies under their buckets'; the best change appears after ``after`` bundles are read."""
    drivers = [(1.0, 1.0, 1.0)] * 200
    buckets = []
    for k, (_, cmax, n) in enumerate(spec):
        ids = [10 * k + m for m in range(n)]
        b = Bucket(ids or [199], drivers, [cmax] * 200, [m % 3 for m in range(200)])
        if not ids:
            b.ids, b.tops = [], []
        b.cmax = cmax
        buckets.append(b)
    groups = [Group(list(range(k, min(k + size, len(buckets)))), buckets)
              for k in range(0, len(buckets), size)]
    bucket_key = {id(b): spec[k][0] for k, b in enumerate(buckets)}
    group_key = {id(g): tuple(min(spec[m][0][r] for m in g.members) for r in range(3))
                 for g in groups}

    def weigh(box: Bucket | Group) -> Key:
        return bucket_key.get(id(box)) or group_key[id(box)]  # type: ignore[return-value]

    read: list[int] = []

    def best() -> Any:
        return (best_key, best_cost) if len(read) >= after else None

    tail = [150 + t for t in tail_spec]
    want: list[int] = []
    for i in _sorted_reading([x[0] for x in spec], buckets, tail, here, best, room):
        want.append(i)
        read.append(i)
    read.clear()
    for i in repair._bucketed(weigh, groups, buckets, tail, here, best, room):
        read.append(i)
    assert read == want


boxes = st.lists(st.lists(st.tuples(*(st.floats(0, 1e4) for _ in range(3))), min_size=1,
                          max_size=4), min_size=1, max_size=5)
terms = st.tuples(st.floats(-2, 2), st.floats(-1e-3, 1e-2), st.floats(-1e4, 1e4))
side = st.tuples(st.floats(-1, 2), st.lists(terms, min_size=0, max_size=3),
                 st.floats(0, 2), st.floats(-1, 3), st.floats(-1, 3))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(boxes, side, side, st.one_of(st.none(), st.floats(-1, 3)),
       st.one_of(st.none(), st.floats(-1, 3)), st.floats(0, 2), st.floats(0, 1),
       st.floats(-1, 3), st.floats(0, 4), st.floats(0, 4))
def test_a_groups_bound_is_never_above_its_buckets(
        parts: list[list[tuple[float, float, float]]],
        s: tuple[float, list[tuple[float, float, float]], float, float, float],
        d: tuple[float, list[tuple[float, float, float]], float, float, float],
        other_hi: float | None, other_lo: float | None, max_usage: float, width: float,
        mean: float, now_s: float, now_d: float) -> None:
    drivers = [x for p in parts for x in p]
    buckets, k = [], 0
    for p in parts:
        buckets.append(Bucket(list(range(k, k + len(p))), drivers, [1.0] * len(drivers),
                              [1] * len(drivers)))
        k += len(p)
    group = Group(list(range(len(buckets))), buckets)
    sides = ((s[0], tuple(s[1]), list(range(len(s[1]))), *s[2:]),
             (d[0], tuple(d[1]), list(range(len(d[1]))), *d[2:]))
    args = (*sides, other_hi, other_lo, max_usage, width, mean, now_s, now_d)
    g = repair_index.bound(group, *args)
    for b in buckets:
        assert g <= repair_index.bound(b, *args)
    assert group.cmax == max(b.cmax for b in buckets)


def test_a_group_with_a_non_finite_bucket_is_read() -> None:
    drivers = [(1.0, 2.0, 3.0), (math.inf, 1.0, 1.0)]
    buckets = [Bucket([0], drivers, [1.0, 1.0], [1, 1]), Bucket([1], drivers, [1.0, 1.0], [1, 1])]
    assert not Group([0, 1], buckets).exact and Group([0], buckets).exact


@pytest.mark.parametrize("group", [1, 2, 3])
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(clusters, targets, caps, st.integers(0, 1000), st.integers(1, 4))
def test_grouped_step_makes_the_full_scans_plan(group: int, state: ClusterState, t: Targets,
                                                cap: greedy.Caps, seed: int,
                                                size: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(repair_index, "MIN_BUNDLES", 1)
        mp.setattr(repair_index, "MIN_BUCKET", size)
        mp.setattr(repair_index, "GROUP_MIN", group)
        _check(state, t, cap, seed)


@pytest.mark.parametrize("seed", range(4))
def test_deep_broker_in_groups_weighs_fewer_buckets(seed: int) -> None:
    """The growth benchmark's shape, small, buckets of 8 in groups of 4: plans equal, and
    fewer bounds drawn than the buckets' (3 pairs x every bucket per step) by a third."""
    state = deep_cluster(seed, 8, 900, 5 / 6)
    t = Targets(0.85, 0.05)
    drawn = [0]
    orig = repair_index.bound

    def counted(*a: Any, **k: Any) -> Any:
        drawn[0] += 1
        return orig(*a, **k)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(repair_index, "MIN_BUNDLES", 1)
        mp.setattr(repair_index, "MIN_BUCKET", 8)
        mp.setattr(repair_index, "GROUP_MIN", 4)
        mp.setattr(repair, "bound", counted)
        _check(state, t, greedy.Caps(None, None), seed)
        grouped = drawn[0]
        mp.setattr(repair_index, "GROUP_MIN", 10_000)  # one group: every bucket weighed
        drawn[0] = 0
        _check(state, t, greedy.Caps(None, None), seed)
    assert grouped > 0
    assert grouped < drawn[0] * 2 / 3, (grouped, drawn[0])


def test_the_costlier_bucket_of_a_group_comes_first_on_equal_bounds() -> None:
    """Equal bounds: buckets come by their largest cost, highest first, across groups — a
    group carries its buckets' largest cost, so it is opened before a cheaper bucket of
    another group is read."""
    drivers = [(1.0, 1.0, 1.0)] * 8
    buckets = [Bucket([k], drivers, [1.0] * 8, [0] * 8) for k in range(4)]
    for b, c in zip(buckets, (1.0, 0.5, 3.0, 0.25), strict=True):
        b.cmax = c
    groups = [Group([0, 1], buckets), Group([2, 3], buckets)]
    zero = (0.0, 0.0, 0.0)
    got = list(repair._bucketed(lambda box: zero, groups, buckets, [], (1.0, 1.0, 1.0),
                                lambda: None, 5))
    assert got == [2, 0, 1, 3]
    assert got == list(_sorted_reading([zero] * 4, buckets, [], (1.0, 1.0, 1.0),
                                       lambda: None, 5))
