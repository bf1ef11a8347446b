"""An operator's unload told from the leader's where the evidence is thin: beside the extensible
leader's own transfers (its ``UnloadCounter`` breakdown, Admin apart), with the leader's next
cycle taking the count's room, and with lbctl's apply journal written after the capture that saw
the move."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lbctl.admin.client import unload_call
from lbctl.sandbox.life import Wave
from tests.sandbox.life_helpers import run_for
from tests.watch.watch_helpers import Beside

pytestmark = pytest.mark.live


def _extensible(reconnect: float) -> tuple[Any, Any, Any]:
    from lbctl.sandbox.clock import SteppedClock
    from lbctl.sandbox.scenarios import extensible_cluster, living

    c = extensible_cluster()
    c.set_dynamic(loadBalancerAutoBundleSplitEnabled="true")
    clock = SteppedClock()
    life = living(c, clock, hosts="uniform", reconnect=reconnect)
    life.wave = Wave(amplitude=0.3, period=3600.0)
    return c, life, clock


def test_an_operators_unload_beside_the_leaders_foreseen_transfers_is_an_operators(
        tmp_path: Path) -> None:
    """At minute 8 the extensible leader transfers four bundles; an operator unloads another half
    a minute before. The leader's count rose by four, as many as lbctl foresaw — but lbctl foresaw
    them on its run of the leader's next cycle (:meth:`Watcher._next_cycle`), which the count's
    room did not take in: the operator's unload was an unexpected-unload."""
    c, life, clock = _extensible(90.0)
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(7)
        run_for(life, clock, 30)
        a = max(c.brokers, key=lambda x: len(c.bundles_of(x)))
        b = min(c.brokers, key=lambda x: len(c.bundles_of(x)))
        bundle = sorted(c.bundles_of(a))[-1]
        ns, rng = bundle.rsplit("/", 1)
        w.client.request(unload_call(ns, rng, b))
        run_for(life, clock, 30)
        w.watcher.tick()
        w.minutes(4)
        moved = sum(1 for d in life.leader.decisions for x in d.actions
                    if x["action"] == "transfer" and not x.get("skipped"))
        assert moved >= 2  # the leader transferred in the same interval
        assert [e.anomaly.subject for e in w.raised("manual-unload")] == [bundle]
        assert w.raised("unexpected-unload") == []
        assert w.raised("leader-divergence") == []
    finally:
        w.close()


def test_an_unload_whose_journal_record_comes_late_is_still_lbctls(tmp_path: Path) -> None:
    """lbctl apply's unload, its journal record written only after the capture that saw the
    move (a journal from another host, a record written when the request returned). Before: the
    journal was read at that capture alone — an unexpected-unload, and the bundle stayed in
    lbctl's grace map as the leader's unload. Now the journal is read by the move's time window
    for the move window: a manual-unload when the record comes, and out of the grace map.
    (Ownership from the reports: no other evidence tells the move is not the leader's.)"""
    from lbctl.executor import Executor, Mutation
    from tests.sandbox.life_helpers import living_hot

    journal, elsewhere = tmp_path / "journal.jsonl", tmp_path / "elsewhere.jsonl"
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerSheddingEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False, ownership=False, journal=journal)
    try:
        w.minutes(2)
        a, b = list(c.brokers)[:2]
        bundle = sorted(c.bundles_of(a))[0]
        ns, rng = bundle.rsplit("/", 1)
        Executor(w.client, yes=True, journal=elsewhere, clock=clock.now, show=lambda _l: None,
                 force=True).run([Mutation(unload_call(ns, rng, b), f"unload {bundle}")])
        for _ in range(20):  # until a capture shows the move (the reports' ownership lags)
            w.minutes(1)
            if w.watcher.last_owner.get(bundle) == b:
                break
        assert w.watcher.last_owner.get(bundle) == b
        assert w.raised("manual-unload") == []  # (the record has not come yet)
        journal.write_bytes(elsewhere.read_bytes())
        w.minutes(2)
        [e] = w.raised("manual-unload")
        assert e.anomaly.subject == bundle
        assert "lbctl apply sent its unload" in e.anomaly.message
        assert "after the capture that saw the move" in e.anomaly.message
        assert w.watcher.follower is not None
        assert bundle not in w.watcher.follower.memory.recently_unloaded  # type: ignore[attr-defined]
    finally:
        w.close()



