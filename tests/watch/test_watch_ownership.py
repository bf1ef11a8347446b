"""Ownership between load reports: the watcher reads every broker's ``ownedNamespaces`` so that a
move shows at the capture it happens, not once both brokers rewrite their load report (up to
``loadBalancerReportUpdateMaxIntervalMinutes``, 15 by default)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.admin.client import unload_call
from tests.sandbox.life_helpers import living_hot
from tests.watch.watch_helpers import Beside

pytestmark = pytest.mark.live


def _ping_pong(tmp_path: Path, ownership: bool,
               written: bool) -> tuple[int, list[str], list[int]]:
    """A bundle moved A→B→A→B a minute apart, well within one report interval: the moves of it
    the watcher saw, the ping-pong anomalies raised and the owners the reports showed after each
    move (as indices in the broker list: A is 0)."""
    # a bundle is a small share of a broker's (as on a broker with dozens of busy bundles): its
    # move alone does not pass loadBalancerReportUpdateThresholdPercentage (three brokers of the
    # sandbox are too small for that: a threshold out of reach stands for it), so the reports are
    # rewritten only after loadBalancerReportUpdateMaxIntervalMinutes
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerSheddingEnabled="false",
                                loadBalancerReportUpdateThresholdPercentage="1000000")
    c.reports_as_written = written
    w = Beside(c, life, clock, tmp_path / "h", doctor=False, ownership=ownership)
    try:
        w.minutes(2)
        a, b = list(c.brokers)[:2]
        bundle = sorted(c.bundles_of(a))[0]
        ns, rng = bundle.rsplit("/", 1)
        reported: list[int] = []
        for dest in (b, a, b):
            w.client.request(unload_call(ns, rng, dest))
            w.minutes(1)
            assert c.owners[bundle] == dest  # (the clients are back on the destination)
            reported.append(list(c.brokers).index(w.watcher.history.recent(1)[-1].owners()[bundle]))
        seen = sum(1 for m in w.watcher.log.items if m.bundle == bundle)
        raised = [e.anomaly.subject for e in w.raised("ping-pong")]
        return seen, raised, reported
    finally:
        w.close()


@pytest.mark.parametrize("written", [False, True], ids=["refreshed", "as-written"])
def test_a_bundle_moved_back_and_forth_within_one_report_interval_is_seen_each_time(
        tmp_path: Path, written: bool) -> None:
    """(Refreshed, the history keeps the reports as the leader read them: still on A.)"""
    seen, raised, reported = _ping_pong(tmp_path / "on", ownership=True, written=written)
    assert seen == 3
    assert len(raised) == 1
    # the reports alone (the watcher before ownedNamespaces) lag: the same moves are under-counted
    seen_before, raised_before, reported_before = _ping_pong(tmp_path / "off", ownership=False,
                                                                written=written)
    assert reported_before == reported == [0, 0, 0]  # no report rewritten: still on A
    assert seen_before < 3 and raised_before == []


def test_a_cluster_refusing_ownedNamespaces_is_followed_by_its_reports_with_one_warning(
        tmp_path: Path) -> None:
    from lbctl.sandbox import Fault

    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    warned: list[str] = []
    w.watcher.warn = warned.append
    try:
        refused = Fault(path="/ownedNamespaces$", status=403,
                        reason="This operation requires super-user access")
        c.faults.append(refused)
        w.minutes(3)
        assert len(warned) == 1 and "ownedNamespaces" in warned[0] and "super-user" in warned[0]
        assert w.watcher.captures == 3  # the captures go on, from the reports
        c.faults.remove(refused)
        w.minutes(2)
        assert len(warned) == 2 and "again" in warned[1]
    finally:
        w.close()


@pytest.mark.parametrize("written", [False, True], ids=["refreshed", "as-written"])
def test_a_move_before_the_first_capture_enters_lbctls_grace_map(tmp_path: Path,
                                                                 written: bool) -> None:
    """The reports still list the bundle on its old broker (not rewritten since), the brokers say
    it moved: the leader unloaded it, so lbctl's grace map holds it as the leader's does — else
    lbctl's cycle, on the same reports, expected that unload again and the leader's next one, of
    another bundle, was unexpected."""
    from tests.sandbox.life_helpers import run_for

    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerSheddingEnabled="false",
                                loadBalancerReportUpdateThresholdPercentage="1000000")
    c.reports_as_written = written
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        run_for(life, clock, 30)
        a, b = list(c.brokers)[:2]
        bundle = sorted(c.bundles_of(a))[0]
        ns, rng = bundle.rsplit("/", 1)
        w.client.request(unload_call(ns, rng, b))
        run_for(life, clock, 1)
        w.watcher.tick()
        assert w.watcher.history.recent(1)[-1].owners()[bundle] == a  # the report is stale
        f = w.watcher.follower
        assert f is not None
        recently = f.memory.recently_unloaded  # type: ignore[attr-defined]
        assert recently.get(bundle) == w.watcher.history.recent(1)[-1].captured_at
        assert w.raised("unexpected-unload") == []
    finally:
        w.close()


def test_a_fresh_leader_and_watcher_agree_while_the_reports_lag(tmp_path: Path) -> None:
    """Reports rewritten only every loadBalancerReportUpdateMaxIntervalMinutes: each leader's
    unload shows (from ownedNamespaces) at the capture after its cycle, while the reports lbctl's
    cycle reads still hold the bundle — that cycle makes the leader's decision, not its next one.
    From the reports alone: a leader-divergence at 26 min, unexpected-unloads at 16 and 36 and a
    false ping-pong at 67; with the ownership but the moves entering lbctl's grace map before
    its cycle: an unexpected-unload at 20."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerReportUpdateThresholdPercentage="1000000")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(45)
        assert w.watcher.log.items  # the leader did move bundles
        for kind in ("unexpected-unload", "leader-divergence", "ping-pong"):
            assert w.raised(kind) == [], kind
    finally:
        w.close()
