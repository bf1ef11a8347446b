"""monitor-brokers' three views and flags, after pulsar-testclient's ``BrokerMonitor``
(``printBrokerData``, ``printBrokerLoadData`` for ``--extensions``, ``printLoadReport`` for
``SimpleLoadManagerImpl``; pulsar commit 01e55ea14015): OVERLOADED on the weighted usage the load
manager compares, SHORT/LONG from the leader's bundle data or labelled as lbctl's own."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

from lbctl.config import Settings
from lbctl.model.load import (
    BundleData,
    LocalBrokerData,
    NamespaceBundleStats,
    ResourceUsage,
    TimeAverageMessageData,
)
from lbctl.model.loadreport import SimpleLoadReport
from lbctl.monitor.brokers import LBCTL, LEADER, BrokerMonitor
from lbctl.monitor.live import snapshot_refresh_args
from lbctl.records import replace
from lbctl.render.monitor import MonitorView
from lbctl.sources.snapshot import read_snapshots

ROOT = Path(__file__).resolve().parents[2]
B1 = "t/n/0x00000000_0x80000000"


def report(cpu: float, direct: float, *, rate: float = 100.0) -> LocalBrokerData:
    stats = MappingProxyType({B1: NamespaceBundleStats(msgRateIn=rate, msgThroughputIn=rate)})
    return replace(LocalBrokerData(cpu=ResourceUsage(cpu, 100),
                                   directMemory=ResourceUsage(direct, 100)).with_stats(stats),
                   lastUpdate=1)


def test_overloaded_follows_the_weighted_usage() -> None:
    """10 % CPU and 90 % direct memory: MAX % is 90, but direct memory weighs 0 by default, so the
    weighted usage recommend compares is 10 % — not overloaded."""
    r = BrokerMonitor().update(["a", "b"], {"a": report(10, 90), "b": report(90, 10)},
                               Settings.defaults(), 1)
    a, b = r.rows
    assert a.max == pytest.approx(90) and a.weighted == pytest.approx(10) and not a.overloaded
    assert b.weighted == pytest.approx(90) and b.overloaded
    heavy = Settings.defaults().with_values(loadBalancerDirectMemoryResourceWeight=1.0)
    assert BrokerMonitor().update(["a"], {"a": report(10, 90)}, heavy, 1).rows[0].overloaded
    text = MonitorView(r).to_text()
    assert "OVERLOADED (weighted usage 90.00% >= 85%)" in text
    assert "LOAD %" in text


def test_short_and_long_are_the_leaders_when_the_snapshot_carries_bundle_data() -> None:
    leader = {B1: BundleData(TimeAverageMessageData(10, 10, 7, 0, 70, 0),
                             TimeAverageMessageData(1000, 500, 3, 0, 30, 0), 1)}
    r = BrokerMonitor().update(["a"], {"a": report(10, 0)}, Settings.defaults(), 1,
                               leader_data=leader)
    row = r.rows[0]
    assert (row.short.msg_in, row.long.msg_in) == (70, 30) and row.latest.msg_in == 100
    assert r.averages == LEADER and "leader's bundle data" in r.averages_note
    text = MonitorView(r).to_text()
    assert "||SHORT " in text and "SHORT*" not in text
    own = BrokerMonitor().update(["a"], {"a": report(10, 0)}, Settings.defaults(), 1)
    assert own.averages == LBCTL and own.rows[0].short.msg_in == 100
    text = MonitorView(own).to_text()
    assert "||SHORT* " in text and "lbctl's own averages over 1 report" in text
    assert MonitorView(own).to_data()["averages"]["source"] == "lbctl"


def test_the_averages_note_comes_with_the_rows_it_explains() -> None:
    """The SHORT/LONG note (starred when lbctl averaged) explains the per-broker blocks' SHORT and
    LONG rows; --summary shows only the overall table, which has neither, so no note."""
    for leader in (None, {B1: BundleData(TimeAverageMessageData(10, 10, 7, 0, 70, 0),
                                         TimeAverageMessageData(1000, 500, 3, 0, 30, 0), 1)}):
        r = BrokerMonitor().update(["a"], {"a": report(10, 0)}, Settings.defaults(), 1,
                                   leader_data=leader)
        full, summary = MonitorView(r).to_text(), MonitorView(r, summary=True).to_text()
        assert "SHORT/LONG: " in full and "||SHORT" in full
        assert "SHORT" not in summary and "Overall Broker Data" in summary


def test_snapshot_bundle_data_reaches_the_monitor() -> None:
    [st] = read_snapshots([ROOT / "examples" / "hot-broker.json"])
    assert st.bundle_data is None
    args = snapshot_refresh_args(st)
    assert BrokerMonitor().update(*args).averages == LBCTL
    some = next(iter(next(iter(st.brokers.values())).lastStats))
    data = {some: BundleData(TimeAverageMessageData(10, 1, 0, 0, 1, 0),
                             TimeAverageMessageData(1000, 1, 0, 0, 1, 0))}
    r = BrokerMonitor().update(*snapshot_refresh_args(replace(st, bundle_data=data)))
    assert r.averages == LEADER and "for 1 bundle(s)" in r.averages_note


def test_extensible_snapshot_view() -> None:
    """``--extensions``: SYSTEM (MAX % = maxResourceUsage × 100), COUNT with only BUNDLE, LATEST."""
    [st] = read_snapshots([ROOT / "examples" / "extensible" / "skewed.json"])
    r = BrokerMonitor().update(*snapshot_refresh_args(st))
    rows = {x.broker: x for x in r.rows}
    hot = rows["broker-5.pulsar.svc:8080"]
    assert hot.view == "extensible" and hot.bundles == 4 and hot.topics is None
    assert hot.weighted == pytest.approx(90.0) and hot.overloaded  # weightedMaxEMA 0.9 > 0.85
    assert hot.max == pytest.approx(st.broker_load_data["broker-5.pulsar.svc:8080"].data
                                    .maxResourceUsage * 100)
    text = MonitorView(r).to_text()
    assert "(extensible load manager)" in text and "||SHORT" not in text
    assert "weightedMaxEMA > 85%" in text


def test_simple_load_manager_view() -> None:
    rep = SimpleLoadReport(
        cpu=ResourceUsage(40, 800), memory=ResourceUsage(1024, 4096),
        directMemory=ResourceUsage(10, 100), bandwidthIn=ResourceUsage(2048, 10000),
        bandwidthOut=ResourceUsage(4096, 10000), msgRateIn=100, msgRateOut=200, numTopics=5,
        numBundles=3, numConsumers=2, numProducers=1, bundleGains=1, bundleLosses=0,
        allocatedCPU=1600, allocatedMemory=512, allocatedBandwidthIn=1000,
        allocatedBandwidthOut=3000, allocatedMsgRateIn=80, allocatedMsgRateOut=160,
        overLoaded=True)
    r = BrokerMonitor().update(["s"], {"s": rep}, Settings.defaults(), 1)
    row = r.rows[0]
    assert row.view == "simple" and row.overloaded  # the report's own overLoaded
    assert row.max == pytest.approx(40.96)  # bandwidthOut, JVM memory (25 %) included
    # ALLOC SYSTEM: 100·min(1, allocated/limit): CPU 1600/800 capped at 100
    assert row.alloc == pytest.approx((100.0, 12.5, None, 10.0, 30.0, 100.0))
    # RAW MSG KB/s is the bandwidth usage / 1024, as BrokerMonitor prints it
    assert row.latest.row()[3] == pytest.approx(2.0)
    assert row.alloc_msg.row()[:3] == (80, 160, 240)
    text = MonitorView(r).to_text()
    for label in ("||COUNT", "||RAW SYSTEM", "||ALLOC SYSTEM", "||RAW MSG", "||ALLOC MSG"):
        assert label in text
    alloc_values = text.split("||ALLOC SYSTEM")[1].splitlines()[1]
    cells = alloc_values.split("|")[3:9]  # after "||" and the empty label cell
    assert [c.strip() for c in cells] == ["100.00", "12.50", "", "10.00", "30.00", "100.00"]
    overall = text.split("Overall Broker Data")[1]
    assert "240.00" in overall  # LONG/S: the allocated message rate
