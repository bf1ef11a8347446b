"""Clusters for the planner's tests, written as snapshot@1 documents and read by lbctl's parser.

A broker's CPU is ``idle + cost · work`` with ``work = Σ (msg/s / 1000 + MB/s)`` over its bundles,
its bandwidths are its bytes in and out, so a snapshot is what a real cluster with hosts of
different strength (``cost``) reports; the planner calibrates its model from it like from any.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from lbctl.model.cluster import ClusterState
from lbctl.sources.snapshot_schema import parse_snapshot

MB = 1048576.0
AT = "2026-05-01T10:00:00Z"
AT_MS = 1777629600000


def stats(rate: float, size: int = 4096, *, topics: int = 4, clients: int = 6) -> dict[str, Any]:
    return {"msgRateIn": rate, "msgRateOut": rate, "msgThroughputIn": rate * size,
            "msgThroughputOut": rate * size, "consumerCount": clients // 2,
            "producerCount": clients - clients // 2, "topics": topics, "cacheSize": 0}


def work(st: Mapping[str, Any]) -> float:
    return ((st["msgRateIn"] + st["msgRateOut"]) / 1000
            + (st["msgThroughputIn"] + st["msgThroughputOut"]) / MB)


def broker(bundles: Mapping[str, Mapping[str, Any]], *, cores: int = 8, idle: float = 3.0,
           cost: float = 1.0, persistent: bool = True, non_persistent: bool = True,
           direct_memory: float = 10.0) -> dict[str, Any]:
    st = {k: dict(v) for k, v in bundles.items()}
    cpu = idle + cost * sum(work(s) for s in st.values())
    tin = sum(s["msgThroughputIn"] for s in st.values())
    tout = sum(s["msgThroughputOut"] for s in st.values())
    return {
        "persistentTopicsEnabled": persistent, "nonPersistentTopicsEnabled": non_persistent,
        "cpu": {"usage": cpu * cores, "limit": cores * 100.0},
        "memory": {"usage": 2048.0, "limit": 8192.0},
        "directMemory": {"usage": direct_memory * 81.92, "limit": 8192.0},
        "bandwidthIn": {"usage": tin * 8 / 1000, "limit": 1e8},
        "bandwidthOut": {"usage": tout * 8 / 1000, "limit": 1e8},
        "msgRateIn": sum(s["msgRateIn"] for s in st.values()),
        "msgRateOut": sum(s["msgRateOut"] for s in st.values()),
        "msgThroughputIn": tin, "msgThroughputOut": tout,
        "numTopics": sum(s["topics"] for s in st.values()), "numBundles": len(st),
        "numConsumers": sum(s["consumerCount"] for s in st.values()),
        "numProducers": sum(s["producerCount"] for s in st.values()),
        "bundles": list(st), "lastStats": st, "lastUpdate": AT_MS,
    }


def snapshot(brokers: Mapping[str, Mapping[str, Any]], *, config: Mapping[str, Any] | None = None,
             recently_unloaded: Mapping[str, int] | None = None,
             topics: Mapping[str, Mapping[str, Any]] | None = None,
             namespaces: Mapping[str, Sequence[str]] | None = None,
             load_manager: str = "modular", cluster: str = "test") -> ClusterState:
    doc: dict[str, Any] = {"format": "lbctl/snapshot@1", "cluster": cluster, "capturedAt": AT,
                           "loadManager": load_manager, "config": dict(config or {}),
                           "brokers": {b: dict(v) for b, v in brokers.items()}}
    if recently_unloaded:
        doc["recentlyUnloaded"] = dict(recently_unloaded)
    if topics:
        doc["topics"] = {t: dict(v) for t, v in topics.items()}
    if namespaces:
        doc["namespaces"] = {ns: {"boundaries": list(b), "numBundles": len(b) - 1}
                             for ns, b in namespaces.items()}
    return parse_snapshot(doc, "test")


def bundle_names(ns: str, n: int) -> list[str]:
    seg = (1 << 32) // n
    bounds = [k * seg for k in range(n)] + [0xFFFFFFFF]
    return [f"{ns}/0x{bounds[k]:08x}_0x{bounds[k + 1]:08x}" for k in range(n)]


def random_cluster(seed: int, brokers: int, per_broker: int = 6, *,
                   strong: float = 0.2, skew: float = 0.8, namespaces: int = 3,
                   config: Mapping[str, Any] | None = None,
                   **extra: Any) -> ClusterState:
    """``brokers`` brokers (a share ``strong`` of them with 4x the cores), bundles of lognormal
    rates dealt with a skew, so that some brokers are far above the others."""
    rng = random.Random(seed)
    names = [f"broker-{j}.pulsar.svc:8080" for j in range(brokers)]
    total = brokers * per_broker
    per_ns = max(1, total // namespaces)
    bundles = [x for k in range(namespaces) for x in bundle_names(f"tenant/ns-{k}", per_ns)]
    weights = [rng.gammavariate(skew, 1.0) + 0.05 for _ in names]
    owned: dict[str, dict[str, Any]] = {b: {} for b in names}
    for x in bundles:
        b = rng.choices(names, weights)[0]
        owned[b][x] = stats(rng.lognormvariate(3.0, 0.8), rng.choice((1024, 4096, 16384)),
                            topics=rng.randint(1, 12), clients=rng.randint(1, 40))
    loads = {b: sum(work(s) for s in owned[b].values()) for b in names}
    mean = sum(loads.values()) / len(loads) or 1.0
    docs = {}
    for b in names:
        big = rng.random() < strong
        cost = (45.0 / mean) * (0.25 if big else 1.0)
        peak = 3.0 + cost * loads[b]
        if peak > 95:  # keep every broker under 95 %
            cost *= 92.0 / (peak - 3.0)
        docs[b] = broker(owned[b], cores=32 if big else 8, cost=cost)
    return snapshot(docs, config=config, **extra)
