"""An operator's unload (``pulsar-admin namespaces unload``, ``lbctl unload``/``apply``) told from
the leader's: reported as a ``manual-unload`` with the evidence, never as an ``unexpected-unload``
(a divergence of the leader's), and kept out of lbctl's grace map — the leader's
``doLoadShedding`` records its own unloads only, so it may shed that bundle at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.admin.client import unload_call
from tests.sandbox.life_helpers import living_hot, run_for
from tests.watch.watch_helpers import Beside

pytestmark = pytest.mark.live


def _unload(w: Beside, bundle: str, dest: str) -> None:
    ns, rng = bundle.rsplit("/", 1)
    w.client.request(unload_call(ns, rng, dest))


@pytest.mark.parametrize("written", [False, True], ids=["refreshed", "as-written"])
@pytest.mark.parametrize("reconnect", [0.0, 90.0])
def test_an_operators_unload_is_told_from_the_leaders_by_its_unload_count(
        tmp_path: Path, reconnect: float, written: bool) -> None:
    """A hot cluster whose leader sheds all along; an operator moves a bundle half-way between
    the leader's cycles, three times. The leader's brk_lb_unload_bundle_count did not rise for
    them: each is a manual-unload, none of the leader's moves is, and lbctl's grace map never
    holds a bundle the leader's does not (before: three unexpected-unloads, and the operator's
    bundle sat in lbctl's map for ten minutes while the leader was free to shed it).

    With clients that come back 90 s after an unload, each bundle shows on its next owner a
    capture after it left its broker (the leader's as much as the operator's): judged when it
    left, told when it arrives."""
    c, life, clock = living_hot(3, reconnect=reconnect,
                                loadBalancerAutoBundleSplitEnabled="false")
    c.reports_as_written = written  # (Pulsar's endpoint serves them refreshed)
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    assert life.leader is not None
    manual: list[str] = []
    wrong: list[tuple[int, str]] = []
    try:
        for minute in range(45):
            run_for(life, clock, 30)
            if minute in (10, 20, 30):
                i = minute // 10 - 1
                a, b = list(c.brokers)[i % 3], list(c.brokers)[(i + 1) % 3]
                bundle = sorted(c.bundles_of(a))[-1]
                _unload(w, bundle, b)
                manual.append(bundle)
            run_for(life, clock, 30)
            w.watcher.tick()
            assert life.leader._follower is not None and w.watcher.follower is not None
            leader = life.leader._follower.memory.recently_unloaded
            ours = w.watcher.follower.memory.recently_unloaded  # type: ignore[attr-defined]
            # (lbctl's own decisions on this capture are in its map at once: the leader's next
            # cycle, not yet run)
            mine = {a.bundle for a in w.watcher.last_plan.actions} \
                if w.watcher.last_plan is not None else set()
            wrong += [(minute, b) for b in manual if b in ours and b not in leader
                      and b not in mine]
        assert sum(1 for d in life.leader.decisions for a in d.actions
                   if a["action"] == "unload" and not a.get("skipped")) >= 5  # it did shed
        raised = w.raised("manual-unload")
        assert [e.anomaly.subject for e in raised] == manual
        assert all("brk_lb_unload_bundle_count" in e.anomaly.message for e in raised)
        assert w.raised("leader-divergence") == []
        assert wrong == []
        # with clients back after 90 s, the leader re-sheds the third operator's bundle: it
        # arrived on the leader's broker, whose report was rewritten with it, shed on and
        # rewritten again between two captures, so no state lbctl's cycles judge on holds it —
        # an unjudged-unload saying so (before: an unexpected-unload, the leader accused)
        assert w.raised("unexpected-unload") == []
        unjudged = w.raised("unjudged-unload")
        assert {e.anomaly.subject for e in unjudged} <= set(manual)
        assert all("the evidence is incomplete" in e.anomaly.message for e in unjudged)
        if reconnect:
            assert unjudged
        assert w.watcher.checker.unjudged_total >= len(unjudged)  # (the warm-up's apart)
    finally:
        w.close()


def test_a_move_while_the_leader_does_not_shed_is_not_the_leaders(tmp_path: Path) -> None:
    """Shedding off in the dynamic configuration: the leader's cycle does nothing, so a bundle
    that moves was moved by someone else."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerSheddingEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(2)
        a, b = list(c.brokers)[:2]
        bundle = sorted(c.bundles_of(a))[0]
        _unload(w, bundle, b)
        w.minutes(1)
        [e] = w.raised("manual-unload")
        assert e.anomaly.subject == bundle and e.anomaly.severity == "info"
        assert "loadBalancerSheddingEnabled=false" in e.anomaly.message
        assert w.raised("unexpected-unload") == []
        w.minutes(1)
        assert [e.anomaly.subject for e in w.resolved("manual-unload")] == [bundle]
    finally:
        w.close()


def test_an_unload_lbctl_apply_sent_is_lbctls(tmp_path: Path) -> None:
    """An unload in lbctl's apply journal is lbctl's, even where nothing else tells (ownership
    from the reports: neither the unload count nor the configuration is evidence then)."""
    from lbctl.executor import Executor, Mutation

    journal = tmp_path / "journal.jsonl"
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerSheddingEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False, ownership=False, journal=journal)
    try:
        w.minutes(2)
        a, b = list(c.brokers)[:2]
        bundle = sorted(c.bundles_of(a))[0]
        ns, rng = bundle.rsplit("/", 1)
        Executor(w.client, yes=True, journal=journal, clock=clock.now, show=lambda _l: None,
                 force=True).run([Mutation(unload_call(ns, rng, b), f"unload {bundle}")])
        w.minutes(3)
        [e] = w.raised("manual-unload")
        assert e.anomaly.subject == bundle and "lbctl apply sent its unload" in e.anomaly.message
        assert w.raised("unexpected-unload") == []
    finally:
        w.close()
