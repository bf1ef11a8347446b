"""Spark jobs on a hostile disk, and SIGTERM during a Spark job (hostile18).

* **A job refused by the disk** (a full disk, a read-only one, permission denied): the failure
  crosses Py4J as "An error occurred while calling o760.parquet", and lbctl said ``Spark job
  failed: … o760.parquet`` with a pointer to Spark's log; the system's reason sits at the root
  of the Java cause chain. It now says ``cannot write OUT: No space left on device``, one line,
  exit 1, and nothing is published.
* **SIGTERM during a Spark job** (``fleet ingest`` in a session the caller keeps, the tests'
  session): Py4J turns the signal's exception into a failed call, as it does Ctrl-C's. It is now
  noted, as Ctrl-C is, and ends as lbctl's root says SIGTERM ends (``terminated (SIGTERM)``,
  exit 130); nothing is published, the manifest is absent, and a rerun ingests everything.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.fleet.session import job_error, refusal
from tests.fleet.independent import CORPUS
from tests.tmpfs import refusing_tmpfs

TABLES = ("snapshots", "brokers", "bundles", "topics")


class _Java:
    """A stand-in for Py4J's ``JavaObject`` of a Java exception: ``toString`` and
    ``getCause``, as ``Py4JJavaError.java_exception`` exposes them."""

    def __init__(self, text: str, cause: _Java | None = None) -> None:
        self.text, self.cause = text, cause

    def toString(self) -> str:
        return self.text

    def getCause(self) -> _Java | None:
        return self.cause


class _Py4JJavaError(Exception):
    def __init__(self, java: _Java) -> None:
        super().__init__("An error occurred while calling o760.parquet.")
        self.java_exception = java


def _chain(root: str) -> _Py4JJavaError:
    return _Py4JJavaError(_Java(
        "org.apache.spark.SparkException: [TASK_WRITE_FAILED] Task failed while writing rows to "
        "file:/data/fleet/_staging/r1/snapshots. SQLSTATE: 58030",
        _Java("org.apache.hadoop.fs.FSError: java.io.IOException: " + root,
              _Java("java.io.IOException: " + root))))


@pytest.mark.parametrize("reason", ["No space left on device", "Read-only file system",
                                    "Permission denied", "Disk quota exceeded"])
def test_the_root_cause_of_a_failed_write_is_the_one_line(reason: str) -> None:
    e = _chain(reason)
    assert refusal(e) == (reason, "/data/fleet/_staging/r1/snapshots")
    assert str(job_error(e, writing="/data/fleet")) == f"cannot write /data/fleet: {reason}"
    verb = "read or write" if reason == "Permission denied" else "write"  # no path written
    assert str(job_error(e)) == f"cannot {verb} /data/fleet/_staging/r1/snapshots: {reason}"


def test_the_root_cause_is_found_in_the_text_py4j_gives() -> None:
    """No Java object at hand (the gateway gone): the ``Caused by:`` lines of the message."""
    text = ("An error occurred while calling o12.json.\n: java.io.FileNotFoundException: "
            "/ro/x/part-0 (Read-only file system)\n\tat java.io.FileOutputStream.open0(Native)\n")
    assert refusal(RuntimeError(text)) == ("Read-only file system", "/ro/x/part-0")
    chained = RuntimeError("outer")
    chained.__cause__ = OSError("Caused by: java.io.IOException: No space left on device")
    assert refusal(chained) == ("No space left on device", None)
    assert str(job_error(chained)) == "cannot write a file Spark needs: No space left on device"


def test_a_failure_that_is_no_refusal_still_names_spark_s_log() -> None:
    e = _Py4JJavaError(_Java("org.apache.spark.SparkException: Job aborted",
                             _Java("java.lang.OutOfMemoryError: Java heap space")))
    assert refusal(e) is None
    assert str(job_error(e)).startswith("Spark job failed: An error occurred while calling o760")


def test_a_java_chain_that_fails_or_never_ends_is_bounded() -> None:
    class Broken(_Java):
        def getCause(self) -> Any:
            raise RuntimeError("gateway closed")

    loop = _Java("java.io.IOException: x")
    loop.cause = loop
    assert refusal(_Py4JJavaError(loop)) is None
    assert refusal(_Py4JJavaError(Broken("java.io.IOException: No space left on device"))) == (
        "No space left on device", None)


# -- on a real disk, with the tests' Spark session ----------------------------------------------


def _errors(stderr: str) -> list[str]:
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    return [ln for ln in stderr.splitlines() if ln.startswith("lbctl: error:")]


@pytest.mark.spark
def test_ingest_into_a_full_disk_says_no_space(spark: Any, tmp_path: Path) -> None:
    with refusing_tmpfs(tmp_path / "mnt", "full") as mnt:
        out = mnt / "out"
        res = CliRunner().invoke(app, ["fleet", "ingest", str(CORPUS), "--out", str(out), "-q"])
        assert res.exit_code == 1, res.stderr
        assert _errors(res.stderr) == [f"lbctl: error: cannot write {out}: No space left on device"]
        assert not (out / "_lbctl_fleet.json").exists()
        assert not any((out / t).exists() for t in TABLES)


@pytest.mark.spark
def test_sigterm_during_a_spark_job_is_exit_130_and_publishes_nothing(
        spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    stop = threading.Event()
    sent: list[int] = []

    def kill_during_a_job() -> None:  # from another thread: its own Py4J connection
        tracker = spark.sparkContext.statusTracker()
        while not stop.wait(0.02):
            if tracker.getActiveJobsIds():
                os.kill(os.getpid(), signal.SIGTERM)
                sent.append(1)
                return

    watcher = threading.Thread(target=kill_during_a_job, daemon=True)
    watcher.start()
    try:
        res = CliRunner().invoke(app, ["fleet", "ingest", str(CORPUS), "--out", str(out), "-q"])
    finally:
        stop.set()
        watcher.join(30)
    assert sent, "no Spark job was seen running"
    assert res.exit_code == 130, (res.exit_code, res.stderr)
    assert _errors(res.stderr) == ["lbctl: error: terminated (SIGTERM)"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert not (out / "_lbctl_fleet.json").exists()  # whole or absent: absent
    assert not any((out / t).exists() for t in TABLES)
    deadline = time.monotonic() + 120  # its jobs were cancelled (asynchronously: wait)
    while spark.sparkContext.statusTracker().getActiveJobsIds():
        assert time.monotonic() < deadline, "the interrupted ingest's jobs are still running"
        time.sleep(0.1)

    again = CliRunner().invoke(app, ["fleet", "ingest", str(CORPUS), "--out", str(out), "-q",
                                     "-o", "json"])
    # the corpus holds one malformed file on purpose: every run says it skipped it (exit 1)
    assert again.exit_code == 1, again.stderr
    assert [e for e in _errors(again.stderr) if "skipped 1 file(s)" not in e] == []
    assert (out / "_lbctl_fleet.json").is_file()
    assert all((out / t).is_dir() for t in ("snapshots", "brokers", "bundles"))
    assert not (out / "_staging").exists()


def test_sigterm_that_py4j_turns_into_a_failed_call_is_still_sigterm(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Py4J may catch the signal's exception and fail the call instead (as it did Ctrl-C's,
    "Answer from Java side is empty"): noted, it ends as SIGTERM does, not as a failed job. No
    Spark is started (the session is never asked for)."""
    from lbctl.cli.fleet import SparkArgs, _spark
    from lbctl.cli.root import _sigterm_raises
    from lbctl.errors import Terminated

    monkeypatch.setattr("lbctl.cli.fleet._require_extras", lambda: None)
    with _sigterm_raises(), pytest.raises(Terminated), _spark(SparkArgs(quiet=True)):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises here
        except KeyboardInterrupt:
            raise RuntimeError("Answer from Java side is empty") from None
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


