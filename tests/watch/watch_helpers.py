"""A watcher beside the living sandbox, on the sandbox's stepped clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lbctl.admin.client import AdminClient
from lbctl.loadmanager.select import Options
from lbctl.sandbox import TestCluster
from lbctl.sandbox.clock import SteppedClock
from lbctl.sandbox.life import Life
from lbctl.sources.cluster import on_client
from lbctl.watch.loop import Watcher, WatchOptions
from tests.sandbox.life_helpers import run_for


class Beside:
    """The sandbox, its clock, an admin client and a watcher; :meth:`minutes` runs both."""

    def __init__(self, c: TestCluster, life: Life, clock: SteppedClock, history: Path,
                 **opts: Any):
        self.c, self.life, self.clock = c, life, clock
        self.client = AdminClient(c.admin_url)
        self.history = history
        # (what the sandbox serves: refreshed as Pulsar's endpoint, or as written)
        opts.setdefault("refreshed", not c.reports_as_written)
        self.opts = WatchOptions(history, **opts)
        self.events: list[Any] = []
        self.watcher = self.new_watcher()

    def new_watcher(self, **kw: Any) -> Watcher:
        """A watcher on the same history (what a restart after kill -9 builds)."""
        return Watcher(on_client(self.client), self.opts, Options(), clock=self.clock.now,
                       on_events=lambda ev, _st: self.events.extend(ev), **kw)

    def minutes(self, n: int) -> list[Any]:
        """``n`` cluster minutes, a capture at the end of each; the events they raised."""
        start = len(self.events)
        for _ in range(n):
            run_for(self.life, self.clock, 60)
            self.watcher.tick()
        return self.events[start:]

    def raised(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.event == "raised" and e.anomaly.kind == kind]

    def resolved(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.event == "resolved" and e.anomaly.kind == kind]

    def close(self) -> None:
        self.client.close()
        self.c.stop()


def until_divergence(w: Beside, limit: int) -> None:
    """Minutes, one at a time, until a leader-divergence is raised (at most ``limit``)."""
    for _ in range(limit):
        w.minutes(1)
        if w.raised("leader-divergence"):
            return
