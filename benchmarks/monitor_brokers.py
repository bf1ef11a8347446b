"""Benchmark: one `monitor-brokers` refresh against 200 test brokers that each answer after 50 ms.

The loopback test cluster (lbctl.sandbox) runs in its own process so that its event loop
does not share lbctl's interpreter. Prints: one request's time (median of 20 GETs of a load report),
one refresh's time measured inside lbctl (discovery + 200 load reports, median of 5), and the wall
time of the whole `lbctl monitor-brokers --once` command in a fresh process (interpreter start-up
included).

    python benchmarks/monitor_brokers.py [--brokers 200] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SERVER = """
import sys, time
sys.path.insert(0, {tests!r})
from lbctl.sandbox import hot_cluster
c = hot_cluster({n}, latency={lat}, tokens=None)
print(c.admin_url, flush=True)
sys.stdin.read()
c.stop()
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", type=int, default=200)
    ap.add_argument("--latency", type=float, default=0.05)
    args = ap.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER.format(tests=str(ROOT / "tests"), n=args.brokers,
                                             lat=args.latency)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        run(url, args.brokers, args.latency)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(30)


def run(url: str, n: int, latency: float) -> None:
    import httpx

    from lbctl.admin.client import AdminClient
    from lbctl.cli.monitor_loop import live_refresh
    from lbctl.monitor.brokers import BrokerMonitor
    from lbctl.sources.live import LiveSource

    with httpx.Client() as http:
        http.get(url + "/admin/v2/broker-stats/load-report")
        singles = []
        for _ in range(20):
            t = time.perf_counter()
            http.get(url + "/admin/v2/broker-stats/load-report").raise_for_status()
            singles.append(time.perf_counter() - t)
    one = statistics.median(singles)

    refreshes = []
    with AdminClient(url) as client:
        src = LiveSource(client, topics=False, namespaces=False)
        mon = BrokerMonitor()
        live_refresh(src, mon, [85.0])  # warm: connections opened
        for _ in range(5):
            t = time.perf_counter()
            ref = live_refresh(src, mon, [85.0])
            refreshes.append(time.perf_counter() - t)
        assert len(ref.rows) == n and all(r.state == "ok" for r in ref.rows)
    cold = []
    with AdminClient(url) as client:
        t = time.perf_counter()
        live_refresh(LiveSource(client, topics=False, namespaces=False), BrokerMonitor(), [85.0])
        cold.append(time.perf_counter() - t)
    refresh = statistics.median(refreshes)

    env = dict(os.environ, PULSAR_CLIENT_CONF="")
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "lbctl", "--admin-url", url, "monitor-brokers",
                          "--once", "--summary"], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    assert out.returncode == 0, out.stderr

    print(f"brokers: {n}, each answering after {latency * 1000:.0f} ms")
    print(f"one request (GET load-report), median of 20:       {one * 1000:7.1f} ms")
    print(f"one refresh (brokers + {n} load reports), warm:    {refresh * 1000:7.1f} ms"
          f"  = {refresh / one:.2f} x one request")
    print(f"first refresh (new connections to {n} brokers):    {cold[0] * 1000:7.1f} ms"
          f"  = {cold[0] / one:.2f} x one request")
    print(f"`lbctl monitor-brokers --once` wall time (process): {wall * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
