"""``monitor-brokers``' start-up (:func:`lbctl.monitor.live.prepare`): what a first refresh did
on first use — the HTTP layer's imports (httpx and its company), the body reader, the
extensible reader, the usage arithmetic, the client's event loop — is done before it, so the
first refresh of a fresh process imports nothing; nothing is sent at start-up; the CLI's loop
prepares before its first refresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx  # noqa: TID253  # a mock admin URL behind the client's transport API
import pytest

import lbctl.cli.monitor_loop as loop
import lbctl.monitor.live as live
from lbctl.admin.client import AdminClient
from lbctl.cli.common import TABLE, Shown
from lbctl.sources.live import LiveSource

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT), PULSAR_CLIENT_CONF="")

SERVER = """
import sys
from lbctl.sandbox import hot_cluster
c = hot_cluster(3, tokens=None)
print(c.admin_url, flush=True)
sys.stdin.read()
c.stop()
"""

#: a fresh process as the CLI runs one: its imports, the session, (start-up,) the first refresh;
#: prints the lbctl and httpx modules the first refresh imported
FIRST = """
import json, sys
import lbctl.cli.app, lbctl.cli.monitor_loop as loop
from lbctl.admin.client import AdminClient
from lbctl.monitor.brokers import BrokerMonitor
from lbctl.sources.live import LiveSource
with AdminClient(sys.argv[1]) as client:
    src = LiveSource(client, topics=False, namespaces=False)
    if sys.argv[2] == "1":
        loop.prepare(src)
    before = set(sys.modules)
    ref = loop.live_refresh(src, BrokerMonitor(), [85.0])
    assert [r.state for r in ref.rows] == ["ok"] * 3, ref.rows
print(json.dumps(sorted(m for m in set(sys.modules) - before
                        if m.split(".")[0] in ("lbctl", "httpx", "httpcore"))))
"""


@pytest.fixture(scope="module")
def admin_url() -> Iterator[str]:
    with subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env=ENV) as server:
        try:
            assert server.stdout is not None
            yield server.stdout.readline().strip()
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(30)


def _first_refresh_imports(url: str, prepared: bool) -> list[str]:
    out = subprocess.run([sys.executable, "-c", FIRST, url, "1" if prepared else "0"],
                         capture_output=True, text=True, env=ENV, timeout=120)
    assert out.returncode == 0, out.stderr
    got: list[str] = json.loads(out.stdout)
    return got


def test_a_prepared_first_refresh_imports_nothing(admin_url: str) -> None:
    assert _first_refresh_imports(admin_url, prepared=True) == []


def test_unprepared_the_first_refresh_imports_the_http_layer(admin_url: str) -> None:
    """(What start-up takes off the first refresh: the check above can fail.)"""
    got = _first_refresh_imports(admin_url, prepared=False)
    assert "lbctl.admin.transport" in got and "httpx" in got


def test_start_up_sends_nothing() -> None:
    sent: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        sent.append(str(req.url))
        return httpx.Response(503)

    with AdminClient("http://127.0.0.1:9", transport=httpx.MockTransport(handler),
                     retries=0) as client:
        live.prepare(LiveSource(client, topics=False, namespaces=False))
        assert client.sent == [] and sent == []
        assert client._runner is not None  # the event loop, made at start-up


@pytest.mark.parametrize("count", [1, 2])
def test_the_cli_loop_prepares_before_its_first_refresh(monkeypatch: pytest.MonkeyPatch,
                                                        count: int) -> None:
    calls: list[str] = []
    src = object()

    class Chosen:
        def session(self) -> Any:
            import contextlib

            return contextlib.nullcontext(src)

    def refresh(s: Any, mon: Any, threshold: Any) -> Any:
        assert s is src
        calls.append("refresh")
        return "a refresh"

    monkeypatch.setattr(loop, "prepare", lambda s: calls.append("prepare" if s is src else "?"))
    monkeypatch.setattr(loop, "live_refresh", refresh)
    monkeypatch.setattr(loop, "show", lambda *a, **k: None)
    shown = Shown(output=TABLE, no_color=True)
    loop.run_live(Chosen(), interval=0.1, refreshes=count, sort=None,  # type: ignore[arg-type]
                  summary=True, shown=shown)
    assert calls == ["prepare"] + ["refresh"] * count
