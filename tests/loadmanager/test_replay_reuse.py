"""A replayed sequence gives the same plans whatever the cycle keeps from the cycle before.

A sequence's cycles keep work whose inputs did not change: the greedy ranking while the bundle
data object is the same (a snapshot with no report written), the shedding order's hashing per
bundle map, the namespace ownership index and the brokers' ``ConcurrentHashMap`` order per key
list, the time averages per report keys. Here a random sequence (quiet snapshots, reports
rewritten, bundles changing owner, tied throughputs, a system namespace) is replayed with those
kept, with all of them dropped before every cycle, and on the Python path (``LBCTL_NO_NUMPY=1``):
the plans must be the same bytes.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

import lbctl.model.bundlecolumns as bundlecolumns
import lbctl.model.javaorder as javaorder
import lbctl.model.loaddata as loaddata
import lbctl.strategies.placement.filters as filters
import lbctl.strategies.shedding._select as select_module
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.loadmanager.select import Options, plans
from lbctl.sources.snapshot import parse_snapshot

T0 = 1_795_000_000_000


def _sequence(seed: int, brokers: int = 8, bundles: int = 640, snapshots: int = 14,
              config: dict[str, str] | None = None) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    ids = [f"broker-{i}:8080" for i in range(brokers)]
    stats: list[dict[str, Any]] = [{} for _ in ids]
    for n in range(bundles):
        ns = "pulsar/system" if n % 97 == 0 else f"tenant/ns-{n % 5}"
        tp = 1_000_000.0 if n % 11 == 0 else rng.uniform(0, 4e6)  # ties on purpose
        stats[min(rng.randrange(brokers), rng.randrange(brokers))][
            f"{ns}/0x{n * 4096:08x}_0x{(n + 1) * 4096:08x}"] = {
            "msgRateIn": rng.uniform(0, 900), "msgRateOut": rng.uniform(0, 900),
            "msgThroughputIn": tp, "msgThroughputOut": 0.0 if n % 11 == 0 else tp / 3,
            "topics": rng.randint(1, 9), "consumerCount": rng.randint(0, 6),
            "producerCount": rng.randint(0, 6)}
    snap: dict[str, Any] = {
        "format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": T0, "config": config or {},
        "brokers": {b: {"cpu": {"usage": rng.uniform(5, 95) * 16, "limit": 1600.0},
                        "memory": {"usage": 4096.0, "limit": 8192.0},
                        "bandwidthIn": {"usage": rng.uniform(1e4, 9e6), "limit": 1e7},
                        "bandwidthOut": {"usage": rng.uniform(1e4, 9e6), "limit": 1e7},
                        "lastStats": stats[i], "lastUpdate": T0 - 1000}
                    for i, b in enumerate(ids)}}
    out = []
    for i in range(snapshots):
        snap["capturedAt"] = T0 + i * 60_000
        if i and i % 4 != 3:  # every fourth snapshot is quiet: no report written
            for rep in rng.sample(list(snap["brokers"].values()), rng.randint(1, 3)):
                rep["lastUpdate"] = snap["capturedAt"] - 500
                rep["cpu"]["usage"] *= rng.uniform(0.9, 1.1)
                for st in rep["lastStats"].values():
                    st["msgThroughputIn"] *= rng.choice([1.0, rng.uniform(0.95, 1.05)])
            if i % 5 == 0:  # a bundle changes owner
                src, dst = rng.sample(list(snap["brokers"].values()), 2)
                if src["lastStats"]:
                    name = rng.choice(list(src["lastStats"]))
                    dst["lastStats"][name] = src["lastStats"].pop(name)
                    src["lastUpdate"] = dst["lastUpdate"] = snap["capturedAt"] - 200
        out.append(copy.deepcopy(snap))
    return out


def _forget() -> None:
    select_module._RANKED.clear()
    loaddata._ORDER_MEMO.clear()
    filters._LAST_COUNTS.clear()
    javaorder._CONCURRENT_MEMO.clear()
    bundlecolumns._GATHER.clear()


def _plans(monkeypatch: pytest.MonkeyPatch, raw: list[dict[str, Any]], strategy: str, *,
           python: bool = False, forget: bool = False) -> str:
    _forget()
    with monkeypatch.context() as m:
        if python:
            m.setenv("LBCTL_NO_NUMPY", "1")
        if forget:
            run_cycle = ModularLoadManager.run_cycle

            def fresh(self: ModularLoadManager, *args: Any, **kwargs: Any) -> Any:
                _forget()
                return run_cycle(self, *args, **kwargs)

            m.setattr(ModularLoadManager, "run_cycle", fresh)
        states = [parse_snapshot(copy.deepcopy(s), f"s{i}") for i, s in enumerate(raw)]
        got = plans(states, Options(strategy=strategy))
    return json.dumps([p.to_dict() for p in got], sort_keys=True)


#: split limits low enough that the split check fires on some bundles, for each of its reasons
SPLITS = {"loadBalancerNamespaceBundleMaxTopics": "8", "loadBalancerNamespaceBundleMaxSessions": "10",
          "loadBalancerNamespaceBundleMaxMsgRate": "1700",
          "loadBalancerNamespaceBundleMaxBandwidthMbytes": "5",
          "loadBalancerNamespaceMaximumBundles": "200"}


@pytest.mark.parametrize(("seed", "strategy", "config"), [
    (1, "ThresholdShedder", None), (2, "ThresholdShedder", SPLITS), (3, "OverloadShedder", None),
    (4, "UniformLoadShedder", SPLITS),
])
def test_kept_work_changes_no_plan(monkeypatch: pytest.MonkeyPatch, seed: int, strategy: str,
                                   config: dict[str, str] | None) -> None:
    raw = _sequence(seed, config=config)
    kept = _plans(monkeypatch, raw, strategy)
    assert '"action": "unload"' in kept  # the sequence does shed something
    if config:
        for reason in ("Topics", "Sessions", "MsgRate", "Bandwidth"):
            assert f'"reason": "{reason}"' in kept, reason
    assert kept == _plans(monkeypatch, raw, strategy, forget=True)
    assert kept == _plans(monkeypatch, raw, strategy, python=True)


def test_concurrent_order_gives_a_fresh_list_each_time() -> None:
    keys = [f"broker-{i}:8080" for i in range(20)]
    first = javaorder.concurrent_order(keys)
    first.reverse()  # the caller's list: changing it must not change the next answer
    again = javaorder.concurrent_order(keys)
    assert again == list(reversed(first))
    assert again == javaorder._concurrent_order(keys, None)
