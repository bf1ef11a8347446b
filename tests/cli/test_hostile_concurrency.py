"""Concurrent runs on one file (hostile14).

* Two ``lbctl watch`` on one ``--history``: their captures interleaved and each pruned the files
  the other was listing, failing captures with ``FileNotFoundError``. A watcher now holds the
  history's lock (``.lbctl-watch.lock``, an ``flock``) and a second one is refused in one line,
  exit 14 (``LOCKED``), before it reads the cluster.
* Appends to one journal or history from several processes (``append_record``'s ``flock``):
  every record whole, none lost — a guard, it held before."""

from __future__ import annotations

import fcntl
import gzip
import json
import os
from multiprocessing import get_context
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.errors import ConfigError
from lbctl.safe.files import append_record, gzip_member, is_json_line

CLOSED = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))


def _hold(name: Path) -> int | None:
    """Another process's hold on ``name`` (a separate open file description: ``flock``s of two
    opens conflict even within one process), or None when it is held already."""
    fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _watch(history: Path) -> list[str]:
    return ["--admin-url", CLOSED, "watch", "--history", str(history), "--count", "1",
            "--interval", "1", "--listen", ""]  # no status page: its port may be taken


def test_a_second_watcher_on_one_history_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    history = tmp_path / "h"
    history.mkdir()
    held = _hold(history / ".lbctl-watch.lock")
    assert held is not None
    try:
        res = runner.invoke(app, _watch(history))
    finally:
        os.close(held)
    assert res.exit_code == 14, res.output
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.output, res.stderr
    assert res.stderr.startswith(f"lbctl: error: {history}: another lbctl watch writes this "
                                 "history")
    assert sorted(p.name for p in history.iterdir()) == [".lbctl-watch.lock"]


def test_the_lock_is_released_when_the_watcher_ends(runner: CliRunner, tmp_path: Path) -> None:
    """Run after run in one process (a test runner, a supervisor restarting it in-process): the
    lock of the run that ended does not refuse the next."""
    history = tmp_path / "h"
    for _ in range(2):
        res = runner.invoke(app, _watch(history))
        assert res.exit_code == 1, res.output  # nothing listens: no capture, not locked
        assert "no capture succeeded" in res.stderr
    held = _hold(history / ".lbctl-watch.lock")
    assert held is not None
    os.close(held)


def test_the_lock_file_is_not_followed_through_a_link(runner: CliRunner, tmp_path: Path) -> None:
    history = tmp_path / "h"
    history.mkdir()
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep\n")
    (history / ".lbctl-watch.lock").symlink_to(victim)
    res = runner.invoke(app, _watch(history))
    assert res.exit_code == 1 and res.stderr.count("\n") == 1, res.output
    assert "is a symbolic link" in res.stderr
    assert victim.read_bytes() == b"keep\n"


def _appender(name: str, k: int, gz: bool) -> None:
    for i in range(60):
        rec = json.dumps({"w": k, "i": i, "pad": "x" * (i * 37 % 3000)}).encode() + b"\n"
        append_record(name, gzip_member(rec) if gz else rec, gz=gz, error=ConfigError,
                      complete=is_json_line)


@pytest.mark.parametrize("gz", [False, True], ids=["jsonl", "jsonl.gz"])
def test_concurrent_appends_keep_every_record_whole(tmp_path: Path, gz: bool) -> None:
    name = str(tmp_path / ("h.jsonl.gz" if gz else "h.jsonl"))
    ctx = get_context("fork")
    procs = [ctx.Process(target=_appender, args=(name, k, gz)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * 4
    data = Path(name).read_bytes()
    lines = (gzip.decompress(data) if gz else data).splitlines()
    records = {(r["w"], r["i"]) for r in map(json.loads, lines)}
    assert len(lines) == len(records) == 240
