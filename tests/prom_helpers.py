"""A real Prometheus for the tests (Debian's ``prometheus`` package: ``prometheus`` and ``promtool``).

* :func:`openmetrics` writes known snapshots as the OpenMetrics text a Pulsar cluster's ``/metrics``
  would have produced over time (names and labels as ``PrometheusMetricsGenerator`` writes them:
  ``brk_`` → ``pulsar_``, ``cluster`` plus the entry's dimensions; ``instance`` and ``job`` as
  Prometheus' scrape adds them), for ``promtool tsdb create-blocks-from openmetrics``;
* :class:`PrometheusServer` backfills such text (or scrapes given targets) and serves the HTTP API
  on a loopback port, as a child process stopped by its pid;
* :func:`history` generates a known modular history (brokers, bundles, moves, the leader's
  counters) to round-trip.

Tests skip, with the reason shown by ``pytest -rs``, when the binaries are absent (``.ci/run``
installs them).
"""

from __future__ import annotations

import math
import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx  # noqa: TID253  # the scripted Prometheus answers of the mock-transport tests
import orjson
import pytest

from lbctl.model.bundle import default_boundaries, format_position
from lbctl.model.cluster import iso_time
from lbctl.model.load import ResourceUsage

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
MISSING = ("prometheus/promtool not installed (apt-get install prometheus; .ci/run installs it)"
           if not (PROMETHEUS and PROMTOOL) else "")
needs_prometheus = pytest.mark.skipif(bool(MISSING), reason=MISSING)

RESOURCE_NAMES = {"cpu": "pulsar_lb_cpu_usage", "memory": "pulsar_lb_memory_usage",
                  "directMemory": "pulsar_lb_directMemory_usage",
                  "bandwidthIn": "pulsar_lb_bandwidth_in_usage",
                  "bandwidthOut": "pulsar_lb_bandwidth_out_usage"}
BUNDLE_NAMES = {"msgRateIn": "pulsar_bundle_msg_rate_in", "msgRateOut": "pulsar_bundle_msg_rate_out",
                "msgThroughputIn": "pulsar_bundle_msg_throughput_in",
                "msgThroughputOut": "pulsar_bundle_msg_throughput_out",
                "topics": "pulsar_bundle_topics_count",
                "consumerCount": "pulsar_bundle_consumer_count",
                "producerCount": "pulsar_bundle_producer_count"}
MIB = 1024 * 1024


def java_float(x: float) -> str:
    """``String.valueOf(Float)``-like: the shortest decimal that reads back as the same float."""
    import struct

    f = struct.unpack("<f", struct.pack("<f", x))[0]
    for digits in range(1, 10):
        text = f"{f:.{digits}g}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == f:
            return text
    return repr(f)


