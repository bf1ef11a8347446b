"""BundleSplitterTask (which bundles to split) and checkNamespaceBundleSplit (how), ported from
``BundleSplitterTaskTest`` and checked against the rules of ``BundleSplitterTask`` itself."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

from lbctl.config import Settings
from lbctl.explain.words import text
from lbctl.explain.words.split import split_detail
from lbctl.loadmanager.modular import auto_splits
from lbctl.loadmanager.select import Options, plans
from lbctl.model.bundle import BundleName, topic_hash
from lbctl.model.cluster import TopicStats
from lbctl.model.decision import Reason
from lbctl.records import replace
from lbctl.sources.snapshot import read_snapshots
from lbctl.strategies.split.bundle_splitter_task import find_bundles_to_split
from tests.factories import broker, bundle_data, load, state, stats

DATA = Path(__file__).resolve().parents[2] / "data" / "split"
MAX_RATE = 30000
ONE_BUNDLE = lambda ns: 1  # noqa: E731 - a namespace without policies has one bundle in Pulsar


def _long_term_rate(rate_in: float, rate_out: float = 1, topics: int = 5):
    return bundle_data(rate_in=rate_in, rate_out=rate_out, topics=topics)


def test_split_task_when_topic_just_one() -> None:
    """``testSplitTaskWhenTopicJustOne``: a 1-topic bundle is never split, whatever its rate."""
    b = "ten/ns/0x00000000_0x80000000"
    ld = load({"broker": broker(bundles={b: stats(topics=1)})},
              bundle_data={b: _long_term_rate(MAX_RATE)})
    assert find_bundles_to_split(ld, Settings.defaults(), ONE_BUNDLE) == ()


def test_load_balancer_namespace_maximum_bundles() -> None:
    """``testLoadBalancerNamespaceMaximumBundles``: with a maximum of 3 and a namespace of one
    bundle, only two of three hot bundles are picked."""
    names = ["ten/ns/0x00000000_0x20000000", "ten/ns/0x20000000_0x40000000",
             "ten/ns/0x40000000_0x60000000"]
    ld = load({"broker": broker(bundles={b: stats(topics=5) for b in names})},
              bundle_data={b: _long_term_rate(MAX_RATE * 2) for b in names})
    settings = Settings.defaults().with_values(loadBalancerNamespaceMaximumBundles=3)
    found = find_bundles_to_split(ld, settings, ONE_BUNDLE)
    picked = [c for c in found if c.selected]
    assert len(picked) + 1 == 3
    assert [c.bundle for c in picked] == names[:2]  # in report order
    capped = [c for c in found if not c.selected]
    assert len(capped) == 1 and "loadBalancerNamespaceMaximumBundles is 3" in text(capped[0].why)


@pytest.mark.parametrize(("bundle_stats", "data", "reason", "detail"), [
    (stats(topics=1001), None, Reason.TOPICS, "Topics: 1001/1000"),
    (stats(topics=5, producers=600, consumers=401), None, Reason.SESSIONS,
     "Sessions: (600+401)/1000"),
    (stats(topics=5), _long_term_rate(24988, 24988), Reason.MSG_RATE,
     "Message Rate: 49976/30000 msg/s"),
    (stats(topics=5), bundle_data(tp_in=60 * 1048576, tp_out=50 * 1048576, topics=5),
     Reason.BANDWIDTH, "Message Throughput: 110/100 MB/s"),
    # topics win over rate (the extensible load manager's order)
    (stats(topics=2000), _long_term_rate(40000), Reason.TOPICS, "Topics: 2000/1000"),
])
def test_reasons_and_figures(bundle_stats, data, reason, detail) -> None:
    b = "t/ns/0x00000000_0x40000000"
    ld = load({"b1": broker(bundles={b: bundle_stats})},
              bundle_data={b: data or _long_term_rate(0)})
    (c,) = find_bundles_to_split(ld, Settings.defaults(), ONE_BUNDLE)
    assert (c.reason, split_detail(c), c.broker, c.selected) == (reason, detail, "b1", True)


def test_thresholds_are_strict_and_sessions_can_be_disabled() -> None:
    b = "t/ns/0x00000000_0x40000000"
    at_limits = stats(topics=1000, producers=500, consumers=500)
    ld = load({"b1": broker(bundles={b: at_limits})},
              bundle_data={b: bundle_data(tp_in=100 * 1048576, rate_in=MAX_RATE, topics=1000)})
    assert find_bundles_to_split(ld, Settings.defaults(), ONE_BUNDLE) == ()
    many = load({"b1": broker(bundles={b: stats(topics=5, producers=5000)})},
                bundle_data={b: _long_term_rate(0)})
    off = Settings.defaults().with_values(loadBalancerNamespaceBundleMaxSessions=0)
    assert find_bundles_to_split(many, off, ONE_BUNDLE) == ()
    assert len(find_bundles_to_split(many, Settings.defaults(), ONE_BUNDLE)) == 1


def test_rates_come_from_the_long_term_window() -> None:
    """Short-term at 50 000 msg/s but long-term at 20 000: no split; without bundle data the
    rates count as 0."""
    b = "t/ns/0x00000000_0x40000000"
    hot_now = bundle_data(rate_in=50000, topics=5, long_term=(0, 0, 20000, 0))
    ld = load({"b1": broker(bundles={b: stats(50000, topics=5)})}, bundle_data={b: hot_now})
    assert find_bundles_to_split(ld, Settings.defaults(), ONE_BUNDLE) == ()
    ld = load({"b1": broker(bundles={b: stats(50000, topics=5)})}, bundle_data={})
    assert find_bundles_to_split(ld, Settings.defaults(), ONE_BUNDLE) == ()
    # a first sample (no stored data): long-term = the latest stats
    ld = load({"b1": broker(bundles={b: stats(50000, topics=5)})})
    (c,) = find_bundles_to_split(ld, Settings.defaults(), ONE_BUNDLE)
    assert c.msg_rate == 50000


def _two_brokers(hot_topics: int = 5):
    b = "t/ns/0x00000000_0x40000000"
    # broker ids as Pulsar writes them (host:port): the unload's namespace-policy check takes
    # their host (LoadManagerShared.parseBrokerHost) and skips an id it cannot parse
    st = state({"b1:8080": broker(bundles={b: stats(40000, topics=hot_topics)}),
                "b2:8080": broker(bundles={"t/ns/0x40000000_0x80000000": stats(10, topics=2)})})
    return st, b


def test_auto_splits_gates() -> None:
    st, _ = _two_brokers()
    ld = load(st.brokers)
    s = Settings.defaults()
    assert len(auto_splits(st, ld, s)) == 1
    assert auto_splits(st, ld, s.with_values(loadBalancerAutoBundleSplitEnabled=False)) == ()
    one = state({"b1:8080": st.brokers["b1:8080"]})
    assert auto_splits(one, load(one.brokers), s) == ()  # knownBrokers.size() <= 1


def test_auto_split_uses_the_default_algorithm_and_unload_setting() -> None:
    st, b = _two_brokers()
    (s,) = auto_splits(st, load(st.brokers), Settings.defaults())
    assert (s.algorithm, s.boundaries, s.unload, s.skipped) == (
        "range_equally_divide", (0x20000000,), True, None)
    assert s.children == ("t/ns/0x00000000_0x20000000", "t/ns/0x20000000_0x40000000")
    settings = Settings.defaults().with_values(
        defaultNamespaceBundleSplitAlgorithm="topic_count_equally_divide",
        loadBalancerAutoUnloadSplitBundlesEnabled=False)
    (s,) = auto_splits(st, load(st.brokers), settings)
    # the snapshot lists no topics: the broker would find no boundary and leave the bundle
    assert s.algorithm == "topic_count_equally_divide" and not s.unload
    assert s.skipped and "found no split boundary" in text(s.skipped)


def test_auto_split_with_topics_listed() -> None:
    st, b = _two_brokers()
    topics = {f"persistent://t/ns/topic-{i}": TopicStats(msgRateIn=100) for i in range(40)}
    st = replace(st, topics=MappingProxyType(topics))
    settings = Settings.defaults().with_values(
        defaultNamespaceBundleSplitAlgorithm="topic_count_equally_divide")
    (s,) = auto_splits(st, load(st.brokers), settings)
    mine = st.topics_of_bundle(b)
    assert len(mine) >= 2 and s.skipped is None
    first = BundleName.parse(s.children[0]).range
    assert sum(1 for t in mine if first.contains(topic_hash(t))) == len(mine) // 2


# --- the plan: recommend shows split actions after the unloads -------------------------------
def test_recommend_plan_has_split_actions() -> None:
    states = read_snapshots([DATA / "auto-split.json"])
    (plan,) = plans(states, Options())
    d = plan.to_dict()
    splits = [a for a in d["actions"] if a["action"] == "split"]
    assert [a["action"] for a in d["actions"]][-len(splits):] == ["split"] * len(splits)
    by_bundle = {a["bundle"]: a for a in splits}
    rate = by_bundle["acme/events/0x00000000_0x40000000"]
    assert rate["reason"] == "MsgRate"
    assert rate["detail"] == "Message Rate: 49976/30000 msg/s"
    assert rate["algorithm"] == "range_equally_divide"
    assert rate["boundaries"] == ["0x20000000"]
    assert rate["children"] == ["acme/events/0x00000000_0x20000000",
                                "acme/events/0x20000000_0x40000000"]
    assert rate["unload"] is True and rate["broker"] == "broker-1.pulsar.svc:8080"
    topics = by_bundle["acme/events/0xc0000000_0xffffffff"]
    assert (topics["reason"], topics["detail"]) == ("Topics", "Topics: 1500/1000")
    assert d["summary"]["splits"] == 2
    assert "loadBalancerNamespaceBundleMaxMsgRate" in d["settings"]
    # unload actions keep exactly their plan v1 keys
    for a in d["actions"]:
        if a["action"] == "unload":
            assert "algorithm" not in a and "children" not in a


# --- Java int arithmetic (BundleSplitterTask, apache/pulsar master 2025: `long maxBundleBandwidth =
# getLoadBalancerNamespaceBundleMaxBandwidthMbytes() * LoadManagerShared.MIBI`, int * int; and
# `stats.consumerCount + stats.producerCount`, an int sum) ------------------------------------
@pytest.mark.parametrize(("mbytes", "tp", "split", "limit"), [
    (2047, 1.0, False, 2047),  # no wrap yet
    (2048, 0.0, True, -2048),  # wraps to -2^31: 0 B/s exceeds it
    (4096, 0.0, False, 0),  # wraps to 0: a bundle without throughput does not exceed it
    (4096, 1.0, True, 0),  # but any throughput does
])
def test_bandwidth_limit_in_int_wraps(mbytes, tp, split, limit) -> None:
    b = "ten/ns/0x00000000_0x80000000"
    ld = load({"broker": broker(bundles={b: stats(topics=2)})},
              bundle_data={b: bundle_data(tp_in=tp, topics=2)})
    settings = Settings.defaults().with_values(
        loadBalancerNamespaceBundleMaxBandwidthMbytes=mbytes)
    found = find_bundles_to_split(ld, settings, ONE_BUNDLE)
    assert [(c.reason, c.limit) for c in found] == ([(Reason.BANDWIDTH, limit)] if split else [])


def test_session_count_is_an_int_sum() -> None:
    """2^31 - 1 consumers and 1 producer sum to -2^31 in ``int``: never over the limit."""
    b = "ten/ns/0x00000000_0x80000000"
    huge = stats(topics=2, consumers=2**31 - 1, producers=1)
    ld = load({"broker": broker(bundles={b: huge})}, bundle_data={b: bundle_data(topics=2)})
    assert find_bundles_to_split(ld, Settings.defaults(), ONE_BUNDLE) == ()
    some = stats(topics=2, consumers=2**31 - 1, producers=0)
    ld = load({"broker": broker(bundles={b: some})}, bundle_data={b: bundle_data(topics=2)})
    assert [c.reason for c in find_bundles_to_split(ld, Settings.defaults(), ONE_BUNDLE)] == [
        Reason.SESSIONS]
