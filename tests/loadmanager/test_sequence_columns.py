"""A sequence's bundle data kept as numpy columns (``update_bundle_data``, from ``COLUMNS_FROM``
bundles) gives the plans of the pure-Python path bit for bit (``LBCTL_NO_NUMPY=1``)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from lbctl.loadmanager import loaddata
from lbctl.loadmanager.select import Options, plans
from lbctl.model.bundlecolumns import BundleColumns
from lbctl.model.loaddata import BundleDataView
from lbctl.sources.snapshot import parse_snapshot, read_snapshots
from tests.paths import EXAMPLES

pytest.importorskip("numpy")


def _plans(monkeypatch: pytest.MonkeyPatch, states: Any, opts: Options, python: bool) -> bytes:
    with monkeypatch.context() as m:
        if python:
            m.setenv("LBCTL_NO_NUMPY", "1")
        else:
            m.delenv("LBCTL_NO_NUMPY", raising=False)
        return orjson.dumps([p.to_dict() for p in plans(states, opts)])


@pytest.mark.parametrize(("path", "strategy"), [
    (EXAMPLES / "two-brokers-90-10.jsonl", None),
    (EXAMPLES / "two-brokers-90-10.jsonl", "ThresholdShedder"),
    (EXAMPLES / "two-brokers-90-10.jsonl", "UniformLoadShedder"),
    (EXAMPLES / "avg-shedder.jsonl", None),
])
def test_examples_agree(monkeypatch: pytest.MonkeyPatch, path: Path, strategy: str | None) -> None:
    monkeypatch.setattr(loaddata, "COLUMNS_FROM", 0)  # columns however few the bundles
    states = read_snapshots([path])
    opts = Options(strategy=strategy)
    assert _plans(monkeypatch, states, opts, False) == _plans(monkeypatch, states, opts, True)


def _sequence(seed: int, n: int) -> list[Any]:
    rng = random.Random(seed)
    brokers = [f"b{i}:8080" for i in range(rng.randint(3, 9))]
    owners = {f"t/ns{k % 5}/0x{k:08x}_0x{k + 1:08x}": rng.choice(brokers)
              for k in range(rng.randint(600, 900))}
    traffic = {b: [rng.uniform(1, 900), rng.uniform(1e3, 4e6), rng.randint(1, 9)] for b in owners}
    t0 = 1_795_000_000_000
    last = dict.fromkeys(brokers, t0 - 60_000)
    states = []
    for i in range(n):
        at = t0 + i * 60_000
        for b in brokers:
            if rng.random() < 0.4:  # this broker rewrote its report
                last[b] = at - rng.randint(0, 50_000)
                for x, o in owners.items():
                    if o == b:
                        traffic[x][0] *= rng.uniform(0.8, 1.25)
        if rng.random() < 0.3:  # a bundle moves, one appears
            x = rng.choice(list(owners))
            owners[x] = rng.choice(brokers)
            y = f"t/new/0x{i:08x}_0x{i + 1:08x}"
            owners[y] = rng.choice(brokers)
            traffic[y] = [rng.uniform(1, 900), rng.uniform(1e3, 4e6), 3]
        reports = {}
        for b in brokers:
            mine = {x: {"msgRateIn": traffic[x][0], "msgRateOut": traffic[x][0] * 1.5,
                        "msgThroughputIn": traffic[x][1], "msgThroughputOut": traffic[x][1] / 3,
                        "topics": traffic[x][2]} for x, o in owners.items() if o == b}
            reports[b] = {"cpu": {"usage": rng.uniform(10, 95), "limit": 100.0},
                          "memory": {"usage": 10.0, "limit": 100.0},
                          "bandwidthIn": {"usage": rng.uniform(10, 90), "limit": 100.0},
                          "bandwidthOut": {"usage": rng.uniform(10, 90), "limit": 100.0},
                          "lastStats": mine, "lastUpdate": last[b]}
        states.append(parse_snapshot({"format": "lbctl/snapshot@1", "cluster": "c",
                                      "capturedAt": at, "brokers": reports}, f"s{i}"))
    return states


@pytest.mark.parametrize(("seed", "strategy"), [(1, "ThresholdShedder"), (2, "AvgShedder"),
                                                (3, "UniformLoadShedder"), (4, None)])
def test_random_sequences_agree(monkeypatch: pytest.MonkeyPatch, seed: int,
                                strategy: str | None) -> None:
    states = _sequence(seed, 12)
    opts = Options(strategy=strategy)
    fast = _plans(monkeypatch, states, opts, False)
    assert fast == _plans(monkeypatch, states, opts, True)
    if strategy == "ThresholdShedder":
        assert any(p["actions"] for p in orjson.loads(fast))  # the cycles did something


def test_a_later_cycle_keeps_columns() -> None:
    states = _sequence(5, 3)
    first = loaddata.update_bundle_data(states[0], None, 1)
    later = loaddata.update_bundle_data(states[1], first, 4)
    assert isinstance(later, BundleDataView)
    assert isinstance(later.stored(), BundleColumns)
    assert len(later) == len(later.stored())
