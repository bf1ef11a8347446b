"""`lbctl apply` hardening (issue 25): which checks apply is the operator's choice, a plan cannot
repeat, race or inflate itself past them, and a run that stops mid-way says what it sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lbctl.sandbox import TestCluster
from tests.apply.apply_helpers import lbctl, plan_doc, spread_moves, unloads_done, write_plan

pytestmark = pytest.mark.live


def records(journal: Path) -> list[dict]:
    return [json.loads(x) for x in journal.read_text().splitlines() if x.strip()]


# ---- item 5: a plan file cannot exempt itself from checks ----------------------------------------
@pytest.mark.parametrize("shedding", ["rollback", "drain"])
def test_a_plan_naming_its_origin_keeps_the_grace_period(cluster: TestCluster, tmp_path: Path,
                                                         shedding: str) -> None:
    c = cluster
    (b, src, dst), = spread_moves(c, 1)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, [(b, src, dst)]))
    assert lbctl(c, "apply", str(plan), "--yes").exit_code == 0
    assert c.owners[b] == dst
    back = write_plan(tmp_path / "back.json", plan_doc(c, [(b, dst, src)], shedding=shedding))
    r = lbctl(c, "apply", str(back), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["actions"][0]["verdict"] == "changed"
    assert "grace period" in out["actions"][0]["why"]
    assert unloads_done(c) == [b] and c.owners[b] == dst


@pytest.mark.parametrize("shedding", ["rollback", "drain"])
def test_a_plan_naming_its_origin_cannot_send_to_an_overloaded_broker(
        cluster: TestCluster, tmp_path: Path, shedding: str) -> None:
    c = cluster
    (b, src, dst), = spread_moves(c, 1)
    c.brokers[dst].cpu = (95.0, 100.0)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, [(b, src, dst)], shedding=shedding))
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    action = json.loads(r.stdout)["actions"][0]
    assert action["verdict"] == "changed" and "overloaded" in action["why"]
    assert unloads_done(c) == [] and c.owners[b] == src
