"""The light GET wire of the load reports (lbctl/admin/fastget.py): HTTP/1.1 framing against
scripted servers, and the admin client's policies (credentials, redirects, caps, timeouts, TLS)
over real sockets of the loopback test cluster."""

from __future__ import annotations

import asyncio
import http.server
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lbctl.admin import fastget
from lbctl.admin.auth import make_auth
from lbctl.admin.client import LOAD_REPORT, RUNTIME_CONFIG, AdminClient, call
from lbctl.admin.errors import AdminError, ConnectionFailed, HttpError, RequestTimeout
from lbctl.sandbox import Fault, TestCluster, hot_cluster
from tests.tls_helpers import self_signed

TOKEN = "eyJhbGciOiJIUzI1NiJ9.c3VwZXJ1c2Vy.FASTGET-SECRET-SIGNATURE"

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _head(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


def _serve(script: Script, gets: Callable[[fastget.FastGet, int], Awaitable[Any]]) -> Any:
    """Run ``gets(FastGet, port)`` against a server answering each connection with ``script``."""

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
        f = fastget.FastGet()
        try:
            return await gets(f, port)
        finally:
            f.close()
            server.close()
            await asyncio.sleep(0.01)  # the closed transports' callbacks run

    return asyncio.run(main())


def _get(f: fastget.FastGet, port: int, cap: int = 1 << 20) -> Awaitable[fastget.Reply]:
    return f.get(scheme="http", host="127.0.0.1", port=port, netloc=f"127.0.0.1:{port}",
                 target="/admin/v2/broker-stats/load-report", headers={"Accept": "application/json"},
                 ssl_context=None, connect_timeout=5.0, cap=cap)


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
        w.close()

    async def gets(f: fastget.FastGet, port: int) -> list[fastget.Reply]:
        return [await _get(f, port), await _get(f, port)]

    a, b = _serve(script, gets)
    assert (a.status, a.body, b.body) == (200, b'{"n":0}', b'{"n":1}')
    assert a.headers["content-type"] == "application/json"
    assert len(connections) == 1
    assert heads[0].startswith(b"GET /admin/v2/broker-stats/load-report HTTP/1.1\r\nHost: 127.0.0.1:")


def test_chunked_with_trailers_and_close_delimited_bodies() -> None:
    async def chunked(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _head(r)
        w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"4;ext=1\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\nX-Trailer: t\r\n\r\n")
        await w.drain()

    async def http10(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _head(r)
        w.write(b"HTTP/1.0 200 OK\r\n\r\n{\"b\":2}")
        await w.drain()
        w.close()

    assert _serve(chunked, _get).body == b'{"a":1}'
    assert _serve(http10, _get).body == b'{"b":2}'


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n",  # declared past the cap
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + b"x" * 64 + b"\r\n",
    b"HTTP/1.0 200 OK\r\n\r\n" + b"y" * 64,  # delimited by the close
])
def test_bodies_past_the_cap_are_refused(answer: bytes) -> None:
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _head(r)
        w.write(answer)
        await w.drain()
        w.close()

    with pytest.raises(fastget.TooLarge):
        _serve(script, lambda f, port: _get(f, port, cap=32))


@pytest.mark.parametrize("answer", [b"SSH-2.0-OpenSSH\r\n\r\n", b"HTTP/1.1 2xx OK\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", b""])
def test_garbage_and_early_close_are_a_dropped_connection(answer: bytes) -> None:
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _head(r)
        w.write(answer)
        await w.drain()
        w.close()

    with pytest.raises(fastget.Dropped):
        _serve(script, _get)


def test_a_stale_keep_alive_connection_is_replaced() -> None:
    served: list[int] = []

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _head(r)
        served.append(1)
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        await w.drain()
        w.close()  # closes a connection the client keeps as idle (no Connection: close)

    async def gets(f: fastget.FastGet, port: int) -> list[bytes]:
        first = await _get(f, port)
        await asyncio.sleep(0.05)
        return [first.body, (await _get(f, port)).body]

    assert _serve(script, gets) == [b"{}", b"{}"]
    assert len(served) == 2


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

    async def gets(f: fastget.FastGet, port: int) -> list[fastget.Reply]:
        return [await _get(f, port), await _get(f, port)]

    redirect, second = _serve(script, gets)
    assert (redirect.status, redirect.headers["location"], redirect.body) == (307, "/elsewhere", b"")
    assert (second.status, second.body) == (307, b"")  # a new connection, answered afresh


