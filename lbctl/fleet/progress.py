"""Progress on the terminal while Spark works: one line per phase, live task counts on a TTY.

Spark's own console progress bar is switched off (it is drawn by the JVM on the stderr lbctl sends
to a log file). Instead each phase prints ``lbctl: <phase> …`` on stderr, and when stderr is a
terminal a background thread polls ``SparkContext.statusTracker()`` twice a second and redraws
``tasks done/total`` of the running stages on that line. Off a terminal (CI, pipes) only the phase
lines are written, once each, with the elapsed time at the end.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class Progress:
    def __init__(self, spark: Any = None, stream: TextIO | None = None, *, enabled: bool = True):
        self.spark = spark
        self.stream = stream or sys.stderr
        self.enabled = enabled
        try:
            self.tty = bool(self.stream.isatty())
        except (AttributeError, ValueError):
            self.tty = False

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
        if self.tty and self.spark is not None:
            self.stream.write(f"lbctl: {text} …")
            self.stream.flush()
            thread = threading.Thread(target=self._poll, args=(text, stop), daemon=True)
            thread.start()
        try:
            yield
        finally:
            stop.set()
            if thread is not None:
                thread.join()
            took = time.monotonic() - start
            end = "\r\x1b[K" if self.tty and self.spark is not None else ""
            self.stream.write(f"{end}lbctl: {text} ({took:.1f} s)\n")
            self.stream.flush()

    def _poll(self, text: str, stop: threading.Event) -> None:
        try:
            tracker = self.spark.sparkContext.statusTracker()
        except Exception:
            return
        while not stop.wait(0.5):
            try:
                done = total = 0
                for sid in tracker.getActiveStageIds():
                    info = tracker.getStageInfo(sid)
                    if info is not None:
                        done += info.numCompletedTasks
                        total += info.numTasks
            except Exception:  # the context may be stopping; progress is best effort
                return
            if total:
                self.stream.write(f"\r\x1b[Klbctl: {text} … tasks {done}/{total}")
                self.stream.flush()
