"""The simulator's numpy columns give bit for bit what the Python path gives.

:mod:`lbctl.model.bundlecolumns` samples and sums per column; :mod:`lbctl.simulate.sampling` and
``TimeAverageBrokerData.of`` do it per object. Both run here on random data (including sums whose
pairwise and left-to-right results differ) and on random whole simulations, with
``LBCTL_NO_NUMPY=1`` forcing the Python path.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from lbctl.loadmanager.select import Options
from lbctl.model.bundlecolumns import BundleColumns, StatsColumns, numpy_or_none
from lbctl.model.load import BundleData, NamespaceBundleStats, TimeAverageBrokerData
from lbctl.records import replace
from lbctl.simulate.engine import SimulationOptions, simulate
from lbctl.simulate.sampling import sample_all
from lbctl.sources.snapshot import parse_snapshot

np = pytest.importorskip("numpy")


def _stats(rng: random.Random) -> NamespaceBundleStats:
    def f() -> float:
        return rng.choice([0.0, 1e-300, 3.0, 1e16, rng.uniform(0, 5000), rng.uniform(0, 1) * 1e9])

    return NamespaceBundleStats(msgRateIn=f(), msgRateOut=f(), msgThroughputIn=f(),
                                msgThroughputOut=f(), topics=rng.randint(0, 9))


def _same(a: BundleData, b: BundleData) -> bool:
    return repr(a) == repr(b)  # repr of a float round-trips: equal reprs, equal bits


def test_numpy_or_none_honours_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    assert numpy_or_none() is np
    monkeypatch.setenv("LBCTL_NO_NUMPY", "1")
    assert numpy_or_none() is None


@pytest.mark.parametrize("seed", range(6))
def test_sampling_matches_the_python_path(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"t/n/0x{i:08x}_0x{i + 1:08x}" for i in range(300)]
    reported = {b: _stats(rng) for b in names[:200]}
    py: dict[str, BundleData] = sample_all({}, reported)
    cols = BundleColumns.of(np, py)
    cache: list[StatsColumns] = []
    for _ in range(40):
        # some bundles leave, some arrive, the order changes, some stats change
        if rng.random() < 0.5:
            keep = [b for b in reported if rng.random() < 0.9]
            new = [b for b in names if b not in reported and rng.random() < 0.05]
            order = keep + new
            rng.shuffle(order)
            reported = {b: reported.get(b) or _stats(rng) for b in order}
        if rng.random() < 0.3:
            b = rng.choice(list(reported))
            reported = {**reported, b: _stats(rng)}
        py = sample_all(py, reported)
        cols = cols.sampled(reported, cache)
        assert list(cols) == list(py)
        assert all(_same(cols[b], py[b]) for b in py)


@pytest.mark.parametrize("seed", range(4))
def test_broker_sums_add_left_to_right(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"t/n/b{i}" for i in range(500)]
    data = sample_all({}, {b: _stats(rng) for b in names})
    cols = BundleColumns.of(np, data)
    groups: list[dict[str, Any]] = []
    for _ in range(30):
        groups.append(dict.fromkeys(rng.sample(names, rng.randint(0, 60))))
    got = cols.time_averages(groups)
    assert got is not None
    for g, avg in zip(groups, got, strict=True):
        assert repr(avg) == repr(TimeAverageBrokerData.of(g, data))
    # a sum where pairwise and left-to-right addition differ still agrees
    tricky = {f"x{i}": NamespaceBundleStats(msgRateIn=v) for i, v in
              enumerate([1e16, 1.0, 1.0, 1.0, -1e16, 1.0] * 5)}
    tdata = sample_all({}, tricky)
    (avg,) = BundleColumns.of(np, tdata).time_averages([tricky]) or [None]
    assert repr(avg) == repr(TimeAverageBrokerData.of(tricky, tdata))
    # a key without data: the caller's Python path
    assert cols.time_averages([{"t/n/missing": None}]) is None


def _cluster(rng: random.Random, brokers: int, bundles: int, at: int) -> dict[str, Any]:
    ids = [f"broker-{i}:8080" for i in range(brokers)]
    stats: list[dict[str, Any]] = [{} for _ in ids]
    for n in range(bundles):
        ns = "pulsar/system" if n % 37 == 0 else f"tenant/ns-{n % 7}"
        stats[rng.randrange(brokers)][f"{ns}/0x{n:08x}_0x{n + 1:08x}"] = {
            "msgRateIn": rng.uniform(0, 900), "msgRateOut": rng.uniform(0, 900),
            "msgThroughputIn": rng.uniform(0, 4e6), "msgThroughputOut": rng.uniform(0, 4e6),
            "topics": rng.randint(1, 9),
        }
    reports = {
        b: {"cpu": {"usage": rng.uniform(5, 95) * 16, "limit": 1600.0},
            "memory": {"usage": 4096.0, "limit": 8192.0},
            "bandwidthIn": {"usage": rng.uniform(1e4, 9e6), "limit": 10_000_000.0},
            "bandwidthOut": {"usage": rng.uniform(1e4, 9e6), "limit": 10_000_000.0},
            "lastStats": stats[i], "lastUpdate": at - rng.randint(0, 900_000)}
        for i, b in enumerate(ids)}
    return {"format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": at, "config": {},
            "brokers": reports}


def _run(monkeypatch: pytest.MonkeyPatch, states: Any, strategy: str, python: bool) -> str:
    with monkeypatch.context() as m:
        if python:
            m.setenv("LBCTL_NO_NUMPY", "1")
        r = simulate(states, Options(strategy=strategy), SimulationOptions(cycles=25))
    return repr(r.cycles) + repr(r.final_loads) + repr(r.final_throughput)


@pytest.mark.parametrize(("seed", "strategy"), [
    (1, "ThresholdShedder"), (2, "UniformLoadShedder"), (3, "AvgShedder"), (4, "OverloadShedder"),
    (5, "ThresholdShedder"),
])
def test_simulations_agree_bit_for_bit(monkeypatch: pytest.MonkeyPatch, seed: int,
                                       strategy: str) -> None:
    rng = random.Random(seed)
    t0 = 1_795_000_000_000
    states = [parse_snapshot(_cluster(rng, rng.randint(3, 12), rng.randint(50, 400), t0), "a")]
    if seed % 2:  # a trace: new traffic, bundles and brokers after ten minutes
        states.append(parse_snapshot(_cluster(rng, rng.randint(3, 12), rng.randint(50, 400),
                                              t0 + 600_000), "b"))
    fast = _run(monkeypatch, states, strategy, python=False)
    slow = _run(monkeypatch, states, strategy, python=True)
    assert fast == slow
    assert "moves=(Move(" in fast or strategy == "OverloadShedder"  # something happened


def test_stats_columns_are_reused_while_the_stats_objects_are() -> None:
    rng = random.Random(9)
    reported = {f"b{i}": _stats(rng) for i in range(20)}
    cols = BundleColumns.of(np, sample_all({}, reported))
    cache: list[StatsColumns] = []
    cols = cols.sampled(reported, cache)
    first = cache[0]
    cols = cols.sampled(dict(reported), cache)  # a new dict of the same objects
    assert cache[0] is first
    cols.sampled({**reported, "b0": replace(reported["b0"], msgRateIn=1.0)}, cache)
    assert cache[0] is not first


def test_broker_sums_of_negative_zeros_start_from_positive_zero() -> None:
    # the Python loop starts each sum at +0.0, so bundles of -0.0 alone sum to +0.0
    stats = {f"z{i}": NamespaceBundleStats(msgRateIn=-0.0, msgThroughputIn=-0.0) for i in range(3)}
    data = sample_all({}, stats)
    (avg,) = BundleColumns.of(np, data).time_averages([stats]) or [None]
    assert repr(avg) == repr(TimeAverageBrokerData.of(stats, data))
    assert avg is not None and repr(avg.shortTermMsgRateIn) == "0.0"
