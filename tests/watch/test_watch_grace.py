"""lbctl's grace map corrected with the moves seen (:meth:`lbctl.watch.loop.Watcher._correct`):
the leader's unloads enter it at the capture that showed them, lbctl's own decisions the leader
did not carry out leave it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sandbox.life_helpers import living_hot
from tests.watch.watch_helpers import Beside, until_divergence

pytestmark = pytest.mark.live


def test_fresh_leader_and_watcher_agree_past_the_grace_period(tmp_path: Path) -> None:
    """Both start fresh; the leader's first unload comes before the watcher's first capture and
    lbctl's warm-up decisions are not the leader's. Before, lbctl's grace map held its own
    decisions (never carried out) and missed the leader's, so the two 30-minute
    loadBalancerSheddingGracePeriodMinutes ended apart: a leader-divergence at minute 34."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(45)
        assert w.watcher.warm
        assert w.raised("leader-divergence") == []
        # the leader's first unload (before the watcher's first capture, told by the loser's
        # lastBundleLosses) is shed again once its grace ends, a cycle before lbctl's capture
        # shows it: not unexpected
        assert life.leader is not None
        first = next(a["bundle"] for d in life.leader.decisions for a in d.actions
                     if a["action"] == "unload" and not a.get("skipped"))
        again = [d.at for d in life.leader.decisions[1:] for a in d.actions
                 if a["bundle"] == first and a["action"] == "unload" and not a.get("skipped")]
        assert again, "the scenario no longer re-sheds the first unload"
        assert [e for e in w.raised("unexpected-unload") if e.anomaly.subject == first] == []
        # lbctl's map holds what the leader's holds (the bundles, each within a capture)
        assert life.leader is not None and life.leader._follower is not None
        leader = dict(life.leader._follower.memory.recently_unloaded)
        ours = dict(w.watcher.follower.memory.recently_unloaded)
        assert set(ours) == set(leader)
        assert all(abs(ours[b] - leader[b]) <= 60_000 for b in leader)
    finally:
        w.close()


def test_a_stuck_leader_is_reported_soon_after_the_warm_up(tmp_path: Path) -> None:
    """The leader gets stuck as the watcher starts: lbctl's warm-up decisions, never carried
    out, used to sit in its grace map for 30 minutes, so the stuck leader was reported ~33
    minutes in; now a few intervals after the warm-up (5 cycles at p=0.5)."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerHistoryResourcePercentage="0.5")
    assert life.leader is not None
    life.leader.fault.stuck = True
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        until_divergence(w, 12)
        assert w.watcher.warm_up == 5
        assert w.raised("leader-divergence"), "no leader-divergence within 12 minutes"
    finally:
        w.close()


def test_the_extensible_broker_grace_list_follows_the_leader(tmp_path: Path) -> None:
    """The extensible load manager keeps each unload's source broker in
    ``recentlyUnloadedBrokers`` (``UnloadScheduler``), and TransferShedder sits out
    ``loadBalanceSheddingDelayInSeconds`` after it. A stuck leader unloads nothing, so it never
    cools down: lbctl's list used to hold its own transfers, never carried out, and its cycles
    cooled down alone for three minutes out of four (expecting nothing). Now the list holds the
    leader's seen moves only, and lbctl expects the transfer at every cycle."""
    from lbctl.sandbox.clock import SteppedClock
    from lbctl.sandbox.scenarios import extensible_cluster, living

    c = extensible_cluster()
    clock = SteppedClock()
    life = living(c, clock, hosts="uniform", reconnect=0.0)
    assert life.leader is not None
    life.leader.fault.stuck = True
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        idle = []
        for minute in range(10):
            w.minutes(1)
            plan = w.watcher.last_plan
            assert w.watcher.follower is not None and plan is not None
            from_ = {a.broker for a in plan.actions if not a.skipped}
            held = set(w.watcher.follower.memory.recently_unloaded_brokers)  # type: ignore[attr-defined]
            assert held <= from_, (minute, held, from_)  # only what this cycle just decided
            if not from_:
                idle.append(minute)
        assert idle == []
        assert w.raised("leader-divergence")
    finally:
        w.close()
