"""How long rebuilding a history from Prometheus takes, next to reading the same history from a file.

    python benchmarks/prometheus_history.py [--brokers 20] [--bundles 500] [--steps 180]
                                            [--max-points 11000]

Generates the tests' known modular history (tests/prom_helpers.py: --steps one-minute samples of
--brokers brokers × --bundles bundles, per-bundle metrics and the leader's counters), backfills it
into a private Prometheus on a loopback port (`promtool tsdb create-blocks-from openmetrics`), then
times `lbctl snapshot from-prometheus` over the whole range (every request, chunking, assembling,
validating and writing the .jsonl) and, as the baseline, `read_snapshots` of the original .jsonl.
Prints both and their ratio, the requests sent and the points per request. Needs Debian's
`prometheus` package. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", type=int, default=20)
    ap.add_argument("--bundles", type=int, default=500)
    ap.add_argument("--steps", type=int, default=180)
    ap.add_argument("--max-points", type=int, default=11_000)
    args = ap.parse_args()

    import orjson
    import prom_helpers as ph

    from lbctl.admin.prometheus import PrometheusClient
    from lbctl.sources.prometheus import HistoryRequest, write_history
    from lbctl.sources.snapshot import read_snapshots

    if ph.MISSING:
        sys.exit(ph.MISSING)
    t = time.perf_counter()
    h = ph.history(brokers=args.brokers, bundles=args.bundles, steps=args.steps)
    text = ph.openmetrics(h.snapshots, counters=h.counters)
    print(f"generated {args.steps} samples of {args.brokers} brokers x {args.bundles} bundles "
          f"({text.count(chr(10)):,} OpenMetrics lines) in {time.perf_counter() - t:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        original = Path(tmp) / "original.jsonl"
        original.write_bytes(b"".join(orjson.dumps(s) + b"\n" for s in h.snapshots))
        srv = ph.PrometheusServer(Path(tmp) / "prom")
        t = time.perf_counter()
        srv.backfill(text)
        srv.start()
        print(f"backfilled and started Prometheus in {time.perf_counter() - t:.1f} s")
        try:
            t = time.perf_counter()
            base = read_snapshots([original])
            baseline = time.perf_counter() - t
            out = Path(tmp) / "rebuilt.jsonl"
            with PrometheusClient(srv.url, max_points=args.max_points) as client:
                t = time.perf_counter()
                report = write_history(client, HistoryRequest(
                    h.snapshots[0]["capturedAt"], h.snapshots[-1]["capturedAt"], 60_000), str(out))
                took = time.perf_counter() - t
                ranges = [parse_qs(urlsplit(u).query) for u in client.sent if "/query_range?" in u]
                points = [round((float(q["end"][0]) - float(q["start"][0])) / 60) + 1
                          for q in ranges]
            print(f"baseline: read_snapshots of the original .jsonl ({len(base)} snapshots): "
                  f"{baseline:.2f} s")
            print(f"from-prometheus ({report.snapshots} snapshots, {len(client.sent)} requests, "
                  f"{len(ranges)} range queries of at most {max(points)} points): {took:.2f} s "
                  f"= {took / baseline:.1f}x the baseline, {took / report.snapshots * 1000:.1f} ms "
                  "per snapshot")
        finally:
            srv.stop()


if __name__ == "__main__":
    main()
