"""A run killed with SIGKILL at action 7 of 20 (a real process, a real kill) and resumed sends
actions 8 to 20 exactly once each; a run killed with a request in flight is resumed without
sending it again; SIGTERM finishes the action in flight and says "partial"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from lbctl.errors import ExitStatus
from lbctl.sandbox import Fault, TestCluster
from tests.apply.apply_helpers import lbctl, plan_doc, spread_moves, unloads_done, write_plan

pytestmark = [pytest.mark.live, pytest.mark.slow]


def _start(c: TestCluster, plan: Path, journal: Path, *extra: str) -> subprocess.Popen[bytes]:
    """``lbctl apply PLAN --yes`` in a process of its own; its output goes to out.txt/err.txt
    beside the plan."""
    env = {**os.environ, "LBCTL_JOURNAL": str(journal)}
    env.pop("PULSAR_CLIENT_CONF", None)
    with open(plan.parent / "out.txt", "wb") as out, open(plan.parent / "err.txt", "wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "lbctl", "--admin-url", c.admin_url, "apply", str(plan),
             "--yes", *extra], env=env, stdout=out, stderr=err)


def _verified(journal: Path) -> int:
    if not journal.exists():
        return 0
    return sum(1 for line in journal.read_text().splitlines()
               if '"state":"verified"' in line)


def _wait(cond: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.01)
    assert cond(), "timed out"  # type: ignore[operator]


def test_killed_at_action_7_and_resumed_sends_8_to_20_once(cluster: TestCluster, tmp_path: Path,
                                                           journal: Path) -> None:
    c = cluster
    moves = spread_moves(c, 20)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    proc = _start(c, plan, journal, "--interval", "1.5")
    try:
        _wait(lambda: _verified(journal) >= 7)
        proc.send_signal(signal.SIGKILL)  # during the pause after action 7
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    first = unloads_done(c)
    assert first == [b for b, _, _ in moves[:7]]

    r = lbctl(c, "apply", "--resume", str(journal), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert [a["outcome"] for a in out["actions"][:7]] == ["already-done"] * 7
    assert [a["outcome"] for a in out["actions"][7:]] == ["done"] * 13
    assert "(7 of them already done, the journal says)" in r.stderr + r.stdout
    assert out["resumes"]

    sent = unloads_done(c)
    assert sent[7:] == [b for b, _, _ in moves[7:]]  # 8..20, in order
    assert Counter(sent) == Counter(b for b, _, _ in moves)  # every action exactly once
    # every PUT that reached the cluster is one of them (no retry, no repeat)
    puts = [r_ for r_ in c.log if r_.method == "PUT"]
    assert len(puts) == 20
    for b, _, dst in moves:
        assert c.owners[b] == dst
    # resuming again sends nothing more
    r = lbctl(c, "apply", "--resume", str(journal), "--yes", "-o", "json")
    assert r.exit_code == 0
    assert len([r_ for r_ in c.log if r_.method == "PUT"]) == 20


def _kill_during_third_unload(c: TestCluster, tmp_path: Path, journal: Path
                              ) -> list[tuple[str, str, str | None]]:
    """A run of 5 moves whose 3rd unload takes 2 s to answer, killed (SIGKILL) meanwhile; the
    broker carries the unload out anyway, as a real one would. Returns the plan's moves."""
    moves = spread_moves(c, 5)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    b3 = moves[2][0].rsplit("/", 1)[1]
    c.faults.append(Fault(rf"{b3}/unload$", kind="latency", seconds=2.0, method="PUT"))
    proc = _start(c, plan, journal)
    try:
        _wait(lambda: any(r.method == "PUT" and b3 in r.path for r in c.log))
        time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    _wait(lambda: b3 in "".join(unloads_done(c)), 10)  # the broker finished it after the kill
    return moves


