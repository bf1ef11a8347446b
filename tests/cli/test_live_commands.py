"""The live commands offline: help without heavy imports, monitor-brokers on snapshots, and
recommend without a snapshot trying the admin URL."""

from __future__ import annotations

import json

import pytest

from lbctl.cli.app import app
from tests.paths import EXAMPLES

HEAVY = ("pandas", "httpx", "pyspark", "numpy")


def test_monitor_on_a_snapshot_sequence(runner) -> None:
    res = runner.invoke(app, ["monitor-brokers", "--snapshot",
                              str(EXAMPLES / "two-brokers-90-10.jsonl"), "-o", "json"])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    rows = doc["brokers"]
    n = sum(1 for line in (EXAMPLES / "two-brokers-90-10.jsonl").read_text().splitlines() if line)
    assert len(rows) == 2 and all(r["samples"] == n for r in rows)
    # averaged across the sequence: the long-term rate is not the latest one
    assert any(r["longMsgRate"] != pytest.approx(r["latestMsgRate"]) for r in rows)


def test_monitor_on_a_snapshot_table(runner) -> None:
    res = runner.invoke(app, ["monitor-brokers", "--snapshot", str(EXAMPLES / "hot-broker.json"),
                              "--summary", "--sort", "max"])
    assert res.exit_code == 0, res.stderr
    overall = res.stdout.split("Overall Broker Data", 1)[1].split("\n\n")[0]
    assert overall.rstrip().splitlines()[-1].startswith("TOTAL")


def test_recommend_without_snapshot_reads_the_admin_url(runner, monkeypatch) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    res = runner.invoke(app, ["--admin-url", "http://127.0.0.1:9", "--request-timeout", "1",
                              "recommend"])
    assert res.exit_code == 3
    assert res.stderr.startswith("lbctl: error: GET http://127.0.0.1:9/admin/v2/")
