"""The simulator's truth is hosts, not lbctl's load model (issue 29, item 2): inferred from the
snapshot's reports when none are given, mixed hardware with noise when given; lbctl's planner
learns them from the reports."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lbctl.loadmanager.select import Options
from lbctl.model.load import NamespaceBundleStats
from lbctl.planner.propose import ProposeOptions
from lbctl.simulate.engine import SimulationOptions, simulate
from lbctl.simulate.hosts import cluster_on_hosts, inferred_hosts, traffic_of
from lbctl.sources.snapshot import read_snapshots
from lbctl.truth.hosts import Host, mixed_fleet

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
T0 = 1_777_629_600_000


@pytest.mark.parametrize("name", ["hot-broker.json", "rolling-restart.yaml", "pip364-90-10.json"])
def test_inferred_hosts_reproduce_the_snapshots_cpu(name: str) -> None:
    state = read_snapshots([EXAMPLES / name])[0]
    for b, host in inferred_hosts(state).items():
        rep = state.brokers[b]
        assert host.cores == round(rep.cpu.limit / 100)
        got = host.usage(traffic_of(rep.lastStats.values())).cpu.percent
        assert got == pytest.approx(rep.cpu.percent, abs=1e-6)
    assert inferred_hosts(state) == inferred_hosts(state)  # no noise, no randomness


def _skewed(hosts: dict[str, Host], seed: int) -> dict[str, dict[str, NamespaceBundleStats]]:
    rng = random.Random(seed)
    names = list(hosts)
    owned: dict[str, dict[str, NamespaceBundleStats]] = {b: {} for b in names}
    for k in range(60):
        rate = rng.lognormvariate(8.3, 0.7)
        size = rng.choice((1024, 4096))
        b = names[0] if k % 3 == 0 else rng.choice(names)  # the first broker is hot
        owned[b][f"t/ns/0x{k:08x}_0x{k + 1:08x}"] = NamespaceBundleStats(
            msgRateIn=rate, msgRateOut=rate, msgThroughputIn=rate * size,
            msgThroughputOut=rate * size, topics=2)
    return owned


def test_given_hosts_are_the_truth_and_the_planner_learns_them() -> None:
    hosts = {f"b{j}:8080": h for j, h in enumerate(mixed_fleet(6, seed=11))}
    state = cluster_on_hosts("mixed", T0, hosts, _skewed(hosts, 3))
    r = simulate([state], Options(strategy="lbctl"), SimulationOptions(
        cycles=20, hosts=hosts, seed=1, planner=ProposeOptions(solver="greedy")))
    first = r.cycles[0]
    assert first.spread.range > 0.10
    # the truth at cycle 1 is the hosts' usage of what each broker carries (noise within 3 sd)
    for b, host in hosts.items():
        exact = host.usage(traffic_of(state.brokers[b].lastStats.values())).cpu.percent / 100
        assert first.loads[b] == pytest.approx(exact, rel=0.07)
    # the planner brings the cluster into the band in truth, within three cycles, and keeps it
    settled = r.settled_at()
    assert settled is not None and settled <= 4
    assert r.summary()["bounceBacks"] == 0
    assert max(r.final_loads.values()) < max(first.loads.values())
