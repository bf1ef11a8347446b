"""The living sandbox (lbctl.sandbox.life, lbctl.sandbox.leader) on a stepped clock, over real HTTP:
load follows bundles through the truth host model, reports on ModularLoadManagerImpl's cadence
(needBrokerDataUpdate), a leader that acts and obeys the dynamic configuration, ownership like
Pulsar's (unowned until a lookup; crash and restart), splits that divide topics and traffic, the
leader's counters on /metrics, and the fault switch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lbctl.sandbox import TestCluster
from lbctl.sandbox.clock import SteppedClock
from lbctl.sandbox.life import Life
from lbctl.truth.hosts import total
from tests.sandbox.life_helpers import QUIET, living_hot, run_for

pytestmark = pytest.mark.live
httpx = pytest.importorskip("httpx")  # the tests speak plain HTTP to the test cluster

QUIET_LEADER = {"loadBalancerSheddingEnabled": "false",
                "loadBalancerAutoBundleSplitEnabled": "false"}


@pytest.fixture
def quiet() -> Iterator[tuple[TestCluster, Life, SteppedClock]]:
    """A living hot cluster whose leader neither sheds nor splits."""
    c, life, clock = living_hot(3, **QUIET_LEADER)
    yield c, life, clock
    c.stop()


@pytest.fixture
def acting() -> Iterator[tuple[TestCluster, Life, SteppedClock]]:
    """A living hot cluster with Pulsar's default settings (ThresholdShedder), splits off."""
    c, life, clock = living_hot(3, loadBalancerAutoBundleSplitEnabled="false")
    yield c, life, clock
    c.stop()


def _report(c: TestCluster, broker: str) -> Any:
    r = httpx.get(f"http://{broker}/admin/v2/broker-stats/load-report", timeout=5)
    assert r.status_code == 200
    return r.json()


def _expected_cpu(c: TestCluster, life: Life, broker: str) -> float:
    owned = [b for b, o in c.owners.items() if o == broker]
    return QUIET.usage(total(life.bundle_traffic(b, life.now) for b in owned)).cpu.usage


def _lookup(c: TestCluster, topic: str) -> httpx.Response:
    return httpx.get(c.admin_url + "/lookup/v2/topic/" + topic.replace("://", "/"),
                     follow_redirects=True, timeout=5)


def test_load_follows_an_unloaded_bundle(quiet: tuple[TestCluster, Life, SteppedClock]) -> None:
    c, life, clock = quiet
    hot, cool = list(c.brokers)[:2]
    before_hot, before_cool = _report(c, hot), _report(c, cool)
    assert before_hot["cpu"]["usage"] == pytest.approx(_expected_cpu(c, life, hot))
    assert before_hot["cpu"]["usage"] / before_hot["cpu"]["limit"] == pytest.approx(0.9, abs=0.01)
    bundle = next(b for b, o in c.owners.items() if o == hot)
    ns, rng = bundle.rsplit("/", 1)
    r = httpx.put(f"http://{hot}/admin/v2/namespaces/{ns}/{rng}/unload",
                  params={"destinationBroker": cool}, timeout=5)
    assert r.status_code == 204
    # owned by nobody until its clients reconnect (1 s later): a lookup now finds no broker
    assert bundle not in c.owners
    topic = next(iter(life._bundle_topics[bundle]))
    assert _lookup(c, topic).status_code == 503
    run_for(life, clock, 1)
    assert c.owners[bundle] == cool  # the clients' lookup went to the unload's destination
    run_for(life, clock, 4)  # the next sample (5 s): the bundle count changed, both write
    after_hot, after_cool = _report(c, hot), _report(c, cool)
    assert bundle not in after_hot["bundles"] and bundle in after_cool["bundles"]
    assert bundle in after_cool["lastBundleGains"] and bundle in after_hot["lastBundleLosses"]
    moved = QUIET.usage(life.bundle_traffic(bundle, life.now)).cpu.usage - QUIET.usage(
        total([])).cpu.usage
    assert after_hot["cpu"]["usage"] == pytest.approx(before_hot["cpu"]["usage"] - moved)
    assert after_cool["cpu"]["usage"] == pytest.approx(before_cool["cpu"]["usage"] + moved)
    assert after_hot["lastUpdate"] == int(clock.now() * 1000)
    body = _lookup(c, topic).json()
    assert body["httpUrl"] == f"http://{cool}"


