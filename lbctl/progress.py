"""Progress on stderr — drawn by Rich, only when stderr is a terminal, erased when the work ends.

The one progress facility of lbctl (the CLI's commands and :mod:`lbctl.fleet.progress` draw
through it; it imports nothing of lbctl, so any layer may): phases (``lbctl: reading the snapshots…`` while a block
runs), bars (``lbctl: simulating ━━━━━━━━━╸────── 40/120``, for work that counts its steps: a
live read's brokers, a simulation's cycles, Prometheus' steps) and Spark's task counts
(:mod:`lbctl.fleet.progress`) are lines of one Rich display. It is transient: a line goes when
its work ends, the display when no line is left, so the terminal keeps only the result. When
stderr is a file or a pipe nothing is drawn at all — and Rich (which Typer brings) is not even
imported: start-up matters.

Sources and engines take a plain callback, ``progress(step, done, total)``
(:data:`lbctl.sources.base.Progress`): :meth:`Progress.step` is one.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

BAR = 24


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal (a closed or odd stream is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Display:
    """The Rich display on one stream, started at its first line and stopped after its last."""

    lock = threading.Lock()
    current: _Display | None = None

    def __init__(self, stream: Any):
        from rich.console import Console
        from rich.progress import BarColumn, TextColumn
        from rich.progress import Progress as RichProgress

        self.stream = stream
        console = Console(file=stream, force_terminal=True, highlight=False, soft_wrap=False)
        self.rich = RichProgress(TextColumn("lbctl: {task.description}"),
                                 BarColumn(bar_width=BAR), TextColumn("{task.fields[counts]}"),
                                 console=console, transient=True, redirect_stdout=False,
                                 redirect_stderr=stream is sys.stderr)
        self.lines = 0

    @classmethod
    def on(cls, stream: Any) -> _Display:
        with cls.lock:  # one display at a time (Rich draws one live display per console)
            current = cls.current
            if current is None or (current.stream is not stream and current.lines == 0):
                cls.current = current = _Display(stream)
            return current

    def add(self, text: str, total: float | None, counts: str = "", done: int = 0) -> Any:
        with self.lock:
            if self.lines == 0:
                self.rich.start()
            self.lines += 1
            return self.rich.add_task(text, total=total, completed=done, counts=counts)

    def update(self, task: Any, **fields: Any) -> None:
        self.rich.update(task, **fields)

    def remove(self, task: Any) -> None:
        with self.lock:
            self.rich.remove_task(task)
            self.lines -= 1
            if self.lines == 0:
                self.rich.stop()  # transient: the lines are erased


class Progress:
    """Phases and bars on ``stream`` (stderr), drawn only when it is a terminal."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None):
        self.stream: Any = stream or sys.stderr
        self.enabled = is_terminal(self.stream) if enabled is None else enabled
        self._bars: dict[str, Any] = {}

    def _display(self) -> _Display:
        return _Display.on(self.stream)

    @contextmanager
    def phase(self, what: str) -> Iterator[Line | None]:
        """``lbctl: what…`` while the block runs (erased after); the line, to show counts on."""
        if not self.enabled:
            yield None
            return
        display = self._display()
        task = display.add(f"{what}…", None)
        try:
            yield Line(display, task)
        finally:
            display.remove(task)

    def step(self, what: str, done: int, total: int) -> None:
        """``lbctl: what [bar] done/total``; its line goes once ``done`` reaches ``total``."""
        if not self.enabled:
            return
        display = self._display()
        task = self._bars.get(what)
        if task is None:
            if done >= total:
                return  # finished before it was ever shown
            task = self._bars[what] = display.add(what, total, f"{done}/{total}", done)
        display.update(task, completed=done, total=total, counts=f"{done}/{total}")
        if done >= total:
            del self._bars[what]
            display.remove(task)

    def close(self) -> None:
        """Erase the bars left unfinished (a read that failed half-way)."""
        for what in list(self._bars):
            self._display().remove(self._bars.pop(what))


class Line:
    """One phase's line: counts shown after its bar (Spark's ``tasks done/total``)."""

    def __init__(self, display: _Display, task: Any):
        self._display = display
        self._task = task

    def counts(self, done: int, total: int, text: str) -> None:
        self._display.update(self._task, completed=done, total=total or None, counts=text)


@contextmanager
def shown(stream: TextIO | None = None) -> Iterator[Progress]:
    """A :class:`Progress` whose unfinished bars are erased at the end of the block."""
    p = Progress(stream)
    try:
        yield p
    finally:
        p.close()
