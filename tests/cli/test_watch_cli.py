"""`lbctl watch` end to end on the command line: captures appended, anomalies as JSON lines on
stdout, --status from another shell, bad flags refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import hot_cluster

pytestmark = pytest.mark.live


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))


def test_watch_captures_and_prints_anomalies_then_status_reads_them(tmp_path: Path) -> None:
    c = hot_cluster(3)
    history = tmp_path / "h"
    try:
        r = CliRunner().invoke(app, [
            "--admin-url", c.admin_url, "watch", "--history", str(history), "--count", "2",
            "--interval", "1", "--listen", "127.0.0.1:0", "--grace", "out-of-band=0s",
            "--no-doctor"])
    finally:
        c.stop()
    assert r.exit_code == 0, r.stderr
    assert "status page http://127.0.0.1:" in r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    hot = next(iter(c.brokers))
    assert {"event": "raised", "kind": "out-of-band", "subject": hot} \
        .items() <= next(x for x in lines if x["subject"] == hot).items()
    assert len([x for x in lines if x["id"] == f"out-of-band:{hot}"]) == 1  # not twice
    files = list(history.glob("lbctl-history-*.jsonl.gz"))
    assert len(files) in (1, 2)
    s = CliRunner().invoke(app, ["watch", "--status", "--history", str(history)])
    assert s.exit_code == 0, s.stderr
    assert "last capture:" in s.stdout and f"out-of-band {hot}" in s.stdout
    assert "no apply or drain is running" in s.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--heal", "out-of-band=yes"], "give KIND=MODE"),
    (["--heal", "ping-pong=apply"], "not healable"),
    (["--grace", "broker-down"], "give KIND=DURATION"),
    (["--listen", "nowhere"], "give HOST:PORT"),
    (["--webhook-format", "xml", "--webhook", "http://127.0.0.1:9/x"], "one of json, slack"),
])
def test_bad_flags_are_refused_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    r = CliRunner().invoke(app, ["--admin-url", "http://127.0.0.1:9", "watch", "--history",
                                 str(tmp_path / "h"), "--count", "1", *args])
    assert r.exit_code != 0
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_plans_refuse_an_unknown_id(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["plans", "approve", "p-20260101T000000-abcdef", "--history",
                                 str(tmp_path)])
    assert r.exit_code != 0 and "no plan p-20260101T000000-abcdef" in r.stderr
    r = CliRunner().invoke(app, ["plans", "show", "../../etc/passwd", "--history", str(tmp_path)])
    assert r.exit_code != 0 and "is not a plan id" in r.stderr


def test_a_watcher_that_never_captured_fails_with_the_reason(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["--admin-url", "http://127.0.0.1:9", "watch", "--history",
                                 str(tmp_path / "h"), "--count", "1", "--listen", ""])
    assert r.exit_code != 0
    assert "no capture succeeded in 1 attempt(s)" in r.stderr and "refused" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(("args", "refreshed"), [([], True), (["--reports-as-written"], False)])
def test_watch_is_told_how_the_cluster_serves_its_load_reports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], refreshed: bool) -> None:
    """Pulsar's load-report endpoint serves a refreshed report (lastUpdate kept at the last
    write), the default; beside ``lbctl sandbox --reports-as-written`` the first capture must
    not roll each report back by deltas its broker already wrote."""
    from lbctl.watch import loop

    seen: list[loop.WatchOptions] = []

    class Told(Exception):
        pass

    def capture(self: object, reader: object, opts: loop.WatchOptions, *a: object,
                **k: object) -> None:
        seen.append(opts)
        raise Told

    monkeypatch.setattr(loop.Watcher, "__init__", capture)
    c = hot_cluster(3)
    try:
        CliRunner().invoke(app, ["--admin-url", c.admin_url, "watch", "--history",
                                 str(tmp_path / "h"), "--count", "1", "--no-doctor", *args])
    finally:
        c.stop()
    assert [o.refreshed for o in seen] == [refreshed]