def test_reports_are_written_on_pulsars_cadence(
        quiet: tuple[TestCluster, Life, SteppedClock]) -> None:
    """needBrokerDataUpdate: no write while nothing changes by more than 10 %; a write after 15
    minutes at the latest; a write at the next sample after a change above the threshold."""
    c, life, clock = quiet
    hot = next(iter(c.brokers))
    first = _report(c, hot)["lastUpdate"]
    run_for(life, clock, 14 * 60)
    assert _report(c, hot)["lastUpdate"] == first
    run_for(life, clock, 65)  # > loadBalancerReportUpdateMaxIntervalMinutes
    second = _report(c, hot)["lastUpdate"]
    assert first < second <= int(clock.now() * 1000)
    life.namespace_factor["public/default"] = 1.05  # +5 %: under the threshold
    run_for(life, clock, 10)
    assert _report(c, hot)["lastUpdate"] == second
    life.namespace_factor["public/default"] = 1.3  # +30 %: written at the next sample
    run_for(life, clock, 5)
    third = _report(c, hot)
    assert third["lastUpdate"] > second
    assert third["msgRateIn"] == pytest.approx(sum(
        s["msgRateIn"] for s in third["lastStats"].values()))


def test_the_leader_acts_on_its_cadence(acting: tuple[TestCluster, Life, SteppedClock]) -> None:
    c, life, clock = acting
    leader = life.leader
    assert leader is not None
    run_for(life, clock, 59)
    assert leader.decisions == []  # LoadSheddingTask's first run is one interval after the start
    run_for(life, clock, 1)
    first = leader.decisions[0]
    assert first.shedding == "ThresholdShedder" and first.gate is None
    moves = [a for a in first.actions if a["action"] == "unload" and "skipped" not in a]
    assert moves and all(a["broker"] == next(iter(c.brokers)) for a in moves)
    for a in moves:
        assert a["bundle"] not in c.owners  # unowned until the clients' lookup
    run_for(life, clock, 1)
    for a in moves:
        assert c.owners[a["bundle"]] == a["destinationBroker"]
    text = httpx.get(f"http://{leader.broker()}/metrics", timeout=5).text
    assert f"pulsar_lb_unload_bundle_total{{cluster=\"test-cluster\",metric=\"bundleUnloading\"}} " \
           f"{float(len(moves))}" in text
    r = httpx.get(c.admin_url + "/admin/v2/brokers/leaderBroker", timeout=5).json()
    assert r["brokerId"] == leader.broker()


def test_the_dynamic_configuration_governs_the_leader(
        acting: tuple[TestCluster, Life, SteppedClock]) -> None:
    c, life, clock = acting
    assert life.leader is not None
    url = c.admin_url + "/admin/v2/brokers/configuration"
    assert httpx.post(f"{url}/loadBalancerSheddingEnabled/false", timeout=5).status_code == 204
    owners = dict(c.owners)
    run_for(life, clock, 3 * 60)
    assert len(life.leader.decisions) == 3
    assert all(d.gate and "loadBalancerSheddingEnabled" in d.gate and not d.actions
               for d in life.leader.decisions)
    assert c.owners == owners
    assert httpx.delete(f"{url}/loadBalancerSheddingEnabled", timeout=5).status_code == 204
    strategy = "org.apache.pulsar.broker.loadbalance.impl.OverloadShedder"
    assert httpx.post(f"{url}/loadBalancerLoadSheddingStrategy/{strategy}",
                      timeout=5).status_code == 204
    run_for(life, clock, 60)
    assert life.leader.decisions[-1].shedding == "OverloadShedder"
    assert life.leader.decisions[-1].gate is None


def test_a_crashed_broker_loses_its_bundles_and_comes_back_empty(
        quiet: tuple[TestCluster, Life, SteppedClock]) -> None:
    c, life, clock = quiet
    hot = next(iter(c.brokers))
    theirs = sorted(b for b, o in c.owners.items() if o == hot)
    life.crash(hot)
    assert hot not in c.brokers and not set(theirs) & set(c.owners)
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://{hot}/admin/v2/broker-stats/load-report", timeout=5)
    run_for(life, clock, 1)  # the clients look their bundles up on the other brokers
    assert {c.owners[b] for b in theirs} <= set(c.brokers) - {hot}
    life.restart(hot)
    report = _report(c, hot)
    assert report["bundles"] == [f"pulsar/test-cluster/{hot}/0x00000000_0xffffffff"]
    assert report["cpu"]["usage"] == pytest.approx(QUIET.usage(total([])).cpu.usage)