def test_killed_with_a_request_in_flight(cluster: TestCluster, tmp_path: Path,
                                         journal: Path) -> None:
    """The 3rd unload takes 2 s to answer; the run is killed meanwhile. The broker applies it
    anyway (as a real one would): the resumed run finds the bundle moved and does not resend."""
    c = cluster
    moves = _kill_during_third_unload(c, tmp_path, journal)
    r = lbctl(c, "apply", "--resume", str(journal), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    acts = json.loads(r.stdout)["actions"]
    assert acts[2]["outcome"] == "already-done"
    assert "sent before the earlier run stopped" in acts[2]["why"]
    assert Counter(unloads_done(c)) == Counter(b for b, _, _ in moves)


def test_killed_in_flight_and_left_unowned_counts_as_done(cluster: TestCluster, tmp_path: Path,
                                                         journal: Path) -> None:
    """Killed with the 3rd unload in flight; the broker carries it out and, as Pulsar does, leaves
    the bundle unowned until a lookup assigns it. On resume the bundle has left its source: done,
    not in doubt, and not sent again."""
    c = cluster
    c.set_reassignment(delay=1.0)  # no owner until a lookup, and none before a second has passed
    moves = _kill_during_third_unload(c, tmp_path, journal)
    assert c.owners.get(moves[2][0]) is None  # unloaded, not yet looked up
    r = lbctl(c, "apply", "--resume", str(journal), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    acts = json.loads(r.stdout)["actions"]
    assert acts[2]["outcome"] == "already-done"
    assert "is on no broker now" in acts[2]["why"]
    assert Counter(unloads_done(c)) == Counter(b for b, _, _ in moves)


def test_in_doubt_action_still_on_its_source_needs_force(cluster: TestCluster, tmp_path: Path,
                                                         journal: Path) -> None:
    """Killed with the 2nd request in flight that never reached a broker's router (a hang):
    on resume it is in doubt and not sent without --force."""
    c = cluster
    moves = spread_moves(c, 3)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    b2 = moves[1][0].rsplit("/", 1)[1]
    c.faults.append(Fault(rf"{b2}/unload$", kind="hang", seconds=30, method="PUT", times=1))
    proc = _start(c, plan, journal, "--request-timeout", "60")
    try:
        _wait(lambda: any(r.method == "PUT" and b2 in r.path for r in c.log))
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    r = lbctl(c, "apply", "--resume", str(journal), "--yes", "-o", "json")
    assert r.exit_code == ExitStatus.PARTIAL
    acts = json.loads(r.stdout)["actions"]
    assert [a["outcome"] for a in acts] == ["already-done", "in-doubt", "done"]
    assert "--force sends it again" in acts[1]["why"]
    r = lbctl(c, "apply", "--resume", str(journal), "--yes", "--force", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [a["outcome"] for a in json.loads(r.stdout)["actions"]][1] == "done"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_finishes_the_action_in_flight(cluster: TestCluster, tmp_path: Path,
                                                journal: Path, sig: signal.Signals) -> None:
    c = cluster
    moves = spread_moves(c, 4)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    b2 = moves[1][0].rsplit("/", 1)[1]
    c.faults.append(Fault(rf"{b2}/unload$", kind="latency", seconds=1.0, method="PUT"))
    proc = _start(c, plan, journal)
    _wait(lambda: any(r.method == "PUT" and b2 in r.path for r in c.log))
    proc.send_signal(sig)
    proc.wait(60)
    out, err = (tmp_path / "out.txt").read_text(), (tmp_path / "err.txt").read_text()
    assert proc.returncode == ExitStatus.PARTIAL, err
    assert unloads_done(c) == [moves[0][0], moves[1][0]]  # the one in flight finished
    assert "#2 done" in out and "stopped by a signal" in err and sig.name in err
    recs = [json.loads(x) for x in journal.read_text().splitlines()]
    assert [x["outcome"] for x in recs if x.get("state") == "verified"] == ["done", "done"]
    assert recs[-1]["state"] == "apply-end" and recs[-1]["result"] == "partial"
