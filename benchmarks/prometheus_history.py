"""How long rebuilding a history from Prometheus takes, next to reading the same history from a file.

    python benchmarks/prometheus_history.py [--brokers 20] [--bundles 500] [--steps 180]
                                            [--repeat 3] [--keep DIR]

The issue's size (issue 30: 24 h × 100 brokers × 500 bundles) is ``--steps 1440 --brokers 100``
(generating and backfilling it takes minutes: ``--keep DIR`` keeps the backfilled Prometheus and
the .jsonl there and reuses them on the next run).

Generates the tests' known modular history (tests/prom_helpers.py: --steps one-minute samples of
--brokers brokers × --bundles bundles, per-bundle metrics and the leader's counters), backfills it
into a private Prometheus on a loopback port (`promtool tsdb create-blocks-from openmetrics`), then
times, interleaved --repeat times, `lbctl snapshot from-prometheus`'s work over the whole range
(discovery, every request, assembling, validating and writing the .jsonl: `write_history`) and, as
the baseline, `read_snapshots` of the original .jsonl. Prints the machine's load (the cores are
shared: read the figures with it), the medians of both (wall and this process's CPU) and their
ratios next to issue 30's goal (≤ 2×), Prometheus' own CPU during the read (Linux: it shares the
cores with lbctl), the requests sent and the points per request; and, as the floor under the
read, the CPU of only asking and decoding the same range queries (the admin client's
`query_ranges`, nothing built) as a ratio to the baseline; and what Prometheus spends evaluating
those queries when it writes nothing (each wrapped in ``count()``: one number per step back), so
the rest of its CPU is writing the answers' JSON. The last line is issue 30's row (its figure,
measured at 24 h × 100 brokers × 500 bundles) next to this run's. Needs Debian's `prometheus`
package. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

GOAL = 2.0  # issue 30: a Prometheus read costs at most twice the .jsonl read of the same history
#: issue 30's row: `snapshot from-prometheus`, 24 h x 100 brokers x 500 bundles, wall ratio to the
#: .jsonl read of the same history, as the issue measured it
ISSUE_ROW = 7.8


def prepare(where: Path, brokers: int, bundles: int, steps: int) -> tuple[int, int]:
    """The original .jsonl and a backfilled Prometheus data directory under ``where`` (reused
    when already there); the history's first and last times."""
    import orjson
    import prom_helpers as ph

    marker = where / "range.txt"
    if marker.exists():
        first, last = map(int, marker.read_text().split())
        print(f"reusing the history backfilled in {where}")
        return first, last
    t = time.perf_counter()
    h = ph.history(brokers=brokers, bundles=bundles, steps=steps)
    (where / "original.jsonl").write_bytes(b"".join(orjson.dumps(s) + b"\n" for s in h.snapshots))
    text = ph.openmetrics(h.snapshots, counters=h.counters)
    print(f"generated {steps} samples of {brokers} brokers x {bundles} bundles "
          f"({text.count(chr(10)):,} OpenMetrics lines) in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    ph.PrometheusServer(where / "prom").backfill(text)
    print(f"backfilled Prometheus in {time.perf_counter() - t:.1f} s")
    first, last = h.snapshots[0]["capturedAt"], h.snapshots[-1]["capturedAt"]
    marker.write_text(f"{first} {last}")
    return first, last


def server_cpu(pid: int) -> float | None:
    """CPU seconds the Prometheus process has used so far (Linux' /proc), or None elsewhere:
    its work during a read comes on top of lbctl's on the same cores."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def answers_cpu(client: Any, req: Any) -> float:
    """CPU seconds of asking the read's range queries, chunk by chunk, and decoding the answers
    (``PrometheusClient.query_ranges``), with nothing built from them; the cyclic collector
    paused, as ``write_history`` pauses it."""
    from lbctl.collector import collector_paused
    from lbctl.sources.prometheus import PrometheusHistory

    hist = PrometheusHistory(client, req)
    c = time.process_time()
    with collector_paused():
        for s, e in hist._plan():
            client.query_ranges([q for _, _, q in hist._queries(s, e)])
    return time.process_time() - c


def evaluating_cpu(client: Any, req: Any, pid: int) -> float | None:
    """Prometheus' CPU seconds for evaluating the read's range queries with next to nothing
    written back: each query wrapped in ``count()`` (one number per step), so the same series
    are selected and the same ``last_over_time`` windows evaluated; what a full read costs it
    beyond this is writing the answers' JSON (Linux' /proc; None elsewhere)."""
    from lbctl.admin.prometheus import RangeQuery
    from lbctl.sources.prometheus import PrometheusHistory

    hist = PrometheusHistory(client, req)
    c0 = server_cpu(pid)
    for s, e in hist._plan():
        client.query_ranges([RangeQuery(f"count({q.query})", q.start_ms, q.end_ms, q.step_ms, 1)
                             for _, _, q in hist._queries(s, e)])
    c1 = server_cpu(pid)
    return None if c0 is None or c1 is None else c1 - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", type=int, default=20)
    ap.add_argument("--bundles", type=int, default=500)
    ap.add_argument("--steps", type=int, default=180)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="keep (or reuse) the backfilled history here")
    args = ap.parse_args()

    import prom_helpers as ph

    from lbctl.admin.prometheus import PrometheusClient
    from lbctl.sources.prometheus import HistoryRequest, write_history
    from lbctl.sources.snapshot import read_snapshots

    if ph.MISSING:
        sys.exit(ph.MISSING)
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        first, last = prepare(where, args.brokers, args.bundles, args.steps)
        srv = ph.PrometheusServer(where / "prom")
        srv.start()
        try:
            base_wall, base_cpu, prom_wall, prom_cpu, ask_cpu = [], [], [], [], []
            server: list[float] = []
            evaluating: list[float] = []
            assert srv.proc is not None
            pid = srv.proc.pid
            for _ in range(args.repeat):
                w, c = time.perf_counter(), time.process_time()
                base = read_snapshots([where / "original.jsonl"])
                base_wall.append(time.perf_counter() - w)
                base_cpu.append(time.process_time() - c)
                del base
                out = Path(tmp) / "rebuilt.jsonl"
                with PrometheusClient(srv.url) as client:
                    s0 = server_cpu(pid)
                    w, c = time.perf_counter(), time.process_time()
                    report = write_history(client, HistoryRequest(first, last, 60_000), str(out))
                    prom_wall.append(time.perf_counter() - w)
                    prom_cpu.append(time.process_time() - c)
                    s1 = server_cpu(pid)
                    if s0 is not None and s1 is not None:
                        server.append(s1 - s0)
                    ranges = [parse_qs(urlsplit(u).query) for u in client.sent
                              if "/query_range?" in u]
                    points = [round((float(q["end"][0]) - float(q["start"][0])) / 60) + 1
                              for q in ranges]
                with PrometheusClient(srv.url) as client:
                    ask_cpu.append(answers_cpu(client, HistoryRequest(first, last, 60_000)))
                with PrometheusClient(srv.url) as client:
                    ev = evaluating_cpu(client, HistoryRequest(first, last, 60_000), pid)
                    if ev is not None:
                        evaluating.append(ev)
        finally:
            srv.stop()
    med = statistics.median
    bw, bc, pw, pc = med(base_wall), med(base_cpu), med(prom_wall), med(prom_cpu)
    print(f"machine: {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} (1/5/15 min; the cores are shared)")
    print(f"history: {report.snapshots} snapshots of {args.brokers} brokers x {args.bundles} "
          f"bundles; medians of {args.repeat} interleaved runs")
    print(f"baseline: read_snapshots of the original .jsonl: {bw:.2f} s wall, {bc:.2f} s CPU")
    print(f"from-prometheus ({len(client.sent)} requests, {len(ranges)} range queries of at most "
          f"{max(points)} points): {pw:.2f} s wall, {pc:.2f} s CPU (lbctl's process; "
          f"Prometheus' own is another process's), {pw / report.snapshots * 1000:.1f} ms per "
          "snapshot")
    print(f"ratio to the baseline: {pw / bw:.2f}x wall, {pc / bc:.2f}x CPU  (goal <= {GOAL:g}x "
          f"wall: {'met' if pw / bw <= GOAL else 'NOT met'})")
    if server:
        sc = med(server)
        print(f"Prometheus' own CPU during the read: {sc:.2f} s = {sc / bc:.2f}x the baseline's "
              f"CPU (lbctl's and Prometheus' together: {(pc + sc) / bc:.2f}x)")
        if evaluating:
            ec = med(evaluating)
            print(f"  of which evaluating the queries (the same queries in count(), nothing "
                  f"written): {ec:.2f} s; writing the answers' JSON: about {max(0.0, sc - ec):.2f} s")
    ac = med(ask_cpu)
    print(f"of which the floor, asking and decoding the same range queries (nothing built): "
          f"{ac:.2f} s CPU = {ac / bc:.2f}x the baseline's CPU")
    print(f"issue 30's row (24 h x 100 brokers x 500 bundles): {ISSUE_ROW:g}x wall; this run "
          f"({report.snapshots} snapshots of {args.brokers} x {args.bundles}): {pw / bw:.2f}x wall; "
          f"goal <= {GOAL:g}x")


if __name__ == "__main__":
    main()
