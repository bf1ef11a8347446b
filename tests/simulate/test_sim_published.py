"""The published analyses, reproduced by the closed loop (anchors §5 R12, R13; PIP-364, PIP-220).

Each test asserts the qualitative outcome the PIP describes and the exact per-cycle figures the
load model gives (see README, "Simulation: the load model").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.loadmanager.select import Options
from lbctl.simulate.engine import SimulationOptions, SimulationResult, simulate
from lbctl.sources.snapshot import read_snapshots

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
B1, B2 = "broker-1.pulsar.svc:8080", "broker-2.pulsar.svc:8080"


def run(name: str, cycles: int, strategy: str | None = None, placement: str | None = None,
        bounce_window: int | None = None, **overrides: str) -> SimulationResult:
    states = read_snapshots([EXAMPLES / name])
    return simulate(states, Options(strategy, placement, overrides),
                    SimulationOptions(cycles=cycles, bounce_window=bounce_window))


def loads(r: SimulationResult) -> list[list[float]]:
    return [[round(v * 100, 4) for v in c.loads.values()] for c in r.cycles]


# --- PIP-364: two brokers at 90 % and 10 % -----------------------------------------------------
def test_pip364_threshold_shedder_keeps_shedding_after_the_load_is_even() -> None:
    r = run("pip364-90-10.json", 40, bounce_window=60)
    # true load per cycle: even after the first move, then past even as the scores lag
    assert loads(r)[:6] == [[90, 10], [50, 50], [30, 70], [20, 80], [10, 90], [10, 90]]
    # the smoothed scores the shedder decided on: 86/14 after the first move (PIP-364's numbers)
    scores = [[round(c.scores[b] * 100, 4) for b in (B1, B2)] for c in r.cycles[:5]]
    assert scores == [[90, 10], [86, 14], [80.4, 19.6], [74.36, 25.64], [67.924, 32.076]]
    assert [len(c.moves) for c in r.cycles[:5]] == [1, 2, 1, 1, 0]
    assert all(m.source == B1 and m.destination == B2 for c in r.cycles[:5] for m in c.moves)
    # later the flipped pair sheds back, and bundles return to the broker they left (ping-pong)
    assert [(c.cycle, len(c.moves)) for c in r.cycles if c.moves][4:] == \
        [(12, 2), (32, 1), (33, 1), (34, 1)]
    assert [m.bundle.split("/")[1] for c in r.cycles[31:34] for m in c.moves] == \
        ["clickstream", "audit", "orders"]
    s = r.summary()
    assert s["bounceBacks"] == 3 and s["unloads"] == 10 and s["settledAtCycle"] is None
    assert [round(v * 100, 4) for v in r.final_loads.values()] == [80, 20]


def test_pip364_without_history_stops_after_one_move() -> None:
    r = run("pip364-90-10.json", 10, loadBalancerHistoryResourcePercentage="0")
    assert [len(c.moves) for c in r.cycles] == [1] + [0] * 9
    assert r.summary()["settledAtCycle"] == 2


def test_pip364_avg_shedder_evens_the_pair_with_one_move_at_its_hit_count() -> None:
    r = run("pip364-90-10.json", 30, "AvgShedder", "AvgShedder", maxUnloadPercentage="0.5")
    # gap 80 >= loadBalancerAvgShedderHighThreshold 40: the second consecutive hit sheds
    assert [len(c.moves) for c in r.cycles] == [0, 1] + [0] * 28
    (move,) = r.cycles[1].moves
    assert (move.bundle, move.source, move.destination) == \
        ("acme/clickstream/0x00000000_0xffffffff", B1, B2)
    assert move.msg_rate == 48000.0  # half the 96,000 msg/s gap
    assert loads(r)[1:4] == [[90, 10], [50, 50], [50, 50]]
    s = r.summary()
    assert s["settledAtCycle"] == 3 and s["settleMinutes"] == 2 and s["bounceBacks"] == 0
    assert s["final"]["range"] == pytest.approx(0.0, abs=1e-9)


# --- PIP-220: static thresholds that never fire ------------------------------------------------
@pytest.mark.parametrize("name, shape", [
    ("pip220-12-2-1-1.json", [12, 2, 1, 1]),
    ("rolling-restart.yaml", [50, 50, 50, 50, 50, 0.4]),
])
def test_pip220_threshold_shedder_never_moves(name: str, shape: list[float]) -> None:
    r = run(name, 60)
    assert r.summary()["unloads"] == 0
    assert all(c.gate is None and not c.moves and not c.skipped for c in r.cycles)
    assert loads(r)[0] == shape and loads(r)[-1] == shape
    assert r.summary()["settledAtCycle"] is None


def test_pip220_rolling_restart_lower_boundary_shedding_feeds_the_idle_broker() -> None:
    r = run("rolling-restart.yaml", 60, lowerBoundarySheddingEnabled="true")
    moves = [m for c in r.cycles for m in c.moves]
    assert moves and all(m.destination == "broker-6.pulsar.svc:8080" for m in moves[:3])
    assert r.final.range < r.cycles[0].spread.range


@pytest.mark.parametrize("name", ["pip220-12-2-1-1.json", "rolling-restart.yaml"])
def test_pip220_transfer_shedder_moves_and_converges(name: str) -> None:
    r = run(name, 60, "TransferShedder")
    s = r.summary()
    assert s["unloads"] > 0
    assert r.final.range < r.cycles[0].spread.range
    assert r.final.std < r.cycles[0].spread.std
    # converged: the last half of the hour moves nothing
    assert not any(c.moves for c in r.cycles[30:])
    # the least loaded broker received load
    idle = min(r.cycles[0].loads, key=r.cycles[0].loads.__getitem__)
    assert r.final_loads[idle] > r.cycles[0].loads[idle]