# -- fleet report's output on hostile targets -----------------------------------------------------


@pytest.mark.spark
def test_report_into_a_fifo_is_refused_not_a_hang(ingested: Any, tmp_path: Path) -> None:
    """A FIFO where a report file goes: pandas opened it by name and waited for a reader
    forever. (A reader is started after 60 s so that a regression fails, not hangs.)"""
    data, _ = ingested
    out = tmp_path / "report"
    out.mkdir()
    fifo = out / "clusters.csv"
    os.mkfifo(fifo)
    got: list[bytes] = []
    done = threading.Event()

    def reader() -> None:
        if not done.wait(60):
            with open(fifo, "rb") as f:
                got.append(f.read())

    threading.Thread(target=reader, daemon=True).start()
    try:
        res = CliRunner().invoke(app, ["fleet", "report", str(data), "--out", str(out), "-q",
                                       "--no-plot"])
    finally:
        done.set()
    assert not got, "the report waited for a reader of the FIFO"
    assert res.exit_code == 1, res.stderr
    assert _errors(res.stderr) == [f"lbctl: error: {fifo}: is a FIFO (named pipe) "
                                   "(expected a file of the report to write)"]
    assert sorted(os.listdir(out)) == ["clusters.csv"]  # nothing written before the refusal

    os.unlink(fifo)
    os.mkfifo(tmp_path / "not-a-dir")
    res = CliRunner().invoke(app, ["fleet", "report", str(data), "--out",
                                   str(tmp_path / "not-a-dir"), "-q", "--no-plot"])
    assert res.exit_code == 1, res.stderr
    assert len(_errors(res.stderr)) == 1 and "not a directory" in res.stderr


@pytest.mark.spark
def test_report_into_a_full_disk_leaves_no_half_file(ingested: Any, tmp_path: Path) -> None:
    data, _ = ingested
    with refusing_tmpfs(tmp_path / "mnt", "full") as mnt:
        out = mnt / "report"
        res = CliRunner().invoke(app, ["fleet", "report", str(data), "--out", str(out), "-q",
                                       "--no-plot"])
        assert res.exit_code == 1, res.stderr
        errors = _errors(res.stderr)
        assert len(errors) == 1 and errors[0].endswith(": No space left on device"), errors
        assert str(out) in errors[0]
        # no temporary file and no half-written table: each file is whole or absent
        assert all(os.path.getsize(out / n) > 0 for n in os.listdir(out)), os.listdir(out)
        assert not [n for n in os.listdir(out) if not n.endswith((".csv", ".parquet"))]
