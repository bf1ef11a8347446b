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
