"""The cyclic collector is paused while a modular cycle runs and its plan is built
(:mod:`lbctl.collector`), and given back as it was found."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import lbctl.loadmanager.modular as modular
from lbctl.collector import collector_paused
from lbctl.loadmanager.select import Options, plans
from lbctl.sources.snapshot import read_snapshots

HOT = Path(__file__).resolve().parents[1] / "examples" / "hot-broker.json"


def test_paused_inside_and_enabled_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_paused_by_the_caller_stays_paused() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_given_back_when_the_block_raises() -> None:
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_frozen_when_asked_and_given_back() -> None:
    before = gc.get_freeze_count()
    with collector_paused(freeze=True):
        kept = [[i] for i in range(100)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + len(kept)


def test_a_cycle_and_its_plan_run_with_the_collector_paused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, bool]] = []
    update, rows = modular.update_bundle_data, modular.BrokerRow

    def spy_update(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(("cycle", gc.isenabled()))
        return update(*args, **kwargs)

    def spy_row(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(("plan", gc.isenabled()))
        return rows(*args, **kwargs)

    monkeypatch.setattr(modular, "update_bundle_data", spy_update)
    monkeypatch.setattr(modular, "BrokerRow", spy_row)
    states = read_snapshots([HOT])
    assert plans(states, Options())[0].actions  # the example sheds: a real cycle ran
    assert ("cycle", False) in seen and ("plan", False) in seen
    assert all(not enabled for _, enabled in seen)
    assert gc.isenabled()


def test_what_the_plans_keep_is_frozen_after_them() -> None:
    """``plans`` freezes what its cycles and plans leave (the first collection after them would
    otherwise scan all of it), and gives the collector back enabled."""
    states = read_snapshots([HOT])
    before = gc.get_freeze_count()
    result = plans(states, Options())
    assert gc.isenabled()
    assert gc.get_freeze_count() > before
    assert result[0].actions


def test_plans_leave_a_collector_paused_by_the_caller_paused() -> None:
    states = read_snapshots([HOT])
    gc.disable()
    try:
        assert plans(states, Options())[0].actions
        assert not gc.isenabled()
    finally:
        gc.enable()
