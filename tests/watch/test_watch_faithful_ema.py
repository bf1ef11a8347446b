"""The watcher beside the extensible sandbox whose ``weightedMaxEMA`` moves at every report tick
and is published by a write (``BrokerLoadDataReporter.reportAsync``, live22): between a capture
and the leader's next cycle a broker that writes publishes up to ``1 − 0.9^12`` (72 %) of a change
where it used to publish 10 %, so decisions on the edge go either way in the leader. No false
alarm then; a stuck leader and a leader with another setting than it advertises still told."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lbctl.sandbox.life import Wave
from tests.watch.watch_helpers import Beside

pytestmark = pytest.mark.live


def _wave(amplitude: float, period: float) -> tuple[Any, Any, Any]:
    from lbctl.sandbox.clock import SteppedClock
    from lbctl.sandbox.scenarios import extensible_cluster, living

    c = extensible_cluster()
    clock = SteppedClock()
    life = living(c, clock, hosts="uniform", reconnect=1.0)
    life.wave = Wave(amplitude=amplitude, period=period)
    return c, life, clock


def _transfers(life: Any) -> int:
    return sum(1 for d in life.leader.decisions for x in d.actions
               if x["action"] == "transfer" and not x.get("skipped"))


@pytest.mark.parametrize(("amplitude", "period"), [(0.6, 3600.0), (0.8, 900.0)])
def test_a_leader_on_load_data_no_capture_held_is_not_accused(tmp_path: Path, amplitude: float,
                                                              period: float) -> None:
    """Before: at 0.6/3600 a leader-divergence (lbctl's cycle on the capture after a swap of
    TransferShedder's read the swapped-in bundles on the overloaded broker and expected them
    sent back); at 0.8/900 an unexpected-unload at minute 4 (the leader shed a broker whose EMA
    rose from 0.435 to 0.571 between two captures, the spread 0.004 over the target)."""
    c, life, clock = _wave(amplitude, period)
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(40)
        assert _transfers(life) >= 3
        assert w.watcher.warm
        assert w.raised("leader-divergence") == []
        assert w.raised("unexpected-unload") == []
    finally:
        w.close()


def test_a_stuck_leader_is_still_reported_at_the_faithful_ema(tmp_path: Path) -> None:
    """The tentative expectations (the leader's possible data) do not hide a leader that never
    acts: once the brokers' data stops moving, lbctl's cycles on both ends agree."""
    c, life, clock = _wave(0.6, 3600.0)
    life.leader.fault.stuck = True
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(15)
        assert w.raised("leader-divergence")
    finally:
        w.close()


@pytest.mark.parametrize(("std", "kind"), [("0.1", "unexpected-unload"),
                                           ("0.5", "leader-divergence")])
def test_a_leader_with_another_target_std_is_still_reported(tmp_path: Path, std: str,
                                                           kind: str) -> None:
    """A leader running ``loadBalancerBrokerLoadTargetStd`` other than it advertises: shedding
    more (its moves are no end of the figures lbctl's model would act on) or less (lbctl's
    expectations stay unmet) is still told, within 15 minutes."""
    c, life, clock = _wave(0.6, 3600.0)
    life.leader.fault.deviate = {"loadBalancerBrokerLoadTargetStd": std}
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(15)
        assert w.raised(kind)
    finally:
        w.close()


def test_the_leaders_possible_data_moves_the_ema_as_twelve_ticks_do() -> None:
    """``_ahead``: each broker's published EMA taken ``1 − h^k`` of the way to its weighted max
    (``k`` report ticks in a shedding interval), ``None`` for a modular capture."""
    from lbctl.config import resolve
    from lbctl.model.brokerload import BrokerLoadData, PublishedLoad
    from lbctl.model.cluster import ClusterState
    from lbctl.model.load import ResourceUsage
    from lbctl.records import replace
    from lbctl.watch.loop import _ahead

    settings = resolve({}, None, None)
    data = BrokerLoadData(cpu=ResourceUsage(80.0, 100.0), weightedMaxEMA=0.2, updatedAt=1)
    state = ClusterState("c", 60_000, {})
    assert _ahead(state, settings) is None
    state = replace(state, broker_load_data={"b:1": PublishedLoad(data)})
    ahead = _ahead(state, settings)
    assert ahead is not None
    got = ahead.broker_load_data["b:1"].data.weightedMaxEMA
    assert got == pytest.approx(0.2 + (0.8 - 0.2) * (1 - 0.9 ** 12))
    faster = resolve({"loadBalancerReportUpdateMinIntervalMillis": "60000"}, None, None)
    ahead = _ahead(state, faster)
    assert ahead is not None
    assert ahead.broker_load_data["b:1"].data.weightedMaxEMA == pytest.approx(0.2 + 0.6 * 0.1)
