"""The extensible leader's TransferShedder with ``loadBalancerSheddingConditionHitCountThreshold``
above 0: its ``unloadConditionHitCount`` is older than the watcher, zeroed at each cycle that
decided an unload (``TransferShedder.findBundlesForUnloading``), and the cycle after a transfer
is skipped as CoolDown (``loadBalanceSheddingDelayInSeconds``) without counting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lbctl.sandbox.life import Wave
from tests.sandbox.life_helpers import run_for
from tests.watch.watch_helpers import Beside

pytestmark = pytest.mark.live


def _hit_count_3(before: int) -> tuple[Any, Any, Any]:
    """The extensible sandbox at threshold 3, its leader run ``before`` minutes alone."""
    from lbctl.sandbox.clock import SteppedClock
    from lbctl.sandbox.scenarios import extensible_cluster, living

    c = extensible_cluster()
    c.set_dynamic(loadBalancerSheddingConditionHitCountThreshold="3")
    clock = SteppedClock()
    life = living(c, clock, hosts="uniform", reconnect=1.0)
    life.wave = Wave(amplitude=0.5, period=1800.0)
    for _ in range(before):
        run_for(life, clock, 60)
    return c, life, clock


@pytest.mark.parametrize("before", [0, 1, 3])
def test_a_leader_counting_hits_out_of_lbctls_phase_is_not_accused(tmp_path: Path,
                                                                   before: int) -> None:
    """Before: lbctl's count ran one cycle behind or ahead of the leader's (the leader had
    counted, or acted, before the first capture; cycles skipped in CoolDown did not count yet
    counted towards the warm-up), and lbctl's cycle standing for the leader's acting one read
    the channel's ownership after the transfers, so it shed the same broker again — two
    leader-divergences and three unexpected-unloads in 40 minutes, depending on the phase. Now
    the leader's transfers seen zero lbctl's count, the checks wait until the counts are known
    equal, and that cycle's other unloads are the leader's choice made otherwise."""
    c, life, clock = _hit_count_3(before)
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(40)
        moved = sum(1 for d in life.leader.decisions for x in d.actions
                    if x["action"] == "transfer" and not x.get("skipped"))
        assert moved >= 3  # the leader did act, more than once
        assert w.watcher.warm
        assert w.raised("leader-divergence") == []
        assert w.raised("unexpected-unload") == []
    finally:
        w.close()


def test_a_stuck_leader_counting_hits_is_still_reported(tmp_path: Path) -> None:
    """The checks wait for the counts to be known equal: a leader that never acts is known
    stuck at lbctl's second unloading cycle (the leader's count is at least lbctl's after its
    first), and reported."""
    c, life, clock = _hit_count_3(3)
    assert life.leader is not None
    life.leader.fault.stuck = True
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(15)
        assert w.raised("leader-divergence")
    finally:
        w.close()


def test_the_page_and_the_gauge_say_the_checks_wait_for_the_hit_count() -> None:
    """Past the warm-up's cycles, but the counts not known equal: the checks have not started,
    and the page and ``lbctl_divergence_warmup_cycles_remaining`` said they had."""
    from lbctl.watch.status import Status, divergence_note, metrics_text

    waiting = Status("c", 0, (), (0.0, 1.0), (), (), 1, 0, 0, 0, (), followed=9, warm_up=4,
                     hits_synced=False)
    assert "hit count" in divergence_note(waiting)
    assert "\nlbctl_divergence_warmup_cycles_remaining 1\n" in metrics_text(waiting, 0)
    on = Status("c", 0, (), (0.0, 1.0), (), (), 1, 0, 0, 0, (), followed=9, warm_up=4,
                hits_synced=True)
    assert divergence_note(on) == ""
    assert "\nlbctl_divergence_warmup_cycles_remaining 0\n" in metrics_text(on, 0)
