"""`lbctl plans approve` prints the apply runner's lines as `lbctl apply` does: plain, on stdout.

Before, every line (the plan against the cluster, each request, each outcome) came out on stderr
as ``lbctl: warning: …``, although nothing was wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import hot_cluster
from lbctl.watch.plans import PlanQueue


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))
    monkeypatch.setenv("LBCTL_LOCK_DIR", str(tmp_path / "locks"))


def test_the_runners_lines_are_plain_on_stdout(tmp_path: Path) -> None:
    runner = CliRunner()
    c = hot_cluster(3)
    try:
        r = runner.invoke(app, ["--admin-url", c.admin_url, "propose", "--solver", "greedy", "--no-splits",
                                "-o", "json"])
        assert r.exit_code == 0, r.stderr
        history = tmp_path / "h"
        meta = PlanQueue(history).add(r.stdout.encode(), created_ms=1_800_000_000_000,
                                      created="2027-01-15T08:00:00Z", anomaly=None,
                                      source="propose", actions=r.stdout.count('"unload"'))
        r = runner.invoke(app, ["--admin-url", c.admin_url, "plans", "approve", meta.id,
                                "--history", str(history), "--max-age", "0"])
        assert r.exit_code == 0, r.stdout + r.stderr
        assert "lbctl: warning:" not in r.stderr, r.stderr
        lines = r.stdout.splitlines()
        assert any(line.startswith("lbctl will send ") for line in lines), r.stdout
        assert any(line.startswith("#1 done: unload ") for line in lines), r.stdout
        assert lines[-1].startswith(f"{meta.id}: applied")
    finally:
        c.stop()
