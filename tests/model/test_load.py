"""Broker and bundle load arithmetic.

Ported from Pulsar's ``LocalBrokerDataTest`` (pulsar-common/src/test/java/org/apache/pulsar/policies/
data/loadbalancer/) and checked against ``ResourceUsage.percentUsage``, ``TimeAverageMessageData``,
``BundleData``, ``TimeAverageBrokerData`` and the constants of ``ModularLoadManagerImpl``.
"""

from __future__ import annotations

import math

import pytest

from lbctl.model.load import (
    DEFAULT_BUNDLE_STATS,
    DEFAULT_MESSAGE_RATE,
    DEFAULT_MESSAGE_THROUGHPUT,
    NUM_LONG_SAMPLES,
    NUM_SHORT_SAMPLES,
    BundleData,
    LocalBrokerData,
    NamespaceBundleStats,
    ResourceUsage,
    TimeAverageBrokerData,
    TimeAverageMessageData,
    f32,
    java_max,
)

EPSILON = 0.00001


def _sample_broker() -> LocalBrokerData:
    """The broker of ``LocalBrokerDataTest.testMaxResourceUsage``."""
    return LocalBrokerData(
        cpu=ResourceUsage(1.0, 100.0),
        memory=ResourceUsage(800.0, 200.0),
        directMemory=ResourceUsage(2.0, 100.0),
        bandwidthIn=ResourceUsage(3.0, 100.0),
        bandwidthOut=ResourceUsage(4.0, 100.0),
    )


# --- LocalBrokerDataTest ---------------------------------------------------------------------


def test_max_resource_usage() -> None:
    data = _sample_broker()
    weight = 0.5
    # skips memory usage (400 % of its limit here)
    assert data.max_resource_usage() == pytest.approx(0.04, abs=EPSILON)
    # the deprecated 5-argument form weighs JVM heap too: 400 % * 0.5 / 100
    assert data.max_resource_usage_with_weight(
        weight, weight, weight, weight, memory_weight=weight
    ) == pytest.approx(2.0, abs=EPSILON)
    # the current 4-argument form (cpu, direct memory, bandwidth in, bandwidth out): 4 % * 0.5
    assert data.max_resource_usage_with_weight(weight, weight, weight, weight) == pytest.approx(
        0.02, abs=EPSILON
    )


def test_weighted_usage_picks_the_weighted_max() -> None:
    data = _sample_broker()
    # direct memory weighted 10x beats bandwidth out: 2 % * 10 / 100
    assert data.max_resource_usage_with_weight(1.0, 10.0, 1.0, 1.0) == pytest.approx(0.2)
    # Pulsar's defaults (cpu 1, direct memory 0, bandwidth 1, 1): bandwidth out 4 %
    assert data.max_resource_usage_with_weight(1.0, 0.0, 1.0, 1.0) == pytest.approx(0.04)
    # with memory weight 0 the 5-argument form equals the 4-argument one
    assert data.max_resource_usage_with_weight(1.0, 0.0, 1.0, 1.0, memory_weight=0.0) == (
        data.max_resource_usage_with_weight(1.0, 0.0, 1.0, 1.0)
    )
    # weights multiply percentages, so the result may exceed 1.0
    hot = LocalBrokerData(cpu=ResourceUsage(1120.0, 800.0))
    assert hot.max_resource_usage_with_weight(1.0, 0.0, 1.0, 1.0) == pytest.approx(1.4)


def test_local_broker_data_deserialization() -> None:
    """Memory 614 of 1228 MB: ``(float) usage / (float) limit * 100``."""
    memory = ResourceUsage(614.0, 1228.0)
    assert memory.limit == pytest.approx(1228.0, abs=0.0001)
    assert memory.usage == pytest.approx(614.0, abs=0.0001)
    assert memory.percent == pytest.approx(f32(614.0) / f32(1228.0) * 100, abs=0.0001)
    assert memory.percent == 50.0


# --- ResourceUsage.percentUsage in float32 -----------------------------------------------------


def test_percent_is_float32() -> None:
    usage = ResourceUsage(999, 1000)
    assert usage.percent == 99.9000015258789  # 0.999f * 100f, not the double 99.9
    assert usage.percent != 99.9
    # getMaxResourceUsage widens the float to double before dividing by 100
    assert LocalBrokerData(cpu=usage).max_resource_usage() == 0.999000015258789
    assert f32(usage.percent) == usage.percent


def test_percent_of_zero_or_negative_limit_is_zero() -> None:
    assert ResourceUsage(50, 0).percent == 0.0
    assert ResourceUsage().percent == 0.0  # the no-arg constructor: 0 of 0
    assert ResourceUsage(-1, -1).percent == 0.0  # ResourceUsage.reset()
    assert ResourceUsage(10, -100).percent == 0.0


def test_percent_is_not_clamped() -> None:
    assert ResourceUsage(150, 100).percent == 150.0
    assert ResourceUsage(1000, 800).percent == 125.0
    assert ResourceUsage(-10, 100).percent == -10.0


