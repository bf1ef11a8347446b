"""Healing modes: off by default, `approve` queues, `apply` carries out at most N plans an hour,
one plan per open anomaly, and flags that name no healable kind are refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lbctl.errors import UsageError
from lbctl.loadmanager.select import Options, run
from lbctl.records import replace
from lbctl.sources.files import snapshot_files
from lbctl.watch.anomalies import Condition, Tracker
from lbctl.watch.heal import Healer, parse_heal
from lbctl.watch.plans import PlanMeta, PlanQueue

EXAMPLE = Path(__file__).parents[2] / "lbctl" / "examples" / "hot-broker.json"


def _raised(kind: str, subject: str, at: int):  # type: ignore[no-untyped-def]
    return Tracker().update([Condition(kind, subject, "warning", "x")], at)


def _recorder(applied: list[str]) -> Callable[[PlanMeta], str]:
    """An ``apply`` that records the plan ids it was given."""
    def apply(meta: PlanMeta) -> str:
        applied.append(meta.id)
        return "applied"
    return apply


def _capture(state: Any, minute: int) -> Any:
    """``state`` as captured ``minute`` minutes later (another capture: another plan id)."""
    return replace(state, captured_at=state.captured_at + minute * 60_000)


def test_apply_mode_is_capped_per_hour_and_one_plan_per_anomaly(tmp_path: Path) -> None:
    state = snapshot_files([EXAMPLE]).read().states[-1]
    result = run([state], Options())[-1]
    applied: list[str] = []
    clock = [0.0]
    h = Healer({"out-of-band": "apply"}, PlanQueue(tmp_path), max_per_hour=1,
               apply=_recorder(applied), clock=lambda: clock[0])
    made = h.on_events(_raised("out-of-band", "broker-2", 0), state, result.settings,
                       result.plan())
    assert len(made) == 1 and applied == [made[0].id]
    assert PlanQueue(tmp_path).get(made[0].id).status == "approved"  # then apply records it
    # another anomaly within the hour: queued for review instead (the cap)
    more = h.on_events(_raised("out-of-band", "broker-4", 1), _capture(state, 1),
                       result.settings, result.plan())
    assert len(applied) == 1 and PlanQueue(tmp_path).get(more[0].id).status == "pending"
    # the same anomaly again while its plan is open: nothing new
    assert h.on_events(_raised("out-of-band", "broker-4", 2), _capture(state, 2),
                       result.settings, result.plan()) == []
    clock[0] = 3601.0  # an hour later the cap allows one more
    h.on_events(_raised("out-of-band", "broker-1", 3), _capture(state, 3), result.settings,
                result.plan())
    assert len(applied) == 2


def test_off_by_default_and_only_raised_events() -> None:
    assert Healer({}, PlanQueue(Path("/nonexistent"))).modes == {}
    assert parse_heal(["out-of-band=off"]) == {"out-of-band": "off"}
    with pytest.raises(UsageError, match="not healable"):
        parse_heal(["doctor:x=apply"])


def test_a_state_the_planner_refuses_is_said_and_watching_goes_on(tmp_path: Path) -> None:
    """A broker reporting a usage beyond float range: propose refuses it (LbctlError); the
    healer says so for that anomaly instead of ending the watcher."""
    from lbctl.model.load import ResourceUsage
    from lbctl.records import replace

    state = snapshot_files([EXAMPLE]).read().states[-1]
    b = next(iter(state.brokers))
    bad = replace(state, brokers={**state.brokers, b: replace(
        state.brokers[b], cpu=ResourceUsage(1e308, state.brokers[b].cpu.limit))})
    said: list[str] = []
    h = Healer({"out-of-band": "approve"}, PlanQueue(tmp_path), say=said.append)
    assert h.on_events(_raised("out-of-band", "broker-2", 0), bad, run([state], Options())[-1]
                       .settings, None) == []
    assert len(said) == 1 and "no plan: " in said[0] and "not a finite percentage" in said[0]


def test_the_hourly_cap_holds_across_a_restart(tmp_path: Path) -> None:
    """A watcher restarted within the hour (crash loop, redeploy) counts the plans its
    predecessor applied from the queue: with a cap of 1, the second plan waits for review."""
    state = snapshot_files([EXAMPLE]).read().states[-1]
    result = run([state], Options())[-1]
    applied: list[str] = []
    clock = [1000.0]

    def healer() -> Healer:
        return Healer({"out-of-band": "apply"}, PlanQueue(tmp_path), max_per_hour=1,
                      apply=_recorder(applied), clock=lambda: clock[0])

    first = healer().on_events(_raised("out-of-band", "broker-2", 0), state, result.settings,
                               result.plan())
    assert applied == [first[0].id]
    clock[0] += 600  # restarted ten minutes later
    second = healer().on_events(_raised("out-of-band", "broker-4", 1), _capture(state, 10),
                                result.settings, result.plan())
    assert applied == [first[0].id]
    assert PlanQueue(tmp_path).get(second[0].id).status == "pending"
    clock[0] += 3000  # an hour after the first: the cap allows one again
    healer().on_events(_raised("out-of-band", "broker-1", 2), _capture(state, 60),
                       result.settings, result.plan())
    assert len(applied) == 2


def test_two_anomalies_of_one_capture_share_its_plan_applied_once(tmp_path: Path) -> None:
    """Two out-of-band brokers raised by the same capture get the same plan (the cycle's): it is
    queued and applied once; the second anomaly is told which plan covers it, and the first
    plan's record is not rewritten back to pending (which applied it twice)."""
    state = snapshot_files([EXAMPLE]).read().states[-1]
    result = run([state], Options())[-1]
    applied: list[str] = []
    said: list[str] = []
    h = Healer({"out-of-band": "apply"}, PlanQueue(tmp_path), max_per_hour=5,
               apply=_recorder(applied), say=said.append)
    events = Tracker().update([Condition("out-of-band", b, "warning", "x")
                               for b in ("broker-1", "broker-2")], 0)
    made = h.on_events(events, state, result.settings, result.plan())
    assert [m.anomaly for m in made] == ["out-of-band:broker-1"]
    assert applied == [made[0].id]
    assert PlanQueue(tmp_path).get(made[0].id).status == "approved"
    assert any("out-of-band:broker-2" in m and "is the plan for this capture too" in m
               for m in said)
