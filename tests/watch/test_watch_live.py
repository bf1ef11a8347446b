"""lbctl watch beside the living sandbox (stepped clock standing for --speed 60): a broker crash,
a silently deviating leader, a hot broker healed by an approved plan, and a restart after kill -9."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.watch.anomalies import Tracker
from lbctl.watch.loop import ANOMALY_FILE
from tests.sandbox.life_helpers import living_hot
from tests.watch.watch_helpers import Beside, until_divergence

pytestmark = pytest.mark.live


def test_a_crash_raises_broker_down_after_its_grace_and_resolves_when_it_returns(
        tmp_path: Path) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", grace_ms={"broker-down": 120_000}, doctor=False)
    try:
        w.minutes(2)
        victim = list(c.brokers)[-1]  # not the broker the admin URL names
        life.crash(victim)
        w.minutes(1)
        assert w.raised("broker-down") == []  # within its grace
        w.minutes(2)
        [down] = w.raised("broker-down")
        assert down.anomaly.subject == victim and down.anomaly.severity == "critical"
        life.restart(victim)
        w.minutes(1)
        [back] = w.resolved("broker-down")
        assert back.anomaly.id == down.anomaly.id
        assert len(w.raised("broker-down")) == 1
    finally:
        w.close()


def test_a_leader_with_shedding_silently_off_is_reported_as_a_divergence(tmp_path: Path) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    assert life.leader is not None
    life.leader.fault.deviate = {"loadBalancerSheddingEnabled": "false"}  # not advertised
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        # divergence checks start once lbctl's memory has warmed (and lbctl's own first
        # decisions, in its memory as made, wait out loadBalancerSheddingGracePeriodMinutes)
        until_divergence(w, 60)
        [div] = w.raised("leader-divergence")
        assert w.watcher.warm_up is not None and w.watcher.followed > w.watcher.warm_up
        hot = next(iter(c.brokers))  # hot_cluster: the first broker is hot
        assert div.anomaly.subject == hot
        assert "it did not" in div.anomaly.message
        assert "nothing in the configuration explains it" in div.anomaly.message
        assert w.watcher.checker.expected_total >= 1
    finally:
        w.close()


def test_divergence_names_the_dynamic_configuration_when_shedding_is_off(tmp_path: Path) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(1)  # the watcher expects the hot broker to shed …
        c.set_dynamic(loadBalancerSheddingEnabled="false")  # … then shedding is switched off
        w.minutes(5)
        paused = w.raised("balancer-paused")
        assert paused and "drain --restore" in paused[0].anomaly.message
    finally:
        w.close()


def test_a_restart_after_kill_loses_no_capture_and_raises_nothing_twice(tmp_path: Path) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", grace_ms={"broker-down": 60_000}, doctor=False)
    try:
        victim = list(c.brokers)[-1]  # not the broker the admin URL names
        w.minutes(1)
        life.crash(victim)
        w.minutes(3)
        assert len(w.raised("broker-down")) == 1
        captured = len(w.watcher.history.recent(1000))
        w.watcher = w.new_watcher()  # kill -9: nothing but the history directory survives
        assert len(w.watcher.history.recent(1000)) == captured == 4
        w.minutes(2)
        assert len(w.raised("broker-down")) == 1  # not raised again
        life.restart(victim)
        w.minutes(1)
        assert len(w.resolved("broker-down")) == 1
        t = Tracker()
        t.load(tmp_path / "h" / ANOMALY_FILE)
        assert all(a.kind != "broker-down" for a in t.active())
    finally:
        w.close()


def test_doctor_findings_name_the_runtime_configuration_not_a_snapshot(tmp_path: Path) -> None:
    """The watcher reads the cluster: a doctor finding's setting came from the brokers' runtime
    configuration, never "(snapshot)"."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h")
    try:
        got = w.watcher.tick()
        doctor = [x.message for x in got.conditions if x.kind.startswith("doctor:")]
        assert any("(runtime configuration)" in m for m in doctor), doctor
        assert not any("(snapshot)" in m for m in doctor), doctor
    finally:
        w.close()
