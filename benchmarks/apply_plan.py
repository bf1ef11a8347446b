"""Benchmark: what `lbctl apply` adds around each unload — re-validation, journal, verification,
re-reading the brokers between batches — against the loopback test cluster.

The cluster (lbctl.sandbox, 10 brokers, one with N bundles to move, ownership back at once after an
unload) runs in its own process. Prints the time of one bare unload request (median of 20), then
the wall time of `lbctl apply PLAN --yes` for a plan of N moves with --concurrency 1 and 10, and the
time per action — the baseline being the bare request.

    python benchmarks/apply_plan.py [--moves 100]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVER = """
import json, sys
from lbctl.sandbox import TestCluster, equal_boundaries
c = TestCluster()
ids = c.start(10)
names = c.add_namespace("public/default", equal_boundaries({n} * 2 + 20))
for i, b in enumerate(names):
    c.own(b, ids[0] if i < {n} * 2 else ids[1 + i % 9], msgThroughputIn=1048576.0, topics=1)
c.set_reassignment(delay=0.0)
print(json.dumps({{"url": c.admin_url, "ids": ids, "bundles": names}}), flush=True)
sys.stdin.read()
c.stop()
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=100)
    args = ap.parse_args()
    n = args.moves
    server = subprocess.Popen([sys.executable, "-c", SERVER.format(n=n)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdin is not None
    info = json.loads(server.stdout.readline())
    url, ids, bundles = info["url"], info["ids"], info["bundles"]
    try:
        import httpx

        times = []
        with httpx.Client() as h:
            for b in bundles[2 * n:2 * n + 20]:
                rng = b.rsplit("/", 1)[1]
                t = time.perf_counter()
                h.put(f"{url}/admin/v2/namespaces/public/default/{rng}/unload")
                times.append(time.perf_counter() - t)
        bare = statistics.median(times)
        print(f"one bare unload request: {bare * 1000:.2f} ms (median of 20)")
        from lbctl.model.cluster import iso_time

        for conc, chunk in ((1, bundles[:n]), (10, bundles[n:2 * n])):
            with tempfile.TemporaryDirectory() as d:
                plan = {"format": "lbctl/plan@1", "cluster": "test-cluster",
                        "capturedAt": iso_time(int(time.time() * 1000)), "actions": [
                            {"action": "unload", "bundle": b, "broker": ids[0],
                             "destinationBroker": ids[1 + i % 9], "reason": "Overloaded"}
                            for i, b in enumerate(chunk)]}
                p = Path(d) / "plan.json"
                p.write_text(json.dumps(plan))
                env = {**os.environ, "LBCTL_JOURNAL": str(Path(d) / "journal.jsonl")}
                t = time.perf_counter()
                r = subprocess.run([sys.executable, "-m", "lbctl", "--admin-url", url, "apply",
                                    str(p), "--yes", "--concurrency", str(conc), "-o", "json"],
                                   env=env, capture_output=True, text=True)
                wall = time.perf_counter() - t
                done = sum(1 for a in json.loads(r.stdout)["actions"] if a["outcome"] == "done")
                per = wall / n
                print(f"apply {n} moves, --concurrency {conc}: {wall:.2f} s wall ({done} done), "
                      f"{per * 1000:.1f} ms per action = {per / bare:.0f}x a bare request")
    finally:
        server.stdin.close()
        server.wait(10)


if __name__ == "__main__":
    main()
