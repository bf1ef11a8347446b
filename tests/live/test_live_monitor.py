"""`lbctl monitor-brokers --once` against the loopback test cluster (3 and 200 brokers)."""

from __future__ import annotations

import json

import pytest

from lbctl.sandbox import Fault, hot_cluster
from tests.live.live_helpers import Lbctl, assert_no_secret

pytestmark = pytest.mark.live


def test_once_three_brokers_table(lbctl: Lbctl) -> None:
    res = lbctl("monitor-brokers", "--once")
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    hot = next(iter(lbctl.cluster.brokers))
    assert out.count("||SYSTEM") == 3 and "Overall Broker Data" in out
    assert f"{hot}  OVERLOADED" in out  # 90 % CPU >= 85 %
    total = [ln for ln in out.splitlines() if ln.startswith("TOTAL")][0]
    assert total.split()[1] == str(sum(len(lbctl.cluster.bundles_of(b)) + 1
                                       for b in lbctl.cluster.brokers))  # + heartbeat bundles
    assert_no_secret(res.stdout, res.stderr)


def test_once_json_matches_the_load_reports(lbctl: Lbctl) -> None:
    res = lbctl("monitor-brokers", "--once", "-o", "json", "--sort", "cpu")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    rows = doc["brokers"]
    assert [r["cpu"] for r in rows] == sorted((r["cpu"] for r in rows), reverse=True)
    hot = next(iter(lbctl.cluster.brokers))
    report = lbctl.cluster.load_report(hot)
    row = next(r for r in rows if r["broker"] == hot)
    assert row["overloaded"] and row["max"] == pytest.approx(90.0)
    assert row["latestMsgRateIn"] == pytest.approx(report["msgRateIn"])
    assert row["latestKBOut"] == pytest.approx(report["msgThroughputOut"] / 1024)
    # one sample: SHORT and LONG equal LATEST (the first sample overwrites the defaults)
    assert row["shortMsgRate"] == pytest.approx(row["latestMsgRate"])
    assert row["longKB"] == pytest.approx(row["latestKB"])
    assert doc["total"]["bundles"] == sum(r["bundles"] for r in rows)


def test_unreachable_broker_is_shown_stale_not_fatal(lbctl: Lbctl) -> None:
    bad = list(lbctl.cluster.brokers)[1]
    lbctl.cluster.faults.append(Fault(r"load-report", status=503, reason="Broker is not ready",
                                      broker=bad))
    res = lbctl("monitor-brokers", "--once", "--summary")
    assert res.exit_code == 0, res.stderr
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith(bad))
    assert "unreachable" in line and "503" in line and "Broker is not ready" in line


def test_csv_has_a_total_row(lbctl: Lbctl) -> None:
    res = lbctl("monitor-brokers", "--once", "-o", "csv")
    assert res.exit_code == 0
    lines = res.stdout.strip().splitlines()
    assert lines[0].startswith("cluster,at,broker,state,error,view,cpu")
    assert lines[-1].split(",")[2] == "TOTAL"
    assert len(lines) == 1 + 3 + 1


def test_bad_sort_column_suggests(lbctl: Lbctl) -> None:
    res = lbctl("monitor-brokers", "--once", "--sort", "cpuu")
    assert res.exit_code == 2 and "did you mean cpu" in res.stderr
    assert not lbctl.cluster.log  # nothing was requested


@pytest.mark.slow
def test_once_two_hundred_brokers() -> None:
    c = hot_cluster(200, bundles_per_broker=2, tokens=None, latency=0.05)
    try:
        res = Lbctl(c, token=None)("monitor-brokers", "--once", "--summary", "-o", "json")
        assert res.exit_code == 0, res.stderr
        doc = json.loads(res.stdout)
        assert len(doc["brokers"]) == 200
        assert all(r["state"] == "ok" for r in doc["brokers"])
        assert sum(r["overloaded"] for r in doc["brokers"]) == 1
        assert len(c.requests("GET", "load-report$")) == 200
    finally:
        c.stop()


