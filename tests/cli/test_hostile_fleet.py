"""``lbctl fleet`` under Ctrl-C, and an ingest that left input out (hostile13), without Spark.

* Ctrl-C while the JVM started (fd 2 is then Spark's log) ended the run with exit 130 and no
  word: the "interrupted" line went into the log. The wait for the start was a ``Thread.join``,
  which an interrupt leaves believing a running thread stopped (CPython's bpo-45274 fix).
* Ctrl-C during a call to the JVM is swallowed by Py4J, and the call fails: lbctl said "Spark job
  failed: Answer from Java side is empty", exit 1, under Py4J's logged traceback.
* An ingest that skipped files or lines exited 0.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

import pytest

pytest.importorskip("pyspark")


def _ctrl_c_in(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_while_spark_starts_waits_for_the_start_before_going_on() -> None:
    from lbctl.fleet.session import start_while

    ended: list[float] = []

    def start() -> str:  # a JVM start: seconds, with fd 2 pointed at Spark's log
        time.sleep(1.0)
        ended.append(time.monotonic())
        return "session"

    timer = _ctrl_c_in(0.2)
    try:
        with pytest.raises(KeyboardInterrupt):
            start_while(start, lambda: None)
        caught = time.monotonic()
    finally:
        timer.cancel()
    assert ended and ended[0] <= caught  # the start ended (fd 2 given back) before the interrupt


def test_ctrl_c_swallowed_by_py4j_is_interrupted_not_a_failed_job(tmp_path) -> None:
    from lbctl.cli.fleet import SparkArgs, _spark
    from lbctl.errors import ExitStatus, Interrupted

    def py4j_call() -> None:  # GatewayClient.send_command: logs the interrupt, the call fails
        with contextlib.suppress(KeyboardInterrupt):
            time.sleep(5)
        raise RuntimeError("Answer from Java side is empty")

    timer = _ctrl_c_in(0.2)
    try:
        with pytest.raises(Interrupted) as caught, _spark(SparkArgs(quiet=True)):
            py4j_call()
    finally:
        timer.cancel()
    assert caught.value.exit_code == ExitStatus.INTERRUPTED and str(caught.value) == "interrupted"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_a_failure_without_ctrl_c_is_left_as_it_is() -> None:
    from lbctl.cli.fleet import SparkArgs, _spark

    with pytest.raises(RuntimeError, match="Answer from Java side is empty"), \
            _spark(SparkArgs(quiet=True)):
        raise RuntimeError("Answer from Java side is empty")


def test_py4j_s_logged_interrupt_is_not_printed() -> None:
    """Py4J logs it on the root logger, with a traceback; the root logger drops that record."""
    import logging

    from lbctl.fleet.session import quiet_warnings

    quiet_warnings()
    root = logging.getLogger()
    record = root.makeRecord("root", logging.ERROR, __file__, 1,
                             "KeyboardInterrupt while sending command.", (), None)
    assert not root.filter(record)
    other = root.makeRecord("root", logging.ERROR, __file__, 1, "something else", (), None)
    assert root.filter(other)


@pytest.mark.parametrize("entries, message", [
    ([], None),
    ([{"file": "a.json", "reason": "r"}], "skipped 1 file(s) that could not be read"),
    ([{"file": "a.jsonl", "reason": "r", "line": 2}, {"file": "a.jsonl", "reason": "r", "line": 5}],
     "skipped 2 line(s) that could not be read"),
    ([{"file": "a.json", "reason": "r"}, {"file": "b.jsonl", "reason": "r", "line": 1}],
     "skipped 1 file(s) and 1 line(s) that could not be read"),
])
def test_an_ingest_that_skipped_input_fails_saying_how_much(entries, message) -> None:
    from lbctl.cli.fleet import skipped_input
    from lbctl.errors import ExitStatus

    error = skipped_input(entries)
    if message is None:
        assert error is None
        return
    assert error is not None and error.exit_code == ExitStatus.ERROR
    assert str(error) == (f"{message} (each is named in the summary); everything else was "
                          "ingested")
