"""`lbctl journal` lists an apply run's actions in the order the runner walked the plan.

The runner journals every action it will not send (deferred by --max-moves, already done, gone)
right after validating the plan, before the first request (lbctl.apply.runner); the lines below
are written in that order, as a sandbox run of ``apply plan.json --max-moves 3 --yes`` wrote
them. Listed by first line, #4-#6 (deferred) came before #1-#3 (sent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lbctl.cli.app import app

URL = "http://localhost:8080/admin/v2/namespaces/public/default/{}/unload"


def _bundle(step: int) -> str:
    return f"0x{step:x}0000000_0x{step + 1:x}0000000"


def _lines(run: str, sent: range, deferred: range, *, balancer: bool) -> list[dict[str, Any]]:
    t = iter(range(10, 60))

    def at() -> str:
        return f"2026-11-28T11:42:{next(t):02d}.000Z"

    base = {"run": run, "plan": "plan.json"}
    out: list[dict[str, Any]] = [{"time": at(), **base, "state": "apply-start", "kind": "apply"}]
    if balancer:  # a request of the run itself (no step), sent before the first move
        call = {"method": "POST", "url": "http://localhost:8080/admin/v2/brokers/configuration/"
                "loadBalancerSheddingEnabled/false", "body": None}
        out += [{"time": at(), "run": run, "state": s, "action": "pause the balancer", **call}
                for s in ("sending", "done")]
    out += [{"time": at(), **base, "state": "skipped", "step": k,
             "bundle": f"public/default/{_bundle(k)}", "outcome": "deferred",
             "why": "--max-moves 3 reached"} for k in deferred]
    for k in sent:
        b = _bundle(k)
        call = {"method": "PUT", "url": URL.format(b), "body": None}
        out += [{"time": at(), **base, "state": s, "step": k,
                 "action": f"#{k} unload public/default/{b}", **call} for s in ("sending", "done")]
        out.append({"time": at(), **base, "state": "verified", "step": k,
                    "bundle": f"public/default/{b}", "outcome": "done"})
    out.append({"time": at(), **base, "state": "apply-end", "result": "complete"})
    return out


def _journal(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    p = tmp_path / "journal.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def _steps_listed(stdout: str) -> list[int]:
    """The ``#`` column of the table, top to bottom."""
    rows = stdout.split("--------", 1)[1].splitlines()[1:]
    return [int(r.split()[1]) for r in rows if r[:2].isdigit() and r.split()[1].isdigit()]


def test_sent_actions_then_deferred_ones_in_step_order(runner, tmp_path: Path) -> None:
    j = _journal(tmp_path, _lines("r1", range(1, 4), range(4, 7), balancer=False))
    res = runner.invoke(app, ["journal", "--journal", str(j)], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    assert _steps_listed(res.stdout) == [1, 2, 3, 4, 5, 6], res.stdout
    res = runner.invoke(app, ["journal", "--journal", str(j), "-o", "json"])
    actions = json.loads(res.stdout)["runs"][0]["actions"]
    assert [a["step"] for a in actions] == [1, 2, 3, 4, 5, 6]
    assert [a["outcome"].split(":")[0] for a in actions] == ["done"] * 3 + ["deferred"] * 3


def test_the_runs_own_requests_keep_their_place(runner, tmp_path: Path) -> None:
    j = _journal(tmp_path, _lines("r1", range(1, 3), range(3, 5), balancer=True))
    res = runner.invoke(app, ["journal", "--journal", str(j), "-o", "json"])
    actions = json.loads(res.stdout)["runs"][0]["actions"]
    assert [a["step"] for a in actions] == [None, 1, 2, 3, 4]


def test_steps_still_lists_every_line_as_written(runner, tmp_path: Path) -> None:
    j = _journal(tmp_path, _lines("r1", range(1, 3), range(3, 5), balancer=False))
    res = runner.invoke(app, ["journal", "--journal", str(j), "--steps"],
                        env={"COLUMNS": "120"})
    states = [r.split()[1] for r in res.stdout.splitlines() if r[:2].isdigit()]
    assert states[:3] == ["apply-start", "skipped", "skipped"]


def test_a_real_runs_deferred_actions_are_named_like_the_sent_ones(runner, tmp_path: Path,
                                                                   monkeypatch) -> None:
    """apply against the test cluster with --max-moves 1: the journal lists the plan's actions in
    step order, the one sent and the ones deferred (or refused on re-validation) each named ``unload BUNDLE → DESTINATION`` as the doc's table shows (their
    skip lines carried no action words: the row named the bundle alone)."""
    from lbctl.sandbox import hot_cluster

    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    j = tmp_path / "journal.jsonl"
    monkeypatch.setenv("LBCTL_JOURNAL", str(j))
    c = hot_cluster(3, bundles_per_broker=3)
    try:
        r = runner.invoke(app, ["--admin-url", c.admin_url, "propose", "--solver", "greedy",
                                "--no-splits", "-o", "json"])
        assert r.exit_code == 0, r.stderr
        plan = tmp_path / "plan.json"
        plan.write_text(r.stdout)
        r = runner.invoke(app, ["--admin-url", c.admin_url, "apply", str(plan), "--yes",
                                "--max-moves", "1"])
        assert r.exit_code == 0, r.stdout + r.stderr
    finally:
        c.stop()
    res = runner.invoke(app, ["journal", "--journal", str(j), "-o", "json"])
    actions = json.loads(res.stdout)["runs"][0]["actions"]
    assert len(actions) >= 2
    assert [a["step"] for a in actions] == list(range(1, len(actions) + 1))
    assert all(a["action"] == "unload" and " → " in a["target"] for a in actions), actions
    assert any(a["outcome"] == "done" for a in actions), actions
    assert any(a["outcome"].startswith("deferred") for a in actions), actions
