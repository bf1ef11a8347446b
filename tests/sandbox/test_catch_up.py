"""A living sandbox whose loop runs behind its clock (a busy machine, a fast ``--speed``: the
server's loop advances it a bounded slice at a time) still runs each moment at its own time. The
leader's unloads used to take the *clock's* now for their clients' reconnection, so a cycle run
late left its bundles unowned until the clock's now plus the reconnect delay: bundles missing from
every broker for as long as the loop lagged (seen at ``--speed 6`` after a jump of the clock, the
refill of the docs' story a cycle late)."""

from __future__ import annotations

import pytest

from tests.sandbox.life_helpers import living_hot

pytestmark = pytest.mark.live


def test_a_late_cycles_bundles_reconnect_after_the_reconnect_delay_of_its_time() -> None:
    c, life, clock = living_hot(3, loadBalancerAutoBundleSplitEnabled="false")
    try:
        start = clock.now()
        clock.set(start + 600)  # the clock ran on; the loop has not caught up yet
        life.advance(until=start + 62)  # the first cycle (60 s) and a reconnect delay (1 s)
        leader = life.leader
        assert leader is not None and leader.decisions, "the leader's first cycle ran"
        moved = [a["bundle"] for a in leader.decisions[0].actions
                 if a["action"] == "unload" and "skipped" not in a]
        assert moved
        assert not set(moved) & set(c.pending), "still unowned after the reconnect delay"
        assert all(b in c.owners for b in moved)
        assert len(c.owners) + len(c.pending) == sum(len(b) - 1 for b in c.namespaces.values())
    finally:
        c.stop()


def test_an_operators_unload_between_advances_still_waits_for_the_clients() -> None:
    """An unload that lbctl sends while the loop is behind waits its reconnect delay from where
    the cluster is, and the bundle is owned again once the cluster has run past it."""
    c, life, clock = living_hot(3)
    try:
        start = clock.now()
        clock.set(start + 10)
        life.advance()
        bundle = sorted(c.bundles_of(next(iter(c.brokers))))[0]
        clock.set(start + 20)  # the wall moved on; no advance yet
        with c._lock:
            c._move(bundle, None)
        assert bundle in c.pending and bundle not in c.owners
        life.advance(until=start + 12)
        assert bundle in c.owners
    finally:
        c.stop()
