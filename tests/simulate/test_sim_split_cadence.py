"""The simulator's modular cycles check splits only after a report write: the leader's
``checkNamespaceBundleSplit`` runs in ``updateAll``, on each write under /loadbalance/brokers
(``ModularLoadManagerImpl.handleDataNotification``), not on the shedding timer."""

from __future__ import annotations

from types import SimpleNamespace

from lbctl.config import Settings
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.simulate.engine import ModularDriver
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from tests.loadmanager.test_gates import HOT, two_brokers


def _splits(k: int, written: int) -> list[str]:
    settings = Settings.defaults()
    lm = ModularLoadManager(SHEDDING.create("OverloadShedder"),
                            PLACEMENT.create("LeastLongTermMessageRate"),
                            PLACEMENT.create("RoundRobinBrokerSelector"))
    run = SimpleNamespace(lm=lm, interval_ms=60_000)
    tick = SimpleNamespace(k=k, written=written, settings=settings)
    r = ModularDriver().decide(run, tick, two_brokers(), None)  # type: ignore[arg-type]
    return [s.candidate.bundle for s in r.splits if s.skipped is None]


def test_a_cycle_after_a_write_checks_splits() -> None:
    assert _splits(1, 0) == [HOT]  # cycle 1 is recommend on the snapshot
    assert _splits(5, 2) == [HOT]


def test_a_cycle_without_a_write_does_not() -> None:
    assert _splits(5, 0) == []


def test_the_extensible_simulation_splits_on_the_split_scheduler_s_clock() -> None:
    """The SplitScheduler's period (loadBalancerSplitIntervalMinutes) against 1-minute cycles: at
    1 minute the hot bundles split in cycle 4 (their fourth check, threshold 3); at 2 minutes
    the checks fall in cycles 1, 3, 5 and 7, so the fourth comes in cycle 7."""
    from pathlib import Path

    from lbctl.loadmanager.select import Options
    from lbctl.simulate.engine import SimulationOptions, simulate
    from lbctl.sources.snapshot import read_snapshots

    ext = Path(__file__).resolve().parents[2] / "examples" / "extensible" / "skewed.json"
    states = read_snapshots([ext])

    def split_cycles(minutes: str) -> list[int]:
        r = simulate(states, Options(overrides={"loadBalancerNamespaceBundleMaxMsgRate": "100",
                                                "loadBalancerSplitIntervalMinutes": minutes}),
                     SimulationOptions(cycles=8))
        return [c.cycle for c in r.cycles if c.splits]

    assert split_cycles("1")[0] == 4
    assert split_cycles("2")[0] == 7
