"""Live capture from a cluster on the extensible load manager (load-report answers 500): the
rebuilt brokerLoadData / topBundlesLoadData, and export, recommend, explain and monitor-brokers on
the loopback test cluster in extensible mode."""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from lbctl.config import resolve
from lbctl.model.bundle import topic_hash
from lbctl.model.load import ResourceUsage
from lbctl.sandbox import EXTENSIBLE_BROKERS as SPEC_BROKERS
from lbctl.sandbox import Fault, TestCluster, extensible_cluster, hot_cluster
from lbctl.sandbox.server import percent_usage
from lbctl.sources.live_extensible import (
    RECONSTRUCTED,
    broker_load_data,
    bundle_stats,
    is_extensible_class,
    parse_lb_metrics,
)
from lbctl.sources.percent_usage import usage_for
from lbctl.sources.snapshot import read_snapshot_file
from tests.live.live_helpers import TOKENS, Lbctl, assert_no_secret
from tests.spec_paths import defined

MODULAR_LM = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"


@pytest.fixture
def ext() -> Iterator[TestCluster]:
    c = extensible_cluster(tokens=TOKENS)
    yield c
    c.stop()


@pytest.fixture
def lb(ext: TestCluster) -> Lbctl:
    return Lbctl(ext)


def _plan(stdout: str) -> dict:
    plan = json.loads(stdout)
    plan.pop("capturedAt", None)  # the two reads are moments apart
    plan.pop("source", None)
    return plan


# ---- pure: the pieces of the reconstruction --------------------------------------------------------
def test_usage_for_gives_the_published_float_back() -> None:
    # every value Java's percentUsage can produce: f32(f32(usage / limit) * 100)
    rng = random.Random(7)
    pairs = [(0.0, 1.0), (1.0, 1.0), (33.3, 100.0), (7.31, 800.0), (0.83, 1e7), (250.0, 100.0)]
    pairs += [(rng.uniform(0, 1200), rng.choice((100.0, 800.0, 4096.0, 1e7))) for _ in range(3000)]
    for pair in pairs:
        target = percent_usage(pair)
        v = float(f"{target:.9g}")  # as Jackson writes a Float, read back as a double
        assert struct.unpack("<f", struct.pack("<f", v))[0] == target
        u = usage_for(v)
        assert u["limit"] == 100.0
        assert ResourceUsage(u["usage"], u["limit"]).percent == target, v


def test_parse_lb_metrics_reads_only_the_load_balancing_figures() -> None:
    entries = [
        {"dimensions": {}, "metrics": {"brk_ml_cache_evictions": 0}},
        {"dimensions": {"broker": "b", "metric": "loadBalancing"},
         "metrics": {"brk_lb_cpu_usage": 12.5, "brk_lb_memory_usage": 400.0,
                     "brk_lb_directMemory_usage": float("nan"), "brk_lb_bandwidth_in_usage": 3,
                     "brk_lb_bandwidth_out_usage": True}},
        {"dimensions": {"broker": "b", "metric": "loadBalancing", "feature": "max_ema"},
         "metrics": {"brk_lb_resource_usage": 4.0}},
        {"dimensions": {"broker": "b", "metric": "loadBalancing", "feature": "max"},
         "metrics": {"brk_lb_resource_usage": 0.04}},
        {"dimensions": {"broker": "b", "metric": "bundleUnloading", "feature": "max_ema",
                        "stat": "avg"}, "metrics": {"brk_lb_resource_usage_stats": 0.5,
                                                    "brk_lb_resource_usage": 0.5}},
    ]
    m = parse_lb_metrics(entries, "GET x")
    assert dict(m.percents) == {"cpu": 12.5, "memory": 400.0, "bandwidthIn": 3.0}
    assert dict(m.features) == {"weightedMaxEMA": 4.0, "maxResourceUsage": 0.04}
    assert m.extensible
    modular = parse_lb_metrics(entries[:2], "GET x")
    assert not modular.extensible and not modular.features


