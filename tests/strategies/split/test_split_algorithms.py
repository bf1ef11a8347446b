"""The four split algorithms, ported from Pulsar's tests (``org.apache.pulsar.common.naming``):
``RangeEquallyDivideBundleSplitAlgorithmTest``, ``TopicCountEquallyDivideBundleSplitAlgorithmTest``,
``SpecifiedPositionsBundleSplitAlgorithmTest``, ``FlowOrQpsEquallyDivideBundleSplitAlgorithmTest``,
``NamespaceBundleSplitAlgorithmTest``; and the examples of Pulsar's documentation
("Bundle splitting algorithms"), with the source's arithmetic where the documentation's differs.
"""

from __future__ import annotations

import zlib

import pytest

from lbctl.config import Settings
from lbctl.explain.words import text
from lbctl.model.bundle import FULL_RANGE, BundleRange
from lbctl.model.cluster import TopicStats
from lbctl.strategies.builtin import SPLIT, algorithm_by_name, algorithm_of
from lbctl.strategies.split.base import MB, FlowOrQpsLimits, SplitError, SplitOption, option_for
from lbctl.strategies.split.flow_or_qps_equally_divide import FlowOrQpsEquallyDivide
from lbctl.strategies.split.range_equally_divide import RangeEquallyDivide
from lbctl.strategies.split.specified_positions_divide import SpecifiedPositionsDivide
from lbctl.strategies.split.topic_count_equally_divide import TopicCountEquallyDivide


def crc(s: str) -> int:
    return zlib.crc32(s.encode()) & 0xFFFFFFFF


def stats(rate_in: float, rate_out: float, tp_in: float, tp_out: float) -> TopicStats:
    return TopicStats(msgRateIn=rate_in, msgRateOut=rate_out, msgThroughputIn=tp_in,
                      msgThroughputOut=tp_out)


# --- NamespaceBundleSplitAlgorithmTest ------------------------------------------------------------
def test_of_method_return_correct_value() -> None:
    assert algorithm_of(None) is None
    assert algorithm_of("whatever") is None
    assert isinstance(algorithm_of("range_equally_divide"), RangeEquallyDivide)
    assert isinstance(algorithm_of("topic_count_equally_divide"), TopicCountEquallyDivide)
    assert isinstance(algorithm_of("specified_positions_divide"), SpecifiedPositionsDivide)
    assert isinstance(algorithm_of("flow_or_qps_equally_divide"), FlowOrQpsEquallyDivide)
    assert algorithm_of("Range_Equally_Divide") is None  # Java's switch is case-sensitive


def test_registry_has_pulsars_four_names() -> None:
    assert sorted(SPLIT.names()) == ["flow_or_qps_equally_divide", "range_equally_divide",
                                     "specified_positions_divide", "topic_count_equally_divide"]


def test_algorithm_by_name_falls_back_to_default_then_range() -> None:
    """``NamespaceService.getNamespaceBundleSplitAlgorithmByName``."""
    s = Settings.defaults().with_values(defaultNamespaceBundleSplitAlgorithm="topic_count_equally_divide")
    assert algorithm_by_name("range_equally_divide", s).name == "range_equally_divide"
    assert algorithm_by_name(None, s).name == "topic_count_equally_divide"
    assert algorithm_by_name("nope", s).name == "topic_count_equally_divide"
    bad = Settings.defaults().with_values(defaultNamespaceBundleSplitAlgorithm="nope")
    assert algorithm_by_name(None, bad).name == "range_equally_divide"


