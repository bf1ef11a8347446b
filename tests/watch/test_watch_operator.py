"""An operator's walk of ``lbctl watch`` beside the living sandbox (walk watch15): a crash is one
``broker-down``, not an ``unexpected-unload`` per orphaned bundle; a broker that stops writing its
load report (the sandbox's ``freeze``) raises ``report-stale`` and resolves when it writes again."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.sandbox.timeline import schedule
from tests.sandbox.life_helpers import living_hot
from tests.watch.watch_helpers import Beside, until_divergence

pytestmark = pytest.mark.live


def test_a_crash_is_one_broker_down_not_an_unexpected_unload_per_bundle(tmp_path: Path) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerSheddingEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", grace_ms={"broker-down": 60_000}, doctor=False)
    try:
        w.minutes(2)
        victim = list(c.brokers)[-1]
        orphans = len(c.bundles_of(victim))
        assert orphans > 1
        life.crash(victim)
        w.minutes(3)
        assert w.watcher.checker.observed_total >= orphans  # the failover was seen …
        assert [e.anomaly.subject for e in w.raised("broker-down")] == [victim]
        assert w.raised("unexpected-unload") == []  # … and is not an unload nobody expected
    finally:
        w.close()


def test_a_broker_that_stops_writing_its_report_is_stale_until_it_writes_again(
        tmp_path: Path) -> None:
    """Stale after three of the cluster's loadBalancerReportUpdateMaxIntervalMinutes (dynamic in
    Pulsar: the bound follows the captured configuration, here 2 min, not a fixed 45 min)."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerReportUpdateMaxIntervalMinutes="2")
    frozen = list(c.brokers)[1]
    schedule(life, [{"at": "1m", "freeze": 1}, {"at": "10m", "thaw": frozen}])
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(5)
        assert w.raised("report-stale") == []  # written within the last 5 min: not yet
        w.minutes(4)
        [stale] = w.raised("report-stale")
        assert stale.anomaly.subject == frozen
        assert "min old (stale after 6 min" in stale.anomaly.message
        assert frozen in c.brokers  # it serves on: not broker-down
        assert w.raised("broker-down") == []
        w.minutes(3)  # thawed at 10 min: its next sample writes (the report is over 2 min old)
        assert [e.anomaly.id for e in w.resolved("report-stale")] == [stale.anomaly.id]
    finally:
        w.close()


def test_an_outage_shows_on_metrics_and_page_while_it_lasts(tmp_path: Path) -> None:
    """The cluster stops answering after two good captures: /metrics counts the failed capture at
    once (the status of the last good capture held the error counter frozen until the next
    success), the page heads with the failure, and a plan queued since the capture shows."""
    import threading

    import httpx

    from lbctl.watch.plans import PlanQueue
    from lbctl.watch.server import StatusServer

    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    wt = w.watcher
    server = StatusServer(("127.0.0.1", 0), wt.current, wt.healthy, clock=clock.now,
                          counters=wt.counters)
    try:
        w.minutes(2)
        PlanQueue(w.history).add(b'{"format": "lbctl/plan@1", "actions": []}\n', created_ms=0,
                                 created="2026-01-01T00:00:00Z", anomaly="out-of-band:x",
                                 source="propose", actions=1)
        metrics = httpx.get(server.url + "/metrics").text
        assert "\nlbctl_plans_pending 1\n" in metrics
        c.stop()  # the cluster goes away
        wt.run(threading.Event(), count=1)
        assert wt.errors == 1
        metrics = httpx.get(server.url + "/metrics").text
        assert "\nlbctl_capture_errors_total 1\n" in metrics
        assert "\nlbctl_captures_total 2\n" in metrics
        page = httpx.get(server.url + "/").text
        assert 'id="health" class="failing"' in page and "last capture failed" in page
        assert "figures below are from the last good capture" in page
    finally:
        server.close()
        w.client.close()
        c.stop()