def test_features_missing_from_the_metrics_are_a_first_sample_and_marked() -> None:
    m = parse_lb_metrics([{"dimensions": {"metric": "loadBalancing"},
                           "metrics": {"brk_lb_cpu_usage": 40.0, "brk_lb_bandwidth_out_usage": 70.0,
                                       "brk_lb_memory_usage": 90.0}}], "GET x")
    stats = {"t/ns/0x00000000_0xffffffff": {
        "msgRateIn": 1.0, "msgThroughputIn": 10.0, "msgRateOut": 2.0, "msgThroughputOut": 20.0,
        "consumerCount": 1, "producerCount": 1, "topics": 1, "cacheSize": 0}}
    out = broker_load_data(m, stats, resolve({}), 1000)
    # default weights: memory 0, so the weighted max is bandwidth out, 70 %
    assert out["weightedMaxEMA"] == pytest.approx(0.7) and out["maxResourceUsage"] == out[
        "weightedMaxEMA"]
    assert {"weightedMaxEMA", "maxResourceUsage", "msgThroughputEMA"} <= set(out[RECONSTRUCTED])
    assert out["msgThroughputEMA"] == 30.0 and out["bundleCount"] == 1 and out["updatedAt"] == 1000


def test_topics_go_to_the_bundle_their_hash_falls_in() -> None:
    topic = "persistent://t/ns/a"
    cut = topic_hash(topic) + 1  # the topic falls in the first of two bundles
    bounds = {"t/ns": [0, cut, 0xFFFFFFFF]}
    nested = {"t/ns": {"0x00000000_0xffffffff": {"persistent": {topic: {
        "msgRateIn": 5.0, "msgRateOut": 6.0, "msgThroughputIn": 7.0, "msgThroughputOut": 8.0,
        "producerCount": 2, "subscriptions": {"s": {"consumers": [{}, {}, {}]}}}}}}}
    stats, topics, warnings = bundle_stats(nested, bounds)
    [(name, st)] = stats.items()
    assert name == f"t/ns/0x00000000_0x{cut:08x}"  # not the range the stats were filed under
    assert st == {"msgRateIn": 5.0, "msgThroughputIn": 7.0, "msgRateOut": 6.0,
                  "msgThroughputOut": 8.0, "consumerCount": 3, "producerCount": 2, "topics": 1,
                  "cacheSize": 0}
    assert set(topics) == {topic} and not warnings
    unbounded, _, _ = bundle_stats(nested, {})
    assert list(unbounded) == ["t/ns/0x00000000_0xffffffff"]


def test_extensible_class_names() -> None:
    assert is_extensible_class("org.apache.pulsar.broker.loadbalance.extensions."
                               "ExtensibleLoadManagerImpl")
    assert not is_extensible_class(MODULAR_LM) and not is_extensible_class(None)


# ---- live ---------------------------------------------------------------------------------------------
@pytest.mark.live
def test_export_then_recommend_gives_the_live_plan(lb: Lbctl, tmp_path: Path) -> None:
    c = lb.cluster
    snap = tmp_path / "snap.json"
    res = lb("snapshot", "export", "-f", str(snap))
    assert res.exit_code == 0, res.stderr
    assert "4 broker(s), 8 bundle(s)" in res.stderr and "rebuilt" in res.stderr
    live = lb("recommend", "-o", "json")
    assert live.exit_code == 0, live.stderr
    offline = lb("recommend", str(snap), "-o", "json")
    assert offline.exit_code == 0, offline.stderr
    live_plan, file_plan = _plan(live.stdout), _plan(offline.stdout)
    # a live read says it starts without the leader's history
    assert any("no history" in w["message"] for w in live_plan.pop("warnings"))
    assert not file_plan.pop("warnings")
    # the release modelled is the same; where its version was read differs (live: the cluster)
    assert (live_plan["pulsarVersion"].pop("origin"), file_plan["pulsarVersion"].pop("origin")) \
        == ("cluster", "snapshot")
    assert live_plan == file_plan
    assert live_plan["loadManager"] == "extensible" and live_plan["shedding"] == "TransferShedder"
    ids = list(c.brokers)
    actions = live_plan["actions"]
    assert actions and all(a["action"] == "transfer" and a["reason"] == "Overloaded"
                           and a["broker"] == ids[0] and a["destinationBroker"] == ids[3]
                           for a in actions)
    assert {a["bundle"] for a in actions} <= {b for b, o in c.owners.items() if o == ids[0]}
    assert not c.requests("GET", "load-report$")  # the configuration says extensible: not asked
    assert_no_secret(snap.read_text(), res.stderr, live.stdout)


