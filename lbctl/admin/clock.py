"""The cluster's clock, one per admin client, fed by the answers the client gets.

Two readers need the cluster's time rather than this host's, and used to keep one each:

* ``lbctl watch`` stamps each capture and compares it with times on the brokers' clocks: a load
  report's ``lastUpdate`` (``ModularLoadManagerImpl.writeBrokerDataOnZooKeeper``), the leader's
  shedding cycle every ``loadBalancerSheddingIntervalMinutes`` (``LoadSheddingTask``), its grace
  periods (``recentlyUnloadedBundles``, ``UnloadScheduler``'s ``recentlyUnloadedBrokers``) and
  the extensible brokers' ``BrokerLoadData.updatedAt``. It asks :meth:`ClusterClock.at` and
  :meth:`ClusterClock.local`.
* ``lbctl apply``, drain, ``rebalance-after`` and propose measure their windows
  (``loadBalancerSheddingGracePeriodMinutes``, ``--max-age``, ``--pause-timeout``, drain's
  ``--timeout``, the executor's duplicate-request guard) in cluster seconds: they ask
  :meth:`ClusterClock.speed` (``AdminClient.cluster_speed``).

What feeds it:

* the ``Date`` of every answer from the admin URL's own origin (``AdminClient`` leaves out the
  per-broker requests' answers: brokers' clocks may disagree by seconds, and two clocks' samples
  would read as one running fast or slow) (RFC 9110 §6.6.1: the origin server's clock, to the
  second; a broker's
  ``WebService`` (apache/pulsar 02a8e4586ca8) builds its connectors on a default Jetty
  ``HttpConfiguration``, whose date header is on, so every admin answer carries the broker's
  clock). Against this host's clock at the
  request it gives the offset, and the rate when it is not one — measured over at least
  :data:`SPAN_S` of samples, a rate within :data:`SAME_RATE` of one being one (a second's
  rounding must not make it wander). Within :data:`CLOSE_S` of this host's clock the local clock
  is kept as it is, finer than a ``Date``; without any ``Date`` (a proxy that drops it) too.
* the ``X-Lbctl-Sandbox-Clock`` header (``now=<epoch s>; speed=<N>``), which only ``lbctl
  sandbox`` sets and which the client believes from loopback hosts only: it gives the time and
  the speed at once. Only this header changes :meth:`ClusterClock.speed`: a real cluster's
  windows are as long as they always were (speed one whatever its ``Date`` says), and before the
  first answer the speed is one, the stricter case for apply's safety (the longest windows).
  A stepped sandbox clock says ``speed=0``: its speed is one and its time is read from ``Date``.

The local clock is the clock's ``source`` (``time.time``; a watcher with its own clock — a test's
stepped one — gives its own, so that the samples and the times asked are on the same clock).
"""

from __future__ import annotations

import math
import re
import time
from collections import deque
from collections.abc import Callable
from email.utils import parsedate_to_datetime

#: a cluster whose Date is within this many seconds of the local clock is on it
CLOSE_S = 2.0
#: rates this close to one are one (a Date is rounded down to the second)
SAME_RATE = 0.05
#: local seconds the rate is measured over, at least
SPAN_S = 5.0
#: Date samples kept (one per distinct Date: they span at least as many cluster seconds)
KEEP = 64
_SPEED = re.compile(r"(?:^|;)\s*speed=([0-9.eE+]+)\s*(?:;|$)")
_NOW = re.compile(r"(?:^|;)\s*now=([0-9.eE+]+)\s*(?:;|$)")


def date_of(value: str | None) -> float | None:
    """An HTTP ``Date`` header's time, epoch seconds (None: absent or not a date)."""
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _number(pattern: re.Pattern[str], value: str) -> float | None:
    """A positive, finite ``name=<number>`` of the sandbox's header (None: absent or not one)."""
    m = pattern.search(value)
    try:
        x = float(m[1]) if m else math.nan
    except ValueError:
        return None
    return x if 0 < x < math.inf else None


