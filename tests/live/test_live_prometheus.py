"""A live Prometheus scraping the loopback test cluster's ``/metrics`` every second for about half
a minute, an unload in the middle, and the history read back: what the brokers exported is what
the snapshots hold, and the unload is an observed decision of the leader."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lbctl.model.load import ResourceUsage
from lbctl.sandbox import TestCluster, hot_cluster
from lbctl.sources.snapshot import read_snapshots
from tests.live.live_helpers import Lbctl
from tests.prom_helpers import PrometheusServer, needs_prometheus

pytestmark = [pytest.mark.live, pytest.mark.slow, needs_prometheus]


@pytest.fixture
def scraped(tmp_path: Path) -> Iterator[tuple[TestCluster, PrometheusServer]]:
    c = hot_cluster(3, tokens=None)
    srv = PrometheusServer(tmp_path / "prom")
    try:
        srv.start(list(c.brokers), scrape_interval="1s")
        yield c, srv
    finally:
        srv.stop()
        c.stop()


def wait_for_samples(srv: PrometheusServer, n_brokers: int) -> None:
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        r = httpx.get(f"{srv.url}/api/v1/query", params={"query": "count(pulsar_lb_cpu_usage)"})
        res = r.json()["data"]["result"]
        if res and int(float(res[0]["value"][1])) == n_brokers:
            return
        time.sleep(0.5)
    raise AssertionError("Prometheus did not scrape the test cluster")


def test_a_scraped_sandbox_comes_back_with_the_unload_observed(scraped, tmp_path: Path) -> None:
    cluster, srv = scraped
    ids = list(cluster.brokers)
    wait_for_samples(srv, len(ids))
    time.sleep(12)
    moved = "public/default/" + cluster.ranges("public/default")[0]
    assert cluster.owners[moved] == ids[0]
    res = Lbctl(cluster, token=None)("unload", "public/default", "-b",
                                     moved.rsplit("/", 1)[1], "-d", ids[2], "--yes")
    assert res.exit_code == 0, res.output
    time.sleep(12)
    out = tmp_path / "live.jsonl"
    res = Lbctl(cluster, token=None)("snapshot", "from-prometheus", "--prometheus-url", srv.url,
                                     "--since", "40s", "--step", "2s", "-f", str(out))
    assert res.exit_code == 0, res.output
    states = read_snapshots([out])
    assert len(states) >= 10
    last = states[-1]
    assert last.cluster == cluster.cluster and set(last.brokers) == set(ids)
    for bid in ids:  # what each broker exported, bit for bit
        st = cluster.brokers[bid]
        b = last.brokers[bid]
        assert b.cpu.percent == ResourceUsage(*st.cpu).percent
        assert b.bandwidthOut.percent == ResourceUsage(*st.bw_out).percent
        report = cluster.load_report(bid)
        assert set(b.lastStats) == set(report["lastStats"])  # heartbeat bundle included
        for name, s in report["lastStats"].items():
            assert b.lastStats[name].msgRateIn == s["msgRateIn"]
            assert b.lastStats[name].topics == s["topics"]
    assert last.owners()[moved] == ids[2]
    with_move = [i for i, s in enumerate(states) if s.observed and s.observed.moves]
    assert len(with_move) == 1
    obs = states[with_move[0]].observed
    assert obs is not None
    assert [(m.bundle, m.source, m.destination) for m in obs.moves] == [(moved, ids[0], ids[2])]
    counted = [i for i, s in enumerate(states) if s.observed and s.observed.unloaded_bundles]
    # the leader's counter and the two owners are scraped at different instants: the counter's
    # increase falls in the move's interval or a neighbour
    assert len(counted) == 1 and abs(counted[0] - with_move[0]) <= 1
    assert states[counted[0]].observed.unloaded_bundles == 1  # type: ignore[union-attr]
    # explain puts the prediction next to it
    res = Lbctl(cluster, token=None)("explain", str(out), "--all-cycles")
    assert res.exit_code == 0 and "Observed (what the leader did" in res.stdout
