"""The Prometheus beside the sandbox (lbctl.sandbox.prometheus): what it records from each broker's
``/metrics``, how it answers ``/api/v1/series`` and ``/api/v1/query_range`` as lbctl asks them,
and ``lbctl snapshot from-prometheus`` / ``recommend --prometheus-url`` end to end over real HTTP
(before it, both ended in ``404 Not Found`` on ``/api/v1/series``)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import TestCluster, hot_cluster, prometheus
from lbctl.sandbox.prometheus import RETENTION, Store, answer, go_float, parse_exposition

pytestmark = pytest.mark.live
httpx = pytest.importorskip("httpx")

T0 = 1_800_000_000.0  # a wall time, in seconds


@pytest.fixture
def c() -> Iterator[TestCluster]:
    cl = hot_cluster(3)
    yield cl
    cl.stop()


def _ask(store: Store, path: str, params: dict[str, str | list[str]]
         ) -> tuple[int, dict[str, Any]]:
    """The API's answer to ``path`` with these query parameters (each one value, or a list)."""
    got = answer(store, path, {k: v if isinstance(v, list) else [v] for k, v in params.items()})
    assert got is not None
    return got


def test_each_scrape_keeps_every_broker_series_with_its_instance(c: TestCluster) -> None:
    store = Store()
    store.scrape(c, T0)
    first = next(iter(c.brokers))
    c.brokers[first].cpu = (50.0, 100.0)
    store.scrape(c, T0 + 15)
    status, body = _ask(store, "/api/v1/query_range", {
        "query": 'last_over_time(pulsar_lb_cpu_usage{cluster="test-cluster"}[14999ms])',
        "start": str(int(T0)), "end": str(int(T0) + 30), "step": "15"})
    assert status == 200 and body["status"] == "success"
    data = body["data"]
    assert data["resultType"] == "matrix"
    by = {r["metric"]["instance"]: r["values"] for r in data["result"]}
    assert set(by) == set(c.brokers)
    assert all("__name__" not in r["metric"] and r["metric"]["job"] == "pulsar"
               for r in data["result"])
    # each step takes the last sample of (t − window, t]; the step at T0+30 has none
    assert by[first] == [[int(T0), "90"], [int(T0) + 15, "50"]]


def test_series_and_selectors_as_lbctl_sends_them(c: TestCluster) -> None:
    store = Store()
    store.scrape(c, T0)
    status, body = _ask(store, "/api/v1/series", {
        "match[]": ['pulsar_rate_in{cluster="test-cluster",topic!=""}',
                    'pulsar_lb_cpu_usage{broker=~"127\\\\.0\\\\..*"}'],
        "start": str(int(T0) - 60), "end": str(int(T0))})
    assert status == 200
    names = {s["__name__"] for s in body["data"]}
    assert names == {"pulsar_rate_in", "pulsar_lb_cpu_usage"}
    assert all(s["topic"] for s in body["data"] if s["__name__"] == "pulsar_rate_in")
    # out of the time range: nothing
    _, later = _ask(store, "/api/v1/series", {"match[]": "pulsar_lb_cpu_usage",
                                              "start": str(int(T0) + 1),
                                              "end": str(int(T0) + 60)})
    assert later["data"] == []


@pytest.mark.parametrize("params", [
    {"query": "sum(pulsar_lb_cpu_usage", "start": "1", "end": "2", "step": "1"},
    {"query": "pulsar_lb_cpu_usage", "start": "2", "end": "1", "step": "1"},
    {"query": "pulsar_lb_cpu_usage", "start": "1", "end": "2", "step": "0"},
    {"query": "pulsar_lb_cpu_usage", "start": "x", "end": "2", "step": "1"},
    {"query": "pulsar_lb_cpu_usage", "start": "0", "end": "20000", "step": "1"},
    {"query": '{cluster=""}', "start": "1", "end": "2", "step": "1"},
])
def test_what_it_cannot_evaluate_is_prometheus_bad_data(params: dict[str, str | list[str]]
                                                        ) -> None:
    status, body = _ask(Store(), "/api/v1/query_range", params)
    assert status == 400
    assert body["status"] == "error" and body["errorType"] == "bad_data" and body["error"]


