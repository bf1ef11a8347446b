"""Properties of every split algorithm, for any bundle and any topics (hypothesis).

Topics are given by their hash, as Pulsar's own tests mock ``getLongHashCode``. Two corner cases are
left out on purpose, because Pulsar itself fails there: a topic hashing exactly to the bundle's
lower bound (topic_count_equally_divide's boundary could equal it) and the hash 0xffffffff
(``NamespaceBundles.findBundle`` indexes past the list); and hashes are distinct within a bundle
(equal hashes are covered by a unit test).
"""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lbctl.model.bundle import FULL_UPPER, BundleRange
from lbctl.model.cluster import TopicStats
from lbctl.strategies.split.base import (
    MB,
    FlowOrQpsLimits,
    SplitOption,
    apply_boundaries,
)
from lbctl.strategies.split.flow_or_qps_equally_divide import FlowOrQpsEquallyDivide
from lbctl.strategies.split.range_equally_divide import RangeEquallyDivide
from lbctl.strategies.split.specified_positions_divide import SpecifiedPositionsDivide
from lbctl.strategies.split.topic_count_equally_divide import TopicCountEquallyDivide

PROFILE = settings(max_examples=150, deadline=None, derandomize=True)  # same cases in CI


@st.composite
def bundles(draw) -> BundleRange:
    lower = draw(st.integers(0, FULL_UPPER - 2))
    closed = draw(st.booleans())
    upper = FULL_UPPER if closed else draw(st.integers(lower + 2, FULL_UPPER))
    return BundleRange(lower, upper)


@st.composite
def bundle_with_hashes(draw, min_size: int = 0, max_size: int = 40):
    b = draw(bundles())
    top = min(b.upper - 1, FULL_UPPER - 1)  # below upper; never 0xffffffff
    if top <= b.lower:
        return b, {}
    room = top - b.lower  # distinct hashes available in (lower, top]
    hashes = draw(st.lists(st.integers(b.lower + 1, top), min_size=min(min_size, room),
                           max_size=min(max_size, room), unique=True))
    return b, {f"topic-{i}": h for i, h in enumerate(hashes)}


def check_children(b: BundleRange, boundaries: tuple[int, ...], hashes: dict[str, int]):
    """Boundaries strictly inside and ascending; children tile the parent; each topic in one."""
    assert all(b.lower < x < b.upper for x in boundaries)
    assert list(boundaries) == sorted(set(boundaries))
    children = apply_boundaries(b, boundaries)
    assert children[0].lower == b.lower and children[-1].upper == b.upper
    assert all(c1.upper == c2.lower for c1, c2 in zip(children, children[1:], strict=False))
    assert sum(c.upper - c.lower for c in children) == b.upper - b.lower
    for h in hashes.values():
        assert sum(1 for c in children if c.contains(h)) == 1
    return children


@PROFILE
@given(bundles())
def test_range_equally_divide(b: BundleRange) -> None:
    res = RangeEquallyDivide().boundaries(SplitOption(b))
    children = check_children(b, res.boundaries, {})
    sizes = [c.upper - c.lower for c in children]
    assert abs(sizes[0] - sizes[1]) <= 1


@PROFILE
@given(bundle_with_hashes())
def test_topic_count_equally_divide(case) -> None:
    b, hashes = case
    res = TopicCountEquallyDivide().boundaries(
        SplitOption(b, tuple(hashes), hash=hashes.__getitem__))
    if len(hashes) <= 1:
        assert res.boundaries is None
        return
    ordered = sorted(hashes.values())
    n = len(ordered)
    start, end = ordered[max(n // 2 - 1, 0)], ordered[n // 2]
    assert res.boundaries == (start + (end - start) // 2,)
    if end - start <= 1:
        # Pulsar's degenerate case: the boundary is the lower middle hash itself, so that topic
        # goes to the upper child (or, at the bundle's lower bound, the split is refused later).
        return
    check_children(b, res.boundaries, hashes)
    below = sum(1 for h in hashes.values() if h < res.boundaries[0])
    assert below == n // 2  # the extra topic of an odd count goes above


@PROFILE
@given(bundle_with_hashes(min_size=2), st.lists(st.integers(0, FULL_UPPER), min_size=1,
                                                 max_size=8, unique=True))
def test_specified_positions_divide(case, positions: list[int]) -> None:
    b, hashes = case
    assume(len(hashes) >= 2)  # a bundle too narrow for two topics is not a case here
    res = SpecifiedPositionsDivide().boundaries(
        SplitOption(b, tuple(hashes), tuple(positions), hash=hashes.__getitem__))
    inside = sorted(p for p in positions if b.lower < p < b.upper)
    if not inside:
        assert res.boundaries is None
        return
    assert list(res.boundaries) == inside
    check_children(b, res.boundaries, hashes)


traffic = st.tuples(st.integers(0, 2000), st.integers(0, 2000), st.integers(0, 300),
                    st.integers(0, 300))


@PROFILE
@given(bundle_with_hashes(min_size=2), st.data(), st.integers(100, 5000), st.integers(1, 500),
       st.integers(0, 50))
def test_flow_or_qps_equally_divide(case, data, max_rate: int, max_mb: int, pct: int) -> None:
    b, hashes = case
    figures = {t: data.draw(traffic) for t in hashes}
    stats = {t: TopicStats(msgRateIn=ri, msgRateOut=ro, msgThroughputIn=ti * MB / 4,
                           msgThroughputOut=to * MB / 4)
             for t, (ri, ro, ti, to) in figures.items()}
    res = FlowOrQpsEquallyDivide().boundaries(SplitOption(
        b, tuple(hashes), topic_stats=stats, limits=FlowOrQpsLimits(max_rate, max_mb, pct),
        hash=hashes.__getitem__))
    if not res.boundaries:
        return
    children = check_children(b, res.boundaries, hashes)
    max_tp = max_mb * MB
    for c in children:
        mine = [stats[t] for t, h in hashes.items() if c.contains(h)]
        busy = [s for s in mine if s.msgRateIn + s.msgRateOut > 0
                or s.msgThroughputIn + s.msgThroughputOut > 0]
        rate = sum(s.msgRateIn + s.msgRateOut for s in busy)
        tp = sum(s.msgThroughputIn + s.msgThroughputOut for s in busy)
        # within the limits, unless the child is a single topic that alone exceeds them
        assert (rate <= max_rate and tp <= max_tp) or len(busy) == 1