def _labels(d: Mapping[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in d.items()) + "}"


@dataclass
class Counters:
    """The leader's counters per step: step index → broker id → metric name → value."""

    values: dict[int, dict[str, dict[str, float]]] = field(default_factory=dict)


def openmetrics(snapshots: Sequence[Mapping[str, Any]], *, bundle_metrics: bool = True,
                topic_metrics: Sequence[Mapping[str, Mapping[str, Any]]] | None = None,
                limits: bool = True, counters: Counters | None = None,
                extensible: Sequence[Mapping[str, Mapping[str, float]]] | None = None,
                job: str = "pulsar", skip: set[tuple[int, str]] | None = None) -> str:
    """OpenMetrics text of ``snapshots`` (snapshot v1 dicts, one per step, ``capturedAt`` in epoch
    ms); ``skip`` holds (step, broker) pairs left unscraped."""
    skip = skip or set()
    families: dict[str, list[tuple[str, list[tuple[int, str]]]]] = {}
    series: dict[tuple[str, str], list[tuple[int, str]]] = {}

    def put(name: str, labels: Mapping[str, str], t_ms: int, value: str) -> None:
        key = (name, _labels(labels))
        if key not in series:
            series[key] = []
            families.setdefault(name, []).append((key[1], series[key]))
        series[key].append((t_ms, value))

    for i, snap in enumerate(snapshots):
        t = snap["capturedAt"]
        cluster = snap["cluster"]
        for bid, rep in snap["brokers"].items():
            if (i, bid) in skip:
                continue
            host = bid.rsplit(":", 1)[0]
            base = {"cluster": cluster, "broker": host, "instance": bid, "job": job}
            for r, name in RESOURCE_NAMES.items():
                ru = rep[r]
                put(name, {**base, "metric": "loadBalancing"}, t,
                    java_float(ResourceUsage(ru["usage"], ru["limit"]).percent))
            if limits:
                put("jvm_memory_bytes_max", {**base, "area": "heap"}, t,
                    repr(rep["memory"]["limit"] * MIB))
                put("jvm_memory_direct_bytes_max", base, t, repr(rep["directMemory"]["limit"] * MIB))
            if extensible is not None:
                for feature, v in extensible[i][bid].items():
                    put("pulsar_lb_resource_usage", {**base, "feature": feature,
                                                     "metric": "loadBalancing"}, t, repr(v))
            if bundle_metrics:
                for bundle, st in rep["lastStats"].items():
                    for k, name in BUNDLE_NAMES.items():
                        put(name, {**base, "bundle": bundle, "metric": "bundle"}, t, repr(st[k]))
            if topic_metrics is not None:
                for topic, st in topic_metrics[i].items():
                    if st["broker"] != bid:
                        continue
                    ns = "/".join(topic.split("://", 1)[1].split("/")[:2])
                    tl = {"cluster": cluster, "namespace": ns, "topic": topic, "instance": bid,
                          "job": job}
                    for k, name in (("msgRateIn", "pulsar_rate_in"), ("msgRateOut", "pulsar_rate_out"),
                                    ("msgThroughputIn", "pulsar_throughput_in"),
                                    ("msgThroughputOut", "pulsar_throughput_out"),
                                    ("producerCount", "pulsar_producers_count"),
                                    ("consumerCount", "pulsar_consumers_count")):
                        put(name, tl, t, repr(st[k]))
            if counters is not None:
                for name, v in counters.values.get(i, {}).get(bid, {}).items():
                    if "breakdown" in name:
                        metric, result, reason = name.split("|")
                        labels = {**base, "metric": "bundleUnloading", "result": result,
                                  "reason": reason}
                        put(metric, labels, t, repr(v))
                    else:
                        put(name, {"cluster": cluster, "instance": bid, "job": job,
                                   "metric": "bundleUnloading"}, t, repr(v))
    out = []
    for name, members in families.items():
        for labels, points in members:
            for t, v in points:
                out.append(f"{name}{labels} {v} {t // 1000}.{t % 1000:03d}\n")
    out.append("# EOF\n")
    return "".join(out)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PrometheusServer:
    """A Prometheus on a loopback port over a private data directory; stopped by its own pid."""

    def __init__(self, workdir: Path):
        self.dir = workdir
        self.data = workdir / "data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def backfill(self, text: str) -> None:
        """``promtool tsdb create-blocks-from openmetrics`` of ``text`` into the data directory."""
        assert PROMTOOL is not None
        src = self.dir / "history.om"
        src.write_text(text)
        r = subprocess.run([PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", str(src),
                            str(self.data)], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"promtool failed: {r.stderr[-2000:]}")
        src.unlink()

    def start(self, targets: Sequence[str] = (), *, scrape_interval: str = "1s") -> None:
        assert PROMETHEUS is not None
        conf = self.dir / "prometheus.yml"
        lines = [f"global:\n  scrape_interval: {scrape_interval}\n  evaluation_interval: 1m\n"]
        if targets:
            lines.append("scrape_configs:\n  - job_name: pulsar\n    honor_labels: true\n"
                         "    static_configs:\n      - targets: [" +
                         ", ".join(f'"{t}"' for t in targets) + "]\n")
        conf.write_text("".join(lines))
        self.log = open(self.dir / "prometheus.log", "wb")  # noqa: SIM115  # closed in stop()
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={conf}", f"--storage.tsdb.path={self.data}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=100y",
             "--log.level=warn"], stdout=self.log, stderr=subprocess.STDOUT)
        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("prometheus exited: " + (self.dir / "prometheus.log").read_text()[-2000:])
            try:
                if httpx.get(f"{self.url}/-/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError("prometheus did not become ready in 60 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        if getattr(self, "log", None) is not None:
            self.log.close()


def prometheus_with(text: str) -> Iterator[PrometheusServer]:
    """A started Prometheus holding ``text`` (a generator for fixtures)."""
    tmp = Path(tempfile.mkdtemp(prefix="lbctl-prom-"))
    srv = PrometheusServer(tmp)
    try:
        srv.backfill(text)
        srv.start()
        yield srv
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)