class ClusterClock:
    """The cluster's time for a time on the local clock, and how fast it runs (module docstring)."""

    def __init__(self, source: Callable[[], float] = time.time) -> None:
        self.source = source
        #: (local, Date) of the answers seen, one per distinct Date
        self.samples: deque[tuple[float, float]] = deque(maxlen=KEEP)
        #: (local, header value) of the last sandbox clock header a loopback host answered with
        self.sandbox: tuple[float, str] | None = None
        self._sandbox_now: tuple[float, float, float] | None = None  # (local, now, speed)
        self._last_date: str | None = None

    # ---- fed by the admin client ---------------------------------------------------------------
    def heard(self, local: float, date: str | None, sandbox: str | None = None) -> None:
        """One answer, received about ``local`` on the local clock: its ``Date`` header's text
        and the sandbox's clock header (from a loopback host: the caller checks)."""
        if sandbox is not None:
            self.sandbox = (local, sandbox)
            now, speed = _number(_NOW, sandbox), _number(_SPEED, sandbox)
            self._sandbox_now = (local, now, speed) if now is not None and speed is not None \
                else None
        if date and date != self._last_date:  # (a repeated Date tells nothing new)
            self._last_date = date
            self.observe(local, date_of(date))

    def observe(self, local: float, date: float | None) -> None:
        """One answer's ``Date`` (``date``, epoch seconds), received at ``local``."""
        if date is not None:
            self.samples.append((local, date))

    # ---- read --------------------------------------------------------------------------------
    def speed(self) -> float:
        """Cluster seconds per local second for apply's windows: a loopback sandbox's ``speed``
        once it has answered, else one (a real cluster; an unreadable, non-positive or infinite
        value; no answer yet)."""
        if self.sandbox is None:
            return 1.0
        return _number(_SPEED, self.sandbox[1]) or 1.0

    def rate(self) -> float:
        """Cluster seconds per local second as the clock runs: the sandbox's speed, else one
        unless the ``Date`` samples span :data:`SPAN_S` and say otherwise by more than
        :data:`SAME_RATE`."""
        if self._sandbox_now is not None:
            return self._sandbox_now[2]
        if len(self.samples) < 2:
            return 1.0
        (l0, d0), (l1, d1) = self.samples[0], self.samples[-1]
        if l1 - l0 < SPAN_S:
            return 1.0
        r = (d1 - d0) / (l1 - l0)
        return 1.0 if abs(r - 1.0) <= SAME_RATE or r <= 0 else r

    def _anchor(self) -> tuple[float, float, float] | None:
        """(local, cluster, rate) of the latest sample: the sandbox's exact time, or a ``Date``
        (the second it began: its middle is half a second on, at rate one)."""
        if self._sandbox_now is not None:
            return self._sandbox_now
        if not self.samples:
            return None
        rate = self.rate()
        l1, d1 = self.samples[-1]
        return l1, d1 + (0.5 if rate == 1.0 else 0.0), rate

    def at(self, local: float) -> float:
        """The cluster's time when the local clock read ``local``."""
        anchor = self._anchor()
        if anchor is None:
            return local
        l1, c1, rate = anchor
        guess = c1 + (local - l1) * rate
        if rate == 1.0 and abs(guess - local) <= CLOSE_S:
            return local
        return guess

    def local(self, cluster: float) -> float:
        """The local clock when the cluster's read ``cluster`` (:meth:`at` undone)."""
        anchor = self._anchor()
        if anchor is None:
            return cluster
        l1, c1, rate = anchor
        guess = l1 + (cluster - c1) / rate
        if rate == 1.0 and abs(guess - cluster) <= CLOSE_S:
            return cluster
        return guess

    def now(self) -> float:
        """The cluster's time now."""
        return self.at(self.source())