def test_an_unload_in_flight_is_matched_in_the_journal_from_when_it_left(tmp_path: Path) -> None:
    """Clients back 90 s after lbctl apply's unload: the bundle leaves its broker's listing at
    one capture and shows on its next owner two captures later. The journal was read from the
    capture before the arrival only, after the unload was sent: the move was told by the other
    evidence (here shedding off), never as lbctl's own. Now each move's window starts at the
    capture before the one that showed it gone."""
    from lbctl.executor import Executor, Mutation
    from tests.sandbox.life_helpers import living_hot

    journal = tmp_path / "journal.jsonl"
    c, life, clock = living_hot(3, reconnect=90.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerSheddingEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False, journal=journal)
    try:
        w.minutes(2)
        run_for(life, clock, 58)  # sent just before a capture: it arrives two captures after
        a, b = list(c.brokers)[:2]
        bundle = sorted(c.bundles_of(a))[0]
        ns, rng = bundle.rsplit("/", 1)
        Executor(w.client, yes=True, journal=journal, clock=clock.now, show=lambda _l: None,
                 force=True).run([Mutation(unload_call(ns, rng, b), f"unload {bundle}")])
        run_for(life, clock, 2)
        w.watcher.tick()
        assert bundle not in (w.watcher._listed or {})  # in flight
        w.minutes(1)
        assert bundle not in (w.watcher._listed or {})  # still in flight
        w.minutes(3)
        [e] = w.raised("manual-unload")
        assert e.anomaly.subject == bundle
        assert "lbctl apply sent its unload" in e.anomaly.message
    finally:
        w.close()


@pytest.mark.parametrize("restart", ["before-the-record", "after-the-match"])
def test_a_late_journal_record_is_told_once_across_a_restart(tmp_path: Path,
                                                             restart: str) -> None:
    """The late journal record (above) with the watcher restarted on its history (kill -9, a
    redeploy): a restart replayed the captures without the pending journal windows, so a record
    written while the watcher was down was never matched — the bundle stayed in lbctl's grace
    map as the leader's unload, no manual-unload — and a match made before the restart was
    undone by the replay (the bundle back in the grace map). Now the record is matched at the
    first capture after the restart, exactly once, and a match made before it stays made."""
    from lbctl.executor import Executor, Mutation
    from tests.sandbox.life_helpers import living_hot

    journal, elsewhere = tmp_path / "journal.jsonl", tmp_path / "elsewhere.jsonl"
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerSheddingEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False, ownership=False, journal=journal)
    try:
        w.minutes(2)
        a, b = list(c.brokers)[:2]
        bundle = sorted(c.bundles_of(a))[0]
        ns, rng = bundle.rsplit("/", 1)
        Executor(w.client, yes=True, journal=elsewhere, clock=clock.now, show=lambda _l: None,
                 force=True).run([Mutation(unload_call(ns, rng, b), f"unload {bundle}")])
        for _ in range(20):  # until a capture shows the move (the reports' ownership lags)
            w.minutes(1)
            if w.watcher.last_owner.get(bundle) == b:
                break
        assert w.watcher.last_owner.get(bundle) == b
        assert w.raised("manual-unload") == []  # (the record has not come yet)
        if restart == "after-the-match":
            journal.write_bytes(elsewhere.read_bytes())
            w.minutes(1)
            assert [e.anomaly.subject for e in w.raised("manual-unload")] == [bundle]
        w.watcher = w.new_watcher()  # the restart: a new watcher on the same history
        f = w.watcher.follower
        assert f is not None
        if restart == "after-the-match":  # the replay keeps the match: out of the grace map
            assert bundle not in f.memory.recently_unloaded  # type: ignore[attr-defined]
        else:
            assert bundle in f.memory.recently_unloaded  # type: ignore[attr-defined]
            journal.write_bytes(elsewhere.read_bytes())  # written while the watcher was down
        w.minutes(1)
        [e] = w.raised("manual-unload")  # at the first capture after the restart, or before it
        assert e.anomaly.subject == bundle
        assert "after the capture that saw the move" in e.anomaly.message
        assert bundle not in w.watcher.follower.memory.recently_unloaded  # type: ignore[union-attr]
        w.minutes(2)
        w.watcher = w.new_watcher()  # and again: the match is replayed, never told twice
        assert bundle not in w.watcher.follower.memory.recently_unloaded  # type: ignore[union-attr]
        w.minutes(2)
        assert len(w.raised("manual-unload")) == 1
        assert w.raised("unexpected-unload") == []
    finally:
        w.close()