def test_refreshes_average_across_samples(lbctl: Lbctl) -> None:
    hot = next(iter(lbctl.cluster.brokers))
    res = lbctl("monitor-brokers", "--count", "1", "-o", "json")
    assert res.exit_code == 0
    first = json.loads(res.stdout)
    res = lbctl("monitor-brokers", "--count", "2", "--interval", "0.1", "-o", "json")
    assert res.exit_code == 0, res.stderr
    docs = [json.loads(d) for d in res.stdout.replace("}\n{", "}\n\x00{").split("\x00")]
    assert len(docs) == 2
    row = next(r for r in docs[1]["brokers"] if r["broker"] == hot)
    assert row["samples"] == 2 and first["brokers"][0]["samples"] == 1
    # the same rates twice: the averages equal them (the leader's rule keeps a constant constant)
    assert row["shortMsgRateIn"] == pytest.approx(row["latestMsgRateIn"])


def test_refresh_reads_known_brokers_with_the_discovery(cluster) -> None:
    """After the first refresh the known brokers' load reports go out together with the broker
    list (one round trip); a broker that left is dropped, not shown as failing."""
    from lbctl.admin.auth import make_auth
    from lbctl.admin.client import AdminClient
    from lbctl.cli.monitor_loop import live_refresh
    from lbctl.monitor.brokers import BrokerMonitor
    from lbctl.sources.live import LiveSource
    from tests.live.live_helpers import ADMIN_TOKEN

    with AdminClient(cluster.admin_url, auth=make_auth("token", f"token:{ADMIN_TOKEN}")) as client:
        src = LiveSource(client, topics=False, namespaces=False)
        mon = BrokerMonitor()
        first = live_refresh(src, mon, [85.0])
        assert {r.broker for r in first.rows} == set(cluster.brokers)
        gone = list(cluster.brokers)[-1]
        del cluster.brokers[gone]
        cluster.log.clear()
        second = live_refresh(src, mon, [85.0])
    ok = {r.broker for r in second.rows if r.state == "ok"}
    assert ok == set(cluster.brokers) and gone not in {r.broker for r in second.rows}
    reports = [r.broker for r in cluster.log if r.path == "/admin/v2/broker-stats/load-report"]
    # one batch: each remaining broker's report asked once (not again after the broker list),
    # the departed broker's too (it was known), retried as reads are
    assert sorted(b for b in reports if b != gone) == sorted(cluster.brokers)
    assert gone in reports
    assert [r.path for r in cluster.log].count("/admin/v2/brokers") == 1


def test_a_simple_load_manager_broker_gets_the_legacy_view(lbctl: Lbctl) -> None:
    """A broker serving ``SimpleLoadManagerImpl``'s ``LoadReport`` is shown as BrokerMonitor's
    ``printLoadReport`` does (COUNT, RAW SYSTEM, ALLOC SYSTEM, RAW MSG, ALLOC MSG); the others
    keep the modular view."""
    c = lbctl.cluster
    simple = list(c.brokers)[1]
    c.brokers[simple].simple_lm = True
    res = lbctl("monitor-brokers", "--once", "-o", "json")
    assert res.exit_code == 0, res.stderr
    rows = {r["broker"]: r for r in json.loads(res.stdout)["brokers"]}
    row = rows[simple]
    assert row["view"] == "simple" and row["state"] == "ok"
    cpu_usage, cpu_limit = c.brokers[simple].cpu
    assert row["allocCpu"] == pytest.approx(100 * min(1.0, 0.8 * cpu_usage / cpu_limit))
    assert row["allocMsgRate"] == pytest.approx(0.8 * row["latestMsgRate"])
    assert {r["view"] for b, r in rows.items() if b != simple} == {"modular"}
    text = lbctl("monitor-brokers", "--once")
    assert text.exit_code == 0
    block = text.stdout.split(simple)[1]
    assert "||ALLOC SYSTEM" in block and "||RAW MSG" in block
    assert "*SHORT/LONG: lbctl's own averages" in text.stdout