def test_old_samples_leave_after_the_retention_or_past_the_cap(
        c: TestCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store()
    store.scrape(c, T0)
    store.scrape(c, T0 + RETENTION + 1)
    assert all(pts.times[0] >= (T0 + 1) * 1000 for pts in store.series.values())
    assert store.samples == sum(len(p.times) for p in store.series.values()) == len(store.series)
    monkeypatch.setattr(prometheus, "MAX_SAMPLES", 2 * len(store.series))
    for i in range(2, 6):
        store.scrape(c, T0 + RETENTION + i)
    # the two last scrapes kept: the cap holds, and the newest samples are never the ones dropped
    assert store.samples <= 2 * len(store.series)
    assert {p.times[-1] for p in store.series.values()} == {(T0 + RETENTION + 5) * 1000}
    assert {len(p.times) for p in store.series.values()} == {2}


def test_values_are_written_as_go_does() -> None:
    assert [go_float(v) for v in (90.0, 24.414062, 1e21, 0.1, -0.0, float("inf"))] == \
        ["90", "24.414062", "1000000000000000000000", "0.1", "-0", "+Inf"]
    assert parse_exposition('a{x="q\\"uote"} 1.5\n# HELP a b\nbroken{ 2\n') == \
        [("a", (("x", 'q"uote'),), 1.5)]


def test_from_prometheus_reads_the_sandbox_end_to_end(c: TestCluster, tmp_path: Path) -> None:
    c.keep_scraping(interval=0.2)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        store = c.prometheus
        assert store is not None
        if len({t // 1000 for t in store.scrapes}) >= 3:
            break
        time.sleep(0.1)
    url = c.admin_url
    r = httpx.get(f"{url}/api/v1/series", params={"match[]": "pulsar_lb_cpu_usage"}, timeout=5)
    assert r.status_code == 200 and len(r.json()["data"]) == 3
    out = tmp_path / "p.jsonl"
    res = CliRunner().invoke(app, ["--admin-url", url, "snapshot", "from-prometheus",
                                   "--prometheus-url", url, "--since", "5s", "--step", "1s",
                                   "--reference", "live", "-f", str(out)])
    assert res.exit_code == 0, res.output
    snaps = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    assert snaps
    assert set(snaps[-1]["brokers"]) == set(c.brokers)
    res = CliRunner().invoke(app, ["--admin-url", url, "recommend", "--prometheus-url", url,
                                   "--since", "5s", "--step", "1s", "-o", "json"])
    assert res.exit_code == 0, res.output


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def test_a_split_inside_a_step_s_window_reads_as_the_children(c: TestCluster,
                                                              tmp_path: Path) -> None:
    """lbctl reads ``last_over_time(…[step])``, which still returns the split parent's last
    sample in the first window after the split, beside its children's first ones; the history
    reader took both, overlapping ranges, and the whole read failed ("expected bundles of one
    namespace not to overlap"). The parent is the stale one (Pulsar never merges bundles)."""
    c.reports_as_written = False  # as Pulsar's load-report and `lbctl sandbox` serve them
    store = c.prometheus = Store()
    store.scrape(c, T0)
    store.scrape(c, T0 + 15)
    owner, parent = next((b, x) for x, b in sorted(c.owners.items())
                         if x.startswith("public/default/"))
    r = httpx.put(f"{c.admin_url}/admin/v2/namespaces/{parent}/split",
                  params={"unload": "false"}, timeout=5)
    assert r.status_code in (200, 204), r.text
    assert parent not in c.owners
    store.scrape(c, T0 + 30)
    store.scrape(c, T0 + 45)
    out = tmp_path / "p.jsonl"
    url = c.admin_url
    res = CliRunner().invoke(app, ["snapshot", "from-prometheus", "--prometheus-url", url,
                                   "--start", _iso(T0), "--end", _iso(T0 + 60), "--step", "60s",
                                   "-f", str(out)])
    assert res.exit_code == 0, res.output
    snaps = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    first, last = snaps[0], snaps[-1]
    assert parent in first["brokers"][owner]["lastStats"]
    names = {x for b in last["brokers"].values() for x in b["lastStats"]}
    assert parent not in names
    lo, hi = parent.rsplit("/", 1)[1].split("_")
    children = [x for x in names if x.startswith("public/default/")
                and lo <= x.rsplit("/", 1)[1].split("_")[0] < hi]
    assert len(children) == 2