def test_percent_rounds_operands_to_float_first() -> None:
    # 1/3 in float32 then * 100 in float32
    assert ResourceUsage(1, 3).percent == f32(f32(f32(1.0) / f32(3.0)) * 100.0)
    assert ResourceUsage(1, 3).percent == 33.333335876464844  # the double would be 33.33…33


def test_java_max_ignores_nan() -> None:
    assert java_max(0.1, math.nan, 0.3) == 0.3
    assert java_max(math.nan, math.nan) == -math.inf
    assert java_max() == -math.inf
    assert java_max(-5.0, -2.0) == -2.0


# --- LocalBrokerData.update (aggregates) --------------------------------------------------------


def test_with_stats_sums_and_tracks_gains_and_losses() -> None:
    a = NamespaceBundleStats(msgRateIn=10, msgThroughputIn=1000, msgRateOut=20,
                             msgThroughputOut=2000, consumerCount=1, producerCount=2, topics=3)
    b = NamespaceBundleStats(msgRateIn=1, msgThroughputIn=100, msgRateOut=2,
                             msgThroughputOut=200, consumerCount=4, producerCount=5, topics=6)
    before = LocalBrokerData(bundles=("t/ns/0x00000000_0x80000000", "t/ns/0x80000000_0xffffffff"))
    after = before.with_stats({"t/ns/0x00000000_0x80000000": a, "t/ns2/0x00000000_0xffffffff": b})
    assert (after.msgRateIn, after.msgRateOut) == (11, 22)
    assert (after.msgThroughputIn, after.msgThroughputOut) == (1100, 2200)
    assert (after.numTopics, after.numConsumers, after.numProducers) == (9, 5, 7)
    assert after.numBundles == 2
    assert after.bundles == ("t/ns/0x00000000_0x80000000", "t/ns2/0x00000000_0xffffffff")
    assert after.lastBundleGains == ("t/ns2/0x00000000_0xffffffff",)
    assert after.lastBundleLosses == ("t/ns/0x80000000_0xffffffff",)
    assert after.msg_rate == 33 and after.throughput == 3300
    assert before.numBundles == 0  # values are immutable


# --- TimeAverageMessageData ---------------------------------------------------------------------


def test_defaults_of_unseen_bundles() -> None:
    """``ModularLoadManagerImpl``: 10 short and 1000 long samples, 50 msg/s and 50000 B/s."""
    assert (NUM_SHORT_SAMPLES, NUM_LONG_SAMPLES) == (10, 1000)
    assert DEFAULT_MESSAGE_RATE == 50.0
    assert DEFAULT_MESSAGE_THROUGHPUT == 50000.0  # 50 000 bytes, not 50 KiB
    assert DEFAULT_BUNDLE_STATS.msgRateIn == DEFAULT_BUNDLE_STATS.msgRateOut == 50.0
    assert DEFAULT_BUNDLE_STATS.msgThroughputIn == DEFAULT_BUNDLE_STATS.msgThroughputOut == 50000.0
    data = BundleData.new()
    assert data.shortTermData.maxSamples == 10 and data.longTermData.maxSamples == 1000
    assert data.shortTermData.numSamples == 0 and data.longTermData.numSamples == 0
    assert data.shortTermData.msg_rate == 100.0
    assert data.longTermData.throughput == 100000.0


def test_first_sample_overwrites_defaults() -> None:
    sample = NamespaceBundleStats(msgRateIn=7, msgThroughputIn=700, msgRateOut=3,
                                  msgThroughputOut=300)
    avg = TimeAverageMessageData.with_defaults(10).update(sample)
    assert avg.numSamples == 1
    assert (avg.msgRateIn, avg.msgRateOut, avg.msgThroughputIn, avg.msgThroughputOut) == (
        7, 3, 700, 300
    )


def test_update_is_a_mean_until_the_window_is_full_then_an_ewma() -> None:
    avg = TimeAverageMessageData(3)
    for rate in (10.0, 20.0, 30.0):
        avg = avg.update(NamespaceBundleStats(msgRateIn=rate))
    assert avg.numSamples == 3
    assert avg.msgRateIn == pytest.approx(20.0)  # (10 + 20 + 30) / 3
    avg = avg.update(NamespaceBundleStats(msgRateIn=80.0))
    assert avg.numSamples == 3  # capped at maxSamples
    assert avg.msgRateIn == pytest.approx((2 * 20.0 + 80.0) / 3)  # weight 1/maxSamples


def test_update_rule_exact_values() -> None:
    """``x = ((n - 1) * x + new) / n`` with ``n = min(n + 1, max)``, evaluated like Java."""
    avg = TimeAverageMessageData(10, 10, 1000.0, 0.0, 100.0, 0.0)
    new = avg.update(NamespaceBundleStats(msgThroughputIn=2000.0, msgRateIn=200.0))
    assert new.msgThroughputIn == (9 * 1000.0 + 2000.0) / 10 == 1100.0
    assert new.msgRateIn == 110.0
    assert new.msgThroughputOut == 0.0


# --- BundleData ---------------------------------------------------------------------------------


