"""The simulator on extensible snapshots: the extensible load manager in the closed loop.

Reporter ticks follow ``BrokerLoadDataReporter`` (an EMA step of ``BrokerLoadData.update`` every
``loadBalancerReportUpdateMinIntervalMillis``); the cycle is ``ExtensibleLoadManager`` with its
memory carried, as ``recommend --all-cycles`` replays it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.config import Settings, resolve
from lbctl.errors import UsageError
from lbctl.loadmanager.select import Options, plans
from lbctl.model.brokerload import BrokerLoadData
from lbctl.model.load import ResourceUsage
from lbctl.records import replace
from lbctl.simulate.compare import Pair, compare
from lbctl.simulate.engine import SimulationOptions, simulate
from lbctl.simulate.extensible import ExtensibleDriver
from lbctl.sources.snapshot import read_snapshots

EXT = Path(__file__).resolve().parents[2] / "examples" / "extensible"


def _moves(plan) -> list[tuple[str, str, str | None]]:
    return sorted((a.bundle, a.broker, a.destinationBroker) for a in plan.actions
                  if a.action in ("transfer", "unload"))


def test_cycle_one_is_recommend() -> None:
    states = read_snapshots([EXT / "skewed.json"])
    r = simulate(states, Options(), SimulationOptions(cycles=5))
    assert (r.shedding, r.placement) == ("TransferShedder", "LeastResourceUsageWithWeight")
    first = sorted((m.bundle, m.source, m.destination) for m in r.cycles[0].moves)
    assert first == _moves(plans(states, Options())[0])
    assert len(first) == 4
    # the moved bundles now load the destinations: the spread narrows and the scores follow
    assert r.cycles[1].spread.std < r.cycles[0].spread.std


def test_a_sequence_follows_recommend_all_cycles() -> None:
    """PIP-220's 12-2-1-1 case: the hit count opens the gate in cycle 4, as in ``recommend``."""
    states = read_snapshots([EXT / "pip220-12-2-1-1.jsonl"])
    r = simulate(states, Options(), SimulationOptions(cycles=6))
    expected = [_moves(p) for p in plans(states, Options())]
    assert [len(c.moves) for c in r.cycles[:4]] == [len(m) for m in expected] == [0, 0, 0, 2]
    assert sorted((m.bundle, m.source, m.destination) for m in r.cycles[3].moves) == expected[3]


def test_unload_mode_moves_to_the_placement_preview() -> None:
    states = read_snapshots([EXT / "skewed.json"])
    opts = Options(overrides={"loadBalancerTransferEnabled": "false"})
    r = simulate(states, opts, SimulationOptions(cycles=2))
    assert r.cycles[0].moves and all(m.destination for m in r.cycles[0].moves)


def test_reporter_ticks_blend_the_true_load() -> None:
    """A minute at 5 s ticks is 12 EMA steps of h = 0.9: 0.9^12 of the old load remains."""
    settings = resolve({})
    drv = ExtensibleDriver()
    assert drv._ticks(settings) == 12
    drv.reporter["b"] = BrokerLoadData().update(
        BrokerLoadData(cpu=ResourceUsage(80, 100)).usage(), 0, 0, 0, 0, 0, 0, settings, 1000)
    from lbctl.model.load import LocalBrokerData

    true = LocalBrokerData(cpu=ResourceUsage(20, 100))
    out = drv.report("b", true, 1000 + 60_000, settings)
    assert out.weightedMaxEMA == pytest.approx(0.2 + (0.8 - 0.2) * 0.9 ** 12)
    assert out.updatedAt == 1000 + 60_000
    slow = resolve({}, {}, {"loadBalancerReportUpdateMinIntervalMillis": "60000"})
    assert ExtensibleDriver._ticks(slow) == 1


def test_compare_runs_both_load_managers() -> None:
    states = read_snapshots([EXT / "skewed.json"])
    res = compare(states, Options(), [Pair("ThresholdShedder"), Pair("TransferShedder")],
                  SimulationOptions(cycles=4))
    threshold, transfer = res.runs
    assert threshold.shedding == "ThresholdShedder" and transfer.shedding == "TransferShedder"
    assert transfer.cycles[0].moves and threshold.cycles[0].moves


def test_refusals() -> None:
    states = read_snapshots([EXT / "skewed.json"])
    with pytest.raises(UsageError, match="TransferShedder only"):
        simulate(states, Options(strategy="ThresholdShedder"), SimulationOptions(cycles=1))
    st = states[0]
    bare = replace(st, brokers={b: replace(v, lastStats={}) for b, v in st.brokers.items()})
    with pytest.raises(UsageError, match="needs each broker's bundle stats"):
        simulate([bare], Options(), SimulationOptions(cycles=1))


def test_every_bundled_extensible_example_simulates() -> None:
    for f in sorted(EXT.glob("*.json*")):
        r = simulate(read_snapshots([f]), Options(), SimulationOptions(cycles=3))
        assert len(r.cycles) == 3 and r.final_loads
    assert Settings.defaults()["loadBalancerSheddingIntervalMinutes"] == 1


def test_the_extensible_split_scheduler_s_splits_are_carried_out() -> None:
    # every bundle above loadBalancerNamespaceBundleMaxMsgRate (lowered to 100 msg/s): the
    # SplitScheduler splits once a bundle has hit the condition more than
    # loadBalancerNamespaceBundleSplitConditionHitCountThreshold (3) times, at most
    # loadBalancerMaxNumberOfBundlesToSplitPerCycle (10) a cycle; the children stay with the
    # parent's owner (ServiceUnitStateChannelImpl.splitServiceUnitOnceAndRetry), each broker
    # carrying the traffic it carried
    states = read_snapshots([EXT / "skewed.json"])
    r = simulate(states, Options(overrides={"loadBalancerNamespaceBundleMaxMsgRate": "100"}),
                 SimulationOptions(cycles=5))
    assert [len(c.splits) for c in r.cycles] == [0, 0, 0, 10, 4]
    c3, c4, c5 = r.cycles[2], r.cycles[3], r.cycles[4]
    assert not c4.moves
    assert sum(c5.bundles.values()) == sum(c4.bundles.values()) + 10
    for b in c4.bundles:
        assert c5.msg_rate[b] == pytest.approx(c3.msg_rate[b])
    default = simulate(states, Options(), SimulationOptions(cycles=5))
    assert not any(c.splits for c in default.cycles)
