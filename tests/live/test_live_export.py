"""`lbctl snapshot export` and live `recommend`/`explain` against the loopback test cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lbctl.sandbox import Fault
from lbctl.sources.snapshot import read_snapshot_file
from tests.live.live_helpers import Lbctl, assert_no_secret

pytestmark = pytest.mark.live


def _plan(stdout: str) -> dict:
    plan = json.loads(stdout)
    plan.pop("capturedAt", None)  # the two reads are moments apart
    plan.pop("source", None)
    return plan


def test_export_then_recommend_gives_the_live_plan(lbctl: Lbctl, tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    res = lbctl("snapshot", "export", "-f", str(snap))
    assert res.exit_code == 0, res.stderr
    assert "3 broker(s)" in res.stderr
    live = lbctl("recommend", "-o", "json")
    assert live.exit_code == 0, live.stderr
    offline = lbctl("recommend", str(snap), "-o", "json")
    assert offline.exit_code == 0, offline.stderr
    live_plan, file_plan = _plan(live.stdout), _plan(offline.stdout)
    # a live read says it starts without the leader's history; the file is a first sight too
    assert any("no history" in w["message"] for w in live_plan.pop("warnings"))
    assert not file_plan.pop("warnings")
    # the release modelled is the same; where its version was read differs (live: the cluster)
    assert (live_plan["pulsarVersion"].pop("origin"), file_plan["pulsarVersion"].pop("origin")) \
        == ("cluster", "snapshot")
    assert live_plan == file_plan
    assert live_plan["actions"] and live_plan["actions"][0]["action"] == "unload"
    assert live_plan["actions"][0]["broker"] == next(iter(lbctl.cluster.brokers))
    explain = lbctl("explain", "-o", "json")
    assert explain.exit_code == 0, explain.stderr


def test_export_content(lbctl: Lbctl, tmp_path: Path) -> None:
    snap = tmp_path / "snap.yaml"
    assert lbctl("snapshot", "export", "-f", str(snap)).exit_code == 0
    [st] = read_snapshot_file(snap)
    c = lbctl.cluster
    assert st.cluster == c.cluster and list(st.brokers) == list(c.brokers)
    assert st.namespaces["public/default"] == tuple(c.namespaces["public/default"])
    assert set(st.owners()) >= set(c.owners)
    assert len(st.topics) == len(c.topics)
    assert st.config["loadBalancerBrokerOverloadedThresholdPercentage"] == "85"
    text = snap.read_text()
    assert "brokerClientAuthenticationParameters" not in text and "tokenSecretKey" not in text
    assert_no_secret(text)


def test_append_builds_a_sequence(lbctl: Lbctl, tmp_path: Path) -> None:
    hist = tmp_path / "hist.jsonl"
    for _ in range(3):
        assert lbctl("snapshot", "export", "--append", str(hist), "--no-topics").exit_code == 0
    states = read_snapshot_file(hist)
    assert len(states) == 3 and hist.read_text().count("\n") == 3
    res = lbctl("recommend", str(hist), "--all-cycles", "-o", "json")
    assert res.exit_code == 0, res.stderr


def test_export_is_atomic_on_failure(lbctl: Lbctl, tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    snap.write_text("previous content")
    lbctl.cluster.faults.append(Fault(r"/tenants$", status=500, reason="boom"))
    res = lbctl("snapshot", "export", "-f", str(snap))
    assert res.exit_code == 10
    assert snap.read_text() == "previous content"
    assert [p.name for p in tmp_path.iterdir()] == ["snap.json"]  # no temporary file left


def test_failed_broker_is_reported_and_left_out(lbctl: Lbctl, tmp_path: Path) -> None:
    bad = list(lbctl.cluster.brokers)[2]
    lbctl.cluster.faults.append(Fault(r"load-report", kind="drop", broker=bad))
    snap = tmp_path / "snap.json"
    res = lbctl("snapshot", "export", "-f", str(snap))
    assert res.exit_code == 0, res.stderr
    assert f"lbctl: warning: {bad}" in res.stderr and "connection dropped" in res.stderr
    [st] = read_snapshot_file(snap)
    assert bad not in st.brokers and len(st.brokers) == 2


def test_export_needs_one_target(lbctl: Lbctl) -> None:
    res = lbctl("snapshot", "export")
    assert res.exit_code == 2 and "exactly one of -f FILE" in res.stderr


def test_file_dash_is_stdout_and_o_is_a_deprecated_alias(lbctl: Lbctl, tmp_path: Path) -> None:
    res = lbctl("snapshot", "export", "-f", "-")
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["format"] == "lbctl/snapshot@1"
    snap = tmp_path / "old.json"
    res = lbctl("snapshot", "export", "-o", str(snap))
    assert res.exit_code == 0 and snap.is_file()
    assert "deprecated" in res.stderr and "-f/--file" in res.stderr
    res = lbctl("snapshot", "export", "-o", str(snap), "-f", str(snap))
    assert res.exit_code == 2
