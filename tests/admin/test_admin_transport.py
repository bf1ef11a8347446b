"""The admin client's transport (lbctl/admin/transport.py): HTTP/1.1 framing against scripted
servers through a plain ``httpx.AsyncClient``, and the admin client's rules (credentials,
redirects, size cap, timeouts, TLS) over real sockets of the loopback test cluster."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import os
import socket
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx  # noqa: TID253  # a test of an httpx transport
import pytest

from lbctl.admin.auth import make_auth
from lbctl.admin.client import LOAD_REPORT, RUNTIME_CONFIG, AdminClient, call, unload_call
from lbctl.admin.errors import AdminError, ConnectionFailed, HttpError, RequestTimeout
from lbctl.admin.transport import Http1Transport, _Conn, _is_ipv4, _tcp, async_client, origin_key
from lbctl.sandbox import Fault, TestCluster, hot_cluster
from tests.loopback_http import LoopbackHTTPServer
from tests.tls_helpers import self_signed

TOKEN = "eyJhbGciOiJIUzI1NiJ9.c3VwZXJ1c2Vy.TRANSPORT-SECRET-SIGNATURE"
PATH = "/admin/v2/broker-stats/load-report"

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
Gets = Callable[[httpx.AsyncClient, str], Awaitable[Any]]


class _Quiet(http.server.BaseHTTPRequestHandler):
    """A scripted HTTP/1.1 handler that logs nothing; ``answer`` sends a JSON body."""

    protocol_version = "HTTP/1.1"

    def answer(self, body: bytes, **headers: str) -> None:
        self.send_response(200)
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _running(handler: type[http.server.BaseHTTPRequestHandler],
             tls: ssl.SSLContext | None = None) -> Iterator[str]:
    """A threaded server on a loopback port for the block; yields its base URL."""
    server = LoopbackHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def _head(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


def _serve(script: Script, gets: Gets, **client: Any) -> Any:
    """Run ``gets(client, base URL)`` against a server answering each connection with ``script``;
    the client is an ``httpx.AsyncClient`` on :class:`Http1Transport`."""

    async def main() -> Any:
        async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                await script(r, w)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                w.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with httpx.AsyncClient(transport=Http1Transport(), **client) as http:
            try:
                return await gets(http, f"http://127.0.0.1:{port}")
            finally:
                server.close()

    return asyncio.run(main())


async def _get(http: httpx.AsyncClient, base: str) -> httpx.Response:
    return await http.get(base + PATH, headers={"Accept": "application/json"})


def test_content_length_answers_reuse_one_connection() -> None:
    connections: list[int] = []
    heads: list[bytes] = []

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        connections.append(1)
        for i in range(2):
            heads.append(await _head(r))
            body = b'{"n":%d}' % i
            w.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            await w.drain()

    async def gets(http: httpx.AsyncClient, base: str) -> list[httpx.Response]:
        return [await _get(http, base), await _get(http, base)]

    a, b = _serve(script, gets)
    assert (a.status_code, a.content, b.content) == (200, b'{"n":0}', b'{"n":1}')
    assert a.headers["content-type"] == "application/json" and a.http_version == "HTTP/1.1"
    assert len(connections) == 1
    assert heads[0].startswith(b"GET /admin/v2/broker-stats/load-report HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"\r\nAccept: application/json\r\n" in heads[0]


def test_a_body_after_its_head_is_streamed_and_one_with_it_is_handed_over() -> None:
    """A body that came with the head is handed over as bytes (the connection idle at once); one
    that arrives later is read as it comes: the same bytes, one connection for both."""
    connections: list[int] = []

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        connections.append(1)
        await _head(r)
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"n\":0}")
        await w.drain()
        await _head(r)
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"n")
        await w.drain()
        await asyncio.sleep(0.05)
        w.write(b"\":1}")
        await w.drain()

    async def gets(http: httpx.AsyncClient, base: str) -> list[tuple[bytes, bool]]:
        wire, out = Http1Transport(), []
        for _ in range(2):  # straight on the transport: what it hands over, before the client
            r = await wire.handle_async_request(httpx.Request("GET", base + PATH))
            out.append((await r.aread(), isinstance(r.stream, httpx.ByteStream)))
        await wire.aclose()
        return out

    with_head, after_head = _serve(script, gets)
    assert with_head == (b'{"n":0}', True) and after_head == (b'{"n":1}', False)
    assert len(connections) == 1


def test_no_cookie_is_kept_or_sent_back() -> None:
    """pulsar-admin keeps no cookies (AsyncHttpConnector: ``setCookieStore(null)``): a broker's
    ``Set-Cookie`` is not sent back, by the admin client nor the Prometheus client's wire."""
    heads: list[bytes] = []

    class H(_Quiet):
        def do_GET(self) -> None:
            heads.append(bytes(self.headers))
            self.answer(b'{"ok":1}', Set_Cookie="session=SECRET; Path=/")

    with _running(H) as url:
        with AdminClient(url) as a:
            assert [a.gather([call(LOAD_REPORT)]) for _ in range(2)] == [[{"ok": 1}]] * 2

        async def twice() -> httpx.Cookies:
            async with async_client(None, verify=True, timeout=5.0) as http:
                for _ in range(2):
                    (await http.get(url + PATH)).raise_for_status()
                return http.cookies

        assert len(asyncio.run(twice())) == 0
    assert len(heads) == 4 and not any(b"cookie" in h.lower() for h in heads)


