"""Progress of long offline work on stderr — only when stderr is a terminal, never when piped.

A 200,000-bundle ``recommend`` reads and decides for seconds, a long ``simulate`` for minutes:
one line, redrawn in place (``\\r``), says what is happening and how far it is; it is erased
when the work ends, so the terminal keeps only the result. Updates are throttled (10 per second).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

BAR = 24


class Progress:
    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None):
        from lbctl.cli.connection import is_terminal

        self.stream: Any = stream or sys.stderr
        self.enabled = is_terminal(self.stream) if enabled is None else enabled
        self._last = 0.0
        self._shown = False

    def _write(self, text: str) -> None:
        self.stream.write("\r" + text[:78].ljust(78))
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()
            self._shown = False

    @contextmanager
    def phase(self, what: str) -> Iterator[None]:
        """``what…`` while the block runs (erased after)."""
        if self.enabled:
            self._write(f"lbctl: {what}…")
        try:
            yield
        finally:
            if self.enabled:
                self.clear()

    def step(self, what: str, done: int, total: int) -> None:
        """``what [#####.....] done/total``, at most ten times a second (and at the end)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        filled = BAR if total <= 0 else int(BAR * done / total)
        self._write(f"lbctl: {what} [{'#' * filled}{'.' * (BAR - filled)}] {done}/{total}")
        if done >= total:
            self.clear()
