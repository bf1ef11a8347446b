"""`lbctl journal`: the journal the executor writes, read back as a table, JSON or rows."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lbctl.cli.app import app
from lbctl.errors import UsageError
from lbctl.sources.journal import parse_since, read_journal

LINES = [
    {"time": "2026-03-12T14:05:00.123Z", "run": "r1", "state": "sending",
     "action": "unload public/default/0x00000000_0x80000000", "method": "PUT",
     "url": "http://b:8080/admin/v2/namespaces/public/default/0x00000000_0x80000000/unload",
     "body": None, "status": None, "error": None},
    {"time": "2026-03-12T14:05:00.456Z", "run": "r1", "state": "done",
     "action": "unload public/default/0x00000000_0x80000000", "method": "PUT",
     "url": "http://b:8080/admin/v2/namespaces/public/default/0x00000000_0x80000000/unload",
     "body": None, "status": 204, "error": None},
    {"time": 1773500000.0, "run": "r0", "state": "failed", "action": "split x",  # old format
     "method": "PUT", "url": "http://b:8080/x", "body": [1], "status": 503, "error": "busy"},
]


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    p = tmp_path / "j.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in LINES) + "{torn\n")
    return p


def test_reads_both_time_formats_and_skips_a_torn_line(journal: Path) -> None:
    j = read_journal(journal)
    assert [e.state for e in j.entries] == ["sending", "done", "failed"]
    assert j.entries[0].time == datetime(2026, 3, 12, 14, 5, 0, 123000, tzinfo=UTC)
    assert j.entries[2].time.year == 2026 and j.skipped and j.skipped[0].startswith("line 4")


def test_table_and_since(runner, journal: Path) -> None:
    res = runner.invoke(app, ["journal", "--journal", str(journal)])
    assert res.exit_code == 0, res.output
    assert "3 line(s) of 2 run(s)" in res.stdout and "2026-03-12 14:05:00" in res.stdout
    assert "line 4" in res.stderr
    res = runner.invoke(app, ["journal", "--journal", str(journal), "--since",
                              "2026-03-12T14:05:00.200Z", "-o", "json"])
    data = json.loads(res.stdout)
    assert [e["state"] for e in data["entries"]] == ["done", "failed"]


def test_jsonl_rows(runner, journal: Path) -> None:
    res = runner.invoke(app, ["journal", "--journal", str(journal), "-o", "jsonl"])
    rows = [json.loads(x) for x in res.stdout.splitlines()]
    assert rows[2]["body"] == "[1]" and rows[1]["status"] == 204
    assert list(rows[0]) == ["time", "run", "state", "action", "method", "url", "body",
                             "status", "error"]


def test_missing_journal_is_empty(runner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["journal", "--journal", str(tmp_path / "none.jsonl")])
    assert res.exit_code == 0 and "no change recorded" in res.stdout


def test_since() -> None:
    now = datetime(2026, 3, 12, 15, 0, tzinfo=UTC)
    assert parse_since("90m", now) == datetime(2026, 3, 12, 13, 30, tzinfo=UTC)
    assert parse_since("2026-03-12", now) == datetime(2026, 3, 12, tzinfo=UTC)
    with pytest.raises(UsageError, match="duration"):
        parse_since("yesterday", now)
