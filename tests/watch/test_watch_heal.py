"""Healing set to approve: a hot broker raises out-of-band, a plan waits in `lbctl plans list`,
`lbctl plans approve` carries it out, the loads return to the band and the anomaly resolves —
with a webhook on loopback told of each anomaly once and of its resolution once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.model.cluster import iso_time
from lbctl.watch.heal import Healer
from lbctl.watch.notify import Notifier, Webhook
from lbctl.watch.plans import PlanQueue
from tests.sandbox.life_helpers import living_hot
from tests.watch.receiver import Receiver
from tests.watch.watch_helpers import Beside

pytestmark = [pytest.mark.live, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))
    monkeypatch.delenv("LBCTL_LOCK_DIR", raising=False)


def test_out_of_band_healed_by_an_approved_plan(tmp_path: Path) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    assert life.leader is not None
    life.leader.fault.stuck = True  # the leader does nothing: only an approved plan can heal
    receiver = Receiver()
    history = tmp_path / "h"
    w = Beside(c, life, clock, history, grace_ms={"out-of-band": 180_000}, doctor=False)
    hook = Webhook(receiver.url, "json", history)
    notifier = Notifier([hook], stdout=False)
    said: list[str] = []
    healer = Healer({"out-of-band": "approve"}, PlanQueue(history), say=said.append)

    def on_state(state, settings, events):  # type: ignore[no-untyped-def]
        notifier.events(events, state)
        notifier.flush(clock.now())
        healer.on_events(events, state, settings, w.watcher.last_plan)

    w.watcher = w.new_watcher(on_state=on_state)
    hot = next(iter(c.brokers))
    runner = CliRunner()
    try:
        w.minutes(2)
        assert not w.raised("out-of-band")  # within its grace
        w.minutes(2)
        raised = {e.anomaly.subject for e in w.raised("out-of-band")}
        assert hot in raised
        r = runner.invoke(app, ["plans", "list", "--history", str(history)])
        assert r.exit_code == 0 and r.stdout.count("pending") == 1, r.stdout
        pid = re.findall(r"\bp-\d{8}T\d{6}-[0-9a-f]{6}\b", r.stdout)[0]
        assert r.stdout.splitlines()[0].split()[:3] == ["plan", "status", "actions"]
        assert any(f"lbctl plans approve {pid}" in s for s in said)
        shown = runner.invoke(app, ["plans", "show", pid, "--history", str(history), "-o", "json"])
        doc = json.loads(shown.stdout)
        assert doc["format"].startswith("lbctl-plan") or "actions" in doc
        r = runner.invoke(app, ["--admin-url", c.admin_url, "plans", "approve", pid,
                                "--history", str(history), "--max-age", "0"])
        assert r.exit_code == 0, r.stdout + r.stderr
        assert "applied" in r.stdout
        w.minutes(6)
        resolved = {e.anomaly.subject for e in w.resolved("out-of-band")}
        assert hot in resolved
        active = {a.subject for a in w.watcher.tracker.active() if a.kind == "out-of-band"}
        assert hot not in active
        notifier.flush(clock.now() + 3600)
        # each event exactly once, in order: an anomaly that resolves and comes back (a broker
        # leaving the band again) is a new occurrence, told again with its new firstSeen
        sent = [(b["event"], b["id"], b["firstSeen"]) for b in receiver.bodies]
        made = [(e.event, e.anomaly.id, iso_time(e.anomaly.first_seen)) for e in w.events]
        assert sent == made and len(sent) == len(set(sent))
        ids = [(b["event"], b["id"]) for b in receiver.bodies]
        assert ("raised", f"out-of-band:{hot}") in ids and ("resolved", f"out-of-band:{hot}") in ids
        r = runner.invoke(app, ["plans", "list", "--history", str(history), "--all"])
        assert "applied" in r.stdout
    finally:
        receiver.close()
        w.close()
