"""Write the small multi-cluster snapshot corpora used by the fleet tests and the README.

    python tests/data/fleet/make_fleet.py            # rewrites tests/data/fleet/ and lbctl/examples/fleet/

Each cluster is a minute-by-minute history of snapshot v1 objects. Brokers' aggregates are the
sums of their ``lastStats``; CPU usage follows the broker's message rate, bandwidth its throughput.
Ownership changes are scheduled (``moves``): sample index → [(bundle index, new owner index)], so
the corpus holds plain unloads and bounce-backs (a bundle returning to an owner it had a few
samples before). One bundle per cluster is hot and carries a single topic (over the split
thresholds, and no split can fix it). Files mix every supported shape: ``.jsonl``, ``.jsonl.gz``,
one ``.json`` per snapshot, ``.json.gz``, ``.yaml``; the test corpus adds one malformed file.

Deterministic: a seeded generator and fixed times, so re-running gives byte-identical files.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
START_MS = 1_773_482_400_000  # 2026-03-14T10:00:00Z
MINUTE = 60_000
MIB = 1024 * 1024
IMPL = "org.apache.pulsar.broker.loadbalance.impl."


def iso(ms: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def boundaries(n: int) -> list[str]:
    seg = 2**32 // n
    return [f"0x{k * seg:08x}" for k in range(n)] + ["0xffffffff"]


def cluster_history(name: str, *, brokers: int, namespaces: dict[str, int], samples: int,
                    seed: int, moves: dict[int, list[tuple[int, int]]], shedding: str,
                    start_ms: int = START_MS, hot: int = 0, with_topics: bool = False) -> list[dict]:
    rng = random.Random(seed)
    broker_ids = [f"broker-{i + 1}.{name}.svc:8080" for i in range(brokers)]
    bundles = []
    for ns, n in namespaces.items():
        b = boundaries(n)
        bundles += [f"{ns}/{b[i]}_{b[i + 1]}" for i in range(n)]
    owner = [i % brokers for i in range(len(bundles))]
    base = [rng.uniform(200, 3000) for _ in bundles]
    size = [rng.choice([256, 1024, 4096]) for _ in bundles]
    topics = [rng.randint(2, 40) for _ in bundles]
    base[hot], size[hot], topics[hot] = 9000.0, 16384, 1  # ~140 MiB/s in one topic
    history = []
    for s in range(samples):
        for bundle_idx, to in moves.get(s, []):
            owner[bundle_idx] = to
        stats: list[dict[str, dict]] = [{} for _ in broker_ids]
        for i, bundle in enumerate(bundles):
            rate_in = round(base[i] * rng.uniform(0.8, 1.2), 2)
            rate_out = round(rate_in * rng.uniform(1.0, 2.0), 2)
            stats[owner[i]][bundle] = {
                "msgRateIn": rate_in, "msgRateOut": rate_out,
                "msgThroughputIn": round(rate_in * size[i], 1),
                "msgThroughputOut": round(rate_out * size[i], 1),
                "consumerCount": topics[i] * 2, "producerCount": topics[i], "topics": topics[i],
                "cacheSize": 0,
            }
        brokers_obj = {}
        for b, bid in enumerate(broker_ids):
            st = stats[b]
            rate = sum(x["msgRateIn"] + x["msgRateOut"] for x in st.values())
            tin = sum(x["msgThroughputIn"] for x in st.values())
            tout = sum(x["msgThroughputOut"] for x in st.values())
            brokers_obj[bid] = {
                "cpu": {"usage": round(min(790.0, 20 + rate / 40), 2), "limit": 800.0},
                "memory": {"usage": 3000.0, "limit": 8192.0},
                "directMemory": {"usage": 1500.0, "limit": 8192.0},
                "bandwidthIn": {"usage": round(tin * 8 / 1000, 2), "limit": 10_000_000.0},
                "bandwidthOut": {"usage": round(tout * 8 / 1000, 2), "limit": 10_000_000.0},
                "msgRateIn": round(sum(x["msgRateIn"] for x in st.values()), 2),
                "msgRateOut": round(sum(x["msgRateOut"] for x in st.values()), 2),
                "msgThroughputIn": round(tin, 1), "msgThroughputOut": round(tout, 1),
                "numTopics": sum(x["topics"] for x in st.values()),
                "numBundles": len(st),
                "numConsumers": sum(x["consumerCount"] for x in st.values()),
                "numProducers": sum(x["producerCount"] for x in st.values()),
                "bundles": sorted(st), "lastStats": st,
                "lastUpdate": start_ms + s * MINUTE - 1500,
            }
        snap = {
            "format": "lbctl/snapshot@1", "cluster": name, "capturedAt": iso(start_ms + s * MINUTE),
            "loadManager": "modular",
            "config": {"loadBalancerLoadSheddingStrategy": IMPL + shedding,
                       "loadBalancerSheddingGracePeriodMinutes": "3"},
            "brokers": brokers_obj,
            "namespaces": {ns: {"boundaries": boundaries(n), "numBundles": n}
                           for ns, n in namespaces.items()},
        }
        if with_topics:
            tp = {}
            for i, bundle in enumerate(bundles[:3]):
                ns = bundle.rsplit("/", 1)[0]
                tp[f"persistent://{ns}/t{i}"] = {
                    "msgRateIn": round(base[i] / 2, 2), "msgRateOut": round(base[i], 2),
                    "msgThroughputIn": round(base[i] * 512, 1),
                    "msgThroughputOut": round(base[i] * 1024, 1),
                    "producerCount": 1, "consumerCount": 2,
                }
            snap["topics"] = tp
        history.append(snap)
    return history


def fleet(samples: int) -> dict[str, list[dict]]:
    """Three clusters: unloads and a bounce-back in `east`, a calm `west`, a churning `lab`."""
    return {
        "east": cluster_history(
            "east", brokers=3, namespaces={"acme/orders": 4, "acme/audit": 2}, samples=samples,
            seed=1, shedding="ThresholdShedder", with_topics=True,
            # bundle 1 moves 1→2 at sample 2 and back to broker 1 at sample 4 (a bounce-back)
            moves={2: [(1, 2)], 4: [(1, 1)], 5: [(3, 2)]}),
        "west": cluster_history(
            "west", brokers=2, namespaces={"public/default": 4}, samples=samples, seed=2,
            shedding="OverloadShedder", moves={}),
        "lab": cluster_history(
            "lab", brokers=4, namespaces={"lab/x": 8}, samples=samples, seed=3,
            shedding="UniformLoadShedder",
            moves={1: [(2, 3), (5, 0)], 2: [(2, 2)], 3: [(5, 1)], 6: [(5, 0)]}),
    }


def dump_json(obj: dict, path: Path, *, gz: bool = False, indent: bool = True) -> None:
    data = json.dumps(obj, indent=2 if indent else None).encode() + b"\n"
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)


def write_fleet(out: Path, samples: int, *, malformed: bool) -> None:
    for child in out.iterdir() if out.exists() else []:
        if child.is_dir():
            shutil.rmtree(child)
    out.mkdir(parents=True, exist_ok=True)
    hist = fleet(samples)
    # east: one .jsonl for the first half, one .jsonl.gz for the rest
    east = out / "east"
    east.mkdir()
    half = samples // 2
    (east / "2026-03-14a.jsonl").write_text("".join(json.dumps(s) + "\n" for s in hist["east"][:half]))
    lines = "".join(json.dumps(s) + "\n" for s in hist["east"][half:]).encode()
    (east / "2026-03-14b.jsonl.gz").write_bytes(gzip.compress(lines, mtime=0))
    # west: one file per snapshot, alternating .json, .json.gz and .yaml
    west = out / "west"
    west.mkdir()
    import yaml

    for i, s in enumerate(hist["west"]):
        stem = west / f"snap-{i:03d}"
        if i % 3 == 0:
            dump_json(s, stem.with_suffix(".json"))
        elif i % 3 == 1:
            dump_json(s, Path(f"{stem}.json.gz"), gz=True)
        else:
            stem.with_suffix(".yaml").write_text(yaml.safe_dump(s, sort_keys=False))
    # lab: a single .jsonl
    lab = out / "lab"
    lab.mkdir()
    (lab / "lab.jsonl").write_text("".join(json.dumps(s) + "\n" for s in hist["lab"]))
    if malformed:
        bad = json.loads(json.dumps(hist["lab"][0]))
        first = next(iter(bad["brokers"].values()))
        first["msgRateIn"] = -5  # rates must be non-negative
        dump_json(bad, lab / "broken.json")


def main() -> None:
    write_fleet(HERE / "corpus", samples=8, malformed=True)
    write_fleet(ROOT / "lbctl" / "examples" / "fleet", samples=30, malformed=False)


if __name__ == "__main__":
    sys.exit(main())
