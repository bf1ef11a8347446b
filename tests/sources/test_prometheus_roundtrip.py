"""The round trip snapshot → metrics → Prometheus → snapshot, on a real Prometheus.

A known 3-hour, 1-minute history of 20 brokers × 500 bundles (modular, per-bundle metrics, the
leader's counters, a leader change half way) is written as the OpenMetrics text the brokers'
``/metrics`` would have produced, backfilled with ``promtool tsdb create-blocks-from openmetrics``,
served by ``prometheus`` on a loopback port and read back by ``lbctl``. Every field the metrics
carry must come back (percentages bit for bit, rates and counts exactly), ``recommend --all-cycles``
must plan the same on both sequences, and the leader's decisions must be the observed ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest
from typer.testing import CliRunner

from lbctl.admin.prometheus import PrometheusClient
from lbctl.cli.app import app
from lbctl.model.cluster import iso_time
from lbctl.sources.prometheus import HistoryRequest, Reference, read_history
from lbctl.sources.snapshot import read_snapshots
from lbctl.sources.snapshot_schema import parse_snapshot
from tests.prom_helpers import history, needs_prometheus, openmetrics, prometheus_with

pytestmark = [needs_prometheus, pytest.mark.slow]

BROKERS, BUNDLES, STEPS = 20, 500, 180
RESOURCES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")


class Backfilled:
    def __init__(self, tmp: Path) -> None:
        self.history = history(brokers=BROKERS, bundles=BUNDLES, steps=STEPS)
        snaps = self.history.snapshots
        self.original = [parse_snapshot(s, f"original:{i}") for i, s in enumerate(snaps)]
        self.file = tmp / "original.jsonl"
        self.file.write_bytes(b"".join(orjson.dumps(s) + b"\n" for s in snaps))
        self.start, self.end = snaps[0]["capturedAt"], snaps[-1]["capturedAt"]
        self.text = openmetrics(snaps, counters=self.history.counters)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Backfilled:
    return Backfilled(tmp_path_factory.mktemp("prom-roundtrip"))


@pytest.fixture(scope="module")
def prom(data: Backfilled) -> Iterator[str]:
    for srv in prometheus_with(data.text):
        yield srv.url


@pytest.fixture(scope="module")
def rebuilt(data: Backfilled, prom: str):
    with PrometheusClient(prom) as client:
        states, report = read_history(client, HistoryRequest(
            data.start, data.end, 60_000, reference=Reference.of(data.original[0], "original")))
    return states, report


def test_every_field_the_metrics_carry_comes_back(data: Backfilled, rebuilt) -> None:
    states, report = rebuilt
    assert report.lines() == []  # no gap, no warning
    assert [s.captured_at for s in states] == [s.captured_at for s in data.original]
    assert len(states) == STEPS
    for orig, back in zip(data.original, states, strict=True):
        assert back.cluster == orig.cluster
        assert dict(back.config) == dict(orig.config)
        assert dict(back.namespaces) == dict(orig.namespaces)
        assert list(back.brokers) == list(orig.brokers)
        for bid, o in orig.brokers.items():
            b = back.brokers[bid]
            for r in RESOURCES:  # the exported float, bit for bit
                assert getattr(b, r).percent == getattr(o, r).percent, (bid, r)
            # limits where the JVM exports them (heap and direct memory, in MiB)
            assert b.memory.limit == pytest.approx(o.memory.limit, rel=1e-12)
            assert b.directMemory.limit == o.directMemory.limit
            assert b.lastUpdate == o.lastUpdate
            assert list(b.lastStats) == list(o.lastStats)
            for name, st in o.lastStats.items():
                assert b.lastStats[name] == st, name  # rates as doubles, counts exactly
            for k in ("msgRateIn", "msgRateOut", "msgThroughputIn", "msgThroughputOut"):
                assert getattr(b, k) == pytest.approx(getattr(o, k), rel=1e-12)
            for k in ("numTopics", "numBundles", "numConsumers", "numProducers"):
                assert getattr(b, k) == getattr(o, k)


def test_recommend_all_cycles_plans_the_same(data: Backfilled, prom: str) -> None:
    runner = CliRunner()
    orig = runner.invoke(app, ["recommend", str(data.file), "--all-cycles", "-o", "json"])
    assert orig.exit_code == 0, orig.output
    back = runner.invoke(app, [
        "recommend", "--prometheus-url", prom, "--start", iso_time(data.start),
        "--end", iso_time(data.end), "--step", "1m", "--reference", str(data.file),
        "--all-cycles", "-o", "json"])
    assert back.exit_code == 0, back.output
    a, b = json.loads(orig.stdout)["cycles"], json.loads(back.stdout)["cycles"]
    assert len(a) == len(b) == STEPS
    assert sum(c["summary"]["unloads"] for c in a) > 20  # the history has decisions to make
    assert a == b


def test_the_leaders_decisions_are_observed(data: Backfilled, rebuilt) -> None:
    states, _ = rebuilt
    h = data.history
    for k, st in enumerate(states[:-1]):
        obs = st.observed
        assert obs is not None and obs.until == states[k + 1].captured_at
        assert obs.unloaded_bundles == len(h.moves[k]), k
        assert obs.unloaded_brokers == (1 if h.moves[k] else 0)
        assert obs.split_bundles == 0
        assert {(m.bundle, m.source, m.destination) for m in obs.moves} == set(h.moves[k])
        if h.moves[k]:  # the counter that moved is the leader's, before and after the change
            assert any(h.leader_of[k] in n for n in obs.notes)
    # nothing after the last sample: nothing observed
    assert states[-1].observed is None


def test_chunked_queries_read_the_same_history(data: Backfilled, prom: str, rebuilt) -> None:
    """At most 7 points per series and request: 31 steps (30 snapshots and the one after) in 5
    chunks per metric, the same sequence as one request per metric."""
    states, _ = rebuilt
    end = data.start + 29 * 60_000
    with PrometheusClient(prom, max_points=7) as client:
        chunked, _ = read_history(client, HistoryRequest(
            data.start, end, 60_000, reference=Reference.of(data.original[0], "original")))
    assert chunked == list(states[:30])
    ranges = [parse_qs(urlsplit(u).query) for u in client.sent if "/query_range?" in u]
    points = [(int(float(q["end"][0])) - int(float(q["start"][0]))) // 60 + 1 for q in ranges]
    assert points and max(points) <= 7
    per_query: dict[str, list[tuple[float, float]]] = {}
    for q in ranges:
        per_query.setdefault(q["query"][0], []).append((float(q["start"][0]), float(q["end"][0])))
    for spans in per_query.values():  # consecutive, gap-free, on the step grid
        assert spans[0][0] * 1000 == data.start and spans[-1][1] * 1000 == end + 60_000
        assert all(b[0] - a[1] == 60 for a, b in zip(spans, spans[1:], strict=False))


def test_snapshot_from_prometheus_writes_a_valid_marked_sequence(data: Backfilled, prom: str,
                                                               tmp_path: Path) -> None:
    out = tmp_path / "week.jsonl.gz"
    res = CliRunner().invoke(app, [
        "snapshot", "from-prometheus", "--prometheus-url", prom, "--start", iso_time(data.start),
        "--end", iso_time(data.start + 9 * 60_000), "-f", str(out)])
    assert res.exit_code == 0, res.output
    assert "wrote" in res.stderr and "10 snapshot(s)" in res.stderr
    states = read_snapshots([out])
    assert len(states) == 10
    import gzip

    first = orjson.loads(gzip.decompress(out.read_bytes()).splitlines()[0])
    assert first["reconstructed"] == ["brokers", "observed"]
    assert first["rebuiltFrom"]["prometheus"] == prom
    broker = next(iter(first["brokers"].values()))
    assert {"cpu", "lastStats", "lastUpdate"} <= set(broker["reconstructed"])
    assert "namespaces" not in first  # no reference given: boundaries unknown
    valid = CliRunner().invoke(app, ["snapshot", "validate", str(out)])
    assert valid.exit_code == 0 and valid.stdout.count("OK") == 10


def test_explain_compares_the_prediction_with_what_the_leader_did(data: Backfilled,
                                                                   prom: str) -> None:
    args = ["explain", "--prometheus-url", prom, "--start", iso_time(data.start),
            "--end", iso_time(data.start + 20 * 60_000), "--reference", str(data.file),
            "--all-cycles"]
    res = CliRunner().invoke(app, [*args, "-o", "json"])
    assert res.exit_code == 0, res.output
    cycles = json.loads(res.stdout)["cycles"]
    assert len(cycles) == 21
    h = data.history
    for k, c in enumerate(cycles[:-1]):
        obs = c["observed"]
        assert obs["unloads"]["observed"] == len(h.moves[k])
        assert obs["unloads"]["predicted"] == c["summary"]["unloads"]
        moved = {m["bundle"] for m in obs["bundles"] if m["observed"]}
        assert moved == {b for b, _, _ in h.moves[k]}
    assert any(not c["observed"]["agree"] for c in cycles) or all(
        c["observed"]["agree"] for c in cycles)  # computed for every cycle
    text = CliRunner().invoke(app, args)
    assert text.exit_code == 0
    assert "Observed (what the leader did from" in text.stdout
    assert "predicted" in text.stdout