def test_a_split_divides_topics_and_traffic(quiet: tuple[TestCluster, Life, SteppedClock]) -> None:
    c, life, clock = quiet
    hot = next(iter(c.brokers))
    bundle = next(b for b, o in c.owners.items() if o == hot)
    parent = life.bundle_traffic(bundle, life.now)
    topics = set(life._bundle_topics[bundle])
    ns, rng = bundle.rsplit("/", 1)
    r = httpx.put(f"http://{hot}/admin/v2/namespaces/{ns}/{rng}/split",
                  params={"splitAlgorithmName": "range_equally_divide"}, timeout=5)
    assert r.status_code == 204
    lo, hi = (int(x, 16) for x in rng.split("_"))
    kids = sorted(b for b in c.owners if b.startswith(ns + "/")
                  and lo <= int(b.rsplit("/", 1)[1].split("_")[0], 16) < hi)
    assert len(kids) == 2 and bundle not in c.owners
    assert set().union(*(set(life._bundle_topics.get(k, ())) for k in kids)) == topics
    both = total(life.bundle_traffic(k, life.now) for k in kids)
    assert both.msg_rate_in == pytest.approx(parent.msg_rate_in)
    assert both.topics == parent.topics
    run_for(life, clock, 5)
    stats = _report(c, hot)["lastStats"]
    assert sum(stats[k]["topics"] for k in kids) == len(topics)


def test_the_fault_switch(acting: tuple[TestCluster, Life, SteppedClock]) -> None:
    c, life, clock = acting
    leader = life.leader
    assert leader is not None
    leader.fault.stuck = True
    run_for(life, clock, 3 * 60)
    assert leader.decisions == [] and leader.cycles == 3
    leader.fault.stuck = False
    leader.fault.skip_every = 2
    run_for(life, clock, 4 * 60)
    assert len(leader.decisions) == 2  # cycles 5 and 7 ran, 4 and 6 were skipped
    leader.fault.skip_every = 0
    leader.fault.deviate = {"loadBalancerSheddingEnabled": "false"}
    run_for(life, clock, 60)
    assert "loadBalancerSheddingEnabled" in (leader.decisions[-1].gate or "")
    runtime = httpx.get(c.admin_url + "/admin/v2/brokers/configuration/runtime", timeout=5).json()
    assert runtime.get("loadBalancerSheddingEnabled", "true") != "false"  # not what it advertises


def test_topic_stats_and_metrics_agree_with_the_reports(
        quiet: tuple[TestCluster, Life, SteppedClock]) -> None:
    c, life, _ = quiet
    hot = next(iter(c.brokers))
    report = _report(c, hot)
    topics = httpx.get(f"http://{hot}/admin/v2/broker-stats/topics", timeout=5).json()
    for ns, bundles in topics.items():
        for rng, kinds in bundles.items():
            rate = sum(t["msgRateIn"] for t in kinds["persistent"].values())
            assert rate == pytest.approx(report["lastStats"][f"{ns}/{rng}"]["msgRateIn"])
    text = httpx.get(f"http://{hot}/metrics", timeout=5).text
    cpu = report["cpu"]["usage"] / report["cpu"]["limit"] * 100
    line = next(x for x in text.splitlines() if x.startswith("pulsar_lb_cpu_usage{"))
    assert float(line.rsplit(" ", 1)[1]) == pytest.approx(cpu, rel=1e-6)


