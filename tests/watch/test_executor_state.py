"""The executor's state from another shell: `lbctl apply --status` names the run holding the
cluster's lock and how far its journal got; `lbctl apply --stop` asks it to stop (SIGTERM, which
the runner turns into "finish the action in flight")."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app

HOLD = """
import signal, sys, time
from lbctl.apply.lock import ClusterLock
got = []
signal.signal(signal.SIGTERM, lambda *a: got.append(1))
with ClusterLock("prod", what="lbctl apply plan.json", journal=sys.argv[1]):
    print("held", flush=True)
    while not got:
        time.sleep(0.05)
print("stopped", flush=True)
"""


@pytest.fixture
def held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LBCTL_LOCK_DIR", str(tmp_path / "locks"))
    journal = tmp_path / "journal.jsonl"
    records = [{"run": "r1", "state": "apply-start", "steps": [1, 2, 3]},
               {"run": "r1", "state": "sending", "step": 1},
               {"run": "r1", "state": "done", "step": 1},
               {"run": "r1", "state": "verified", "step": 1},
               {"run": "r1", "state": "sending", "step": 2}]
    at = "2026-11-27T09:00:00Z"
    journal.write_text("".join(json.dumps({"time": at, **r}) + "\n" for r in records))
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(journal)], stdout=subprocess.PIPE,
                         text=True, env={**__import__("os").environ,
                                         "LBCTL_LOCK_DIR": str(tmp_path / "locks")})
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    yield p
    p.kill()
    p.wait()


@pytest.mark.slow
def test_status_then_stop(held: subprocess.Popen[str]) -> None:
    r = CliRunner().invoke(app, ["apply", "--status"])
    assert r.exit_code == 0, r.stderr
    assert f"cluster prod: lbctl apply plan.json — pid {held.pid}" in r.stdout
    assert "run r1: 2 of 3 step(s) sent, 1 done, 1 verified, 0 failed; running" in r.stdout
    r = CliRunner().invoke(app, ["apply", "--stop"])
    assert r.exit_code == 0 and f"asked pid {held.pid} to stop" in r.stdout
    assert held.stdout is not None and held.stdout.readline().strip() == "stopped"
    held.wait(10)
    held.stdout.close()
    for _ in range(50):
        r = CliRunner().invoke(app, ["apply", "--status"])
        if "no apply or drain is running" in r.stdout:
            break
        time.sleep(0.1)
    assert "no apply or drain is running" in r.stdout


def test_status_with_nothing_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LBCTL_LOCK_DIR", str(tmp_path / "locks"))
    r = CliRunner().invoke(app, ["apply", "--status"])
    assert r.exit_code == 0 and "no apply or drain is running" in r.stdout
    r = CliRunner().invoke(app, ["apply", "--stop"])
    assert "nothing to stop" in r.stdout
    r = CliRunner().invoke(app, ["apply", "plan.json", "--status"])
    assert r.exit_code != 0 and "take no plan" in r.stderr
