"""SIGINT and SIGTERM during a run: finish the action in flight, journal it, stop.

While a run sends (:attr:`GracefulStop.armed`), the first signal only sets :attr:`GracefulStop.event`:
the request in flight is answered, verified and journaled, and the run stops before the next one
(partial, exit 13). A second signal interrupts at once (``KeyboardInterrupt``: "may have been
applied", exit 130). Before anything is sent — at the confirmation prompt — a signal interrupts at
once, as everywhere else. Handlers are installed only in the main thread and restored after.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType


class GracefulStop:
    def __init__(self, warn: Callable[[str], None]):
        self.event = threading.Event()
        self.armed = False
        self.warn = warn

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if not self.armed or self.event.is_set():
            raise KeyboardInterrupt
        self.event.set()
        name = signal.Signals(signum).name
        self.warn(f"{name}: finishing the action in flight, then stopping (send it again to "
                  "stop at once)")


@contextmanager
def stop_on_signals(warn: Callable[[str], None]) -> Iterator[GracefulStop]:
    stop = GracefulStop(warn)
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    old = {s: signal.signal(s, stop.handle) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for s, h in old.items():
            signal.signal(s, h)
