"""apply's line before the requests says no pace for a single request: the README's session
(`apply plan.json --yes --max-moves 5 --interval 30` of a one-move plan) printed "lbctl will send
1 request(s), 30 s apart"."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import hot_cluster


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))


@pytest.mark.parametrize("pace", [["--interval", "30"], ["--concurrency", "2", "--interval", "30"]])
def test_one_request_has_no_pace(tmp_path: Path, pace: list[str]) -> None:
    runner = CliRunner()
    c = hot_cluster(3)
    try:
        r = runner.invoke(app, ["--admin-url", c.admin_url, "recommend", "-o", "json"])
        assert r.exit_code == 0, r.stderr
        plan = tmp_path / "plan.json"
        plan.write_text(r.stdout)
        r = runner.invoke(app, ["--admin-url", c.admin_url, "apply", str(plan), "--dry-run",
                                "--max-moves", "1", *pace])
        assert r.exit_code == 0, r.stderr
        assert "lbctl would send 1 request(s):" in r.stdout, r.stdout
    finally:
        c.stop()
