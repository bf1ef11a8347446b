"""`recommend --watch` / `explain --watch` against the loopback test cluster: lbctl follows the
leader, carrying the strategies' memory from refresh to refresh, and says it is warming up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.live.live_helpers import Lbctl

pytestmark = pytest.mark.live


def test_recommend_watch_follows_the_leader(lbctl: Lbctl) -> None:
    res = lbctl("recommend", "--watch", "--interval", "1", "--count", "3", "-o", "json")
    assert res.exit_code == 0, res.stderr
    plans = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(plans) == 3
    first, last = plans[0]["history"], plans[-1]["history"]
    assert first["firstSight"] is True and first["warmingUp"] is True
    assert first["cyclesFollowed"] == 1
    assert last["firstSight"] is False and last["cyclesFollowed"] == 3
    # a follower does not claim "no history": warming up says it
    assert not any("no history" in w for p in plans for w in p["warnings"])
    for p in plans:
        assert p["decision"]["label"] in ("Success", "Skip")


def test_explain_watch_table_marks_warming_up(lbctl: Lbctl) -> None:
    res = lbctl("explain", "--watch", "--interval", "1", "--count", "2")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.count("=== refresh") == 2
    assert "warming up" in res.stdout and "Following the leader" in res.stdout


def test_watch_needs_a_live_cluster(lbctl: Lbctl) -> None:
    res = lbctl("recommend", "examples/hot-broker.json", "--watch")
    assert res.exit_code == 2 and "give no snapshot" in res.stderr
    res = lbctl("recommend", "--count", "2")
    assert res.exit_code == 2 and "--watch" in res.stderr


def test_live_recommend_says_it_has_no_history(lbctl: Lbctl) -> None:
    res = lbctl("recommend")
    assert res.exit_code == 0, res.stderr
    assert "no history" in res.stdout


def test_approving_a_plan_of_which_nothing_is_valid_is_no_partial_run(
        lbctl: Lbctl, tmp_path: Path) -> None:
    """Exit 13 (PARTIAL) says the journal holds part of a plan; a plan whose every action is
    refused on re-validation (here a bundle the cluster does not have) sends nothing: exit 1,
    the queue records it failed."""
    from lbctl.watch.plans import PlanQueue

    history = tmp_path / "h"
    doc = json.loads(lbctl("propose", "--solver", "greedy", "-o", "json").stdout)
    assert doc["actions"], "the hot cluster gives a plan"
    for a in doc["actions"]:  # bundles the cluster does not have: every action refused
        a["bundle"] = a["bundle"].rsplit("/", 1)[0] + "/0x00000000_0x00000001"
    meta = PlanQueue(history).add(json.dumps(doc).encode(), created_ms=0,
                                  created="2026-11-28T09:20:56.881Z", anomaly=None,
                                  source="propose", actions=len(doc["actions"]))
    r = lbctl("plans", "approve", meta.id, "--history", str(history), "--max-age", "0")
    assert r.exit_code == 1, r.stdout + r.stderr
    assert "not carried out" in r.stderr and "partial" not in r.stderr
    listed = lbctl("plans", "list", "--history", str(history), "--all")
    assert "failed" in listed.stdout