def test_before_any_capture_the_counters_are_written() -> None:
    from lbctl.watch.status import metrics_text

    text = metrics_text(None, 0, (0, 3))
    assert "\nlbctl_capture_errors_total 3\n" in text and "\nlbctl_captures_total 0\n" in text


ALERTS = Path(__file__).parents[2] / "docs" / "grafana" / "lbctl-watch-alerts.yml"


def test_the_alert_rules_name_only_metrics_the_watcher_writes() -> None:
    import re

    import yaml

    from lbctl.watch.status import METRICS

    doc = yaml.safe_load(ALERTS.read_text())
    exprs = [r["expr"] for g in doc["groups"] for r in g["rules"]]
    named = {n for e in exprs for n in re.findall(r"\b(lbctl_[a-z_]+)", e)}
    assert named and named <= set(METRICS), named - set(METRICS)


def test_the_alert_rules_pass_promtool_and_fire(tmp_path: Path) -> None:
    """``promtool check rules`` and ``promtool test rules`` (Debian's prometheus package): a
    critical anomaly fires at once; failing captures fire once the last good capture is over
    three default intervals old; a watcher that answers and captures fires nothing."""
    import shutil
    import subprocess

    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed")
    p = subprocess.run([promtool, "check", "rules", str(ALERTS)], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    tests = tmp_path / "t.yml"
    tests.write_text(f"""rule_files: [{ALERTS}]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'up{{job="lbctl-watch", instance="w:9470"}}'
        values: '1x30'
      - series: 'lbctl_anomalies_active{{job="lbctl-watch", instance="w:9470", kind="broker-down", severity="critical"}}'
        values: '_x4 1x10'
      - series: 'lbctl_capture_errors_total{{job="lbctl-watch", instance="w:9470"}}'
        values: '0x10 1+1x20'
      - series: 'lbctl_capture_lag_seconds{{job="lbctl-watch", instance="w:9470"}}'
        values: '10x10 60+60x20'
    alert_rule_test:
      - eval_time: 3m
        alertname: LbctlCriticalAnomaly
        exp_alerts: []
      - eval_time: 6m
        alertname: LbctlCriticalAnomaly
        exp_alerts:
          - exp_labels: {{severity: critical, instance: "w:9470", kind: broker-down}}
            exp_annotations:
              summary: "broker-down: 1 critical anomaly(ies) active"
              description: "lbctl watch raised broker-down (after its grace); lbctl watch --status or the status page name the subject."
      - eval_time: 10m
        alertname: LbctlWatchCapturesFailing
        exp_alerts: []
      - eval_time: 10m
        alertname: LbctlWatchDown
        exp_alerts: []
      - eval_time: 20m
        alertname: LbctlWatchCapturesFailing
        exp_alerts:
          - exp_labels: {{severity: warning, instance: "w:9470", job: lbctl-watch}}
            exp_annotations:
              summary: "lbctl watch on w:9470 cannot read the cluster"
              description: "Captures fail and the last good one is 10m 0s old; /healthz and the status page say why."
""")
    p = subprocess.run([promtool, "test", "rules", str(tests)], capture_output=True, timeout=60)
    assert p.returncode == 0, (p.stdout + p.stderr).decode()


def test_a_faithful_leader_watched_often_is_neither_divergent_nor_unexpected(
        tmp_path: Path) -> None:
    """Captures every 10 s beside a leader that sheds every minute (the sandbox's leader runs
    lbctl's own load manager: what it does is what the rules say), clients reconnecting 15 s
    after an unload. The watcher ran a cycle of its own at every capture — six a minute, each
    expecting other bundles the leader never shed (leader-divergence) — and took an unloaded
    bundle, owned by nobody for a capture, for one that no longer exists: its expectation
    dropped, its arrival elsewhere an unexpected-unload."""
    from tests.sandbox.life_helpers import run_for

    # a short usage history (0.5: warm after 5 cycles) so the six minutes are mostly warm
    c, life, clock = living_hot(3, reconnect=15.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerHistoryResourcePercentage="0.5")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        for _ in range(6 * 6):  # six minutes, a capture every 10 s
            run_for(life, clock, 10)
            w.watcher.tick()
        assert life.leader is not None and any(d.actions for d in life.leader.decisions)
        assert w.watcher.checker.observed_total >= 1
        assert w.raised("unexpected-unload") == []
        assert w.raised("leader-divergence") == []
        assert w.watcher.warm_up == 5 and w.watcher.warm
    finally:
        w.close()


def test_a_restart_keeps_an_open_leader_divergence_open(tmp_path: Path) -> None:
    """A stuck leader's divergence survives a restart of the watcher: the replayed captures
    rebuild the expectations too. They were lost, so the first capture after a restart resolved
    the divergence (a false all-clear sent) and two intervals later raised it again."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    assert life.leader is not None
    life.leader.fault.stuck = True
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        until_divergence(w, 60)  # divergence checks start once lbctl's memory has warmed
        [div] = w.raised("leader-divergence")
        w.watcher = w.new_watcher()  # kill -9 or a redeploy: the history carries the memory
        assert w.watcher.warm
        w.minutes(4)
        assert w.resolved("leader-divergence") == []
        assert w.raised("leader-divergence") == [div]
        assert div.anomaly.id in {a.id for a in w.watcher.tracker.active()}
    finally:
        w.close()


def test_a_crash_is_no_unload_storm_and_the_band_never_inverts(tmp_path: Path) -> None:
    from lbctl.watch.detect import Thresholds, band

    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerSheddingEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False, limits=Thresholds(storm=3))
    try:
        w.minutes(2)
        victim = list(c.brokers)[-1]
        assert len(c.bundles_of(victim)) > 3
        life.crash(victim)
        w.minutes(3)
        assert w.raised("unload-storm") == [] and w.raised("ping-pong") == []
        assert w.raised("broker-down")
    finally:
        w.close()
    settings = {"loadBalancerBrokerThresholdShedderPercentage": 10,
                "loadBalancerBrokerOverloadedThresholdPercentage": 85}
    low, high = band({"a": 1.72, "b": 0.26}, settings)  # average 99 %, above the threshold
    assert (low, high) == (0.85, 0.85)


def test_a_plan_the_operator_approved_is_not_an_unexpected_unload(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``lbctl plans approve`` of the watcher's own plan: its moves were reported as an
    unexpected-unload ("manual, or another load manager?")."""
    from lbctl.watch.anomalies import Condition, Tracker
    from lbctl.watch.execute import apply_queued
    from lbctl.watch.heal import Healer
    from lbctl.watch.plans import PlanQueue

    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))  # no other run's grace
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false",
                                loadBalancerSheddingEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    said: list[str] = []
    try:
        w.minutes(1)
        wt, queue = w.watcher, PlanQueue(w.history)
        state = wt.history.recent(1)[-1]
        raised = Tracker().update([Condition("out-of-band", "x", "warning", "x")], 0)
        [meta] = Healer({"out-of-band": "approve"}, queue).on_events(
            raised, state, wt._settings(state), None)
        meta = queue.decide(meta.id, "approved", when=state.captured_at_iso)  # plans approve
        assert apply_queued(w.client, queue, meta, when=state.captured_at_iso,
                            say=said.append).startswith("applied"), said
        w.minutes(2)
        assert wt.checker.observed_total >= 1
        assert w.raised("unexpected-unload") == []
    finally:
        w.close()


def test_a_restarted_watcher_shows_the_last_capture_on_record(tmp_path: Path) -> None:
    """Restarted while the cluster is unreachable, the watcher's page showed "No capture yet"
    and /metrics no broker at all, though its history held the last capture."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(2)
        last = w.watcher.current()
        assert last is not None
        w.watcher = w.new_watcher()
        s = w.watcher.current()
        assert s is not None and s.captured_at == last.captured_at
        assert [b.broker for b in s.brokers] == [b.broker for b in last.brokers]
        assert w.watcher.healthy() == (False, "no capture yet")
    finally:
        w.close()