def test_bundle_data_update_takes_topics_and_both_windows() -> None:
    stats = NamespaceBundleStats(msgRateIn=100, msgThroughputIn=10000, msgRateOut=200,
                                 msgThroughputOut=20000, topics=12)
    data = BundleData.new().update(stats)
    assert data.topics == 12
    for window in (data.shortTermData, data.longTermData):
        assert window.numSamples == 1
        assert window.msg_rate == 300
        assert window.throughput == 30000
    data2 = data.update(NamespaceBundleStats(msgRateIn=0, topics=5))
    assert data2.topics == 5
    assert data2.shortTermData.msgRateIn == 50.0  # (100 + 0) / 2
    assert data2.longTermData.msgRateIn == 50.0
    assert data.shortTermData.numSamples == 1  # the original is unchanged


# --- TimeAverageBrokerData ----------------------------------------------------------------------


def test_time_average_broker_data_sums_windows_and_defaults_missing_bundles() -> None:
    known = BundleData(
        TimeAverageMessageData(10, 1, 1000.0, 2000.0, 10.0, 20.0),
        TimeAverageMessageData(1000, 1, 100.0, 200.0, 1.0, 2.0),
    )
    data = TimeAverageBrokerData.of(["t/ns/a", "t/ns/missing"], {"t/ns/a": known})
    assert data.shortTermMsgThroughputIn == 1000.0 + 50000.0
    assert data.shortTermMsgThroughputOut == 2000.0 + 50000.0
    assert data.shortTermMsgRateIn == 10.0 + 50.0
    assert data.shortTermMsgRateOut == 20.0 + 50.0
    assert data.longTermMsgThroughputIn == 100.0 + 50000.0
    assert data.longTermMsgThroughputOut == 200.0 + 50000.0
    assert data.longTermMsgRateIn == 1.0 + 50.0
    assert data.longTermMsgRateOut == 2.0 + 50.0
    assert TimeAverageBrokerData.of([], {}) == TimeAverageBrokerData()


def test_first_sample_equals_default_then_update() -> None:
    from lbctl.model.load import BundleData, NamespaceBundleStats

    st = NamespaceBundleStats(12.5, 3000.0, 7.25, 1500.0, 1, 2, 3, 0)
    assert BundleData.first_sample(st) == BundleData.new().update(st)


def test_a_negative_zero_usage_keeps_its_sign_whatever_was_asked_before() -> None:
    """Java's ``(float) -0.0 / limit * 100f`` is ``-0.0`` and ``0.0`` stays ``0.0``; the memo keys
    ``0.0`` and ``-0.0`` alike, so a zero must not come back with the other zero's sign."""
    for first, second in ((0.0, -0.0), (-0.0, 0.0)):
        before = ResourceUsage(first, 8.0).percent
        got = ResourceUsage(second, 8.0).percent
        assert math.copysign(1.0, before) == math.copysign(1.0, first)
        assert got == 0.0 and math.copysign(1.0, got) == math.copysign(1.0, second)


def test_a_weighted_usage_asked_again_is_the_memo_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cycle asks for each broker's weighted usage three or four times with the same weights:
    the report is frozen, so the second answer is the first one, not computed again."""
    data = _sample_broker()
    first = data.max_resource_usage_with_weight(1.0, 0.0, 1.0, 1.0)
    five = data.max_resource_usage_with_weight(1.0, 0.0, 1.0, 1.0, memory_weight=0.5)

    def recomputed(self: ResourceUsage) -> float:
        raise AssertionError("a percentage was computed again")

    monkeypatch.setattr(ResourceUsage, "percent", property(recomputed))
    assert data.max_resource_usage_with_weight(1.0, 0.0, 1.0, 1.0) == first == 0.04
    assert data.max_resource_usage_with_weight(1.0, 0.0, 1.0, 1.0, memory_weight=0.5) == five == 2.0
    with pytest.raises(AssertionError, match="computed again"):  # other weights, or a copy
        data.max_resource_usage_with_weight(1.0, 1.0, 1.0, 1.0)
    with pytest.raises(AssertionError, match="computed again"):
        _sample_broker().max_resource_usage_with_weight(1.0, 0.0, 1.0, 1.0)


def test_a_negative_zero_weight_keeps_its_sign_whatever_was_asked_before() -> None:
    """``-0.0`` and ``0.0`` are one dict key, but a percent times ``-0.0`` is ``-0.0`` and
    ``LocalBrokerData.max`` keeps the first zero it meets: a weighted usage asked with one zero
    must not come back with the other zero's sign."""
    data = LocalBrokerData(cpu=ResourceUsage(50.0, 100.0))  # every other percent 0.0
    for first, second in ((0.0, -0.0), (-0.0, 0.0)):
        for weights in ((first, 1.0, 1.0, 1.0), (second, 1.0, 1.0, 1.0)):
            got = data.max_resource_usage_with_weight(*weights)
            assert got == 0.0 and math.copysign(1.0, got) == math.copysign(1.0, weights[0])
        for memory in (first, second):
            got = LocalBrokerData(memory=ResourceUsage(50.0, 100.0)).max_resource_usage_with_weight(
                0.0, 0.0, 0.0, 0.0, memory_weight=memory)
            assert got == 0.0
