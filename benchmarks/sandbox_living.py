"""Benchmark: the living sandbox at scale — 50 brokers × 5,000 bundles at ``--speed 60``.

Issue 26's goal: it starts in ≤ 2 s and uses ≤ 1 core on average. Prints the machine's load (the
cores are shared: read the figures with it), the start-up (listening on 50 ports, the namespace,
15,000 topics indexed, each broker's first report written), then, over ``--seconds`` of wall
time (``--seconds`` minutes of cluster time at 60×), the process's CPU time per wall second, the
leader's cycles and what they did, and the reports written — with one ``lbctl snapshot export``
-sized read of the whole cluster per cluster minute when ``--export`` is given (a monitoring loop
beside it).

    python benchmarks/sandbox_living.py [--brokers 50] [--bundles 5000] [--speed 60] [--seconds 30]
"""

from __future__ import annotations

import argparse
import os
import time

from lbctl.sandbox.clock import RunningClock
from lbctl.sandbox.scenarios import balanced_cluster, living


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--brokers", type=int, default=50)
    p.add_argument("--bundles", type=int, default=5000)
    p.add_argument("--speed", type=float, default=60.0)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--export", action="store_true", help="a live read per cluster minute")
    a = p.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    wall0, cpu0 = time.perf_counter(), time.process_time()
    c = balanced_cluster(a.brokers, bundles_per_broker=max(1, a.bundles // a.brokers))
    life = living(c, RunningClock(a.speed))
    c.keep_alive()
    start_wall, start_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(f"start: {start_wall:.2f} s wall, {start_cpu:.2f} s CPU "
          f"({len(c.brokers)} brokers, {len(c.owners)} bundles, {len(life.topic_traffic)} topics)"
          f"  goal <= 2 s")
    reads = 0
    client = None
    if a.export:
        from lbctl.admin.client import AdminClient
        from lbctl.sources.live import LiveSource

        client = AdminClient(c.admin_url, timeout=30)
    wall1, cpu1 = time.perf_counter(), time.process_time()
    writes0 = sum(1 for _ in life.written)
    deadline = wall1 + a.seconds
    while time.perf_counter() < deadline:
        if client is not None:
            LiveSource(client).read()
            reads += 1
        time.sleep(60 / a.speed if client is not None else 0.5)
    wall, cpu = time.perf_counter() - wall1, time.process_time() - cpu1
    leader = life.leader
    assert leader is not None
    moved = sum(1 for d in leader.decisions for x in d.actions if "skipped" not in x)
    print(f"running: {wall:.1f} s wall = {wall * a.speed / 60:.1f} cluster minutes; "
          f"{cpu / wall:.2f} core(s) on average (the sandbox{' + the reads' if reads else ''})"
          f"  goal <= 1")
    print(f"leader: {len(leader.decisions)} cycle(s), {moved} action(s) carried out; "
          f"{writes0} broker(s) reporting; {reads} live read(s)")
    if client is not None:
        client.close()
    c.stop()


if __name__ == "__main__":
    main()
