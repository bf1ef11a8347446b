"""Anomalies: raised after their grace, once; resolved once; a restart raises nothing again."""

from __future__ import annotations

from pathlib import Path

from lbctl.watch.anomalies import Condition, Tracker

DOWN = Condition("broker-down", "b2:8080", "critical", "broker b2:8080 is not active")


def test_a_condition_is_raised_after_its_grace_and_only_once() -> None:
    t = Tracker({"broker-down": 120_000})
    assert t.update([DOWN], 0) == []
    assert t.update([DOWN], 60_000) == []
    ev = t.update([DOWN], 120_000)
    assert [(e.event, e.anomaly.id) for e in ev] == [("raised", "broker-down:b2:8080")]
    assert ev[0].anomaly.first_seen == 0 and ev[0].anomaly.raised_at == 120_000
    assert t.update([DOWN], 180_000) == []
    assert [a.id for a in t.active()] == ["broker-down:b2:8080"]


def test_a_bounce_within_the_grace_raises_nothing_and_resolves_nothing() -> None:
    t = Tracker({"broker-down": 120_000})
    t.update([DOWN], 0)
    assert t.update([], 60_000) == []
    assert t.active() == [] and t.resolved == []


def test_resolved_once_when_the_condition_is_gone() -> None:
    t = Tracker()
    t.update([DOWN], 0)
    ev = t.update([], 60_000)
    assert [(e.event, e.anomaly.resolved_at) for e in ev] == [("resolved", 60_000)]
    assert t.update([], 120_000) == []
    assert t.resolved[0].id == DOWN.id


def test_saved_state_means_a_restart_raises_nothing_again(tmp_path: Path) -> None:
    t = Tracker()
    t.update([DOWN], 0)
    t.save(tmp_path / "a.json")
    again = Tracker()
    again.load(tmp_path / "a.json")
    assert again.update([DOWN], 60_000) == []
    assert [e.event for e in again.update([], 120_000)] == ["resolved"]


def test_most_severe_first() -> None:
    t = Tracker()
    t.update([Condition("idle-broker", "b3", "info", "idle"), DOWN,
              Condition("out-of-band", "b1", "warning", "hot")], 0)
    assert [a.severity for a in t.active()] == ["critical", "warning", "info"]