# --- RangeEquallyDivideBundleSplitAlgorithmTest -------------------------------------------------
def test_range_equally_divide_returns_correct_result() -> None:
    lower, upper = 10, 0xFFFFFFFF
    res = RangeEquallyDivide().boundaries(SplitOption(BundleRange(lower, upper)))
    assert res.boundaries == (lower + (upper - lower) // 2,)


def test_range_equally_divide_full_range_is_0x7fffffff() -> None:
    assert RangeEquallyDivide().boundaries(SplitOption(FULL_RANGE)).hex() == ["0x7fffffff"]


def test_range_equally_divide_documentation_example() -> None:
    """Docs: [0x00000000, 0x80000000) splits at 0x40000000."""
    res = RangeEquallyDivide().boundaries(SplitOption(BundleRange(0, 0x80000000)))
    assert res.hex() == ["0x40000000"]


# --- TopicCountEquallyDivideBundleSplitAlgorithmTest --------------------------------------------
def test_topic_count_topics_size_less_than_1() -> None:
    res = TopicCountEquallyDivide().boundaries(SplitOption(FULL_RANGE, ("a",)))
    assert res.boundaries is None
    assert TopicCountEquallyDivide().boundaries(SplitOption(FULL_RANGE, ())).boundaries is None


def test_topic_count_algorithm_return_correct_result() -> None:
    topics = ("a", "b", "c")
    hashes = sorted(crc(t) for t in topics)
    start, end = hashes[max(len(hashes) // 2 - 1, 0)], hashes[len(hashes) // 2]
    res = TopicCountEquallyDivide().boundaries(SplitOption(FULL_RANGE, topics))
    assert res.boundaries == (start + (end - start) // 2,)
    # odd count: one topic below, two above
    assert sum(1 for h in hashes if h < res.boundaries[0]) == 1


def test_topic_count_documentation_example() -> None:
    """Docs: six topics in [0x00000000, 0x80000000); the docs place the cut at 0x50000000 ("the
    left and right sides the same"); the source takes the middle of the two middle hashes."""
    hashes = {"topic1": 0x10000000, "topic2": 0x20000000, "topic3": 0x35000000,
              "topic4": 0x65000000, "topic5": 0x70000000, "topic6": 0x75000000}
    res = TopicCountEquallyDivide().boundaries(
        SplitOption(BundleRange(0, 0x80000000), tuple(hashes), hash=hashes.__getitem__))
    assert res.hex() == ["0x4d000000"]
    assert sum(1 for h in hashes.values() if h < res.boundaries[0]) == 3


# --- SpecifiedPositionsBundleSplitAlgorithmTest ---------------------------------------------------
def test_specified_total_topics_size_less_than_1() -> None:
    res = SpecifiedPositionsDivide().boundaries(SplitOption(FULL_RANGE, ("a",), positions=(1, 2)))
    assert res.boundaries is None


@pytest.mark.parametrize("positions", [None, ()])
def test_specified_positions_less_than_1(positions) -> None:
    with pytest.raises(SplitError, match="must not be empty"):
        SpecifiedPositionsDivide().boundaries(SplitOption(FULL_RANGE, ("a", "b"), positions))


def test_specified_algorithm_return_correct_result() -> None:
    positions = (-1, 0, 1, 100, 200, 500, 800, 1000, 1100)
    res = SpecifiedPositionsDivide().boundaries(
        SplitOption(BundleRange(1, 1000), ("topic", "topic2"), positions))
    assert res.boundaries == (100, 200, 500, 800)


def test_specified_positions_are_sorted_and_duplicates_kept() -> None:
    res = SpecifiedPositionsDivide().boundaries(
        SplitOption(FULL_RANGE, ("a", "b"), (0x60000000, 0x20000000, 0x60000000)))
    assert res.boundaries == (0x20000000, 0x60000000, 0x60000000)


def test_specified_documentation_example() -> None:
    """Docs: two large topics at 0x30000000 and 0x35000000 in [0, 0x40000000): cut at 0x33000000."""
    res = SpecifiedPositionsDivide().boundaries(
        SplitOption(BundleRange(0, 0x40000000), ("t1", "t2"), (0x33000000,)))
    assert res.hex() == ["0x33000000"]


# --- FlowOrQpsEquallyDivideBundleSplitAlgorithmTest ---------------------------------------------
def _flow(topics, topic_stats, rate=1010, mbytes=100, pct=10, bundle=FULL_RANGE, hash=crc):
    return FlowOrQpsEquallyDivide().boundaries(SplitOption(
        bundle, tuple(topics), topic_stats=topic_stats,
        limits=FlowOrQpsLimits(rate, mbytes, pct), hash=hash))


def test_split_bundle_by_flow_or_qps() -> None:
    topics, st = [], {}
    for i in range(1, 6):
        for j in range(20):
            tp = f"persistent://test-tenant1/test-namespace1/test{i}-partition-{j}"
            topics.append(tp)
            st[tp] = stats(24.5, 25, 1000, 1000)
    for i in range(6, 13):
        for j in range(20):
            tp = f"persistent://test-tenant1/test-namespace1/test{i}-partition-{j}"
            topics.append(tp)
            st[tp] = stats(25.5, 25, 1000, 1000)
    tp = "persistent://test-tenant1/test-namespace1/test695-partition-0"
    topics.append(tp)
    st[tp] = stats(25, 35, 1000, 1000)

    res = _flow(topics, st)
    assert res.boundaries
    hashes = sorted(crc(t) for t in topics)
    rate = {crc(t): st[t].msgRateIn + st[t].msgRateOut for t in topics}
    thr = {crc(t): st[t].msgThroughputIn + st[t].msgThroughputOut for t in topics}
    i = 0
    for end in res.boundaries:
        acc_rate = acc_tp = 0.0
        while hashes[i] < end:
            acc_rate += rate[hashes[i]]
            acc_tp += thr[hashes[i]]
            i += 1
        assert acc_rate < 1010
        assert acc_tp < 100 * MB


def test_first_position_is_over_load() -> None:
    topics = [f"persistent://test-tenant1/test-namespace1/test-partition-{i}" for i in range(5)]
    by_hash = sorted(topics, key=crc)
    st = {by_hash[0]: stats(1000, 1000, 1000, 1000)}
    for t in by_hash[1:]:
        st[t] = stats(24.5, 25, 1000, 1000)
    res = _flow(topics, st)
    start, end = crc(by_hash[0]), crc(by_hash[1])
    assert res.boundaries[0] == start + (end - start) // 2 + 1


DOC_HASHES = {"t1": 0x10000000, "t2": 0x15000000, "t3": 0x24000000,
              "t4": 0x39000000, "t5": 0x58000000, "t6": 0x76000000}
DOC_STATS = {t: stats(100.0 * i, 0, 10.0 * i * MB, 0) for i, t in enumerate(DOC_HASHES, 1)}


@pytest.mark.parametrize(("rate", "mbytes", "expected"), [
    # Case 1: the rate limit decides. The docs print 0x19500000, 31500000, 48500000 and 0x67000000;
    # the true midpoints are 0x1c800000, 0x2e800000, 0x48800000, 0x67000000, and the source adds 1.
    (450, 200, ["0x1c800001", "0x2e800001", "0x48800001", "0x67000001"]),
    # Case 2: the throughput limit decides (docs: 0x31500000 and 0x67000000).
    (1900, 90, ["0x2e800001", "0x67000001"]),
    # Case 3: both limits at once (docs: 0x48500000).
    (1100, 110, ["0x48800001"]),
])
def test_flow_or_qps_documentation_example(rate: int, mbytes: int, expected: list[str]) -> None:
    res = _flow(DOC_HASHES, DOC_STATS, rate, mbytes, bundle=BundleRange(0, 0x80000000),
                hash=DOC_HASHES.__getitem__)
    assert res.hex() == expected


def test_flow_or_qps_needs_two_topics_with_traffic() -> None:
    st = {"t1": stats(5000, 0, 0, 0), "t2": stats(0, 0, 0, 0)}
    assert _flow(["t1"], st).boundaries is None  # one topic
    res = _flow(["t1", "t2", "t3"], st)  # t2 idle, t3 without stats
    assert res.boundaries is None and "1 of the bundle's 3 topics" in text(res.why)


def test_flow_or_qps_below_limits_plus_margin_does_not_split() -> None:
    """The trigger is 110 % of the limits: 1100 msg/s with a 1010 limit is below 1111."""
    st = {"a": stats(550, 0, 0, 0), "b": stats(550, 0, 0, 0)}
    assert _flow(["a", "b"], st).boundaries is None
    st = {"a": stats(560, 0, 0, 0), "b": stats(560, 0, 0, 0)}
    assert _flow(["a", "b"], st).boundaries is not None


def test_flow_or_qps_equal_hashes_share_figures() -> None:
    """Two topics with one hash: the map keeps the last figures, the hash list keeps both."""
    hashes = {"a": 0x100, "b": 0x100, "c": 0x900}
    st = {"a": stats(2000, 0, 0, 0), "b": stats(10, 0, 0, 0), "c": stats(10, 0, 0, 0)}
    res = _flow(hashes, st, rate=1000, hash=hashes.__getitem__)
    # totals count a (2000) but the walk sees b's 10 at 0x100 twice: no cut between them,
    # and 10 + 10 + 10 never exceeds 1000
    assert res.boundaries is None


def test_flow_or_qps_without_flow_option_fails_like_the_broker() -> None:
    """Pulsar builds the flow-or-QPS option only when the default algorithm is flow_or_qps."""
    settings = Settings.defaults()
    opt = option_for(FULL_RANGE, ["a", "b"], {"a": stats(1, 1, 1, 1)}, settings)
    assert opt.topic_stats is None
    with pytest.raises(SplitError, match="defaultNamespaceBundleSplitAlgorithm"):
        FlowOrQpsEquallyDivide().boundaries(opt)
    flow = settings.with_values(defaultNamespaceBundleSplitAlgorithm="flow_or_qps_equally_divide",
                                loadBalancerNamespaceBundleMaxMsgRate=450)
    opt = option_for(FULL_RANGE, ["a", "b"], {"a": stats(1, 1, 1, 1)}, flow)
    assert opt.topic_stats == {"a": stats(1, 1, 1, 1)}
    assert opt.limits == FlowOrQpsLimits(450, 100, 10)
