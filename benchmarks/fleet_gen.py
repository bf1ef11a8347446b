"""Generate a synthetic fleet: clusters × brokers × bundles × samples, as snapshot v1 .jsonl files.

    python benchmarks/fleet_gen.py OUT --clusters 4 --brokers 10 --bundles 250 --samples 1000

Bundle-sample rows = clusters × bundles × samples. Each cluster's history is written as .jsonl
files of ``--per-file`` snapshots (one minute apart). Loads random-walk; every sample a few
bundles move to a random broker (some of them back to their previous owner: bounce-backs).
Each broker report carries its aggregates (rates, throughputs, counts) as real
``LocalBrokerData`` reports do: the sums of its ``lastStats``, left to right.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import orjson

START_MS = 1_773_482_400_000
MINUTE = 60_000


def iso(ms: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cluster_files(out: Path, name: str, brokers: int, bundles: int, samples: int, per_file: int,
                  seed: int) -> int:
    rng = random.Random(seed)
    ids = [f"b{i}.{name}:8080" for i in range(brokers)]
    seg = 2**32 // bundles
    bounds = [k * seg for k in range(bundles)] + [0xFFFFFFFF]
    names = [f"t/ns/0x{bounds[i]:08x}_0x{bounds[i + 1]:08x}" for i in range(bundles)]
    owner = [i % brokers for i in range(bundles)]
    prev = owner[:]
    rate = [rng.uniform(100, 2000) for _ in range(bundles)]
    namespaces = {"t/ns": {"boundaries": [f"0x{b:08x}" for b in bounds], "numBundles": bundles}}
    out.mkdir(parents=True, exist_ok=True)
    lines: list[bytes] = []
    for s in range(samples):
        if s % per_file == 0 and lines:
            (out / f"{name}-{s // per_file - 1:05d}.jsonl").write_bytes(b"".join(lines))
            lines = []
        for _ in range(max(1, bundles // 200)):
            i = rng.randrange(bundles)
            back = prev[i] if rng.random() < 0.3 else rng.randrange(brokers)
            prev[i], owner[i] = owner[i], back
        stats: list[dict] = [{} for _ in ids]
        for i in range(bundles):
            rate[i] = max(1.0, rate[i] * rng.uniform(0.97, 1.03))
            r = round(rate[i], 2)
            stats[owner[i]][names[i]] = {"msgRateIn": r, "msgRateOut": r, "msgThroughputIn": r * 1024,
                                         "msgThroughputOut": r * 1024, "topics": 4,
                                         "consumerCount": 4, "producerCount": 4}
        snap = {"format": "lbctl/snapshot@1", "cluster": name, "capturedAt": iso(START_MS + s * MINUTE),
                "brokers": {}, "namespaces": namespaces}
        for b, bid in enumerate(ids):
            st = stats[b]
            tot = sum(x["msgRateIn"] for x in st.values())
            agg: dict[str, float | int] = {}
            for key in ("msgRateIn", "msgRateOut", "msgThroughputIn", "msgThroughputOut"):
                acc = 0.0
                for x in st.values():
                    acc += x[key]
                agg[key] = acc
            snap["brokers"][bid] = {"cpu": {"usage": min(790.0, 10 + tot / 50), "limit": 800.0},
                                    "bandwidthIn": {"usage": tot * 8, "limit": 1e7},
                                    "bandwidthOut": {"usage": tot * 8, "limit": 1e7},
                                    **agg, "numTopics": 4 * len(st), "numBundles": len(st),
                                    "numConsumers": 4 * len(st), "numProducers": 4 * len(st),
                                    "lastStats": st}
        lines.append(orjson.dumps(snap) + b"\n")
    if lines:
        (out / f"{name}-{(samples - 1) // per_file:05d}.jsonl").write_bytes(b"".join(lines))
    return bundles * samples


def generate(out: Path, clusters: int, brokers: int, bundles: int, samples: int,
             per_file: int = 100) -> int:
    return sum(cluster_files(out / f"c{c:02d}", f"c{c:02d}", brokers, bundles, samples, per_file, c)
               for c in range(clusters))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--clusters", type=int, default=4)
    p.add_argument("--brokers", type=int, default=10)
    p.add_argument("--bundles", type=int, default=250)
    p.add_argument("--samples", type=int, default=1000)
    p.add_argument("--per-file", type=int, default=100)
    a = p.parse_args()
    rows = generate(a.out, a.clusters, a.brokers, a.bundles, a.samples, a.per_file)
    print(f"{rows:,} bundle-sample rows in {a.out}")


if __name__ == "__main__":
    main()