def test_connections_opened_ahead_carry_the_requests() -> None:
    """``open_ahead``: one connection to each origin, started at once; each then carries its
    origin's request (no second connection), which waits for it; a refused port is left to its
    request, which meets its own error."""
    events: list[tuple[str, int]] = []

    async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        port = w.get_extra_info("sockname")[1]
        events.append(("connect", port))
        try:
            await _head(r)
            events.append(("request", port))
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            await w.drain()
            await r.read()
        finally:
            w.close()

    async def main() -> tuple[list[int], list[bytes], BaseException]:
        servers = [await asyncio.start_server(handle, "127.0.0.1", 0) for _ in range(8)]
        ports = [srv.sockets[0].getsockname()[1] for srv in servers]
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            refused = closed.getsockname()[1]
        urls = [httpx.URL(f"http://127.0.0.1:{p}{PATH}") for p in [*ports, refused]]
        wire = Http1Transport()
        wire.open_ahead([origin_key(u) for u in urls], timeout=5.0)
        bodies = []
        for u in urls[:-1]:
            r = await wire.handle_async_request(httpx.Request("GET", u))
            bodies.append(await r.aread())
        with pytest.raises(httpx.ConnectError) as refused_error:
            await wire.handle_async_request(httpx.Request("GET", urls[-1]))
        await wire.aclose()
        for srv in servers:
            srv.close()
        return ports, bodies, refused_error.value

    ports, bodies, error = asyncio.run(main())
    assert bodies == [b"{}"] * 8 and isinstance(error.__cause__, ConnectionRefusedError)
    for p in ports:  # one connection each, made before its request
        assert [e for e, q in events if q == p] == ["connect", "request"]


def test_a_request_goes_as_soon_as_its_own_connection_is_up() -> None:
    """A fan-out's requests do not wait for its slowest connection: with one broker's
    connection hanging (its listen queue full: the handshake never completes), another
    broker's request is answered while it still hangs, and the hanging one then meets its own
    connect timeout."""

    async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while await _head(r):
                w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        w.close()

    async def main() -> tuple[bytes, bool, BaseException]:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        fast = ("http", "127.0.0.1", server.sockets[0].getsockname()[1])
        with socket.socket() as full, socket.socket() as queued:
            full.bind(("127.0.0.1", 0))
            full.listen(0)
            queued.connect(full.getsockname())  # the one connection its queue holds
            slow = ("http", "127.0.0.1", full.getsockname()[1])
            wire = Http1Transport()
            wire.open_ahead([slow, fast], 5.0)
            get = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
            hanging = asyncio.ensure_future(wire.send_message("GET", slow, get, 5.0, 0.5))
            answer = await wire.send_message("GET", fast, get, 5.0, 5.0)
            body = await answer.aread() if isinstance(answer, httpx.Response) else b""
            still = not hanging.done()
            with pytest.raises(httpx.ConnectTimeout) as late:
                await hanging
            await wire.aclose()
            await asyncio.sleep(0.1)  # the server's side of the connection ends
        server.close()
        await server.wait_closed()
        return body, still, late.value

    body, still_hanging, late = asyncio.run(main())
    assert body == b"{}" and still_hanging
    assert "connection not made within 0.5 s" in str(late)


