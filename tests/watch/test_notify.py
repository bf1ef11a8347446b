"""Notifications: stdout JSON lines; a webhook gets each event once, in order, survives a failing
receiver and a restart, and respects its rate limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lbctl.model.cluster import ClusterState
from lbctl.watch.anomalies import Condition, Tracker
from lbctl.watch.notify import Notifier, Webhook, slack_body
from tests.watch.receiver import Receiver

STATE = ClusterState(cluster="prod", captured_at=1_767_225_600_000, brokers={})
DOWN = Condition("broker-down", "b2:8080", "critical", "broker b2:8080 is not active")


@pytest.fixture
def receiver():  # type: ignore[no-untyped-def]
    r = Receiver()
    yield r
    r.close()


def _events(t: Tracker, conditions: list[Condition], at: int):  # type: ignore[no-untyped-def]
    return t.update(conditions, at)


def test_stdout_lines_and_a_webhook_get_raised_then_resolved_once(
        tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]) -> None:
    hook = Webhook(receiver.url, "json", tmp_path)
    n = Notifier([hook])
    t = Tracker()
    n.events(_events(t, [DOWN], 0), STATE)
    n.flush(0.0)
    n.events(_events(t, [DOWN], 60_000), STATE)  # still down: nothing new
    n.events(_events(t, [], 120_000), STATE)
    n.flush(1.0)
    assert [(b["event"], b["id"]) for b in receiver.bodies] == [
        ("raised", "broker-down:b2:8080"), ("resolved", "broker-down:b2:8080")]
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["event"] for x in lines] == ["raised", "resolved"]
    assert lines[0]["cluster"] == "prod" and lines[0]["severity"] == "critical"


def test_a_failing_webhook_keeps_its_queue_across_a_restart_and_never_raises(
        tmp_path: Path, receiver: Receiver) -> None:
    warnings: list[str] = []
    receiver.fail = True
    hook = Webhook(receiver.url, "slack", tmp_path, warn=warnings.append)
    hook.offer([{"event": "raised", "id": "x:1", "kind": "x", "subject": "1", "severity": "info",
                 "message": "m", "cluster": "prod"}])
    assert hook.flush(0.0) == 0
    assert warnings and "HTTP 500" in warnings[0] and "secret-token" not in warnings[0]
    receiver.fail = False
    assert hook.flush(1.0) == 0  # backing off
    again = Webhook(receiver.url, "slack", tmp_path)  # a restarted watcher
    assert again.flush(1000.0) == 1
    assert receiver.bodies == [{"text": ":information_source: [prod] info x 1: m"}]
    assert again.flush(2000.0) == 0  # sent once


def test_rate_limit_defers_the_rest_in_order(tmp_path: Path, receiver: Receiver) -> None:
    hook = Webhook(receiver.url, "json", tmp_path, max_per_minute=2)
    hook.offer([{"event": "raised", "id": f"k:{i}"} for i in range(5)])
    assert hook.flush(0.0) == 2
    assert hook.flush(30.0) == 0
    assert hook.flush(61.0) == 2
    assert hook.flush(122.0) == 1
    assert [b["id"] for b in receiver.bodies] == [f"k:{i}" for i in range(5)]


def test_slack_resolved_text() -> None:
    body = slack_body({"event": "resolved", "cluster": "prod", "kind": "out-of-band",
                       "subject": "b1", "severity": "warning", "message": "x"})
    assert body == {"text": ":white_check_mark: resolved [prod] out-of-band b1"}
