"""The brokers of a live cluster as an operator lists them: version, load manager, leader, and
whether each one answered (``lbctl brokers``).

Read over REST only, concurrently:

* the active brokers (``GET /admin/v2/brokers``, as :meth:`LiveSource.discover` finds them) and
  the leader, ``GET /admin/v2/brokers/leaderBroker`` (``BrokersBase.getLeaderBroker``: a
  ``BrokerInfo`` with the leader's ``serviceUrl`` and, since Pulsar 3.0, its ``brokerId``). The
  leader is the broker whose load manager sheds and places — ``LeaderElectionService`` serves the
  modular and the extensible load manager alike;
* on every broker itself: ``GET /admin/v2/brokers/version`` (``PulsarVersion.getVersion()``,
  written as a bare string) and ``GET /admin/v2/brokers/configuration/runtime`` (its
  ``loadManagerClassName``; brokers may disagree during a migration).

A broker that fails either request is listed with ``answered = False`` and the error. The two
endpoints beyond :data:`lbctl.admin.client.ENDPOINTS` are declared here (:data:`ENDPOINTS`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from lbctl.admin.client import RUNTIME_CONFIG, AdminClient, Endpoint, call
from lbctl.admin.errors import AdminError
from lbctl.sources.live import LiveSource

LEADER_BROKER = Endpoint("GET", "/admin/v2/brokers/leaderBroker")
BROKER_VERSION = Endpoint("GET", "/admin/v2/brokers/version")
#: the requests of this module (the spec test checks them with the client's)
ENDPOINTS = (LEADER_BROKER, BROKER_VERSION)


@dataclass(frozen=True)
class BrokerInfo:
    """One active broker."""

    broker: str
    leader: bool
    answered: bool
    version: str | None = None
    load_manager: str | None = None  # the class name as configured
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"broker": self.broker, "leader": self.leader, "answered": self.answered,
                "version": self.version, "loadManager": self.load_manager, "error": self.error}


@dataclass(frozen=True)
class BrokerList:
    cluster: str
    leader: str | None  # broker id, None when the cluster has no leader right now
    leader_error: str | None
    brokers: tuple[BrokerInfo, ...]


def leader_id(info: Any) -> str | None:
    """The broker id in a ``BrokerInfo``: ``brokerId`` when served (3.0+), else the host:port of
    ``serviceUrl`` (the leader's web service URL, which is its broker id on older brokers)."""
    if not isinstance(info, dict):
        return None
    bid = info.get("brokerId")
    if isinstance(bid, str) and bid:
        return bid
    url = info.get("serviceUrl")
    if isinstance(url, str) and url:
        return url.split("://", 1)[-1].rstrip("/")
    return None


def _text(body: bytes) -> str:
    """A bare string body (``4.1.1``), or a JSON-quoted one (``"4.1.1"``)."""
    import json

    text = body.decode("utf-8", "replace").strip()
    if not text.startswith('"'):  # only a JSON string is unquoted (a deep array: no recursion)
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def read_brokers(client: AdminClient) -> BrokerList:
    """The cluster's active brokers with their version, load manager and leadership."""
    src = LiveSource(client, topics=False, namespaces=False)
    d = src.discover()

    async def one(bid: str) -> tuple[Any, Any]:
        base = client.broker_url(bid)

        async def get(c: Any, as_text: bool) -> Any:
            try:
                resp = await client.arequest(c)
            except AdminError as e:
                return e
            return _text(resp.body) if as_text else resp.json()

        return await asyncio.gather(get(call(BROKER_VERSION, base=base), True),
                                    get(call(RUNTIME_CONFIG, base=base), False))

    async def everything() -> tuple[Any, list[tuple[Any, Any]]]:
        async def leader() -> Any:
            try:
                return (await client.arequest(call(LEADER_BROKER))).json()
            except AdminError as e:
                return e

        results = await asyncio.gather(leader(), *(one(b) for b in d.brokers))
        return results[0], list(results[1:])

    lead, answers = client.run(everything())
    leader = None if isinstance(lead, AdminError) else leader_id(lead)
    rows = []
    for bid, (version, conf) in zip(d.brokers, answers, strict=True):
        err = next((e for e in (version, conf) if isinstance(e, AdminError)), None)
        lm = conf.get("loadManagerClassName") if isinstance(conf, dict) else None
        rows.append(BrokerInfo(
            broker=bid, leader=bid == leader, answered=err is None,
            version=version if isinstance(version, str) else None,
            load_manager=str(lm) if lm else None, error=str(err) if err else None))
    # a listed broker id that is not host:port is never contacted, but it is listed with why:
    # dropping it would show fewer active brokers than the cluster reports
    rows += [BrokerInfo(broker=bid, leader=bid == leader, answered=False, error=why)
             for bid, why in src.rejected.items()]
    return BrokerList(d.cluster, leader, str(lead) if isinstance(lead, AdminError) else None,
                      tuple(rows))
