"""How long `lbctl recommend -o json` takes on a large snapshot, next to merely parsing it.

    python benchmarks/recommend_large.py [--brokers 2000] [--bundles 200000] [--repeat 3]

Generates a snapshot of N brokers and M bundles under benchmarks/out/ (deterministic: brokers near
45 % usage with σ 8 %, one in fifty hot at 88-95 %, so that the default ThresholdShedder has work
to do), then prints:

* parse: the fastest JSON parser available here (orjson) loading the file, in-process;
* recommend (in-process): reading + validating the snapshot, running the cycle, building and
  serialising the plan, without interpreter start-up;
* recommend (subprocess): the whole `lbctl recommend -o json` command, start-up included;
* the ratio recommend / parse (goals, whole process: ≤ 2.5 at 200k bundles, ≤ 2 at 1M).

Figures are the best of --repeat runs. Nothing here asserts a time: it prints figures.
"""

from __future__ import annotations

import argparse
import io
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"


def bundle_stats(rng: random.Random) -> dict[str, float | int]:
    """One bundle's ``lastStats`` entry: 10-2,000 msg/s of 500-4,000 bytes, out twice in."""
    rate = rng.uniform(10, 2000)
    tp = rate * rng.uniform(500, 4000)
    return {"msgRateIn": round(rate, 3), "msgRateOut": round(rate * 2, 3),
            "msgThroughputIn": round(tp, 1), "msgThroughputOut": round(tp * 2, 1),
            "consumerCount": rng.randint(0, 20), "producerCount": rng.randint(0, 20),
            "topics": rng.randint(1, 50), "cacheSize": 0}


def broker_doc(st: dict[str, dict[str, float | int]], cpu: float) -> dict[str, object]:
    """A broker's report at ``cpu`` % on 16 cores carrying the bundles ``st``: its aggregates
    are the sums of its ``lastStats``, as a real ``LocalBrokerData`` report's are."""
    return {
        "cpu": {"usage": round(cpu * 16, 2), "limit": 1600.0},
        "memory": {"usage": 4096.0, "limit": 8192.0},
        "directMemory": {"usage": 1024.0, "limit": 4096.0},
        "bandwidthIn": {"usage": round(cpu * 12500, 1), "limit": 1250000.0},
        "bandwidthOut": {"usage": round(cpu * 11000, 1), "limit": 1250000.0},
        "msgRateIn": sum(s["msgRateIn"] for s in st.values()),
        "msgRateOut": sum(s["msgRateOut"] for s in st.values()),
        "msgThroughputIn": sum(s["msgThroughputIn"] for s in st.values()),
        "msgThroughputOut": sum(s["msgThroughputOut"] for s in st.values()),
        "numTopics": sum(int(s["topics"]) for s in st.values()),
        "numBundles": len(st),
        "numConsumers": sum(int(s["consumerCount"]) for s in st.values()),
        "numProducers": sum(int(s["producerCount"]) for s in st.values()),
        "bundles": list(st),
        "lastStats": st,
        "lastUpdate": 1795000000000,
    }


def generate(path: Path, brokers: int, bundles: int, seed: int = 7) -> None:
    import orjson

    rng = random.Random(seed)
    per_ns = 128
    namespaces = max(1, bundles // per_ns)
    seg = (1 << 32) // per_ns
    bounds = [f"0x{k * seg:08x}" for k in range(per_ns)] + ["0xffffffff"]
    broker_ids = [f"broker-{i:04d}.pulsar.svc.cluster.local:8080" for i in range(brokers)]
    stats: list[dict[str, dict[str, float | int]]] = [{} for _ in range(brokers)]
    count = 0
    for n in range(namespaces):
        ns = f"tenant-{n % 50}/ns-{n}"
        for k in range(per_ns):
            if count >= bundles:
                break
            name = f"{ns}/{bounds[k]}_{bounds[k + 1]}"
            stats[count % brokers][name] = bundle_stats(rng)
            count += 1
    brokers_json = {}
    for i, b in enumerate(broker_ids):
        st = stats[i]
        # Most brokers near 45 % (σ 8), one in 50 hot at 88-95 %: ThresholdShedder has work.
        cpu = rng.uniform(88, 95) if i % 50 == 7 else min(80.0, max(5.0, rng.gauss(45, 8)))
        brokers_json[b] = broker_doc(st, cpu)
    doc = {
        "format": "lbctl/snapshot@1",
        "cluster": "bench",
        "capturedAt": "2026-11-21T22:00:00Z",
        "config": {},
        "brokers": brokers_json,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(doc))


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", type=int, default=2000)
    ap.add_argument("--bundles", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import orjson

    path = OUT / f"snapshot-v2-{args.brokers}x{args.bundles}.json"
    if not path.exists():
        t = time.perf_counter()
        generate(path, args.brokers, args.bundles)
        print(f"generated {path.name} ({path.stat().st_size / 1e6:.1f} MB) "
              f"in {time.perf_counter() - t:.1f} s")

    def parse() -> None:
        orjson.loads(path.read_bytes())

    def recommend_in_process() -> None:
        from lbctl.loadmanager.select import Options, plans
        from lbctl.render import render
        from lbctl.render.views import RecommendView
        from lbctl.sources.snapshot import read_snapshots

        states = read_snapshots([path])
        render(RecommendView(plans(states, Options())), "json", io.StringIO())

    def recommend_subprocess() -> None:
        subprocess.run([sys.executable, "-m", "lbctl", "recommend", "-o", "json", str(path)],
                       check=True, stdout=subprocess.DEVNULL)

    from lbctl.loadmanager.select import Options, plans
    from lbctl.sources.snapshot import read_snapshots

    summary = plans(read_snapshots([path]), Options())[-1].summary()
    t_parse = best(parse, args.repeat)
    t_inproc = best(recommend_in_process, args.repeat)
    t_sub = best(recommend_subprocess, args.repeat)
    print(f"brokers={args.brokers} bundles={args.bundles} (best of {args.repeat}); the plan has "
          f"{summary['unloads']} unloads, {summary['skipped']} skipped")
    print(f"parse (orjson.loads)            {t_parse:8.3f} s")
    print(f"recommend -o json, in-process   {t_inproc:8.3f} s   ratio {t_inproc / t_parse:5.2f}x")
    print(f"recommend -o json, subprocess   {t_sub:8.3f} s   ratio {t_sub / t_parse:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
