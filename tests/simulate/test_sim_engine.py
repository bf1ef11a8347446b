"""The closed loop itself: first cycle = recommend, trace-driven traffic, the report-update rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.errors import UsageError
from lbctl.loadmanager.select import Options, plans
from lbctl.model.bundle import topic_hash
from lbctl.model.cluster import EXTENSIBLE, TopicStats
from lbctl.model.load import NamespaceBundleStats
from lbctl.records import replace
from lbctl.simulate.engine import BundleShare, SimulationOptions, _topic_share, simulate
from lbctl.sources.snapshot import read_snapshots

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name", ["hot-broker.json", "uniform.json", "pip364-90-10.json"])
def test_first_cycle_is_what_recommend_says(name: str) -> None:
    states = read_snapshots([EXAMPLES / name])
    plan = plans(states, Options())[-1]
    expected = [(a.bundle, a.broker, a.destinationBroker) for a in plan.actions
                if a.action == "unload" and a.skipped is None]
    r = simulate(states, Options(), SimulationOptions(cycles=1))
    assert [(m.bundle, m.source, m.destination) for m in r.cycles[0].moves] == expected
    assert expected  # each of these examples sheds in its first cycle


def test_moves_change_true_load_and_bundle_counts() -> None:
    r = simulate(read_snapshots([EXAMPLES / "hot-broker.json"]), Options(),
                 SimulationOptions(cycles=3))
    c1, c2 = r.cycles[0], r.cycles[1]
    hot = "broker-2.pulsar.svc:8080"
    assert c1.bundles[hot] - len(c1.moves) == c2.bundles[hot]
    assert c2.loads[hot] < c1.loads[hot]
    assert sum(c1.bundles.values()) == sum(c2.bundles.values())
    assert c1.moved_throughput == pytest.approx(sum(m.throughput for m in c1.moves))
    # the times advance by loadBalancerSheddingIntervalMinutes
    assert [c.at - r.start for c in r.cycles] == [0, 60_000, 120_000]


def test_interval_setting_spaces_the_cycles() -> None:
    r = simulate(read_snapshots([EXAMPLES / "balanced.json"]),
                 Options(overrides={"loadBalancerSheddingIntervalMinutes": "5"}),
                 SimulationOptions(cycles=3))
    assert [c.at - r.start for c in r.cycles] == [0, 300_000, 600_000]
    assert r.interval_minutes == 5


def test_the_leader_sees_only_reports_that_were_written() -> None:
    # Threshold 50 %: for broker-1, losing 40 of 90 points (usage 40, rate 44 %, bundles 17 %)
    # is not enough to rewrite its report; broker-2's rate grows 400 %, so it writes. The leader
    # sees 90/50 in cycle 2 though the truth is 50/50.
    opts = Options(overrides={"loadBalancerReportUpdateThresholdPercentage": "50"})
    r = simulate(read_snapshots([EXAMPLES / "pip364-90-10.json"]), opts,
                 SimulationOptions(cycles=3))
    c2 = r.cycles[1]
    assert [round(v, 4) for v in c2.loads.values()] == [0.5, 0.5]
    assert [round(v, 4) for v in c2.reported.values()] == [0.9, 0.5]
    assert c2.reports_written == 1
    # with the default 10 % both brokers write and the leader sees the truth
    r = simulate(read_snapshots([EXAMPLES / "pip364-90-10.json"]), Options(),
                 SimulationOptions(cycles=2))
    assert r.cycles[1].reports_written == 2
    assert [round(v, 4) for v in r.cycles[1].reported.values()] == [0.5, 0.5]


def test_trace_driven_rates_follow_the_sequence_ownership_follows_the_simulation() -> None:
    states = read_snapshots([EXAMPLES / "two-brokers-90-10.jsonl"])
    r = simulate(states, Options(), SimulationOptions(cycles=8))
    assert r.trace_snapshots == len(states) == 6
    for k, c in enumerate(r.cycles):
        trace = states[min(k, len(states) - 1)]
        # total traffic of the cycle is the trace snapshot's, wherever the bundles are
        assert sum(c.throughput.values()) == pytest.approx(
            sum(rep.throughput for rep in trace.brokers.values()))
    # the trace's own moves are not replayed: the simulation moved what its shedder chose
    assert [len(c.moves) for c in r.cycles[:3]] == [2, 2, 0]


def test_default_cycles_cover_a_long_trace() -> None:
    st = read_snapshots([EXAMPLES / "balanced.json"])[0]
    later = replace(st, captured_at=st.captured_at + 90 * 60_000)
    r = simulate([st, later], Options(), SimulationOptions())
    assert len(r.cycles) == 91
    assert len(simulate([st], Options(), SimulationOptions()).cycles) == 60


def test_bad_inputs_are_usage_errors() -> None:
    st = read_snapshots([EXAMPLES / "balanced.json"])
    with pytest.raises(UsageError, match="cycles"):
        simulate(st, Options(), SimulationOptions(cycles=0))
    with pytest.raises(UsageError, match="extensible"):  # TransferShedder only there
        simulate([replace(st[0], load_manager=EXTENSIBLE)], Options(strategy="AvgShedder"),
                 SimulationOptions())
    with pytest.raises(UsageError, match="unknown shedding strategy"):
        simulate(st, Options(strategy="ThresholdShedderX"), SimulationOptions(cycles=1))


# --- splits (issue 29 item 5) ----------------------------------------------------------------------
SPLIT = Path(__file__).resolve().parents[1] / "data" / "split" / "auto-split.json"
HOT_BUNDLE = "acme/events/0x00000000_0x40000000"  # 49,976 msg/s > loadBalancerNamespaceBundleMaxMsgRate
KEEP = {"loadBalancerAutoUnloadSplitBundlesEnabled": "false"}


def test_pulsars_automatic_splits_are_carried_out_in_the_loop() -> None:
    # checkNamespaceBundleSplit picks the hot bundle (message rate) and broker-2's bundle of
    # more than loadBalancerNamespaceBundleMaxTopics topics; range_equally_divide halves each;
    # the owner keeps the children (no unload): each broker carries what it carried
    states = read_snapshots([SPLIT])
    r = simulate(states, Options(overrides=KEEP), SimulationOptions(cycles=3))
    c1, c2 = r.cycles[0], r.cycles[1]
    assert set(c1.splits) == {HOT_BUNDLE, "acme/events/0xc0000000_0xffffffff"}
    assert not c1.moves and not c2.splits
    assert dict(c2.bundles) == dict.fromkeys(states[0].brokers, 3)
    for b in states[0].brokers:
        assert c2.msg_rate[b] == pytest.approx(c1.msg_rate[b])
    assert r.summary()["bundlesSplit"] == 2


@pytest.mark.parametrize("override", [{"loadBalancerAutoBundleSplitEnabled": "false"},
                                      {"loadBalancerNamespaceMaximumBundles": "4"}])
def test_no_automatic_split_when_the_settings_forbid_it(override: dict[str, str]) -> None:
    r = simulate(read_snapshots([SPLIT]), Options(overrides=KEEP | override),
                 SimulationOptions(cycles=2))
    assert not any(c.splits for c in r.cycles) and "bundlesSplit" not in r.summary()


def test_split_children_unloaded_go_where_the_next_lookup_places_them() -> None:
    # loadBalancerAutoUnloadSplitBundlesEnabled (the default): each child is unloaded and the
    # leader's selectBrokerForAssignment places it; a child placed off its owner is a move, with
    # half its parent's traffic (its 12 topics dealt 6 and 6)
    r = simulate(read_snapshots([SPLIT]), Options(), SimulationOptions(cycles=2))
    moves = [m for m in r.cycles[0].moves if m.reason == "Split"]
    assert moves and all(m.source != m.destination for m in moves)
    hot = [m for m in moves if m.bundle.startswith("acme/events/0x")
           and m.bundle.endswith(("_0x20000000", "_0x40000000"))]
    assert hot and all(m.msg_rate == pytest.approx(49_976 / 2) for m in hot)


def test_children_carry_their_parents_traffic_as_the_trace_goes_on() -> None:
    # the trace keeps reporting the parent; a minute later its traffic doubles: the children
    # (still on broker-1) carry it, and no parent comes back
    s0 = read_snapshots([SPLIT])[0]
    b1 = "broker-1.pulsar.svc:8080"
    rep = s0.brokers[b1]
    st = rep.lastStats[HOT_BUNDLE]
    doubled = replace(st, msgRateIn=2 * st.msgRateIn, msgRateOut=2 * st.msgRateOut,
                      msgThroughputIn=2 * st.msgThroughputIn,
                      msgThroughputOut=2 * st.msgThroughputOut)
    s1 = replace(s0, captured_at=s0.captured_at + 60_000, brokers={
        **s0.brokers, b1: rep.with_stats({**rep.lastStats, HOT_BUNDLE: doubled})})
    r = simulate([s0, s1], Options(overrides=KEEP), SimulationOptions(cycles=3))
    c2 = r.cycles[1]
    assert c2.bundles[b1] == 3
    assert c2.msg_rate[b1] == pytest.approx(s1.brokers[b1].msg_rate)
    assert r.cycles[2].bundles[b1] == 3


def test_a_split_deals_whole_topics_to_the_children() -> None:
    # a topic never divides: a one-topic bundle's children are all of it and nothing; three
    # topics go two and one; a bundle reporting no topics divides evenly
    assert [p.share for p in BundleShare().split(1, 2)] == [1.0, 0.0]
    assert [p.share for p in BundleShare().split(3, 2)] == pytest.approx([2 / 3, 1 / 3])
    assert [p.share for p in BundleShare(0.5).split(0, 2)] == [0.25, 0.25]
    st = BundleShare(0.5).of(NamespaceBundleStats(msgRateIn=10.0, msgThroughputOut=8.0,
                                                  topics=4, producerCount=2), None)
    assert (st.msgRateIn, st.msgThroughputOut, st.topics, st.producerCount) == (5.0, 4.0, 2, 1)


def test_with_its_topics_listed_a_child_carries_its_own_topics_traffic() -> None:
    # each topic follows its hash into a child (NamespaceBundleFactory.splitBundles divides the
    # range, not the traffic): messages and bytes each by the listed topics' shares
    s0 = read_snapshots([SPLIT])[0]
    names = [f"persistent://acme/events/t{k}" for k in range(40)]
    inside = [t for t in names if topic_hash(t) < 0x40000000]
    low = [t for t in inside if topic_hash(t) < 0x20000000]
    assert low and len(low) < len(inside)
    topics = {t: TopicStats(msgRateIn=1.0 + k, msgThroughputIn=100.0) for k, t in enumerate(names)}
    st = replace(s0, topics=topics)
    share = _topic_share(st, HOT_BUNDLE, "acme/events/0x00000000_0x20000000")
    assert share == pytest.approx((sum(topics[t].msgRateIn for t in low)
                                   / sum(topics[t].msgRateIn for t in inside),
                                   len(low) / len(inside)))
    assert _topic_share(s0, HOT_BUNDLE, "acme/events/0x00000000_0x20000000") is None