@pytest.mark.live
def test_export_content_and_reconstructed_marker(lb: Lbctl, tmp_path: Path) -> None:
    c = lb.cluster
    snap = tmp_path / "snap.json"
    assert lb("snapshot", "export", "-f", str(snap)).exit_code == 0
    raw = json.loads(snap.read_text())
    assert raw["loadManager"] == "extensible"
    [st] = read_snapshot_file(snap)
    assert st.load_manager == "extensible" and list(st.brokers) == list(c.brokers)
    for bid, (ema, cpu, n_bundles) in zip(c.brokers, SPEC_BROKERS, strict=True):
        bld = raw["brokerLoadData"][bid]
        assert bld["weightedMaxEMA"] == ema  # as the broker published it, not recomputed
        assert ResourceUsage(**bld["cpu"]).percent == percent_usage((cpu, 100.0))
        assert bld["maxResourceUsage"] == pytest.approx(cpu / 100, rel=1e-6)
        assert set(bld[RECONSTRUCTED]) >= {"msgThroughputEMA", "msgThroughputIn", "bundleCount"}
        assert "weightedMaxEMA" not in bld[RECONSTRUCTED]
        owned = {b for b, o in c.owners.items() if o == bid}
        mine = {t: s for t, s in c.topics.items() if c.bundle_of_topic(t) in owned}
        assert bld["bundleCount"] == n_bundles and bld["topics"] == len(mine)
        assert bld["msgThroughputIn"] == pytest.approx(sum(s["msgThroughputIn"]
                                                           for s in mine.values()))
        tops = raw["topBundlesLoadData"][bid]
        assert tops[RECONSTRUCTED] == ["topBundlesLoadData"]
        names = [t["bundleName"] for t in tops["topBundlesLoadData"]]
        assert set(names) == owned
        tp = [t["stats"]["msgThroughputIn"] for t in tops["topBundlesLoadData"]]
        assert tp == sorted(tp)  # published ascending
        assert set(st.brokers[bid].lastStats) == owned  # ownership, for splits and the monitor
    assert_no_secret(snap.read_text())


@pytest.mark.live
def test_explain_shows_transfer_shedder_decisions(lb: Lbctl) -> None:
    res = lb("explain", "-o", "json")
    assert res.exit_code == 0, res.stderr
    shed = json.loads(res.stdout)["explanation"]["shedding"]
    assert shed["outcome"]["label"] == "Success" and shed["condition"]["stdAboveTarget"]
    [first, *_] = shed["rounds"]
    ids = list(lb.cluster.brokers)
    assert first["maxBroker"] == ids[0] and first["minBroker"] == ids[3]
    assert first["maxLoad"] == 0.85 and first["minLoad"] == 0.1
    text = lb("explain")
    assert text.exit_code == 0 and "Success/Overloaded" in text.stdout


