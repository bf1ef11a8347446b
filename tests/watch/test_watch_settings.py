"""``Watcher._cycle`` resolves a capture's settings once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.life_helpers import living_hot
from tests.watch.watch_helpers import Beside

pytestmark = pytest.mark.live


def test_settings_are_resolved_once_a_capture_with_the_same_plan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Watcher._cycle`` resolved the capture's settings twice (the load manager is built from
    its own copy: what choosing reads of them is not what the cycle read, which the plan lists).
    Once now, and the plans are those a second resolution for the load manager gave."""
    from lbctl.loadmanager import select

    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    calls: list[Any] = []
    real_settings, real_choose = select.settings_for, select.choose

    def counted(*a: Any, **kw: Any) -> Any:
        if a[1] is w.watcher.lm_opts:  # (the sandbox's leader resolves its own)
            calls.append(a[0].captured_at)
        return real_settings(*a, **kw)

    try:
        monkeypatch.setattr(select, "settings_for", counted)
        plans = []
        for _ in range(4):
            w.minutes(1)
            assert w.watcher.last_plan is not None
            plans.append(w.watcher.last_plan.to_dict())
        assert len(calls) == 4 == len(set(calls))
        assert any(p["actions"] for p in plans)
        monkeypatch.setattr(select, "settings_for", real_settings)

        def fresh(states: Any, opts: Any, _settings: Any, **kw: Any) -> Any:
            # the former way: the load manager from a resolution of its own
            return real_choose(states, opts, w.watcher._settings(states[-1]), **kw)

        again = w.new_watcher()  # replays the same four captures
        monkeypatch.setattr(select, "choose", fresh)
        former = w.new_watcher()
        assert again.last_plan is not None and former.last_plan is not None
        assert again.last_plan.to_dict() == former.last_plan.to_dict()
        assert again.last_plan.actions == w.watcher.last_plan.actions
    finally:
        w.close()
