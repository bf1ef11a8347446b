"""Snapshots from Prometheus on a real Prometheus, beyond the main round trip: gaps (a broker not
scraped, a step without any sample) are marked, never filled; per-topic metrics summed per bundle
with the reference's boundaries; the extensible load manager's features and decision breakdown;
the counters' old ``*_count`` names; a Prometheus holding several clusters; and the one-line
errors of a Prometheus that is down, slow or answers with partial data.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from lbctl.admin.prometheus import PrometheusClient
from lbctl.cli.app import app
from lbctl.errors import UsageError
from lbctl.model.bundle import default_boundaries, format_position, locate, topic_hash
from lbctl.model.cluster import iso_time
from lbctl.model.load import ResourceUsage
from lbctl.sources.prometheus import HistoryRequest, Reference, read_history
from lbctl.sources.snapshot_schema import parse_snapshot
from tests.loopback_http import LoopbackHTTPServer, send_json
from tests.prom_helpers import Counters, free_port, needs_prometheus, openmetrics, prometheus_with

pytestmark = [needs_prometheus, pytest.mark.slow]

STEP = 60_000
END = (int(time.time() * 1000) // STEP) * STEP - 10 * STEP
BROKERS = [f"10.0.0.{i}:8080" for i in range(1, 5)]


def ranges(ns: str, n: int) -> tuple[list[str], list[str]]:
    b = default_boundaries(n)
    text = [format_position(x) for x in b]
    return text, [f"{ns}/{lo}_{hi}" for lo, hi in zip(text, text[1:], strict=False)]


def modular(cluster: str, steps: int) -> list[dict[str, Any]]:
    bounds, names = ranges("acme/orders", 8)
    start = END - (steps - 1) * STEP
    out = []
    for k in range(steps):
        brokers = {}
        for i, bid in enumerate(BROKERS):
            stats = {n: {"msgRateIn": 10.0 * (j + 1) + k, "msgThroughputIn": 1e4 * (j + 1),
                         "msgRateOut": 20.0 * (j + 1), "msgThroughputOut": 2e4 * (j + 1) + k,
                         "consumerCount": j, "producerCount": 1, "topics": j + 1, "cacheSize": 0}
                     for j, n in enumerate(names) if j % len(BROKERS) == i}
            brokers[bid] = {"cpu": {"usage": 10.0 + 20 * i + k / 7, "limit": 100.0},
                            "memory": {"usage": 1000.0 + i, "limit": 4096.0},
                            "directMemory": {"usage": 100.0, "limit": 1024.0},
                            "bandwidthIn": {"usage": 1e5, "limit": 1e7},
                            "bandwidthOut": {"usage": 2e5 + i, "limit": 1e7},
                            "lastStats": stats, "lastUpdate": start + k * STEP}
        out.append({"format": "lbctl/snapshot@1", "cluster": cluster,
                    "capturedAt": start + k * STEP, "brokers": brokers,
                    "namespaces": {"acme/orders": {"boundaries": bounds, "numBundles": 8}}})
    return out


def merge(*texts: str) -> str:
    """Several OpenMetrics texts as one (each metric's lines together, series order kept)."""
    lines = [ln for t in texts for ln in t.splitlines(keepends=True) if not ln.startswith("#")]
    lines.sort(key=lambda ln: ln.split("{", 1)[0])  # stable: a series' samples stay in order
    return "".join(lines) + "# EOF\n"


# ---- the data -------------------------------------------------------------------------------------
GAPPY = modular("gappy", 20)
SKIP = {(5, BROKERS[1]), (6, BROKERS[1])} | {(10, b) for b in BROKERS}
#: as scraped: bundle MOVING leaves broker 0 for broker 3 between steps 15 and 16, and both
#: brokers' scrapes in step 15 carry it
MOVING = "acme/orders/0x00000000_0x20000000"
GAPPY_SCRAPED = json.loads(json.dumps(GAPPY))
GAPPY_SCRAPED[15]["brokers"][BROKERS[3]]["lastStats"][MOVING] = GAPPY[15]["brokers"][BROKERS[0]][
    "lastStats"][MOVING]
for _k in range(16, 20):
    GAPPY_SCRAPED[_k]["brokers"][BROKERS[3]]["lastStats"][MOVING] = GAPPY_SCRAPED[_k]["brokers"][
        BROKERS[0]]["lastStats"].pop(MOVING)
OLD_COUNTERS = Counters({k: {BROKERS[0]: {"pulsar_lb_unload_bundle_count": float(k // 4),
                                          "pulsar_lb_unload_broker_count": float(k // 8),
                                          "pulsar_lb_bundles_split_count": 0.0}}
                         for k in range(20)})

TOPIC_BOUNDS, _ = ranges("acme/orders", 4)
TOPICS_SNAPS = modular("topics", 6)
_TB = tuple(int(x, 16) for x in TOPIC_BOUNDS)
TOPIC_STATS = [{f"persistent://acme/orders/t-{j}": {
    # a topic is served by its bundle's owner: bundle i of 4 on broker i
    "broker": BROKERS[_TB.index(locate(_TB, topic_hash(f"persistent://acme/orders/t-{j}")).lower)],
    "msgRateIn": 1.5 * j + k, "msgRateOut": 2.0 * j,
    "msgThroughputIn": 100.0 * j, "msgThroughputOut": 300.0 * j + k, "producerCount": 1,
    "consumerCount": j % 3} for j in range(30)} for k in range(6)]

EXT_SNAPS = modular("ext", 6)
EXT_FEATURES = [{b: {"max_ema": 0.1 * (i + 1) + 0.01 * k, "max": 0.2 * (i + 1)}
                 for i, b in enumerate(BROKERS)} for k in range(6)]
BREAKDOWN = "pulsar_lb_unload_broker_breakdown_total"
EXT_COUNTERS = Counters({k: {BROKERS[0]: {
    "pulsar_lb_unload_bundle_total": float(2 * k), "pulsar_lb_unload_broker_total": float(k),
    f"{BREAKDOWN}|Success|Overloaded": float(2 * k), f"{BREAKDOWN}|Skip|Balanced": float(k // 2),
    "pulsar_lb_bundles_split_total": 0.0, "pulsar_lb_bundles_split_breakdown_total|Success|MsgRate": 0.0,
}} for k in range(6)})


@pytest.fixture(scope="module")
def prom() -> Iterator[str]:
    gappy = openmetrics(GAPPY_SCRAPED, counters=OLD_COUNTERS, skip=SKIP)
    t3 = GAPPY[3]["capturedAt"]
    half = f'instance="{BROKERS[2]}"'  # a partial scrape: broker 2's CPU figure missing at step 3
    gappy = "".join(ln for ln in gappy.splitlines(keepends=True)
                    if not (ln.startswith("pulsar_lb_cpu_usage{") and half in ln
                            and ln.rstrip().endswith(f" {t3 // 1000}.000")))
    text = merge(
        gappy,
        openmetrics(TOPICS_SNAPS, bundle_metrics=False, topic_metrics=TOPIC_STATS),
        openmetrics(EXT_SNAPS, bundle_metrics=False, topic_metrics=TOPIC_STATS,
                    extensible=EXT_FEATURES, counters=EXT_COUNTERS))
    for srv in prometheus_with(text):
        yield srv.url


def read(prom: str, snaps: list[dict[str, Any]], cluster: str, ref: Reference | None = None,
         **kw: Any):
    with PrometheusClient(prom, **kw) as c:
        return read_history(c, HistoryRequest(snaps[0]["capturedAt"], snaps[-1]["capturedAt"],
                                              STEP, cluster, ref))


# ---- gaps -------------------------------------------------------------------------------------------
def test_a_broker_not_scraped_is_left_out_and_marked(prom: str, tmp_path: Path) -> None:
    states, report = read(prom, GAPPY, "gappy")
    by_time = {s.captured_at: s for s in states}
    t5, t6, t10 = (GAPPY[k]["capturedAt"] for k in (5, 6, 10))
    assert BROKERS[1] not in by_time[t5].brokers and BROKERS[1] not in by_time[t6].brokers
    assert set(by_time[GAPPY[4]["capturedAt"]].brokers) == set(BROKERS)
    assert report.broker_gaps == {BROKERS[1]: 2, BROKERS[2]: 1}
    s3 = by_time[GAPPY[3]["capturedAt"]]  # a half-scraped broker is left out, not made up
    assert set(s3.brokers) == set(BROKERS) - {BROKERS[2]}
    assert t10 not in by_time and len(states) == 19  # the step without any sample
    assert report.empty_steps == 1
    lines = report.lines()
    assert any("1 of 20 step(s) had no sample" in ln for ln in lines)
    assert any(f"{BROKERS[1]} at 2 step(s)" in ln for ln in lines)
    # in the file: marked under "gaps"
    out = tmp_path / "g.jsonl"
    res = CliRunner().invoke(app, ["snapshot", "from-prometheus", "--prometheus-url", prom,
                                   "--start", iso_time(GAPPY[0]["capturedAt"]),
                                   "--end", iso_time(GAPPY[-1]["capturedAt"]), "--cluster",
                                   "gappy", "-f", str(out)])
    assert res.exit_code == 0, res.output
    assert "lbctl: warning: 1 of 20 step(s) had no sample" in res.stderr
    lines_out = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    gaps5 = next(s for s in lines_out if s["capturedAt"] == iso_time(t5))["gaps"]
    assert any(BROKERS[1] in g and "left out" in g for g in gaps5)
    gaps11 = next(s for s in lines_out if s["capturedAt"] == iso_time(GAPPY[11]["capturedAt"]))
    assert any("no sample from any broker at 1 step(s)" in g for g in gaps11["gaps"])
    assert "gaps" not in lines_out[0]
    gaps3 = next(s for s in lines_out if s["capturedAt"] == iso_time(GAPPY[3]["capturedAt"]))
    assert f"broker {BROKERS[2]}: no sample of cpu in the step before " \
           f"{iso_time(GAPPY[3]['capturedAt'])}; left out" in gaps3["gaps"]


def test_a_bundle_two_brokers_carry_in_one_step_has_one_owner(prom: str) -> None:
    """Scrapes on both sides of a move: the owner is the broker that still carries it next."""
    states, _ = read(prom, GAPPY, "gappy")
    by_time = {s.captured_at: s for s in states}
    s14, s15 = (by_time[GAPPY[k]["capturedAt"]] for k in (14, 15))
    assert s14.owners()[MOVING] == BROKERS[0] and s15.owners()[MOVING] == BROKERS[3]
    assert s14.observed is not None
    assert [(m.bundle, m.source, m.destination) for m in s14.observed.moves] == [
        (MOVING, BROKERS[0], BROKERS[3])]
    with PrometheusClient(prom) as c:
        from lbctl.sources.prometheus import PrometheusHistory

        snaps = list(PrometheusHistory(c, HistoryRequest(
            GAPPY[15]["capturedAt"], GAPPY[15]["capturedAt"], STEP, "gappy")).snapshots())
    assert f"{MOVING} carried by {BROKERS[0]}, {BROKERS[3]} in the same step (moving); kept " \
           f"with {BROKERS[3]}" in snaps[0]["gaps"]


def test_old_counter_names_are_read(prom: str) -> None:
    """Before Pulsar 2.11 (apache/pulsar#16611) the counters were named *_count."""
    states, _ = read(prom, GAPPY, "gappy")
    by_time = {s.captured_at: s for s in states}
    obs3 = by_time[GAPPY[3]["capturedAt"]].observed
    assert obs3 is not None and obs3.unloaded_bundles == 1 and obs3.split_bundles == 0
    obs2 = by_time[GAPPY[2]["capturedAt"]].observed
    assert obs2 is not None and obs2.unloaded_bundles == 0
    # around the empty step the interval runs to the next snapshot: 9 → 11
    obs9 = by_time[GAPPY[9]["capturedAt"]].observed
    assert obs9 is not None and obs9.until == GAPPY[11]["capturedAt"]
    assert obs9.unloaded_bundles == 11 // 4 - 9 // 4


# ---- per-topic metrics -----------------------------------------------------------------------------
def test_topics_are_summed_per_bundle_with_the_reference_boundaries(prom: str) -> None:
    ref = Reference({"acme/orders": tuple(int(x, 16) for x in TOPIC_BOUNDS)}, {}, "test")
    states, report = read(prom, TOPICS_SNAPS, "topics", ref)
    assert len(states) == 6 and report.lines() == []
    bounds = ref.namespaces["acme/orders"]
    for k, st in enumerate(states):
        expected: dict[tuple[str, str], dict[str, float]] = {}
        for topic, v in TOPIC_STATS[k].items():
            bundle = f"acme/orders/{locate(bounds, topic_hash(topic))}"
            acc = expected.setdefault((v["broker"], bundle), {"in": 0.0, "tpo": 0.0, "topics": 0,
                                                              "cons": 0})
            acc["in"] += v["msgRateIn"]
            acc["tpo"] += v["msgThroughputOut"]
            acc["topics"] += 1
            acc["cons"] += v["consumerCount"]
        got = {(b, n): s for b, rep in st.brokers.items() for n, s in rep.lastStats.items()}
        assert set(got) == set(expected)
        for key, e in expected.items():
            assert got[key].msgRateIn == pytest.approx(e["in"], rel=1e-12)
            assert got[key].msgThroughputOut == pytest.approx(e["tpo"], rel=1e-12)
            assert (got[key].topics, got[key].consumerCount) == (e["topics"], e["cons"])
        assert len(st.topics) == 30 and st.namespaces["acme/orders"] == bounds


def test_topics_without_a_reference_is_a_clear_error(prom: str) -> None:
    res = CliRunner().invoke(app, ["recommend", "--prometheus-url", prom, "--cluster", "topics",
                                   "--start", iso_time(TOPICS_SNAPS[0]["capturedAt"]),
                                   "--end", iso_time(TOPICS_SNAPS[-1]["capturedAt"])])
    assert res.exit_code == 2
    assert res.stderr.startswith("lbctl: error: Prometheus has per-topic but no per-bundle")
    assert res.stderr.count("\n") == 1


# ---- the extensible load manager ------------------------------------------------------------------
def test_extensible_features_and_decision_breakdown(prom: str, tmp_path: Path) -> None:
    ref = Reference({"acme/orders": tuple(int(x, 16) for x in TOPIC_BOUNDS)}, {}, "test")
    states, _ = read(prom, EXT_SNAPS, "ext", ref)
    assert all(s.load_manager == "extensible" for s in states)
    for k, st in enumerate(states):
        for b in BROKERS:
            pub = st.broker_load_data[b]
            assert pub.data.weightedMaxEMA == EXT_FEATURES[k][b]["max_ema"]
            assert pub.data.maxResourceUsage == EXT_FEATURES[k][b]["max"]
            assert pub.data.cpu.percent == ResourceUsage(**EXT_SNAPS[k]["brokers"][b]["cpu"]).percent
            assert "msgThroughputEMA" in pub.reconstructed and "weightedMaxEMA" not in pub.reconstructed
            assert st.top_bundles_load_data[b].reconstructed == ("topBundlesLoadData",)
        if k < 5:
            obs = st.observed
            assert obs is not None and obs.unloaded_bundles == 2 and obs.unloaded_brokers == 1
            expected = {"Success/Overloaded": 2}
            if (k + 1) // 2 != k // 2:
                expected["Skip/HitCount"] = 1  # labelled Balanced by older releases
            assert dict(obs.unload_breakdown) == expected
    span = ["explain", "--prometheus-url", prom, "--cluster", "ext",
            "--start", iso_time(EXT_SNAPS[0]["capturedAt"]),
            "--end", iso_time(EXT_SNAPS[-2]["capturedAt"]), "--all-cycles", "-o", "json"]
    # --reference live needs an admin URL that answers: nothing listens here
    res = CliRunner().invoke(app, ["--admin-url", f"http://127.0.0.1:{free_port()}",
                                   "--request-timeout", "2", *span, "--reference", "live"])
    assert res.exit_code == 3 and res.stderr.startswith("lbctl: error: ")
    ref = tmp_path / "ref.json"
    ref.write_text(json.dumps({"format": "lbctl/snapshot@1", "cluster": "ext",
                               "capturedAt": 0, "brokers": {}, "namespaces": {
                                   "acme/orders": {"boundaries": TOPIC_BOUNDS}}}))
    res = CliRunner().invoke(app, [*span, "--reference", str(ref)])
    assert res.exit_code == 0, res.output
    for c in json.loads(res.stdout)["cycles"]:  # the extensible breakdown, by reason
        reasons = c["observed"]["reasons"]
        assert reasons["observed"] == {"Success/Overloaded": 2}
        assert sum(reasons["predicted"].values()) == c["observed"]["unloads"]["predicted"]


def test_several_clusters_need_cluster(prom: str) -> None:
    res = CliRunner().invoke(app, ["recommend", "--prometheus-url", prom, "--since", "1d"])
    assert res.exit_code == 2
    assert "several Pulsar clusters (ext, gappy, topics); choose one with --cluster" in res.stderr


# ---- down, slow, partial ---------------------------------------------------------------------------
class _Proxy(BaseHTTPRequestHandler):
    """Forwards to the real Prometheus, slowly (``delay``) or adding ``warnings``; ``ended`` cuts
    a delay short when the test ends (the client gave up long before)."""

    upstream = ""
    delay = 0.0
    warnings: list[str] = []
    ended = threading.Event()

    def do_GET(self) -> None:  # the http.server API's name
        import httpx

        if self.ended.wait(self.delay):
            return  # no answer: nobody is waiting for it
        r = httpx.get(self.upstream + self.path, timeout=30)
        body = r.json()
        if self.warnings and self.path.startswith("/api/v1/query_range"):
            body["warnings"] = self.warnings
        data = json.dumps(body).encode()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            send_json(self, data, r.status_code)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def proxy(prom: str) -> Iterator[type[_Proxy]]:
    handler = type("P", (_Proxy,), {"upstream": prom, "delay": 0.0, "warnings": [],
                                    "ended": threading.Event()})
    srv = LoopbackHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    handler.url = f"http://127.0.0.1:{srv.server_address[1]}"  # type: ignore[attr-defined]
    yield handler
    handler.ended.set()
    srv.shutdown()
    srv.server_close()  # joins the request threads


def test_a_slow_prometheus_times_out_in_one_line(proxy) -> None:
    proxy.delay = 3.0
    t0 = time.monotonic()
    res = CliRunner().invoke(app, ["--request-timeout", "1", "recommend", "--prometheus-url",
                                   proxy.url, "--cluster", "gappy", "--start",
                                   iso_time(GAPPY[0]["capturedAt"]), "--end",
                                   iso_time(GAPPY[-1]["capturedAt"])])
    assert res.exit_code == 4
    assert res.stderr == (f"lbctl: error: GET {proxy.url}/api/v1/series: no answer within 1 s "
                          "(--request-timeout)\n")
    assert time.monotonic() - t0 < 10  # a slow answer is not retried


def test_partial_data_fails_or_is_marked(proxy, tmp_path: Path) -> None:
    proxy.warnings = ["remote store eu-1 unavailable"]
    args = ["snapshot", "from-prometheus", "--prometheus-url", proxy.url, "--cluster", "gappy",
            "--start", iso_time(GAPPY[0]["capturedAt"]), "--end", iso_time(GAPPY[3]["capturedAt"])]
    out = tmp_path / "p.jsonl"
    res = CliRunner().invoke(app, [*args, "-f", str(out)])
    assert res.exit_code == 11 and res.stderr.count("\n") == 1
    assert "partial data (remote store eu-1 unavailable)" in res.stderr
    assert not out.exists()  # never half a file
    res = CliRunner().invoke(app, [*args, "--allow-partial", "-f", str(out)])
    assert res.exit_code == 0, res.output
    assert "warning: Prometheus warned (partial data" in res.stderr
    for line in out.read_bytes().splitlines():
        snap = orjson.loads(line)
        assert "Prometheus warned: remote store eu-1 unavailable" in snap["gaps"]
        parse_snapshot(snap, "p")


# ---- simulate and compare read the same history ----------------------------------------------------
def test_simulate_and_compare_from_prometheus(prom: str) -> None:
    span = ["--prometheus-url", prom, "--cluster", "gappy",
            "--start", iso_time(GAPPY[0]["capturedAt"]), "--end", iso_time(GAPPY[-1]["capturedAt"])]
    res = CliRunner().invoke(app, ["simulate", *span, "--cycles", "3", "-o", "json"])
    assert res.exit_code == 0, res.output
    sim = json.loads(res.stdout)
    assert len(sim["cycles"]) == 3
    assert sorted(b["broker"] for b in sim["cycles"][0]["brokers"]) == sorted(BROKERS)
    assert sim["cluster"] == "gappy" and sim["traceSnapshots"] == 19  # 20 steps, one empty
    assert "warning: " in res.stderr  # the gaps of that range are said
    # the rebuilt bandwidth limits are percentages over 100, not NIC speeds: the simulated hosts
    # keep the exported percentages (they were millions of percent)
    assert max(b["load"] for c in sim["cycles"] for b in c["brokers"]) < 2.0
    res = CliRunner().invoke(app, ["compare", *span, "--cycles", "3", "--strategy",
                                   "ThresholdShedder", "--strategy", "UniformLoadShedder",
                                   "-o", "json"])
    assert res.exit_code == 0, res.output
    assert [r["shedding"] for r in json.loads(res.stdout)["runs"]] == [
        "ThresholdShedder", "UniformLoadShedder"]


def test_propose_learns_from_a_prometheus_range(prom: str) -> None:
    """``propose`` takes the same flags as recommend, explain, simulate and compare: the last
    step is planned, the load model learnt from the whole range."""
    span = ["--prometheus-url", prom, "--cluster", "gappy",
            "--start", iso_time(GAPPY[0]["capturedAt"]), "--end", iso_time(GAPPY[-1]["capturedAt"])]
    res = CliRunner().invoke(app, ["propose", *span, "--solver", "greedy", "-o", "json"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)
    assert plan["cluster"] == "gappy"
    assert plan["explanation"]["model"]["fittedOn"] == "history"
    assert sorted(plan["explanation"]["model"]["brokers"]) == sorted(BROKERS)


def test_a_reference_of_another_cluster_is_refused(prom: str) -> None:
    """A snapshot of another cluster as `--reference`: one line, exit 2 — its namespaces were
    written into every snapshot (no bundle of them at any step "agreed" with its boundaries) and
    its settings taken for this cluster's, silently."""
    other = Reference({"acme/orders": tuple(int(x, 16) for x in TOPIC_BOUNDS)}, {}, "prod.json",
                      "prod")
    with pytest.raises(UsageError) as e:
        read(prom, TOPICS_SNAPS, "topics", other)
    assert str(e.value) == ("--reference prod.json: a snapshot of cluster 'prod', but Prometheus "
                            "is read for cluster 'topics': its bundle boundaries and settings are "
                            "another cluster's")
    same = Reference(other.namespaces, {}, "topics.json", "topics")
    assert len(read(prom, TOPICS_SNAPS, "topics", same)[0]) == 6