# ---- a known history -----------------------------------------------------------------------------
@dataclass
class History:
    snapshots: list[dict[str, Any]]
    counters: Counters
    moves: dict[int, list[tuple[str, str, str]]]  # step → (bundle, from, to) until the next step
    leader_of: dict[int, str]


def history(*, brokers: int = 20, bundles: int = 500, steps: int = 180, step_ms: int = 60_000,
            namespaces: int = 5, seed: int = 7, end_ms: int | None = None,
            cluster: str = "prom-test") -> History:
    """A modular history: ``brokers`` brokers, ``bundles`` bundles over ``namespaces`` namespaces,
    ``steps`` one-``step_ms`` samples ending two steps before ``end_ms`` (default: now, rounded to
    the step). Between samples the leader (broker 0, then broker 1 from the middle on) unloads a
    few bundles; its counters say so."""
    rnd = random.Random(seed)
    if end_ms is None:
        end_ms = (int(time.time() * 1000) // step_ms) * step_ms - 2 * step_ms
    start = end_ms - (steps - 1) * step_ms
    ids = [f"broker-{i:02d}.pulsar.svc:8080" for i in range(brokers)]
    per_ns = bundles // namespaces
    names: list[str] = []
    ns_bounds: dict[str, list[str]] = {}
    for n in range(namespaces):
        ns = f"tenant-{n}/ns"
        b = default_boundaries(per_ns)
        ns_bounds[ns] = [format_position(x) for x in b]
        names += [f"{ns}/{format_position(lo)}_{format_position(hi)}" for lo, hi in zip(b, b[1:], strict=False)]
    owner = {name: ids[i % brokers] for i, name in enumerate(names)}
    base = {name: (rnd.uniform(5, 500), rnd.uniform(5, 800), rnd.randint(1, 8)) for name in names}
    hot = set(rnd.sample(ids, min(3, brokers - 1)))
    counters = Counters()
    totals = {bid: {"pulsar_lb_unload_bundle_total": 0.0, "pulsar_lb_unload_broker_total": 0.0,
                    "pulsar_lb_bundles_split_total": 0.0} for bid in ids}
    moves: dict[int, list[tuple[str, str, str]]] = {}
    leader_of: dict[int, str] = {}
    snaps = []
    for k in range(steps):
        t = start + k * step_ms
        leader = ids[0] if k < steps // 2 else ids[1]
        leader_of[k] = leader
        wave = 1 + 0.3 * math.sin(k / 17)
        reports: dict[str, Any] = {}
        for bid in ids:
            stats = {}
            for name in sorted(n for n, o in owner.items() if o == bid):
                r_in, r_out, topics = base[name]
                f = wave * (3.0 if bid in hot else 1.0) * (1 + 0.05 * rnd.random())
                stats[name] = {"msgRateIn": r_in * f, "msgThroughputIn": r_in * f * 1024.5,
                               "msgRateOut": r_out * f, "msgThroughputOut": r_out * f * 998.25,
                               "consumerCount": topics * 2, "producerCount": topics,
                               "topics": topics, "cacheSize": 0}
            load = sum(s["msgRateIn"] + s["msgRateOut"] for s in stats.values())
            cpu = min(99.0, 5 + load / 400 + rnd.uniform(0, 3))
            reports[bid] = {
                "cpu": {"usage": cpu * 8, "limit": 800.0},
                "memory": {"usage": rnd.uniform(500, 3500), "limit": 4096.0},
                "directMemory": {"usage": float(rnd.randint(100, 1800)), "limit": 2048.0},
                "bandwidthIn": {"usage": load * 9.7, "limit": 1250000.0},
                "bandwidthOut": {"usage": load * 11.3, "limit": 1250000.0},
                "lastStats": stats, "lastUpdate": t,
            }
        snaps.append({"format": "lbctl/snapshot@1", "cluster": cluster, "capturedAt": t,
                      "config": {"loadBalancerBrokerThresholdShedderPercentage": "5"},
                      "namespaces": {ns: {"boundaries": b, "numBundles": len(b) - 1}
                                     for ns, b in ns_bounds.items()},
                      "brokers": reports})
        # counters as scraped at step k: exported by the brokers that have been leader
        counters.values[k] = {bid: dict(v) for bid, v in totals.items()
                              if bid == ids[0] or (bid == ids[1] and k >= steps // 2)}
        # the leader's decisions until the next sample
        step_moves = []
        if k % 3 == 1:
            src = rnd.choice(sorted(hot))
            mine = sorted(n for n, o in owner.items() if o == src)
            for name in rnd.sample(mine, min(2, len(mine))):
                dst = rnd.choice([b for b in ids if b not in hot])
                owner[name] = dst
                step_moves.append((name, src, dst))
            totals[leader]["pulsar_lb_unload_bundle_total"] += len(step_moves)
            totals[leader]["pulsar_lb_unload_broker_total"] += 1 if step_moves else 0
        moves[k] = step_moves
    return History(snaps, counters, moves, leader_of)


def iso(ms: int) -> str:
    return iso_time(ms)


# ---- a scripted Prometheus HTTP API (httpx.MockTransport handlers) ---------------------------------
#: the series a mock Prometheus lists for every broker: the five load-balancing usages and the
#: per-bundle metrics
LB_SERIES = ("pulsar_lb_cpu", "pulsar_lb_mem", "pulsar_lb_dir", "pulsar_lb_band", "pulsar_bundle_")


def series_labels(name: str, broker: str) -> dict[str, str]:
    """A broker's series labels as Pulsar's exporter and the scrape give them."""
    return {"__name__": name, "cluster": "c", "broker": broker.split(":")[0], "instance": broker}


def series_answer(query: Mapping[str, list[str]], brokers: Sequence[str],
                  prefixes: tuple[str, ...] = LB_SERIES) -> httpx.Response:
    """``/api/v1/series``: every broker carries the asked series if its name has one of
    ``prefixes``."""
    name = query["match[]"][0].split("{")[0]
    data = [series_labels(name, b) for b in brokers] if name.startswith(prefixes) else []
    return httpx.Response(200, content=orjson.dumps({"status": "success", "data": data}))


def matrix_answer(result: list[dict[str, Any]]) -> httpx.Response:
    """A range query's successful answer."""
    return httpx.Response(200, content=orjson.dumps({"status": "success", "data": {
        "resultType": "matrix", "result": result}}))


class TwoBrokerPrometheus:
    """A loopback Prometheus API for two brokers of ``cluster`` over real HTTP: ``/api/v1/series``
    and ``/api/v1/query_range`` answer as Prometheus would (one sample of ``value`` at the
    query's start), unless ``series`` / ``query_range`` give the answer (a JSON-able value, or
    bytes as they are); ``mutate(endpoint, body)`` may then change the body on its way out (the
    hostile answers' tests). Stop it with :meth:`stop`."""

    def __init__(self, cluster: str, *, series: Any = None, query_range: Any = None,
                 mutate: Any = None, value: str = "1") -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler
        from urllib.parse import parse_qs, urlsplit

        from tests.loopback_http import LoopbackHTTPServer, send_json

        brokers = ["127.0.0.1:8080", "127.0.0.1:8081"]

        def good_series(q: dict[str, list[str]]) -> Any:
            name = q["match[]"][0].split("{")[0]
            return {"status": "success", "data": [
                {"__name__": name, "cluster": cluster, "broker": "127.0.0.1", "instance": b}
                for b in brokers]}

        def good_range(q: dict[str, list[str]]) -> Any:
            return {"status": "success", "data": {"resultType": "matrix", "result": [
                {"metric": {"__name__": "x", "cluster": cluster, "instance": b},
                 "values": [[float(q["start"][0]), value]]} for b in brokers]}}

        answers = {"series": series or good_series, "query_range": query_range or good_range}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                u = urlsplit(self.path)
                endpoint = u.path.rsplit("/", 1)[-1]
                answer = answers[endpoint](parse_qs(u.query))
                body = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                if mutate is not None:
                    body = mutate(endpoint, body)
                send_json(self, body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