def test_connections_started_ahead_and_not_taken_are_closed() -> None:
    """What a fan-out started ahead and no request took is ended by ``settle``: a socket still
    connecting or connected (an IPv4 origin) is closed, a task's connection (a host name) kept
    idle for the next request; a request meanwhile took its own, and the next fan-out starts
    none to an origin with an idle connection."""
    ended: list[int] = []
    connects: list[int] = []

    async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        port = w.get_extra_info("sockname")[1]
        connects.append(port)
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while await _head(r):
                w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        ended.append(port)
        w.close()

    async def main() -> tuple[list[int], bytes, bytes]:
        servers = [await asyncio.start_server(handle, "127.0.0.1", 0) for _ in range(3)]
        ports = [srv.sockets[0].getsockname()[1] for srv in servers]
        wire = Http1Transport()
        named = ("http", "localhost", ports[2])
        wire.open_ahead([*(("http", "127.0.0.1", p) for p in ports), named], 5.0)
        r = await wire.handle_async_request(httpx.Request("GET", f"http://127.0.0.1:{ports[0]}/"))
        first = await r.aread()
        await asyncio.sleep(0.1)  # the others connected meanwhile
        await wire.settle()
        await asyncio.sleep(0.1)
        assert [o for o, c in wire._idle.items() if c] == [("http", "127.0.0.1", ports[0]), named]
        wire.open_ahead([named], 5.0)  # idle already: nothing started
        assert not wire._ahead
        r = await wire.handle_async_request(httpx.Request("GET", f"http://localhost:{ports[2]}/"))
        second = await r.aread()
        await wire.aclose()
        await asyncio.sleep(0.1)
        for srv in servers:
            srv.close()
        return ports, first, second

    ports, first, second = asyncio.run(main())
    assert first == second == b"{}"
    assert sorted(connects) == sorted([*ports, ports[2]])  # one each, and the name's own
    assert sorted(ended[:2]) == sorted(ports[1:])  # closed by settle: the untaken sockets
    assert sorted(ended) == sorted(connects)  # and the rest by aclose


def test_a_fan_out_never_opens_a_connection_to_a_refused_broker() -> None:
    """Connections are opened ahead only to trusted origins: brokers outside
    ``--broker-host-allow`` are never contacted (their listening sockets have no connection
    waiting to be accepted)."""
    listening = []
    for _ in range(10):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        s.setblocking(False)
        listening.append(s)
    try:
        ids = [f"127.0.0.1:{s.getsockname()[1]}" for s in listening]
        with AdminClient("http://" + ids[0], broker_host_allow=["10.*"], retries=0) as a:
            got = a.gather([call(LOAD_REPORT, base=a.broker_url(b)) for b in ids[1:]])
        assert all(isinstance(r, HttpError) and "--broker-host-allow" in str(r) for r in got)
        for s in listening[1:]:
            with pytest.raises(BlockingIOError):
                s.accept()
    finally:
        for s in listening:
            s.close()


def test_a_put_sends_its_body_and_length() -> None:
    seen: list[bytes] = []

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        head = await _head(r)
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        seen.append(head + await r.readexactly(length))
        w.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        await w.drain()

    async def put(http: httpx.AsyncClient, base: str) -> int:
        return (await http.put(base + "/x", content=b"[1,2]")).status_code

    assert _serve(script, put) == 204
    assert seen[0].startswith(b"PUT /x HTTP/1.1\r\n") and seen[0].endswith(b"\r\n\r\n[1,2]")


