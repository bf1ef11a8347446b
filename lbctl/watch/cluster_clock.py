"""The cluster's clock, as its brokers' answers date them.

The watcher stamped each capture with its own clock, while everything it compares the capture
with is on the brokers' clocks: a load report's ``lastUpdate``
(``ModularLoadManagerImpl.writeBrokerDataOnZooKeeper``), the leader's shedding cycle every
``loadBalancerSheddingIntervalMinutes`` (``LoadSheddingTask``), its grace periods
(``recentlyUnloadedBundles``, ``UnloadScheduler``'s ``recentlyUnloadedBrokers``) and the
extensible brokers' ``BrokerLoadData.updatedAt``. A broker whose clock is off from the
watcher's host, or ``lbctl sandbox --speed 60`` (an hour a minute), put them apart: at speed 60
the watcher ran lbctl's cycle once in 60 captures (its captures a wall second apart, the
shedding interval a minute), and the extensible leader was accused of not shedding within two
"minutes" of the watcher's own clock (two hours of the leader's).

Every HTTP answer carries a ``Date`` (RFC 9110 §6.6.1; Jetty's, a Pulsar broker's, is the
broker's clock, to the second). The watcher asks who leads once a capture anyway; the answer's
``Date`` against the watcher's clock at the request gives the cluster's time: the offset, and
the rate when it is not one (a clock that runs as fast as the watcher's is taken to, within
:data:`SAME_RATE`, so a second's rounding does not make it wander). Within :data:`CLOSE_S` of
the watcher's clock, the watcher's clock is kept as it is — finer than a ``Date`` — and without
a ``Date`` (a proxy that drops it) too.
"""

from __future__ import annotations

from collections import deque
from email.utils import parsedate_to_datetime

#: a cluster whose Date is within this many seconds of the watcher's clock is on it
CLOSE_S = 2.0
#: rates this close to one are one (a Date is rounded down to the second)
SAME_RATE = 0.05
#: watcher-clock seconds the rate is measured over, at least (and samples kept)
SPAN_S = 5.0
KEEP = 64


def date_of(value: str | None) -> float | None:
    """An HTTP ``Date`` header's time, epoch seconds (None: absent or not a date)."""
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


class ClusterClock:
    """The cluster's time for a time on the watcher's clock, from the ``Date`` samples seen."""

    def __init__(self) -> None:
        self.samples: deque[tuple[float, float]] = deque(maxlen=KEEP)

    def observe(self, local: float, date: float | None) -> None:
        """One answer's ``Date`` (``date``), asked at ``local`` on the watcher's clock."""
        if date is not None:
            self.samples.append((local, date))

    def rate(self) -> float:
        """Cluster seconds per watcher second: one unless the samples span :data:`SPAN_S` and
        say otherwise by more than :data:`SAME_RATE`."""
        if len(self.samples) < 2:
            return 1.0
        (l0, d0), (l1, d1) = self.samples[0], self.samples[-1]
        if l1 - l0 < SPAN_S:
            return 1.0
        r = (d1 - d0) / (l1 - l0)
        return 1.0 if abs(r - 1.0) <= SAME_RATE or r <= 0 else r

    def at(self, local: float) -> float:
        """The cluster's time when the watcher's clock read ``local``."""
        if not self.samples:
            return local
        rate = self.rate()
        l1, d1 = self.samples[-1]
        # (a Date is the second it began: its middle is half a second on, at rate one)
        guess = d1 + (0.5 if rate == 1.0 else 0.0) + (local - l1) * rate
        if rate == 1.0 and abs(guess - local) <= CLOSE_S:
            return local
        return guess

    def local(self, cluster: float) -> float:
        """The watcher's clock when the cluster's read ``cluster`` (:meth:`at` undone)."""
        if not self.samples:
            return cluster
        rate = self.rate()
        l1, d1 = self.samples[-1]
        guess = l1 + (cluster - d1 - (0.5 if rate == 1.0 else 0.0)) / rate
        if rate == 1.0 and abs(guess - cluster) <= CLOSE_S:
            return cluster
        return guess
