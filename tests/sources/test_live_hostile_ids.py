"""A broker list naming ids that are not ``host:port`` (a hostile or broken admin URL): they are
never contacted, and never silently dropped — ``lbctl brokers`` and ``monitor-brokers`` list
each with why (hostile-server sweep, round 3)."""

from __future__ import annotations

import json

import httpx  # noqa: TID253  # a mock admin URL behind the client's transport API

from lbctl.admin.client import AdminClient
from lbctl.monitor.brokers import BrokerMonitor
from lbctl.monitor.live import live_refresh
from lbctl.sources.live import LiveSource
from lbctl.sources.live_brokers import read_brokers

GOOD = "127.0.0.1:8080"
BAD = "evil\x1b[31m\nfake:1"


def _transport(listed: list[str], contacted: list[str]) -> httpx.MockTransport:
    def handler(req: httpx.Request) -> httpx.Response:
        contacted.append(f"{req.url.host}:{req.url.port}{req.url.path}")
        path = req.url.path
        if path == "/admin/v2/brokers/configuration/runtime":
            return httpx.Response(200, json={"clusterName": "c"})
        if path == "/admin/v2/brokers":
            return httpx.Response(200, json=listed)
        if path == "/admin/v2/brokers/leaderBroker":
            return httpx.Response(200, json={"brokerId": GOOD})
        if path == "/admin/v2/brokers/version":
            return httpx.Response(200, text="4.0.0")
        return httpx.Response(404, content=json.dumps({"reason": "nope"}).encode())

    return httpx.MockTransport(handler)


def test_brokers_lists_an_id_it_will_not_contact() -> None:
    contacted: list[str] = []
    with AdminClient(f"http://{GOOD}", transport=_transport([GOOD, BAD], contacted),
                     retries=0) as client:
        out = read_brokers(client)
    assert [b.broker for b in out.brokers] == [GOOD, BAD]
    bad = out.brokers[1]
    assert not bad.answered and bad.error and "not host:port" in bad.error
    assert all(c.startswith("127.0.0.1:8080/") for c in contacted)


def test_monitor_keeps_an_id_it_will_not_contact_on_every_refresh() -> None:
    contacted: list[str] = []
    listed = [GOOD, BAD]
    with AdminClient(f"http://{GOOD}", transport=_transport(listed, contacted),
                     retries=0) as client:
        src = LiveSource(client, topics=False, namespaces=False)
        mon = BrokerMonitor()
        first = live_refresh(src, mon, [85.0])
        second = live_refresh(src, mon, [85.0])  # the known brokers are asked with the list
        listed.remove(BAD)
        third = live_refresh(src, mon, [85.0])
    for r in (first, second):
        row = {x.broker: x for x in r.rows}[BAD]
        assert row.state in ("unreachable", "stale") and "not host:port" in (row.error or "")
    assert [x.broker for x in third.rows] == [GOOD]  # no longer listed: gone
    assert all(c.startswith("127.0.0.1:8080/") for c in contacted)