def test_a_namespace_lists_its_living_topics(
        quiet: tuple[TestCluster, Life, SteppedClock]) -> None:
    """``namespaces/{ns}/topics`` lists the topics the living cluster carries (those of
    /broker-stats/topics): it listed none once ``Life.attach`` took the scenario's topics, so
    ``lbctl split-bundle public/default -bt LARGEST --dry-run`` (split-bundle.md) failed with
    "Bundle range LARGEST not found" on the sandbox a reader starts."""
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    c, _, _ = quiet
    listed = httpx.get(c.admin_url + "/admin/v2/namespaces/public/default/topics?mode=ALL",
                       timeout=5).json()
    carried = {t for bundles in [httpx.get(f"http://{b}/admin/v2/broker-stats/topics",
                                           timeout=5).json() for b in c.brokers]
               for rng, kinds in bundles.get("public/default", {}).items()
               for t in kinds["persistent"]}
    assert carried and carried <= set(listed)
    res = CliRunner().invoke(app, ["--admin-url", c.admin_url, "split-bundle", "public/default",
                                   "-bt", "LARGEST", "--dry-run"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.stderr
    assert "dry run: nothing was sent" in res.stdout


def test_the_extensible_leader_transfers_straight() -> None:
    """TransferShedder on the living extensible cluster: the first cycle (one interval after the
    start) transfers from the 85 % broker, and the bundle is owned by its destination at once —
    a transfer has no unowned interval."""
    from lbctl.sandbox.scenarios import extensible_cluster, living

    c = extensible_cluster()
    try:
        clock = SteppedClock()
        life = living(c, clock, hosts="uniform")
        assert life.leader is not None
        run_for(life, clock, 60)
        first = life.leader.decisions[0]
        assert first.shedding == "TransferShedder"
        moved = [a for a in first.actions if a["action"] == "transfer" and "skipped" not in a]
        assert moved and all(a["broker"] == next(iter(c.brokers)) for a in moved)
        assert all(c.owners[a["bundle"]] == a["destinationBroker"] for a in moved)
        assert not c.pending
    finally:
        c.stop()


def test_the_hot_broker_scenario_sheds_its_bundles_without_splitting() -> None:
    """``lbctl sandbox``'s default cluster, alive: the hot broker's ``public/default`` bundles share
    its traffic equally, none over a split threshold, so the leader's first cycle unloads some of
    them and splits nothing (the walk through docs/commands/sandbox.md). The scenario's sample topic
    stats must not stand in for those bundles' own traffic (they did: three bundles then carried
    the whole hot broker and were split instead)."""
    from lbctl.sandbox.scenarios import SCENARIOS, living

    c = SCENARIOS["hot-broker"].start(3, 0, alive=True)
    try:
        clock = SteppedClock()
        life = living(c, clock)  # as lbctl sandbox: mixed hosts, seed 1
        hot = next(iter(c.brokers))
        mine = [b for b, o in c.owners.items() if o == hot and b.startswith("public/default/")]
        rates = [life.bundle_traffic(b, life.now).msg_rate_in for b in mine]
        assert len(mine) == 12 and max(rates) < 30_000  # loadBalancerNamespaceBundleMaxMsgRate
        assert max(rates) < 1.1 * min(rates)
        assert life.leader is not None
        run_for(life, clock, 60)
        first = life.leader.decisions[0]
        done = [a for a in first.actions if "skipped" not in a]
        assert done and {a["action"] for a in done} == {"unload"}
        assert all(a["broker"] == hot for a in done)
    finally:
        c.stop()


@pytest.mark.parametrize("name", ["balanced", "rolling-restart"])
def test_quiet_scenarios_stay_quiet_on_mixed_hosts(name: str) -> None:
    """``--scenario balanced`` and ``rolling-restart`` alive, on the mixed hosts ``lbctl sandbox``
    uses: each broker shows the load manager the scenario's figure (at most 50 %) even where its
    NIC, not its CPU, is what the traffic fills (a 32-core host's 10 Gbit/s), so the leader's
    first cycle moves nothing: ThresholdShedder's quiet baseline and PIP-220's idle broker, as
    docs/commands/sandbox.md says (a big host was at 75 % by bandwidth, and was shed)."""
    from lbctl.sandbox.scenarios import SCENARIOS, living

    scenario = SCENARIOS[name]
    c = scenario.start(scenario.default_brokers, 0, alive=True)
    try:
        clock = SteppedClock()
        life = living(c, clock)  # as lbctl sandbox: mixed hosts, seed 1
        assert max(w.usage for w in life.written.values()) < 0.55  # 50 % and the host noise
        assert life.leader is not None
        run_for(life, clock, 60)
        first = life.leader.decisions[0]
        assert not [a for a in first.actions if "skipped" not in a]
    finally:
        c.stop()