@pytest.mark.live
def test_monitor_brokers_reads_the_metrics(lb: Lbctl) -> None:
    res = lb("monitor-brokers", "--once", "-o", "json")
    assert res.exit_code == 0, res.stderr
    rows = {r["broker"]: r for r in json.loads(res.stdout)["brokers"]}
    ids = list(lb.cluster.brokers)
    assert rows[ids[0]]["state"] == "ok" and rows[ids[0]]["view"] == "extensible"
    # OVERLOADED is TransferShedder's test: weightedMaxEMA (85 %) above the 85 % threshold — not
    # at it — although MAX % is 90
    assert rows[ids[0]]["weightedMax"] == pytest.approx(85.0) and not rows[ids[0]]["overloaded"]
    assert rows[ids[0]]["max"] == pytest.approx(90.0) and rows[ids[3]]["max"] == pytest.approx(10.1)
    lb.cluster.brokers[ids[0]].ema = 0.9
    again = json.loads(lb("monitor-brokers", "--once", "-o", "json").stdout)["brokers"]
    assert next(r for r in again if r["broker"] == ids[0])["overloaded"]
    assert rows[ids[0]]["bundles"] == 4 and rows[ids[0]]["latestMsgRate"] > rows[ids[1]][
        "latestMsgRate"]
    assert not lb.cluster.requests("GET", "load-report$")


@pytest.mark.live
def test_load_report_500_with_extensible_metrics_is_read_as_extensible(lb: Lbctl) -> None:
    c = lb.cluster
    c.config["loadManagerClassName"] = MODULAR_LM  # e.g. a stale or overridden setting
    res = lb("recommend", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert "read as an extensible cluster" in res.stderr
    assert json.loads(res.stdout)["loadManager"] == "extensible"
    assert c.requests("GET", "load-report$") and c.requests("GET", "broker-stats/metrics$")
    mon = lb("monitor-brokers", "--once", "-o", "json")
    assert mon.exit_code == 0 and all(r["state"] == "ok" for r in json.loads(mon.stdout)["brokers"])


@pytest.mark.live
def test_load_report_500_on_a_modular_cluster_stays_an_error() -> None:
    c = hot_cluster(3, tokens=TOKENS)
    try:
        c.faults.append(Fault(r"load-report", status=500, reason="boom"))
        res = Lbctl(c)("recommend")
        assert res.exit_code == 10 and "500 Internal Server Error: boom" in res.stderr
    finally:
        c.stop()


@pytest.mark.live
def test_broker_without_topic_stats_has_no_load_data(lb: Lbctl, tmp_path: Path) -> None:
    c = lb.cluster
    bad = list(c.brokers)[2]
    c.faults.append(Fault(r"broker-stats/topics", status=503, broker=bad))
    snap = tmp_path / "s.json"
    res = lb("snapshot", "export", "-f", str(snap))
    assert res.exit_code == 0, res.stderr
    assert f"{bad}: topic stats" in res.stderr and "without load data" in res.stderr
    raw = json.loads(snap.read_text())
    assert bad in raw["brokers"] and bad not in raw["brokerLoadData"]
    res = lb("explain", str(snap), "-o", "json")
    assert res.exit_code == 0, res.stderr


@pytest.mark.live
def test_unreachable_broker_is_left_out(lb: Lbctl, tmp_path: Path) -> None:
    c = lb.cluster
    bad = list(c.brokers)[1]
    c.faults.append(Fault(r"broker-stats/metrics", kind="drop", broker=bad))
    snap = tmp_path / "s.json"
    res = lb("snapshot", "export", "-f", str(snap))
    assert res.exit_code == 0, res.stderr
    assert f"lbctl: warning: {bad}:" in res.stderr
    assert bad not in json.loads(snap.read_text())["brokers"]


@pytest.mark.live
def test_every_request_sent_is_in_the_spec(lb: Lbctl, tmp_path: Path) -> None:
    c = lb.cluster
    assert lb("snapshot", "export", "-f", str(tmp_path / "s.json")).exit_code == 0
    assert lb("monitor-brokers", "--once").exit_code == 0
    assert lb("recommend").exit_code == 0
    c.config["loadManagerClassName"] = MODULAR_LM
    assert lb("explain").exit_code == 0
    seen = {(r.method, r.path) for r in c.log}
    assert ("GET", "/admin/v2/broker-stats/metrics") in seen
    assert not sorted(x for x in seen if not defined(*x))
