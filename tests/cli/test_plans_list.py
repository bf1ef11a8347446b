"""``lbctl plans list`` is fitted to the terminal as every table is: 80 columns when piped,
ids whole, the columns that gave way named under it; ``--wide`` shows them all."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.watch.plans import PlanQueue

LONG = "out-of-band:broker-17.pulsar-prod.svc.cluster.local:8080"


def _queued(tmp_path: Path, anomaly: str = LONG) -> Path:
    history = tmp_path / "h"
    PlanQueue(history).add(b'{"format": "lbctl/plan@1", "actions": []}',
                           created_ms=1_764_321_656_881, created="2026-11-28T09:20:56.881Z",
                           anomaly=anomaly, source="recommend", actions=1)
    return history


def test_plans_list_fits_80_columns_with_ids_whole(tmp_path: Path) -> None:
    history = _queued(tmp_path)
    r = CliRunner().invoke(app, ["plans", "list", "--history", str(history)],
                           env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert all(len(x) <= 80 for x in lines), max(lines, key=len)
    assert LONG in r.stdout  # whole: the rows print as records when the table cannot fit


def test_plans_list_at_80_columns_leaves_out_columns_and_says_so(tmp_path: Path) -> None:
    history = _queued(tmp_path, "out-of-band:127.0.0.1:8082")
    r = CliRunner().invoke(app, ["plans", "list", "--history", str(history)],
                           env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert all(len(x) <= 80 for x in lines) and lines[0].split()[:3] == [
        "plan", "status", "actions"]
    assert lines[-1] == "(left out to fit 80 columns: planned on, by; --wide shows them)"


def test_plans_list_wide_shows_every_column(tmp_path: Path) -> None:
    history = _queued(tmp_path)
    r = CliRunner().invoke(app, ["plans", "list", "--history", str(history), "--wide"],
                           env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0].split() == ["plan", "status", "actions", "by", "anomaly",
                                                "planned", "on"]
    assert "2026-11-28T09:20:56.881Z" in r.stdout
