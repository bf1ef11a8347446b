"""Pulsar's ``DefaultNamespaceBundleSplitStrategyTest``: hit counts, the per-cycle maximum, the
reasons Topics / Sessions / MsgRate / Bandwidth, and the failure paths."""

from __future__ import annotations

import pytest

from lbctl.config import Settings
from lbctl.model.decision import Label, Reason
from lbctl.model.load import NamespaceBundleStats
from lbctl.records import replace
from lbctl.strategies.split.default_namespace_bundle_split_strategy import find_bundles_to_split

BUNDLE1 = "tenant/namespace/0x00000000_0xffffffff"
BUNDLE2 = "tenant/namespace/0x00000000_0x0fffffff"
CHILDREN1 = ("tenant/namespace/0x00000000_0x7fffffff", "tenant/namespace/0x7fffffff_0xffffffff")
CHILDREN2 = ("tenant/namespace/0x00000000_0x07ffffff", "tenant/namespace/0x07ffffff_0x0fffffff")
BROKER = "broker-1"

CONF = Settings.defaults().with_values(
    loadBalancerDebugModeEnabled=True, loadBalancerNamespaceMaximumBundles=100,
    loadBalancerNamespaceBundleMaxTopics=100, loadBalancerNamespaceBundleMaxSessions=100,
    loadBalancerNamespaceBundleMaxMsgRate=100, loadBalancerNamespaceBundleMaxBandwidthMbytes=100,
    loadBalancerMaxNumberOfBundlesToSplitPerCycle=1,
    loadBalancerNamespaceBundleSplitConditionHitCountThreshold=3)


def stats(**kw):
    base = NamespaceBundleStats(topics=5)
    s = replace(base, **kw)
    return [(BUNDLE1, s), (BUNDLE2, s)]


def run(bundle_stats, conf=CONF, hits=None, count=lambda ns: 1, **kw):
    return find_bundles_to_split(BROKER, bundle_stats, conf, hits or {}, count, **kw)


HOT = {"msgRateIn": 101.0}
T0 = CONF.with_values(loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0)


def test_namespace_bundle_split_condition_threshold():
    assert len(run(stats(**HOT), T0).decisions) == 1


def test_not_enough_topics():
    assert run(stats(topics=1, **HOT), T0).decisions == ()


def test_namespace_maximum_bundles():
    assert run(stats(**HOT), T0, count=lambda ns: 100).decisions == ()


def test_empty_bundle_stats():
    assert run([], T0).decisions == ()


def test_no_bundle_owner():
    r = run(stats(**HOT), T0, is_owner=lambda b: False)
    assert r.decisions == () and r.failures == 0


def test_error():
    def boom(ns):
        raise RuntimeError("metadata store down")

    r = run(stats(**HOT), T0, count=boom)
    assert r.decisions == () and r.failures == 2


def test_splitting_bundle():
    r = run(stats(**HOT), T0, splitting={BUNDLE1: "0x00000000_0xFFFFFFFF".lower()})
    assert r.decisions == () and r.failures == 0


@pytest.mark.parametrize("fields, reason", [
    ({"msgRateOut": 51.0, "msgRateIn": 51.0}, Reason.MSG_RATE),
    ({"topics": 101}, Reason.TOPICS),
    ({"producerCount": 51, "consumerCount": 51}, Reason.SESSIONS),
    ({"msgThroughputOut": 50 * 1024 * 1024 + 1, "msgThroughputIn": 50 * 1024 * 1024 + 1},
     Reason.BANDWIDTH),
])
def test_max_limits(fields, reason):
    hits: dict = {}
    for i in range(3 + 2):
        r = run(stats(**fields), hits=hits)
        hits = dict(r.hit_counts)
        got = [(d.bundle, d.broker, d.children, d.label, d.reason) for d in r.decisions]
        if i == 3:
            assert got == [(BUNDLE1, BROKER, CHILDREN1, Label.SUCCESS, reason)]
        elif i == 4:
            assert got == [(BUNDLE2, BROKER, CHILDREN2, Label.SUCCESS, reason)]
        else:
            assert got == []
        assert r.failures == 0


def test_unmodelled_algorithm_is_a_failure():
    conf = T0.with_values(defaultNamespaceBundleSplitAlgorithm="topic_count_equally_divide")
    r = run(stats(**HOT), conf)
    assert r.decisions == () and r.failures == 2


@pytest.mark.parametrize(("fields", "conf", "reason"), [
    # DefaultNamespaceBundleSplitStrategyImpl (apache/pulsar master 2025): `long maxBundleBandwidth
    # = getLoadBalancerNamespaceBundleMaxBandwidthMbytes() * LoadManagerShared.MIBI` in int, so
    # 2048 MB is -2^31 B/s and an idle bundle exceeds it; `int totalSessionCount` wraps
    ({}, T0.with_values(loadBalancerNamespaceBundleMaxBandwidthMbytes=2048), Reason.BANDWIDTH),
    ({}, T0.with_values(loadBalancerNamespaceBundleMaxBandwidthMbytes=4096), None),
    ({"msgThroughputIn": 1.0}, T0.with_values(loadBalancerNamespaceBundleMaxBandwidthMbytes=4096),
     Reason.BANDWIDTH),
    ({"consumerCount": 2**31 - 1, "producerCount": 1}, T0, None),
])
def test_java_int_limits(fields, conf, reason):
    got = [d.reason for d in run(stats(**fields), conf).decisions]
    assert got == ([reason] if reason else [])


@pytest.mark.parametrize(("fields", "reason", "value"), [
    ({"msgRateOut": 51.0, "msgRateIn": 51.0}, Reason.MSG_RATE, 102.0),
    ({"topics": 101}, Reason.TOPICS, 101),
    ({"producerCount": 51, "consumerCount": 52}, Reason.SESSIONS, 103),
    ({"msgThroughputIn": 101 * 1024 * 1024}, Reason.BANDWIDTH, 101),
])
def test_decision_keeps_the_condition_that_fired(fields, reason, value):
    """The figure and the limit ``findBundlesToSplit`` logs ("Splitting bundle: ... Message Rate:
    102.00/100 (msgs/s)") stay on the decision (and its check) for recommend and explain."""
    from lbctl.explain.words.split import split_threshold

    r = run(stats(**fields), T0)
    (d,) = r.decisions
    f = d.figures
    assert f is not None and f.reason is reason and f.limit == 100
    assert split_threshold(f)[1] == value
    assert r.checks[0].why.figures == f


def test_wrapped_bandwidth_limit_reads_as_pulsar_logs_it():
    """2048 MB * MIBI wraps to -2^31 in ``int``; Pulsar logs ``maxBundleBandwidth / MIBI``."""
    conf = T0.with_values(loadBalancerNamespaceBundleMaxBandwidthMbytes=2048)
    (d,) = run(stats(), conf).decisions
    assert d.figures is not None and d.figures.limit == -2048


def test_waiting_bundle_over_a_limit_keeps_its_figures_idle_one_none():
    hot = run(stats(**HOT)).checks[0].why
    assert hot.code == "waiting" and hot.figures is not None and hot.figures.msg_rate == 101.0
    idle = run(stats()).checks[0].why
    assert idle.code == "waiting" and idle.figures is None
