"""A live refresh of ``monitor-brokers`` runs with the cyclic collector paused (its collections
fell on the first refresh's critical path: :func:`lbctl.monitor.live.live_refresh`) and gives it
back enabled, after a good refresh and after a failed one."""

from __future__ import annotations

import gc
import json
from typing import Any

import httpx  # noqa: TID253  # a mock admin URL behind the client's transport API
import pytest

import lbctl.monitor.live as live
from lbctl.admin.client import AdminClient
from lbctl.admin.errors import AdminError
from lbctl.monitor.brokers import BrokerMonitor
from lbctl.sources.live import LiveSource

BROKER = "127.0.0.1:8080"


def _transport(seen: list[bool], *, down: bool = False) -> httpx.MockTransport:
    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(gc.isenabled())
        if down:
            return httpx.Response(503, content=b"down")
        if req.url.path == "/admin/v2/brokers/configuration/runtime":
            return httpx.Response(200, json={"clusterName": "c"})
        if req.url.path == "/admin/v2/brokers":
            return httpx.Response(200, json=[BROKER])
        return httpx.Response(404, content=json.dumps({"reason": "nope"}).encode())

    return httpx.MockTransport(handler)


def test_a_refresh_runs_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    parse = live.parse_reports

    def spy_parse(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return parse(*args)

    monkeypatch.setattr(live, "parse_reports", spy_parse)
    assert gc.isenabled()
    with AdminClient(f"http://{BROKER}", transport=_transport(seen), retries=0) as client:
        ref = live.live_refresh(LiveSource(client, topics=False, namespaces=False),
                                BrokerMonitor(), [85.0])
    assert [r.broker for r in ref.rows] == [BROKER]
    assert len(seen) >= 4 and not any(seen)  # discovery, the load report, the parsing
    assert gc.isenabled()


def test_the_collector_is_given_back_when_the_admin_url_fails() -> None:
    seen: list[bool] = []
    with (AdminClient(f"http://{BROKER}", transport=_transport(seen, down=True),
                      retries=0) as client, pytest.raises(AdminError)):
        live.live_refresh(LiveSource(client, topics=False, namespaces=False),
                          BrokerMonitor(), [85.0])
    assert seen and not any(seen)
    assert gc.isenabled()
