"""Generate the extensible example snapshots (lbctl/examples/extensible/): `python
tests/data/make_extensible_examples.py` from the repository root rewrites skewed.json and the two
PIP-220 sequences (deterministic)."""
import json
from datetime import UTC, datetime, timedelta

MB = 1048576
T0 = datetime(2026, 3, 12, 14, 0, tzinfo=UTC)


def ms(dt):
    return int(dt.timestamp() * 1000)


def snapshot(cluster, when, brokers, config=None, lm="extensible"):
    """brokers: name -> (cpu %, [(ns, range, MB/s), ...])"""
    out = {"format": "lbctl/snapshot@1", "cluster": cluster,
           "capturedAt": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "loadManager": lm,
           "config": {"loadManagerClassName":
                      "org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl",
                      **(config or {})},
           "brokers": {}, "brokerLoadData": {}, "topBundlesLoadData": {}, "namespaces": {}}
    nss = {}
    for name, (cpu, bundles) in brokers.items():
        stats = {}
        for ns, rng, mbs in bundles:
            tp = mbs * MB
            st = {"msgRateIn": round(tp * 0.4 / 8192, 1), "msgThroughputIn": tp * 0.4,
                  "msgRateOut": round(tp * 0.6 / 8192, 1), "msgThroughputOut": tp * 0.6,
                  "consumerCount": 4, "producerCount": 4, "topics": 6, "cacheSize": 0}
            stats[f"{ns}/{rng}"] = st
            nss.setdefault(ns, set()).update(rng.split("_"))
        tin = sum(s["msgThroughputIn"] for s in stats.values())
        tout = sum(s["msgThroughputOut"] for s in stats.values())
        rin = sum(s["msgRateIn"] for s in stats.values())
        rout = sum(s["msgRateOut"] for s in stats.values())
        cpu_u = {"usage": cpu * 8, "limit": 800}
        out["brokers"][name] = {
            "cpu": cpu_u, "memory": {"usage": 2100, "limit": 4096},
            "directMemory": {"usage": 900, "limit": 4096},
            "bandwidthIn": {"usage": round(tin * 8 / 1000), "limit": 10000000},
            "bandwidthOut": {"usage": round(tout * 8 / 1000), "limit": 10000000},
            "msgRateIn": rin, "msgRateOut": rout, "msgThroughputIn": tin,
            "msgThroughputOut": tout, "numTopics": 6 * len(stats), "numBundles": len(stats),
            "numConsumers": 4 * len(stats), "numProducers": 4 * len(stats),
            "bundles": list(stats), "lastStats": stats, "brokerVersionString": "4.0.4"}
        out["brokerLoadData"][name] = {
            "cpu": cpu_u, "memory": {"usage": 2100, "limit": 4096},
            "directMemory": {"usage": 900, "limit": 4096},
            "bandwidthIn": out["brokers"][name]["bandwidthIn"],
            "bandwidthOut": out["brokers"][name]["bandwidthOut"],
            "msgThroughputIn": tin, "msgThroughputOut": tout, "msgRateIn": rin,
            "msgRateOut": rout, "bundleCount": len(stats), "topics": 6 * len(stats),
            "maxResourceUsage": max(cpu / 100, 900 / 4096), "weightedMaxEMA": cpu / 100,
            "msgThroughputEMA": tin + tout, "updatedAt": ms(when) - 5000,
            "reportedAt": ms(when) - 5000}
        ordered = sorted(stats.items(), key=lambda kv: (kv[1]["msgThroughputIn"],
                                                        kv[1]["msgThroughputOut"]))
        out["topBundlesLoadData"][name] = {"topBundlesLoadData": [
            {"bundleName": b, "stats": s} for b, s in ordered[-10:]]}
    for ns, points in nss.items():
        b = sorted(points)
        out["namespaces"][ns] = {"boundaries": b, "numBundles": len(b) - 1}
    return out


def ranges(n, start=0, end=0x100000000):
    step = (end - start) // n
    pts = [start + i * step for i in range(n)] + [end]
    return [f"0x{a:08x}_0x{min(b, 0xffffffff):08x}" for a, b in zip(pts, pts[1:], strict=False)]


def pip220_a():
    r = ranges(10)
    return {
        "broker-1.pulsar.svc:8080": (12, [("acme/orders", r[0], 20), ("acme/orders", r[1], 25),
                                          ("acme/orders", r[2], 35), ("acme/orders", r[3], 40)]),
        "broker-2.pulsar.svc:8080": (2, [("acme/orders", r[4], 8), ("acme/orders", r[5], 12)]),
        "broker-3.pulsar.svc:8080": (1, [("acme/orders", r[6], 5), ("acme/orders", r[7], 5)]),
        "broker-4.pulsar.svc:8080": (1, [("acme/orders", r[8], 4), ("acme/orders", r[9], 6)]),
    }


def pip220_b():
    r = ranges(20)
    brokers = {}
    for i in range(5):
        brokers[f"broker-{i + 1}.pulsar.svc:8080"] = (50, [
            ("acme/events", r[4 * i + j], mbs) for j, mbs in enumerate((22, 24, 26, 28))])
    brokers["broker-6.pulsar.svc:8080"] = (0, [])
    return brokers


def skewed():
    r = ranges(14)
    loads = [("broker-1.pulsar.svc:8080", 2, (10, 20)), ("broker-2.pulsar.svc:8080", 4, (10, 30)),
             ("broker-3.pulsar.svc:8080", 6, (20, 40)), ("broker-4.pulsar.svc:8080", 80, (30, 40, 60, 70)),
             ("broker-5.pulsar.svc:8080", 90, (20, 50, 70, 90))]
    brokers, i = {}, 0
    for name, cpu, mbs in loads:
        bundles = []
        for m in mbs:
            bundles.append(("acme/telemetry", r[i], m))
            i += 1
        brokers[name] = (cpu, bundles)
    return brokers


def write_seq(path, cluster, brokers, n=4):
    with open(path, "w") as f:
        for k in range(n):
            f.write(json.dumps(snapshot(cluster, T0 + timedelta(minutes=k), brokers),
                               separators=(",", ":")) + "\n")


write_seq("lbctl/examples/extensible/pip220-12-2-1-1.jsonl", "pip220-a", pip220_a())
write_seq("lbctl/examples/extensible/pip220-50x5-0.jsonl", "pip220-b", pip220_b())
with open("lbctl/examples/extensible/skewed.json", "w") as f:
    json.dump(snapshot("prod-eu", T0, skewed(),
                       {"loadBalancerSheddingConditionHitCountThreshold": "0"}), f, indent=2)
    f.write("\n")
