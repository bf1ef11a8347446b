"""The next-cycle check (:meth:`Watcher._next_cycle`) builds no plan for a cycle that moved
nothing: its plan has no unload to excuse, and building it was a third of the check's CPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lbctl.loadmanager.clock import Follower
from tests.sandbox.life_helpers import living_hot
from tests.watch.watch_helpers import Beside

pytestmark = pytest.mark.live


class _Idle:
    acted = False

    def plan(self) -> Any:
        raise AssertionError("a plan built for a cycle that moved nothing")


def test_a_next_cycle_that_moved_nothing_builds_no_plan(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    warned: list[str] = []
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(2)
        w.watcher.warn = warned.append
        state = w.watcher._prev
        assert state is not None
        monkeypatch.setattr(Follower, "step", lambda self, st, conf: _Idle())
        assert w.watcher._next_cycle(state, w.watcher._settings(state)) == frozenset()
        assert warned == []
    finally:
        w.close()
