"""stale-load-report's bound is three missed rewrites, as ``lbctl watch``'s report-stale: at
``loadBalancerReportUpdateMaxIntervalMinutes=1`` a healthy broker's report is routinely a little
past one minute, and a bound of one interval raised and resolved the finding every capture."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.watch.detect import STALE_WRITES
from tests.paths import DATA


def _snapshot(tmp_path: Path, ages_s: dict[int, float], interval_min: int) -> Path:
    """stale-report.json with broker i's report ``ages_s[i]`` seconds old at the capture."""
    doc = json.loads((DATA / "doctor" / "stale-report.json").read_text())
    now = int(datetime.fromisoformat(doc["capturedAt"].replace("Z", "+00:00")).timestamp() * 1000)
    for i, b in enumerate(doc["brokers"].values()):
        b["lastUpdate"] = now - int(ages_s.get(i, 5) * 1000)
    doc["config"]["loadBalancerReportUpdateMaxIntervalMinutes"] = str(interval_min)
    out = tmp_path / "snap.json"
    out.write_text(json.dumps(doc))
    return out


def _stale(snapshot: Path) -> list[dict[str, object]]:
    r = CliRunner().invoke(app, ["doctor", str(snapshot), "-o", "json"])
    assert r.exit_code in (0, 1, 2, 3, 4), r.stdout + r.stderr
    doc = json.loads(r.stdout)
    return [f for f in doc["findings"] if f["rule"] == "stale-load-report"]


def test_a_report_a_little_past_one_interval_is_not_stale(tmp_path: Path) -> None:
    assert _stale(_snapshot(tmp_path, {0: 100, 1: 170}, 1)) == []


def test_three_missed_rewrites_are_stale_and_agree_with_watch(tmp_path: Path) -> None:
    [f] = _stale(_snapshot(tmp_path, {0: 100, 2: 200}, 1))
    assert f["brokers"] == ["broker-3.pulsar.svc:8080"]
    assert "older than 3 × loadBalancerReportUpdateMaxIntervalMinutes" in str(f["found"])
    assert STALE_WRITES == 3  # watch's report-stale: the same bound
    assert _stale(_snapshot(tmp_path, {2: 15 * 60 * 3 - 30}, 15)) == []  # 15-min interval
    [f] = _stale(_snapshot(tmp_path, {2: 15 * 60 * 3 + 30}, 15))
