"""lbctl's live commands against the living sandbox (stepped clock, clients reconnecting at once):
after ``apply`` the loads and the ownership move as planned and ``apply --rollback`` restores
them; ``drain --pause-balancer`` stops the leader and ``drain --restore`` resumes it;
``rebalance-after`` fills a restarted broker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lbctl.sandbox import TestCluster
from lbctl.sandbox.life import Life
from tests.apply.apply_helpers import lbctl
from tests.sandbox.life_helpers import living_hot, run_for

pytestmark = pytest.mark.live


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))
    monkeypatch.delenv("LBCTL_LOCK_DIR", raising=False)


def _cpu(c: TestCluster, life: Life) -> dict[str, float]:
    out = {}
    for b in c.brokers:
        rep = life.report(b)
        assert rep is not None
        out[b] = rep["cpu"]["usage"]
    return out


@pytest.mark.slow
def test_apply_moves_loads_and_ownership_and_rollback_restores(tmp_path: Path) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    try:
        assert life.leader is not None
        life.leader.fault.stuck = True  # lbctl's plan, not the leader's, moves the bundles
        before_owners, before_cpu = dict(c.owners), _cpu(c, life)
        r = lbctl(c, "recommend", "-o", "json")
        assert r.exit_code == 0, r.stderr
        doc = json.loads(r.stdout)
        moves = [a for a in doc["actions"] if a["action"] == "unload" and "skipped" not in a]
        assert moves
        plan = tmp_path / "plan.json"
        plan.write_text(r.stdout)
        r = lbctl(c, "apply", str(plan), "--yes", "--interval", "0")
        assert r.exit_code == 0, r.stderr + r.stdout
        for a in moves:
            assert c.owners[a["bundle"]] == a["destinationBroker"]
        run_for(life, clock, 5)  # the brokers' next reports
        after = _cpu(c, life)
        src = moves[0]["broker"]
        gained = {a["destinationBroker"] for a in moves}
        assert after[src] < before_cpu[src]
        assert all(after[d] > before_cpu[d] for d in gained)
        # the load moved with the bundles: the total is the same
        assert sum(after.values()) == pytest.approx(sum(before_cpu.values()))
        r = lbctl(c, "apply", "--rollback", "--yes", "--interval", "0")
        assert r.exit_code == 0, r.stderr + r.stdout
        assert c.owners == before_owners
        run_for(life, clock, 5)
        assert _cpu(c, life) == pytest.approx(before_cpu)
    finally:
        c.stop()


def test_drain_pause_balancer_stops_the_leader_and_restore_resumes_it() -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    try:
        leader = life.leader
        assert leader is not None
        target = list(c.brokers)[2]
        r = lbctl(c, "drain", target, "--pause-balancer", "--keep-paused", "--yes", "-m", "0",
                  "--timeout", "10")
        assert r.exit_code == 0, r.stderr + r.stdout
        assert not [b for b, o in c.owners.items() if o == target]
        owners = dict(c.owners)
        run_for(life, clock, 3 * 60)
        assert len(leader.decisions) == 3
        assert all("loadBalancerSheddingEnabled is false" in (d.gate or "")
                   for d in leader.decisions)
        assert c.owners == owners  # the hot broker stays hot: the leader is paused
        r = lbctl(c, "drain", "--restore", "--yes")
        assert r.exit_code == 0, r.stderr + r.stdout
        run_for(life, clock, 60)
        last = leader.decisions[-1]
        assert last.gate is None
        assert [a for a in last.actions if a["action"] == "unload" and "skipped" not in a]
    finally:
        c.stop()


def test_rebalance_after_fills_a_restarted_broker(tmp_path: Path) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerSheddingEnabled="false",
                                loadBalancerAutoBundleSplitEnabled="false")
    try:
        target = list(c.brokers)[1]
        life.crash(target)
        run_for(life, clock, 1)  # its clients found other brokers
        life.restart(target)
        # the next reports: once loadBalancerReportUpdateMaxIntervalMinutes has passed, the
        # brokers that took its bundles no longer list them as just gained (apply would refuse
        # to move a bundle that moved moments ago)
        run_for(life, clock, 16 * 60)
        rep: Any = life.report(target)
        assert rep["numBundles"] == 1  # the heartbeat namespace only
        r = lbctl(c, "rebalance-after", target, "-o", "json")
        assert r.exit_code == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["actions"] and all(a["destinationBroker"] == target for a in doc["actions"])
        plan = tmp_path / "fill.json"
        plan.write_text(r.stdout)
        r = lbctl(c, "apply", str(plan), "--yes", "--interval", "0")
        assert r.exit_code == 0, r.stderr + r.stdout
        filled = {a["bundle"] for a in doc["actions"]}
        assert filled <= {b for b, o in c.owners.items() if o == target}
        run_for(life, clock, 5)
        rep = life.report(target)
        assert rep["numBundles"] == 1 + len(filled)
        assert rep["cpu"]["usage"] > life.hosts[target].usage(life.broker_traffic(
            "nobody", life.now)).cpu.usage
    finally:
        c.stop()
