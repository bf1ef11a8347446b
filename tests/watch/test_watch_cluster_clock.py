"""The captures on the cluster's clock (:mod:`lbctl.admin.clock`): a cluster whose
clock runs apart from the watcher's (``lbctl sandbox --speed 60``, a skewed broker host)."""

from __future__ import annotations

from email.utils import formatdate
from pathlib import Path

import pytest

from lbctl.admin.clock import ClusterClock, date_of
from lbctl.loadmanager.select import Options
from lbctl.sources.cluster import on_client
from lbctl.watch.loop import Watcher
from tests.sandbox.life_helpers import living_hot
from tests.watch.watch_helpers import Beside


def test_a_clock_within_two_seconds_is_the_watchers_own() -> None:
    c = ClusterClock()
    assert c.at(1000.25) == 1000.25  # no Date yet
    for i in range(10):
        c.observe(1000.0 + 60 * i + 0.3, float(1000 + 60 * i))  # a Date is rounded down
    assert c.rate() == 1.0
    assert c.at(1600.7) == 1600.7 and c.local(1600.7) == 1600.7


def test_a_skewed_or_faster_cluster_clock_is_followed() -> None:
    skewed = ClusterClock()
    skewed.observe(1000.0, 1300.0)
    assert skewed.at(1010.0) == pytest.approx(1310.5)
    assert skewed.local(1310.5) == pytest.approx(1010.0)
    fast = ClusterClock()
    for i in range(8):
        fast.observe(1000.0 + i, 1000.0 + 60 * i)  # one capture a second, a minute apart
    assert fast.rate() == pytest.approx(60.0)
    assert fast.at(1007.5) == pytest.approx(1000 + 60 * 7.5)
    assert fast.local(1000 + 60 * 7.5) == pytest.approx(1007.5)


def test_a_date_header_is_read_or_ignored() -> None:
    assert date_of(formatdate(1_700_000_000, usegmt=True)) == 1_700_000_000
    assert date_of(None) is None and date_of("") is None and date_of("yesterday") is None


@pytest.mark.live
def test_a_stuck_leader_is_reported_beside_a_cluster_sixty_times_as_fast(tmp_path: Path) -> None:
    """``lbctl sandbox --speed 60`` and ``lbctl watch --interval 1``: the watcher stamped its
    captures with its own clock, a second apart where the cluster's were a minute, so lbctl's
    load manager ran once in 60 captures and a stuck leader was never reported (and the
    extensible leader was accused two watcher-minutes — two cluster hours — after an expected
    transfer). The captures now take the cluster's time from the leader answer's ``Date``."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerHistoryResourcePercentage="0.5")
    assert life.leader is not None
    life.leader.fault.stuck = True
    t0 = clock.now()
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    w.watcher = Watcher(on_client(w.client), w.opts, Options(),
                        clock=lambda: t0 + (clock.now() - t0) / 60,
                        on_events=lambda ev, _st: w.events.extend(ev))
    try:
        for _ in range(12):
            w.minutes(1)
            if w.raised("leader-divergence"):
                break
        assert w.raised("leader-divergence"), "no leader-divergence within 12 cluster minutes"
        st = w.history and w.watcher.status
        assert st is not None and abs(st.captured_at / 1000 - clock.now()) < 2
    finally:
        w.close()


@pytest.mark.live
def test_captures_an_interval_apart_each_run_a_cycle_however_they_jitter(tmp_path: Path) -> None:
    """Captures a shedding interval apart, one a little early, the next a little late (a read
    starts a few milliseconds after the tick; 60 times that at ``--speed 60``): the early ones
    ran no cycle of lbctl's, so the moves they showed were matched against none (200 of 448
    captures beside ``lbctl sandbox --speed 60``). Each now runs one."""
    from tests.sandbox.life_helpers import run_for

    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        cycled = 0
        for i in range(10):
            run_for(life, clock, 58 if i % 2 else 62)
            at = w.watcher.tick().state.captured_at
            f = w.watcher.follower
            cycled += f is not None and f.prev is not None and f.prev[0].captured_at == at
        assert cycled == 10
    finally:
        w.close()
