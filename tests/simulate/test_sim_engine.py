"""The closed loop itself: first cycle = recommend, trace-driven traffic, the report-update rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.errors import UsageError
from lbctl.loadmanager.select import Options, plans
from lbctl.model.cluster import EXTENSIBLE
from lbctl.records import replace
from lbctl.simulate.engine import SimulationOptions, simulate
from lbctl.sources.snapshot import read_snapshots

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name", ["hot-broker.json", "uniform.json", "pip364-90-10.json"])
def test_first_cycle_is_what_recommend_says(name: str) -> None:
    states = read_snapshots([EXAMPLES / name])
    plan = plans(states, Options())[-1]
    expected = [(a.bundle, a.broker, a.destinationBroker) for a in plan.actions
                if a.action == "unload" and a.skipped is None]
    r = simulate(states, Options(), SimulationOptions(cycles=1))
    assert [(m.bundle, m.source, m.destination) for m in r.cycles[0].moves] == expected
    assert expected  # each of these examples sheds in its first cycle


def test_moves_change_true_load_and_bundle_counts() -> None:
    r = simulate(read_snapshots([EXAMPLES / "hot-broker.json"]), Options(),
                 SimulationOptions(cycles=3))
    c1, c2 = r.cycles[0], r.cycles[1]
    hot = "broker-2.pulsar.svc:8080"
    assert c1.bundles[hot] - len(c1.moves) == c2.bundles[hot]
    assert c2.loads[hot] < c1.loads[hot]
    assert sum(c1.bundles.values()) == sum(c2.bundles.values())
    assert c1.moved_throughput == pytest.approx(sum(m.throughput for m in c1.moves))
    # the times advance by loadBalancerSheddingIntervalMinutes
    assert [c.at - r.start for c in r.cycles] == [0, 60_000, 120_000]


def test_interval_setting_spaces_the_cycles() -> None:
    r = simulate(read_snapshots([EXAMPLES / "balanced.json"]),
                 Options(overrides={"loadBalancerSheddingIntervalMinutes": "5"}),
                 SimulationOptions(cycles=3))
    assert [c.at - r.start for c in r.cycles] == [0, 300_000, 600_000]
    assert r.interval_minutes == 5


def test_the_leader_sees_only_reports_that_were_written() -> None:
    # Threshold 50 %: for broker-1, losing 40 of 90 points (usage 40, rate 44 %, bundles 17 %)
    # is not enough to rewrite its report; broker-2's rate grows 400 %, so it writes. The leader
    # sees 90/50 in cycle 2 though the truth is 50/50.
    opts = Options(overrides={"loadBalancerReportUpdateThresholdPercentage": "50"})
    r = simulate(read_snapshots([EXAMPLES / "pip364-90-10.json"]), opts,
                 SimulationOptions(cycles=3))
    c2 = r.cycles[1]
    assert [round(v, 4) for v in c2.loads.values()] == [0.5, 0.5]
    assert [round(v, 4) for v in c2.reported.values()] == [0.9, 0.5]
    assert c2.reports_written == 1
    # with the default 10 % both brokers write and the leader sees the truth
    r = simulate(read_snapshots([EXAMPLES / "pip364-90-10.json"]), Options(),
                 SimulationOptions(cycles=2))
    assert r.cycles[1].reports_written == 2
    assert [round(v, 4) for v in r.cycles[1].reported.values()] == [0.5, 0.5]


def test_trace_driven_rates_follow_the_sequence_ownership_follows_the_simulation() -> None:
    states = read_snapshots([EXAMPLES / "two-brokers-90-10.jsonl"])
    r = simulate(states, Options(), SimulationOptions(cycles=8))
    assert r.trace_snapshots == len(states) == 6
    for k, c in enumerate(r.cycles):
        trace = states[min(k, len(states) - 1)]
        # total traffic of the cycle is the trace snapshot's, wherever the bundles are
        assert sum(c.throughput.values()) == pytest.approx(
            sum(rep.throughput for rep in trace.brokers.values()))
    # the trace's own moves are not replayed: the simulation moved what its shedder chose
    assert [len(c.moves) for c in r.cycles[:3]] == [2, 2, 0]


def test_default_cycles_cover_a_long_trace() -> None:
    st = read_snapshots([EXAMPLES / "balanced.json"])[0]
    later = replace(st, captured_at=st.captured_at + 90 * 60_000)
    r = simulate([st, later], Options(), SimulationOptions())
    assert len(r.cycles) == 91
    assert len(simulate([st], Options(), SimulationOptions()).cycles) == 60


def test_bad_inputs_are_usage_errors() -> None:
    st = read_snapshots([EXAMPLES / "balanced.json"])
    with pytest.raises(UsageError, match="cycles"):
        simulate(st, Options(), SimulationOptions(cycles=0))
    with pytest.raises(UsageError, match="extensible"):  # TransferShedder only there
        simulate([replace(st[0], load_manager=EXTENSIBLE)], Options(strategy="AvgShedder"),
                 SimulationOptions())
    with pytest.raises(UsageError, match="unknown shedding strategy"):
        simulate(st, Options(strategy="ThresholdShedderX"), SimulationOptions(cycles=1))
