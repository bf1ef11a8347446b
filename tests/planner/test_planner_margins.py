"""Plans with margins (issue 29, item 3): the band planned inside the target by the load model's
error, no broker predicted above the most loaded one now, a refusal with its reason when the
model leaves no room, thin brokers not acted on, a split instead of moves that cannot reach the
band."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from lbctl.config import resolve
from lbctl.model.cluster import ClusterState
from lbctl.model.load import NamespaceBundleStats
from lbctl.model.loadmodel import SNAPSHOT_MARGIN
from lbctl.planner.propose import ProposeOptions, propose
from lbctl.simulate.hosts import cluster_on_hosts, traffic_of
from lbctl.sources.snapshot import read_snapshots
from lbctl.truth.hosts import Host, mixed_fleet
from tests.model.test_loadmodel import _history
from tests.planner_clusters import broker, random_cluster, snapshot, stats

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_band_is_planned_inside_the_target_by_the_models_margin() -> None:
    state = read_snapshots([EXAMPLES / "hot-broker.json"])[-1]
    p = propose(state, resolve(state.config), ProposeOptions(solver="greedy"))
    assert p.view.model.margin() == SNAPSHOT_MARGIN
    assert p.solution.width == pytest.approx(0.10 - 2 * SNAPSHOT_MARGIN)
    after = p.usages_after()
    assert max(after) - min(after) <= 0.10 - 2 * SNAPSHOT_MARGIN + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_no_broker_is_predicted_above_the_most_loaded_one_now(seed: int) -> None:
    state = random_cluster(300 + seed, 8, per_broker=6)
    p = propose(state, resolve(state.config), ProposeOptions(solver="greedy"))
    before, after = p.usages_before(), p.usages_after()
    margin = p.view.model.margin()
    if p.moves:
        assert max(after) + margin <= max(before) + 1e-9 or max(after) < max(before)
    for j, u in enumerate(after):  # a receiver stays under the cap with the margin
        if u > before[j]:
            assert u + margin <= min(0.85, max(before)) + 1e-9


def test_a_band_the_models_error_leaves_no_room_in_is_refused_with_the_reason() -> None:
    state = read_snapshots([EXAMPLES / "hot-broker.json"])[-1]
    p = propose(state, resolve(state.config), ProposeOptions(solver="greedy", target_range=3))
    plan = p.plan()
    assert plan.actions == () and plan.gate is not None
    assert plan.gate.startswith("refused: the load model's error (±2.0 points")
    assert "range <= 3 points" in plan.gate


def test_a_cap_the_models_error_leaves_no_room_under_is_refused_with_that_reason() -> None:
    """``--max-usage 0`` (or under the margin): the cap leaves no room, not the band — it was said
    to leave "no room inside the band (range <= 10 points)"."""
    state = read_snapshots([EXAMPLES / "hot-broker.json"])[-1]
    p = propose(state, resolve(state.config), ProposeOptions(solver="greedy", max_usage=1.5))
    plan = p.plan()
    assert plan.actions == () and plan.gate is not None
    assert plan.gate.startswith("refused: the load model's error (±2.0 points at p95) leaves no "
                                "room under the cap (max usage 1.5 %)")
    assert "band" not in plan.gate


def test_thin_brokers_take_no_bundle() -> None:
    hosts = {f"b{j}:8080": h for j, h in enumerate(mixed_fleet(6, seed=5))}
    history = _history(hosts, 12, seed=4)
    newcomer = "b5:8080"
    for k in range(len(history) - 2):
        history[k] = ClusterState(cluster="h", captured_at=history[k].captured_at, brokers={
            b: r for b, r in history[k].brokers.items() if b != newcomer})
    last = history[-1]
    p = propose(last, resolve(last.config), ProposeOptions(solver="greedy", target_range=5),
                history=history)
    j = p.view.index()[newcomer]
    assert "thin" in p.rules.closed[j]
    assert all(dst != j for _, dst in p.moves)
    assert p.view.model.history


def test_a_split_instead_of_moves_that_cannot_reach_the_band() -> None:
    # one bundle carries most of the cluster: no set of moves reaches the band, only its split
    topics = {f"persistent://t/big/topic-{k}": {"msgRateIn": 400.0, "msgRateOut": 400.0,
                                                 "msgThroughputIn": 1.6e6,
                                                 "msgThroughputOut": 1.6e6} for k in range(8)}
    small = {f"t/small/0x{k:08x}_0x{k + 1:08x}": stats(300) for k in range(6)}
    docs = {"hot:8080": broker({"t/big/0x00000000_0xffffffff": stats(3200, topics=8),
                                **small}),
            "cold-1:8080": broker({}), "cold-2:8080": broker({})}
    state = snapshot(docs, topics=topics)
    p = propose(state, resolve(state.config), ProposeOptions(solver="greedy"))
    kinds = [a.action for a in p.plan().actions]
    assert kinds == ["split"]
    assert any("split first" in n for n in p.notes)
    assert p.usages_after() == p.usages_before()


def test_brokers_whose_cost_is_unknown_are_not_filled_above_the_max_now() -> None:
    # issue 29 (n = 5, seed 26 of benchmarks/plans_on_hardware.py): two idle 8-core hosts, a
    # host class no report has shown at work, cost twice what the fleet's 32-core hosts do per
    # message; the model says so (slope error 100 %). Filled to the band as predicted they
    # landed at 73 and 85 % in truth, above the 60 % most loaded broker (at d8ab3d7). The plan
    # keeps their high ends under the max now, leaves the band out of reach with a note, and
    # proposes no split (no bundle is too big: the model's uncertainty is the reason).
    strong = Host(cores=32, nic_gbps=25.0, idle_cpu=0.05, cpu_us_per_msg=16.0, cpu_us_per_kb=1.8)
    weak = Host(cores=8, idle_cpu=0.05, cpu_us_per_msg=30.0, cpu_us_per_kb=3.5)
    hosts = {f"broker-{j}:8080": strong if j < 3 else weak for j in range(5)}
    rates = {f"broker-{j}:8080": {f"t/ns-{j}/0x{k:08x}_0x{k + 1:08x}": (
        45000.0 * (0.8 + 0.1 * k) * (0.9 + 0.15 * j), k + j) for k in range(8)} for j in range(3)}
    rng = random.Random(7)
    history = []
    owned: dict[str, dict[str, NamespaceBundleStats]] = {}
    for s in range(12):
        owned = {b: {} for b in hosts}
        for b, bundles in rates.items():
            for x, (r, phase) in bundles.items():
                f = 1.0 if s == 11 else 1 + 0.3 * math.sin(2 * math.pi * s / 12 + phase)
                owned[b][x] = NamespaceBundleStats(msgRateIn=r * f, msgRateOut=r * f,
                                                   msgThroughputIn=r * f * 1024,
                                                   msgThroughputOut=r * f * 1024, topics=3)
        history.append(cluster_on_hosts("h", 1_777_629_600_000 + s * 60_000, hosts, owned, rng))
    last = history[-1]
    p = propose(last, resolve(last.config), ProposeOptions(solver="greedy"), history=history)
    assert [p.view.model.quality[b].slope_error for b in ("broker-3:8080", "broker-4:8080")] \
        == [1.0, 1.0]
    after = {b: dict(x) for b, x in owned.items()}
    for i, dst in p.moves:
        x = p.view.bundles[i]
        after[p.view.brokers[dst]][x] = after[p.view.brokers[p.view.owner[i]]].pop(x)

    def cpu(bundles: dict[str, dict[str, NamespaceBundleStats]]) -> dict[str, float]:
        return {b: hosts[b].usage(traffic_of(bundles[b].values())).cpu.percent for b in hosts}

    true_before, true_after = cpu(owned), cpu(after)
    assert p.moves and max(true_after.values()) < max(true_before.values())
    assert not p.splits.actions
    assert any("the band is left out of reach" in n for n in p.notes)
