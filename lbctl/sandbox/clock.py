"""The sandbox's clock: cluster time, which may run faster than the wall's, or be stepped by hand.

Everything that carries a time in the living sandbox reads it here — the brokers' load-report
writes (``lastUpdate``), the leader's cycles and grace periods, the clients' reconnections, the
``Date`` of each answer and the timestamps of ``/metrics`` — so ``--speed 60`` makes an hour of
cluster time pass in a wall minute consistently for all of them.

* :class:`RunningClock`: starts at the wall's time and runs ``speed`` times as fast
  (``lbctl sandbox --speed N``).
* :class:`SteppedClock`: moves only when told (:meth:`SteppedClock.set`), for tests that want every
  report, cycle and lookup to happen at a time they chose.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Cluster time, epoch seconds."""

    @property
    def speed(self) -> float:
        """Cluster seconds per wall second (0: the clock only moves when stepped)."""


class RunningClock:
    """Cluster time that started at the wall's time and runs ``speed`` times as fast."""

    def __init__(self, speed: float = 1.0, start: float | None = None):
        self._speed = float(speed)
        self._start = time.time() if start is None else start
        self._t0 = time.monotonic()

    @property
    def speed(self) -> float:
        return self._speed

    def now(self) -> float:
        return self._start + (time.monotonic() - self._t0) * self._speed


class SteppedClock:
    """Cluster time that moves only when :meth:`set` moves it (tests)."""

    def __init__(self, start: float = 1_767_225_600.0):  # 2026-01-01T00:00:00Z
        self._now = start

    @property
    def speed(self) -> float:
        return 0.0

    def now(self) -> float:
        return self._now

    def set(self, at: float) -> None:
        self._now = at
