"""Old pending plans: a plan whose anomaly resolved is withdrawn (journaled, listed, never
approvable), and an approval that re-validation mostly skipped says so (exit 13, PARTIAL).

Before: plans whose anomaly had resolved stayed pending, and approving a 7-minute-old one gave
"applied (done 1, skipped 6)" with exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.errors import ExitStatus
from lbctl.sandbox import hot_cluster
from lbctl.watch.anomalies import Condition, Tracker
from lbctl.watch.heal import Healer
from lbctl.watch.loop import ANOMALY_FILE
from lbctl.watch.plans import JOURNAL, PlanQueue
from tests.sandbox.life_helpers import living_hot
from tests.watch.watch_helpers import Beside


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))
    monkeypatch.setenv("LBCTL_LOCK_DIR", str(tmp_path / "locks"))


def _journal(history: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (history / "plans" / JOURNAL).read_text().splitlines()]


@pytest.mark.live
def test_a_plan_whose_anomaly_resolved_is_withdrawn_and_never_approvable(tmp_path: Path) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    assert life.leader is not None
    life.leader.fault.stuck = True  # out-of-band stays until the leader wakes up
    history = tmp_path / "h"
    w = Beside(c, life, clock, history, grace_ms={"out-of-band": 120_000}, doctor=False)
    healer = Healer({"out-of-band": "approve"}, PlanQueue(history))
    said: list[str] = []
    w.watcher = w.new_watcher(
        on_state=lambda st, se, ev: healer.on_events(ev, st, se, w.watcher.last_plan),
        warn=said.append)
    runner = CliRunner()
    try:
        w.minutes(4)
        [plan] = [m for m in PlanQueue(history).list() if m.status == "pending"]
        life.leader.fault.stuck = False  # the leader sheds itself; the anomaly resolves
        for _ in range(30):
            w.minutes(1)
            if any(e.anomaly.id == plan.anomaly for e in w.resolved("out-of-band")):
                break
        gone = PlanQueue(history).get(plan.id)
        assert gone.status == "withdrawn"
        assert gone.note is not None and f"anomaly {plan.anomaly} resolved at" in gone.note
        assert any(f"plan {plan.id} withdrawn" in s for s in said)
        assert _journal(history)[-1] | {"at": None} == {
            "plan": plan.id, "status": "withdrawn", "at": None, "anomaly": plan.anomaly,
            "why": gone.note}
        r = runner.invoke(app, ["plans", "list", "--history", str(history)])
        assert plan.id not in r.stdout
        r = runner.invoke(app, ["plans", "list", "--all", "--wide", "--history", str(history)])
        assert plan.id in r.stdout and "withdrawn" in r.stdout, r.stdout
        r = runner.invoke(app, ["--admin-url", c.admin_url, "plans", "approve", plan.id,
                                "--history", str(history), "--max-age", "0"])
        assert r.exit_code == ExitStatus.USAGE, r.stdout + r.stderr
        assert "withdrawn" in r.stderr and "Traceback" not in r.stderr
        assert not c.requests("PUT")  # nothing sent
    finally:
        w.close()


def _propose(runner: CliRunner, admin_url: str, history: Path, anomaly: str | None) -> str:
    r = runner.invoke(app, ["--admin-url", admin_url, "propose", "--solver", "greedy",
                            "--no-splits", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    n = r.stdout.count('"unload"')
    return PlanQueue(history).add(r.stdout.encode(), created_ms=1_800_000_000_000,
                                  created="2027-01-15T08:00:00Z", anomaly=anomaly,
                                  source="propose", actions=n).id


def test_approving_a_plan_whose_anomaly_resolved_while_no_watcher_ran_withdraws_it(
        tmp_path: Path) -> None:
    runner = CliRunner()
    c = hot_cluster(3)
    history = tmp_path / "h"
    try:
        pid = _propose(runner, c.admin_url, history, "out-of-band:b1")
        t = Tracker()
        t.update([Condition("out-of-band", "b1", "warning", "hot")], 1_800_000_000_000)
        t.update([], 1_800_000_060_000)  # resolved
        t.save(history / ANOMALY_FILE)
        r = runner.invoke(app, ["--admin-url", c.admin_url, "plans", "approve", pid,
                                "--history", str(history), "--max-age", "0"])
        assert r.exit_code == ExitStatus.USAGE, r.stdout + r.stderr
        assert "withdrawn: anomaly out-of-band:b1 resolved at 2027-01-15T08:01:00Z" in r.stderr
        r = runner.invoke(app, ["plans", "show", pid, "--history", str(history), "--wide"])
        assert r.exit_code == 0
        assert r.stdout.splitlines()[1] == (
            "outcome: anomaly out-of-band:b1 resolved at 2027-01-15T08:01:00Z")
        assert all(ln.split()[7] == "withdrawn" for ln in r.stdout.splitlines()[4:]), r.stdout
        assert PlanQueue(history).get(pid).status == "withdrawn"
        assert _journal(history)[-1]["status"] == "withdrawn"
        assert not c.requests("PUT")
    finally:
        c.stop()


def test_an_approval_mostly_skipped_on_revalidation_is_partial(tmp_path: Path) -> None:
    runner = CliRunner()
    c = hot_cluster(3)
    history = tmp_path / "h"
    try:
        pid = _propose(runner, c.admin_url, history, None)
        doc = json.loads(PlanQueue(history).plan_path(pid).read_text())
        moves = [a for a in doc["actions"] if a["action"] in ("unload", "transfer")]
        assert len(moves) >= 2, doc
        for a in moves[1:]:  # the cluster moved these itself since the plan
            others = [b for b in c.brokers if b not in (a["broker"], a.get("destinationBroker"))]
            c.own(a["bundle"], others[0])
        r = runner.invoke(app, ["--admin-url", c.admin_url, "plans", "approve", pid,
                                "--history", str(history), "--max-age", "0"])
        assert r.exit_code == ExitStatus.PARTIAL, r.stdout + r.stderr
        last = r.stdout.splitlines()[-1]
        skipped = len(moves) - 1
        assert last.startswith(f"{pid}: partial (1 of {len(moves)} action(s) carried out, "
                               f"{skipped} skipped on re-validation"), last
        meta = PlanQueue(history).get(pid)
        assert meta.status == "partial"
        assert [j["status"] for j in _journal(history)] == ["approved", "partial"]
        # plans show: a table of the actions, each with its status and why
        r = runner.invoke(app, ["plans", "show", pid, "--history", str(history), "--wide"])
        assert r.exit_code == 0, r.stdout + r.stderr
        lines = r.stdout.splitlines()
        assert lines[0].startswith(f"{pid}: partial, {len(moves)} action(s) by propose")
        assert lines[1].startswith("outcome: partial: 1 of ")
        assert lines[2].split() == ["#", "action", "status", "why"]
        rows = {ln.split()[2]: ln for ln in lines[4:]}
        by_status = [ln.split()[7] for ln in lines[4:]]
        assert sorted(by_status) == sorted(["done"] + ["skipped"] * skipped), r.stdout
        for a in moves[1:]:
            [row] = [ln for ln in lines[4:] if a["bundle"] in ln]
            assert "skipped" in row and "owned by" in row and "now, not" in row, row
        assert moves[0]["bundle"] in rows
        # -o json: the plan@1 document as queued; -o yaml: the same document
        r = runner.invoke(app, ["plans", "show", pid, "--history", str(history), "-o", "json"])
        assert json.loads(r.stdout) == doc
        r = runner.invoke(app, ["plans", "show", pid, "--history", str(history), "-o", "yaml"])
        assert yaml.safe_load(r.stdout) == doc
    finally:
        c.stop()
