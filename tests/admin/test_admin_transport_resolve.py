"""A fan-out's host names are resolved together before its connections are dialled
(``Http1Transport.open_ahead`` → ``_resolve_ahead``; issue 30: a first refresh of brokers named
by host spent a third more CPU than one of IPv4 addresses, in a resolution job per name)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import httpx  # noqa: TID253  # a test of an httpx transport
import pytest

from lbctl.admin.transport import RESOLVE_JOBS, Http1Transport, _Conn

GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
_real_getaddrinfo = socket.getaddrinfo


async def _answer(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
        while await r.readuntil(b"\r\n\r\n"):
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
    w.close()


class Spy:
    """Counts the resolver's calls (by name), the loop's own resolutions, executor jobs and
    ``create_connection`` calls; ``fake`` answers for some names instead of the resolver."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch,
                 fake: dict[str, Any] | None = None) -> None:
        self.names: list[str] = []
        self.loop_resolutions = 0
        self.jobs = 0
        self.create_connection = 0
        fake = fake or {}

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            self.names.append(host)
            if host in fake:
                if isinstance(fake[host], OSError):
                    raise fake[host]
                return [(*entry[:4], (entry[4][0], port, *entry[4][2:])) for entry in fake[host]]
            return _real_getaddrinfo(host, port, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        loop_cls = asyncio.SelectorEventLoop
        real_resolve, real_job = loop_cls.getaddrinfo, loop_cls.run_in_executor
        real_cc = loop_cls.create_connection

        async def loop_getaddrinfo(loop: Any, *args: Any, **kwargs: Any) -> Any:
            self.loop_resolutions += 1
            return await real_resolve(loop, *args, **kwargs)

        def run_in_executor(loop: Any, *args: Any) -> Any:
            self.jobs += 1
            return real_job(loop, *args)

        async def create_connection(loop: Any, *args: Any, **kwargs: Any) -> Any:
            if "sock" not in kwargs:
                self.create_connection += 1
            return await real_cc(loop, *args, **kwargs)

        monkeypatch.setattr(loop_cls, "getaddrinfo", loop_getaddrinfo)
        monkeypatch.setattr(loop_cls, "run_in_executor", run_in_executor)
        monkeypatch.setattr(loop_cls, "create_connection", create_connection)


def test_a_fan_outs_names_are_resolved_in_a_few_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    """20 brokers named by host: each name resolved once, in at most RESOLVE_JOBS executor jobs
    (not one each), each connection dialled to its one address (no create_connection), every
    request answered on it."""
    spy = Spy(monkeypatch)

    async def main() -> list[bytes]:
        servers = [await asyncio.start_server(_answer, "127.0.0.1", 0) for _ in range(20)]
        origins = [("http", "localhost", s.sockets[0].getsockname()[1]) for s in servers]
        wire = Http1Transport()
        wire.open_ahead(origins, 5.0)
        answers = await asyncio.gather(*(wire.send_message("GET", o, GET, 5.0, 5.0)
                                         for o in origins))
        bodies = [await a.aread() if isinstance(a, httpx.Response) else b"" for a in answers]
        await wire.aclose()
        await asyncio.sleep(0.1)  # the servers' side of the connections ends
        for s in servers:
            s.close()
            await s.wait_closed()
        return bodies

    assert asyncio.run(main()) == [b"{}"] * 20
    assert spy.names.count("localhost") == 20  # one per (name, port)
    assert spy.loop_resolutions == 0 and spy.create_connection == 0
    assert 1 <= spy.jobs <= RESOLVE_JOBS


def test_a_name_that_does_not_resolve_fails_as_create_connection_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch, {"nowhere.test": socket.gaierror(-2, "Name or service not known")})

    async def main() -> tuple[BaseException, BaseException, BaseException]:
        wire = Http1Transport()
        origin = ("http", "nowhere.test", 8080)
        wire.open_ahead([origin, ("http", "localhost", 9)], 5.0)
        with pytest.raises(httpx.ConnectError) as ahead:
            await wire.send_message("GET", origin, GET, 5.0, 5.0)
        with pytest.raises(httpx.ConnectError) as alone:  # no fan-out: resolved on its own
            await wire.send_message("GET", origin, GET, 5.0, 5.0)
        await wire.aclose()
        try:
            await asyncio.get_running_loop().create_connection(_Conn, "nowhere.test", 8080)
        except OSError as e:
            theirs: BaseException = e
        return ahead.value, alone.value, theirs

    ahead, alone, theirs = asyncio.run(main())
    for e in (ahead, alone):
        assert type(e.__cause__) is type(theirs) is socket.gaierror
        assert str(e.__cause__) == str(theirs) == str(e)
    assert spy.create_connection == 1  # (the reference call only)


def test_a_name_of_several_addresses_is_left_to_create_connection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two addresses (the first refused, the second answering): create_connection's own order of
    attempts makes the connection, as before."""
    v4 = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 0))
    spy = Spy(monkeypatch, {"twice.test": [(socket.AF_INET, socket.SOCK_STREAM, 6, "",
                                            ("127.0.0.2", 0)), v4]})

    async def main() -> bytes:
        server = await asyncio.start_server(_answer, "127.0.0.1", 0)
        origin = ("http", "twice.test", server.sockets[0].getsockname()[1])
        wire = Http1Transport()
        wire.open_ahead([origin, ("http", "localhost", 9)], 5.0)
        answer = await wire.send_message("GET", origin, GET, 5.0, 5.0)
        body = await answer.aread() if isinstance(answer, httpx.Response) else b""
        await wire.aclose()
        await asyncio.sleep(0.1)
        server.close()
        await server.wait_closed()
        return body

    assert asyncio.run(main()) == b"{}"
    assert spy.create_connection == 1