def test_a_refused_connection_keeps_its_oserror() -> None:
    async def gets(f: fastget.FastGet, port: int) -> Any:
        return await _get(f, 1)

    with pytest.raises(fastget.ConnectFailed) as e:
        _serve(lambda r, w: asyncio.sleep(0), gets)
    assert isinstance(e.value.__cause__, OSError)


# ---- the admin client over the light wire, on the loopback test cluster ----------------------
@pytest.fixture
def cluster() -> Iterator[TestCluster]:
    c = hot_cluster(3, tokens={TOKEN: "admin"})
    yield c
    c.stop()


def _client(c: TestCluster, **kw: Any) -> AdminClient:
    return AdminClient(c.admin_url, auth=make_auth("token", "token:" + TOKEN), **kw)


def test_load_reports_go_on_the_light_wire_with_the_token(cluster: TestCluster) -> None:
    import httpx

    with _client(cluster) as a:
        brokers = a.json(call(RUNTIME_CONFIG)) and sorted(cluster.brokers)
        reports = a.gather([call(LOAD_REPORT, base=a.broker_url(b)) for b in brokers])
        assert a._fast is not None
        with httpx.Client() as h:
            expected = [h.get(a.broker_url(b) + LOAD_REPORT.template,
                              headers={"Authorization": f"Bearer {TOKEN}"}).json() for b in brokers]
    assert [r["cpu"] for r in reports] == [r["cpu"] for r in expected]
    assert [sorted(r) for r in reports] == [sorted(r) for r in expected]
    logged = [r for r in cluster.log if r.path.endswith("load-report")]
    assert logged and all(r.authorization == f"Bearer {TOKEN}" for r in logged)


def test_faults_map_to_the_same_messages(cluster: TestCluster) -> None:
    b0, b1, b2 = sorted(cluster.brokers)
    cluster.faults.append(Fault(r"load-report", kind="drop", broker=b0))
    cluster.faults.append(Fault(r"load-report", kind="hang", broker=b1, seconds=5))
    cluster.faults.append(Fault(r"load-report", status=503, reason="Broker is not ready", broker=b2))
    with _client(cluster, retries=0, timeout=0.5) as a:
        r0, r1, r2 = a.gather([call(LOAD_REPORT, base=a.broker_url(b)) for b in (b0, b1, b2)])
    assert isinstance(r0, ConnectionFailed) and "connection dropped by the server" in str(r0)
    assert isinstance(r1, RequestTimeout) and "no answer within 0.5 s" in str(r1)
    assert isinstance(r2, AdminError) and r2.status == 503 and "Broker is not ready" in str(r2)


def test_a_load_report_past_the_size_cap_is_refused(cluster: TestCluster) -> None:
    b = sorted(cluster.brokers)[0]
    with _client(cluster, retries=0, max_response_bytes=64) as a:
        (r,) = a.gather([call(LOAD_REPORT, base=a.broker_url(b))])
    assert isinstance(r, HttpError) and "the response is larger than" in str(r)


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

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
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


def test_tls_is_verified_on_the_light_wire(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path, "broker")
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    seen: list[str | None] = []

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.send_header("Content-Length", "8")
            self.end_headers()
            self.wfile.write(b'{"ok":1}')

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    server.socket = server_ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"https://127.0.0.1:{server.server_address[1]}"
    try:
        trusting = ssl.create_default_context(cafile=str(cert))
        with AdminClient(url, auth=make_auth("token", "token:" + TOKEN), verify=trusting) as a:
            assert a.json(call(LOAD_REPORT)) == {"ok": 1}
            assert a._fast is not None
        with (AdminClient(url, auth=make_auth("token", "token:" + TOKEN), retries=0) as a,
              pytest.raises(ConnectionFailed, match="TLS certificate verification failed")):
            a.json(call(LOAD_REPORT))
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [f"Bearer {TOKEN}"]  # the unverified server never saw the token
