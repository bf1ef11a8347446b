"""Benchmark: ``lbctl watch`` for many cluster-hours beside a large living sandbox.

Issue 27's figures: the watcher's RSS over the run (first vs last hour: flat where it streams),
CPU per capture — next to the CPU of the live read alone (``lbctl snapshot export``'s read), the
baseline the ratio is printed against — and disk per day of history. The sandbox runs on a
stepped clock (cluster time moves by ``--interval`` between captures, as at a high ``--speed``),
in this process: its CPU is measured apart (``Life.advance``) and left out of the watcher's.

    python benchmarks/watch_day.py [--brokers 100] [--bundles 10000] [--hours 24] [--interval 300]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    from lbctl.admin.client import AdminClient
    from lbctl.loadmanager.select import Options
    from lbctl.sandbox.clock import SteppedClock
    from lbctl.sandbox.scenarios import balanced_cluster, living
    from lbctl.sources.cluster import on_client
    from lbctl.sources.live import LiveSource
    from lbctl.watch.loop import Watcher, WatchOptions

    p = argparse.ArgumentParser()
    p.add_argument("--brokers", type=int, default=100)
    p.add_argument("--bundles", type=int, default=10_000)
    p.add_argument("--hours", type=float, default=24.0)
    p.add_argument("--interval", type=float, default=300.0, help="cluster seconds per capture")
    a = p.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    c = balanced_cluster(a.brokers, bundles_per_broker=max(1, a.bundles // a.brokers))
    clock = SteppedClock()
    life = living(c, clock)
    client = AdminClient(c.admin_url, timeout=120)
    with tempfile.TemporaryDirectory() as tmp:
        history = Path(tmp) / "h"
        w = Watcher(on_client(client), WatchOptions(history, a.interval, doctor=False), Options(),
                    clock=clock.now)
        per_hour = max(1, round(3600 / a.interval))
        n = max(1, round(a.hours * 3600 / a.interval))
        watch_cpu = read_cpu = sandbox_cpu = 0.0
        rss: list[float] = []
        for i in range(n):
            t0 = time.process_time()
            clock.set(clock.now() + a.interval)
            life.advance()
            t1 = time.process_time()
            w.tick()
            t2 = time.process_time()
            sandbox_cpu += t1 - t0
            watch_cpu += t2 - t1
            if i % per_hour == 0:  # the baseline: the live read alone, once an hour
                LiveSource(client, clock=clock.now).read()
                read_cpu += time.process_time() - t2
            rss.append(rss_mb())
        disk = sum(f.stat().st_size for f in history.rglob("*") if f.is_file())
    reads = (n + per_hour - 1) // per_hour
    per_capture, per_read = watch_cpu / n, read_cpu / reads
    first, last = rss[:per_hour], rss[-per_hour:]
    print(f"{a.brokers} brokers x {len(c.owners)} bundles, {n} captures over {a.hours:g} "
          f"cluster hours (one every {a.interval:g} s)")
    print(f"CPU per capture: {per_capture * 1000:.0f} ms (the live read alone: "
          f"{per_read * 1000:.0f} ms) ratio {per_capture / per_read:.2f}x; sandbox "
          f"{sandbox_cpu / n * 1000:.0f} ms per interval, not counted")
    print(f"RSS: first hour max {max(first):.0f} MB, last hour max {max(last):.0f} MB "
          f"(ratio {max(last) / max(first):.2f})")
    print(f"disk: {disk / 1e6:.1f} MB of history for {a.hours:g} h = "
          f"{disk / 1e6 * 24 / a.hours:.1f} MB per day at one capture every {a.interval:g} s")
    client.close()
    c.stop()


if __name__ == "__main__":
    main()
