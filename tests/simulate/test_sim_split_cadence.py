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
