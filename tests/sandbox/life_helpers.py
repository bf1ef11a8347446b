"""A living hot cluster on a stepped clock, and how to move its time: shared by the sandbox's
living tests."""

from __future__ import annotations

from lbctl.sandbox import TestCluster, hot_cluster
from lbctl.sandbox.clock import SteppedClock
from lbctl.sandbox.life import Life
from lbctl.truth.hosts import Host, mixed_fleet

#: a host without noise: its reports are exactly Host.usage of its traffic
QUIET = Host(noise=0.0)


def living_hot(n: int = 3, *, mixed: bool = False, reconnect: float = 1.0, **dynamic: str
               ) -> tuple[TestCluster, Life, SteppedClock]:
    """``hot_cluster(n)`` brought to life on a stepped clock (quiet uniform hosts unless
    ``mixed``; clients reconnect ``reconnect`` cluster seconds after an unload), with
    ``dynamic`` settings set first."""
    c = hot_cluster(n)
    if dynamic:
        c.set_dynamic(**dynamic)
    clock = SteppedClock()
    hosts = mixed_fleet(n, 1) if mixed else [QUIET] * n
    return c, Life.attach(c, clock, hosts=hosts, reconnect_delay=reconnect), clock


def run_for(life: Life, clock: SteppedClock, seconds: float) -> None:
    """Move the cluster's clock on by ``seconds``, running everything due on the way."""
    clock.set(clock.now() + seconds)
    life.advance()
