"""Progress on the terminal while Spark works: one line per phase, live task counts on a TTY.

Spark's own console progress bar is switched off (it is drawn by the JVM on the stderr lbctl sends
to a log file). Instead each phase ends with ``lbctl: <phase> (<elapsed> s)`` on stderr, so a wait
is never silent: when stderr is a terminal, while the phase runs, a line of lbctl's one progress
display (:mod:`lbctl.progress`, transient) shows it with the seconds so far and the running
stages' ``tasks done/total``, polled from ``SparkContext.statusTracker()`` twice a second by a
background thread. Off a terminal (CI, pipes, a log) the phase is announced when it starts
(``lbctl: <phase>…``) and again with its time when it ends. Everything goes to stderr: stdout
holds the result alone (``-o json`` stays parseable).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from lbctl.progress import Line
from lbctl.progress import Progress as Display


class Progress:
    def __init__(self, spark: Any = None, stream: TextIO | None = None, *, enabled: bool = True):
        self.spark = spark
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.display = Display(self.stream)
        self.tty = self.display.enabled

    def note(self, text: str) -> None:
        if self.enabled:
            self.stream.write(f"lbctl: {text}\n")
            self.stream.flush()

    @contextmanager
    def phase(self, text: str) -> Iterator[None]:
        """Announce a phase; on a terminal, show live task counts until it ends."""
        if not self.enabled:
            yield
            return
        start = time.monotonic()
        stop = threading.Event()
        thread = None
        if not self.tty:  # no live line to show the wait: say it starts
            self.stream.write(f"lbctl: {text}…\n")
            self.stream.flush()
        try:
            with self.display.phase(text) as line:
                if line is not None:
                    thread = threading.Thread(target=self._poll, args=(line, stop, start),
                                              daemon=True)
                    thread.start()
                try:
                    yield
                finally:
                    stop.set()
                    if thread is not None:
                        thread.join()
        finally:
            took = time.monotonic() - start
            self.stream.write(f"lbctl: {text} ({took:.1f} s)\n")
            self.stream.flush()

    def _poll(self, line: Line, stop: threading.Event, start: float) -> None:
        """The phase's seconds so far and, once Spark runs stages, their task counts."""
        tracker = None
        if self.spark is not None:
            try:
                tracker = self.spark.sparkContext.statusTracker()
            except Exception:  # not started or stopping: the seconds alone
                tracker = None
        while not stop.wait(0.5):
            done = total = 0
            if tracker is not None:
                try:
                    for sid in tracker.getActiveStageIds():
                        info = tracker.getStageInfo(sid)
                        if info is not None:
                            done += info.numCompletedTasks
                            total += info.numTasks
                except Exception:  # the context may be stopping; progress is best effort
                    tracker = None
            took = f"{time.monotonic() - start:.0f} s"
            line.counts(done, total, f"tasks {done}/{total}, {took}" if total else took)
