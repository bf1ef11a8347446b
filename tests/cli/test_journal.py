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
    assert "2 action(s) in 2 run(s)" in res.stdout and "2026-03-12 14:05:00" in res.stdout
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
                             "status", "error", "reason", "bundle", "step", "outcome"]


def test_missing_journal_is_empty(runner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["journal", "--journal", str(tmp_path / "none.jsonl")])
    assert res.exit_code == 0 and "no change recorded" in res.stdout


def test_since() -> None:
    now = datetime(2026, 3, 12, 15, 0, tzinfo=UTC)
    assert parse_since("90m", now) == datetime(2026, 3, 12, 13, 30, tzinfo=UTC)
    assert parse_since("2026-03-12", now) == datetime(2026, 3, 12, tzinfo=UTC)
    with pytest.raises(UsageError, match="duration"):
        parse_since("yesterday", now)


# --- issue 28 item 8: an audit trail --------------------------------------------------------------
B1 = "persistent-tenant-with-a-long-name/orders-eu-west/0x7ffffffe_0xaaaaaaa8"
DEST = "broker-2.broker.pulsar.svc.cluster.local:8080"


def _apply_run(run: str, reason: str) -> list[dict[str, object]]:
    """The lines an apply run writes for one verified move and one declined action."""
    base = {"run": run, "plan": "/p/plan.json", "planDigest": "ab", "reason": reason}
    req = {**base, "action": f"#1 unload {B1} to {DEST}", "method": "PUT",
           "url": f"http://b:8080/admin/v2/namespaces/{B1}/unload?destinationBroker=x",
           "body": None, "step": 1, "bundle": B1, "source": "b1:8080", "destination": DEST,
           "kind": "apply"}
    t = "2026-03-12T15:00:0{}.000Z"
    return [
        {"time": t.format(0), **base, "state": "apply-start", "kind": "apply", "actions": 2},
        {"time": t.format(1), **req, "state": "sending", "status": None, "error": None},
        {"time": t.format(2), **req, "state": "done", "status": 204, "error": None},
        {"time": t.format(3), **base, "state": "verified", "step": 1, "bundle": B1,
         "outcome": "done", "owner": DEST, "seconds": 0.2, "why": None},
        {"time": t.format(4), **base, "state": "skipped", "step": 2, "bundle": B1 + "x",
         "outcome": "declined", "why": "declined"},
        {"time": t.format(5), **base, "state": "apply-end", "result": "partial", "why": "x"},
    ]


def test_one_row_per_action_with_reason_outcome_and_steps(runner, tmp_path: Path) -> None:
    p = tmp_path / "j.jsonl"
    lines = [*LINES[:2], *_apply_run("r9", "CHG-1234 restart broker-3")]
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    res = runner.invoke(app, ["journal", "--journal", str(p)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert all(len(line) <= 80 for line in out.splitlines()), out
    flat = " ".join(out.split())
    assert "3 action(s) in 2 run(s)" in flat
    assert "reason: CHG-1234 restart broker-3" in flat and "result: partial" in flat
    # the move: one record (a row, or a record when the whole bundle name does not fit 80
    # columns), naming the bundle unbroken, verified done
    bundle = "persistent-tenant-with-a-long-name/orders-eu-west/0x7ffffffe_0xaaaaaaa8"
    assert bundle in out  # never split across lines
    moved = out[out.index("15:00:01"):out.index("15:00:04")]
    assert "sdv" in moved and "done" in moved and bundle in moved
    declined = out[out.index("15:00:04"):]
    assert "---" in declined and "declined" in declined and bundle in declined
    # the unload request of run r1: sent and answered, not verified
    assert any(line.startswith("14:05:00") and " sd- " in line and line.rstrip().endswith("done")
               for line in out.splitlines())
    steps = runner.invoke(app, ["journal", "--journal", str(p), "--steps"],
                          env={"COLUMNS": "80"}).stdout
    assert steps.count("sending") == 2 and "verified" in steps and "apply-start" in steps
    data = json.loads(runner.invoke(app, ["journal", "--journal", str(p), "-o", "json"]).stdout)
    run = data["runs"][1]
    assert run["reason"] == "CHG-1234 restart broker-3" and run["kind"] == "apply"
    assert [(a["bundle"], a["outcome"], a["steps"]) for a in run["actions"]] == [
        (B1, "done", "sdv"), (B1 + "x", "declined", "---")]
    assert len(data["entries"]) == len(lines)


def test_a_request_without_an_answer_is_in_flight(runner, tmp_path: Path) -> None:
    p = tmp_path / "j.jsonl"
    p.write_text(json.dumps(LINES[0]) + "\n")
    out = runner.invoke(app, ["journal", "--journal", str(p)]).stdout
    assert "in-flight?" in out and " s-- " in out


@pytest.mark.parametrize("content", [
    b"\x00\x01garbage\n\xff\xfe\n",  # binary
    b'{"format": "lbctl/snapshot@1", "cluster": "demo"}\n',  # a snapshot, not a journal
    b"[1, 2]\nnull\n",
])
def test_a_file_with_no_journal_line_is_refused_not_shown_as_empty(runner, tmp_path: Path,
                                                                    content: bytes) -> None:
    """It used to print a warning per line and "no change recorded", exit 0."""
    p = tmp_path / "not-a-journal.json"
    p.write_bytes(content)
    res = runner.invoke(app, ["journal", "--journal", str(p)])
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "not a journal" in res.stderr, res.stderr


def test_good_lines_around_bad_ones_are_all_shown_and_the_skips_bounded(runner,
                                                                       tmp_path: Path) -> None:
    p = tmp_path / "j\x1b[2J.jsonl"
    good = [json.dumps(x) + "\n" for x in LINES]
    p.write_text(good[0] + "{torn\n" * 20 + "".join(good[1:]))
    res = runner.invoke(app, ["journal", "--journal", str(p), "-o", "jsonl"])
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 3  # no record lost
    warnings = res.stderr.splitlines()
    assert len(warnings) == 6 and "15 more line(s) skipped" in warnings[-1]
    assert "\x1b" not in res.stderr


def test_a_restore_run_is_named_drain_restore(runner, tmp_path: Path) -> None:
    """`drain --restore` journals its requests and a balancer-restored line, no apply-start: its
    run was headed by its first verb ("delete"), a kind no command has."""
    p = tmp_path / "j.jsonl"
    url = "http://localhost:8080/admin/v2/brokers/configuration/loadBalancerSheddingEnabled"
    act = "delete the dynamic loadBalancerSheddingEnabled (back to broker.conf's value)"
    lines = [{"time": "2026-11-28T05:51:51.790Z", "run": "a03", "state": s, "action": act,
              "method": "DELETE", "url": url, "body": None, "status": st, "error": None}
             for s, st in (("sending", None), ("done", 204))]
    lines.append({"time": "2026-11-28T05:51:51.798Z", "run": "a03", "state": "balancer-restored",
                  "cluster": "c", "previous": {"loadBalancerSheddingEnabled": None}})
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    res = runner.invoke(app, ["journal", "--journal", str(p)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "run a03 · drain --restore · 2026-11-28 05:51:51 UTC · balancer-restored" in res.stdout
