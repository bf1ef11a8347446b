"""The watcher and apply read one cluster clock from one admin client (:mod:`lbctl.admin.clock`):
beside ``lbctl sandbox --speed 60`` both run an hour a minute, and beside a real cluster whose
``Date`` is ten minutes ahead the watcher's captures carry the offset while apply's windows stay
wall-long (speed one: no sandbox header). Before, the watcher kept its own clock from the leader
answer's ``Date`` and the client another from the sandbox header."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lbctl.admin.client import SANDBOX_CLOCK_HEADER, AdminClient
from lbctl.apply.runner import in_cluster_time
from lbctl.loadmanager.select import Options
from lbctl.sandbox import TestCluster, hot_cluster
from lbctl.sandbox.clock import RunningClock
from lbctl.sources.cluster import on_client
from lbctl.watch.loop import Watcher, WatchOptions

pytestmark = pytest.mark.live
httpx = pytest.importorskip("httpx")
_Transport: Any = httpx.AsyncBaseTransport


@pytest.fixture
def cluster() -> Iterator[TestCluster]:
    c = hot_cluster(2)
    yield c
    c.stop()


class _NoSandboxHeader(_Transport):  # type: ignore[misc]
    """The sandbox as a real cluster answers: every header but the sandbox's own clock."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: Any) -> Any:
        r = await self.inner.handle_async_request(request)
        headers = [(k, v) for k, v in r.headers.raw
                   if k.decode("latin-1").lower() != SANDBOX_CLOCK_HEADER.lower()]
        return httpx.Response(r.status_code, headers=headers, stream=r.stream,
                              extensions=r.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _watcher(client: AdminClient, history: Path) -> Watcher:
    return Watcher(on_client(client), WatchOptions(history, doctor=False), Options())


def test_watch_and_apply_agree_beside_a_sandbox_at_sixty(cluster: TestCluster,
                                                         tmp_path: Path) -> None:
    cluster.clock = RunningClock(60, start=time.time() + 3600)
    with AdminClient(cluster.admin_url, backoff=0) as client:
        w = _watcher(client, tmp_path / "h")
        before = cluster.clock.now()
        at = w.tick().state.captured_at / 1000
        after = cluster.clock.now()
        assert w.cluster_clock is client.clock  # one clock
        assert client.cluster_speed() == 60 and client.clock.rate() == 60
        # the capture is on the cluster's clock (an hour ahead, an hour a minute)
        # (this host's clock would be an hour behind)
        assert before - 60 <= at <= after + 60, (before, at, after, time.time())
        now = time.time()
        assert in_cluster_time(client, now, {"a": now - 10.0}) == {"a": pytest.approx(now - 600)}
        # both times come from the same reading: the watcher's journal window and apply's
        assert w.cluster_clock.local(w.cluster_clock.at(now)) == pytest.approx(now)


def test_a_skewed_real_cluster_moves_watch_not_apply(cluster: TestCluster,
                                                     tmp_path: Path) -> None:
    skew = 600.0
    cluster.clock = RunningClock(1, start=time.time() + skew)
    with AdminClient(cluster.admin_url, backoff=0, transport=_NoSandboxHeader()) as client:
        w = _watcher(client, tmp_path / "h")
        before = time.time()
        at = w.tick().state.captured_at / 1000
        after = time.time()
        assert w.cluster_clock is client.clock and client.clock.sandbox is None
        assert before + skew - 2 <= at <= after + skew + 2  # watch: the offset
        assert client.cluster_speed() == 1  # apply: wall-long windows, as before
        now = time.time()
        times = {"a": now - 10.0}
        assert in_cluster_time(client, now, times) == times