def test_chunked_with_trailers_and_close_delimited_bodies() -> None:
    async def chunked(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _head(r)
        w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"4;ext=1\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\nX-Trailer: t\r\n\r\n")
        await w.drain()

    async def http10(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _head(r)
        w.write(b"HTTP/1.0 200 OK\r\n\r\n{\"b\":")
        await w.drain()
        await asyncio.sleep(0.02)
        w.write(b"2}")
        await w.drain()
        w.close()

    assert _serve(chunked, _get).content == b'{"a":1}'
    assert _serve(http10, _get).content == b'{"b":2}'


@pytest.mark.parametrize("answer", [b"SSH-2.0-OpenSSH\r\n\r\n", b"HTTP/1.1 2xx OK\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
                                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                                    b""])
def test_garbage_and_early_close_are_protocol_errors(answer: bytes) -> None:
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _head(r)
        w.write(answer)
        await w.drain()
        w.close()

    with pytest.raises(httpx.RemoteProtocolError):
        _serve(script, _get)


def test_a_stale_keep_alive_connection_is_replaced_for_a_get_only() -> None:
    served: list[bytes] = []

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        served.append((await _head(r)).split(b" ")[0])
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        await w.drain()
        await asyncio.sleep(0.2)  # the client sends its next request here, then the server closes

    async def gets(http: httpx.AsyncClient, base: str) -> list[Any]:
        first = await _get(http, base)
        await asyncio.sleep(0.05)
        second = await _get(http, base)  # the idle connection still looks open: reused
        return [first.content, second.content]

    # the second GET was read by nobody and its connection closed: sent again on a new one
    assert _serve(script, gets) == [b"{}", b"{}"]
    assert served == [b"GET", b"GET"]

    served.clear()

    async def puts(http: httpx.AsyncClient, base: str) -> Any:
        await _get(http, base)
        await asyncio.sleep(0.05)
        return await http.put(base + "/x", content=b"")

    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        _serve(script, puts)  # a PUT is never sent twice
    assert served == [b"GET"]


def test_an_unread_redirect_body_never_reaches_the_next_request() -> None:
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _head(r)
        w.write(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /elsewhere\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n")
        await w.drain()
        await asyncio.sleep(0.05)  # the body comes after the client has moved on
        w.write(b"5\r\nmoved\r\n0\r\n\r\n")
        await w.drain()
        await _head(r)  # a request on this connection would read the body above as its answer
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno")
        await w.drain()

    async def gets(http: httpx.AsyncClient, base: str) -> list[httpx.Response]:
        out = []
        for _ in range(2):
            async with http.stream("GET", base + PATH) as r:
                out.append(r)  # closed unread, as the admin client closes a redirect
        return out

    redirect, second = _serve(script, gets)
    assert (redirect.status_code, redirect.headers["location"]) == (307, "/elsewhere")
    assert second.status_code == 307  # a new connection, answered afresh


def test_connection_failures_and_timeouts_are_httpx_errors() -> None:
    async def refused(http: httpx.AsyncClient, base: str) -> Any:
        return await http.get("http://127.0.0.1:1/")

    with pytest.raises(httpx.ConnectError) as e:
        _serve(lambda r, w: asyncio.sleep(0), refused)
    assert isinstance(e.value.__cause__, OSError)

    async def silent(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _head(r)
        await asyncio.sleep(1)

    with pytest.raises(httpx.ReadTimeout, match="no bytes within 0.1 s"):
        _serve(silent, _get, timeout=httpx.Timeout(5, read=0.1))


def test_a_connection_to_an_address_is_create_connections_without_its_cost() -> None:
    """``_tcp`` (an IPv4 address on a selector loop: its own non-blocking connect) carries
    bytes like ``loop.create_connection``'s connection, fails with its very error (type, errno,
    words), leaves no socket open when cancelled mid-way, and hands a host name to it."""
    got: list[bytes] = []

    async def echo(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        got.append(await r.read())
        w.close()

    def fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    async def main() -> tuple[BaseException, BaseException, int, int]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, asyncio.SelectorEventLoop) and _is_ipv4("127.0.0.1")
        server = await asyncio.start_server(echo, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        raw, conn = await _tcp(loop, "127.0.0.1", port)
        raw.write(b"ping")
        raw.write_eof()
        while not conn.closed:
            await conn.more(5.0)
        named, _ = await _tcp(loop, "localhost", port)  # a name: create_connection resolves it
        named.close()
        server.close()
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            refused = closed.getsockname()[1]
        errors = []
        for connect in (_tcp(loop, "127.0.0.1", refused),
                        loop.create_connection(_Conn, "127.0.0.1", refused)):
            try:
                await connect
            except OSError as e:
                errors.append(e)
        with socket.socket() as backlog:  # connections complete in the kernel, never accepted
            backlog.bind(("127.0.0.1", 0))
            backlog.listen(64)
            await asyncio.sleep(0.05)
            before = fds()
            for steps in range(20):  # cancelled at once, or a few steps in: the socket is closed
                task = asyncio.ensure_future(_tcp(loop, *backlog.getsockname()))
                for _ in range(steps % 4):
                    await asyncio.sleep(0)
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    raw, _ = await task
                    raw.close()  # made before the cancel arrived
            await asyncio.sleep(0.05)
            after = fds()
        return errors[0], errors[1], before, after

    ours, theirs, before, after = asyncio.run(main())
    assert sorted(got) == [b"", b"ping"]
    assert type(ours) is type(theirs) is ConnectionRefusedError
    assert (ours.errno, str(ours)) == (theirs.errno, str(theirs))
    assert after == before


@pytest.mark.parametrize("headers", [{"X-Token": "a\r\nInjected: yes"}, {"X-Token": "nul\x00"}])
def test_a_header_h11_would_refuse_is_not_sent(headers: dict[str, str]) -> None:
    seen: list[bytes] = []

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        seen.append(await _head(r))

    async def get(http: httpx.AsyncClient, base: str) -> Any:
        return await http.get(base + PATH, headers=headers)

    with pytest.raises(httpx.LocalProtocolError, match="Illegal header value"):
        _serve(script, get)
    assert seen == []


# ---- the admin client on its transport, on the loopback test cluster --------------------------
@pytest.fixture
def cluster() -> Iterator[TestCluster]:
    c = hot_cluster(3, tokens={TOKEN: "admin"})
    yield c
    c.stop()


def _client(c: TestCluster, **kw: Any) -> AdminClient:
    return AdminClient(c.admin_url, auth=make_auth("token", "token:" + TOKEN), **kw)


def test_load_reports_carry_the_token_on_kept_connections(cluster: TestCluster) -> None:
    with _client(cluster) as a:
        brokers = a.json(call(RUNTIME_CONFIG)) and sorted(cluster.brokers)
        reports = a.gather([call(LOAD_REPORT, base=a.broker_url(b)) for b in brokers])
        again = a.gather([call(LOAD_REPORT, base=a.broker_url(b)) for b in brokers])
        with httpx.Client() as h:
            expected = [h.get(a.broker_url(b) + LOAD_REPORT.template,
                              headers={"Authorization": f"Bearer {TOKEN}"}).json() for b in brokers]
    assert [r["cpu"] for r in reports] == [r["cpu"] for r in again] == [r["cpu"] for r in expected]
    assert [sorted(r) for r in reports] == [sorted(r) for r in expected]
    logged = [r for r in cluster.log if r.path.endswith("load-report")]
    assert logged and all(r.authorization == f"Bearer {TOKEN}" for r in logged)


def test_faults_map_to_one_line_messages(cluster: TestCluster) -> None:
    b0, b1, b2 = sorted(cluster.brokers)
    cluster.faults.append(Fault(r"load-report", kind="drop", broker=b0))
    cluster.faults.append(Fault(r"load-report", kind="hang", broker=b1, seconds=5))
    cluster.faults.append(Fault(r"load-report", status=503, reason="Broker is not ready", broker=b2))
    with _client(cluster, retries=0, timeout=0.5) as a:
        r0, r1, r2 = a.gather([call(LOAD_REPORT, base=a.broker_url(b)) for b in (b0, b1, b2)])
    assert isinstance(r0, ConnectionFailed) and "connection dropped by the server" in str(r0)
    assert isinstance(r1, RequestTimeout) and "no answer within 0.5 s" in str(r1)
    assert isinstance(r2, AdminError) and r2.status == 503 and "Broker is not ready" in str(r2)
    assert all("\n" not in str(r) and TOKEN not in str(r) for r in (r0, r1, r2))


def test_a_dropped_mutation_is_not_resent(cluster: TestCluster) -> None:
    cluster.faults.append(Fault(r"/unload$", kind="drop", method="PUT"))
    with _client(cluster) as a, pytest.raises(ConnectionFailed, match="may have been applied"):
        a.request(unload_call("public/default"))
    assert sum(1 for r in cluster.log if r.method == "PUT") <= 1


def test_a_load_report_past_the_size_cap_is_refused(cluster: TestCluster) -> None:
    b = sorted(cluster.brokers)[0]
    with _client(cluster, retries=0, max_response_bytes=64) as a:
        (r,) = a.gather([call(LOAD_REPORT, base=a.broker_url(b))])
    assert isinstance(r, HttpError) and "the response is larger than" in str(r)


def test_connections_are_kept_across_refreshes() -> None:
    connections: list[int] = []

    class H(_Quiet):
        def setup(self) -> None:
            connections.append(1)
            super().setup()

        def do_GET(self) -> None:
            self.answer(b'{"ok":1}')

    with _running(H) as url, AdminClient(url) as a:
        for _ in range(3):  # three refreshes, each its own run on the client's loop
            assert a.gather([call(LOAD_REPORT)]) == [{"ok": 1}]
    assert len(connections) == 1


class _Foreign:
    """A plain http server on another port that records what it is sent."""

    def __init__(self) -> None:
        seen = self.seen = []  # type: list[str | None]

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.headers.get("Authorization"))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_redirect_to_a_foreign_origin_is_not_followed(cluster: TestCluster) -> None:
    foreign = _Foreign()
    try:
        b = sorted(cluster.brokers)[0]
        cluster.faults.append(Fault(r"load-report", kind="redirect", status=307, broker=b,
                                    location=foreign.url + LOAD_REPORT.template))
        with _client(cluster, retries=0) as a:
            (r,) = a.gather([call(LOAD_REPORT, base=a.broker_url(b))])
    finally:
        foreign.stop()
    assert isinstance(r, HttpError) and "not followed" in str(r)
    assert foreign.seen == []  # not contacted at all, so no token either
    assert TOKEN not in str(r)


def test_tls_is_verified(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path, "broker")
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    seen: list[str | None] = []

    class H(_Quiet):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            self.answer(b'{"ok":1}')

    with _running(H, server_ctx) as url:
        trusting = ssl.create_default_context(cafile=str(cert))
        with AdminClient(url, auth=make_auth("token", "token:" + TOKEN), verify=trusting) as a:
            assert a.json(call(LOAD_REPORT)) == {"ok": 1}
        with (AdminClient(url, auth=make_auth("token", "token:" + TOKEN), retries=0) as a,
              pytest.raises(ConnectionFailed, match="TLS certificate verification failed")):
            a.json(call(LOAD_REPORT))
        with AdminClient(url, verify=False) as a:  # --tls-allow-insecure without a credential
            assert a.json(call(LOAD_REPORT)) == {"ok": 1}
    assert seen == [f"Bearer {TOKEN}", None]  # the unverified server never saw the token
