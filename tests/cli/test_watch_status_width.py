"""`lbctl watch --status` wraps its lines at spaces to 80 columns when piped, as lbctl's other
prose does: an anomaly's line (message and fix) ran to 500 characters. A word longer than the
line (a setting=class pair) stays whole on a line of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import hot_cluster


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    monkeypatch.setenv("LBCTL_LOCK_DIR", str(tmp_path / "locks"))


def test_status_lines_fit_80_columns_and_keep_words_whole(tmp_path: Path) -> None:
    runner = CliRunner()
    history = tmp_path / "h"
    c = hot_cluster(3)
    try:
        r = runner.invoke(app, ["--admin-url", c.admin_url, "watch", "--history", str(history),
                                "--count", "1", "--interval", "1", "--grace", "out-of-band=0s",
                                "--listen", ""])
        assert r.exit_code == 0, r.stderr
    finally:
        c.stop()
    r = runner.invoke(app, ["watch", "--status", "--history", str(history)],
                      env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any("out-of-band" in line for line in lines)
    long = [line for line in lines if len(line) > 80]
    # only a word that cannot fit, or a quoted command (kept whole, walk24)
    assert all(len(line.split()) == 1 or re.fullmatch(r" *`[^`]*`[.,;)]*", line)
               for line in long), long
    words = " ".join(r.stdout.split())
    assert "loadBalancerLoadPlacementStrategy=org.apache.pulsar.broker.loadbalance.impl." in words
