"""Issue 25, the Prometheus client's side: credentials (#1), bounded answers (#10) and sample
times (#12) — over real loopback sockets where the wire matters, on a mock transport elsewhere."""

from __future__ import annotations

import gzip
import http.server
import json
import socket
import ssl
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx  # noqa: TID253  # a test of the HTTP client: its transport is httpx
import pytest

from lbctl.admin.errors import AdminError, ConnectionFailed, HttpError, RequestTimeout
from lbctl.admin.prometheus import PrometheusClient, PrometheusConfig, client_from_config
from lbctl.errors import UsageError
from tests.loopback_http import LoopbackHTTPServer
from tests.tls_helpers import self_signed

TOKEN = "prom-token.SECRET-SIGNATURE"
T0 = 1_700_000_000_000
SERIES = json.dumps({"status": "success", "data": [{"__name__": "up"}]}).encode()


class Server:
    """A loopback HTTP(S) server: ``answer(handler)`` writes each response; requests are logged."""

    def __init__(self, answer: Callable[[http.server.BaseHTTPRequestHandler], None],
                 tls: ssl.SSLContext | None = None) -> None:
        self.seen: list[tuple[str, str | None]] = []
        seen = self.seen

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                seen.append((self.path, self.headers.get("Authorization")))
                answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = LoopbackHTTPServer(("127.0.0.1", 0), H)
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def reply(body: bytes, status: int = 200, **headers: str) -> Callable[[Any], None]:
    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        for k, v in {"Content-Length": str(len(body)), **headers}.items():
            h.send_header(k.replace("_", "-"), v)
        h.end_headers()
        h.wfile.write(body)

    return answer


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    made: list[Server] = []
    yield made
    for s in made:
        s.close()


# --- 1. credentials ------------------------------------------------------------------------------

@pytest.mark.live
def test_hostname_is_verified_when_a_credential_is_sent(tmp_path: Path,
                                                        servers: list[Server]) -> None:
    """An absent tlsEnableHostnameVerification became an explicit false: a certificate for
    another name (127.0.0.1, reached as localhost) received the bearer token."""
    cert, key = self_signed(tmp_path, "prom")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv = Server(reply(SERIES), tls=ctx)
    servers.append(srv)
    conf = tmp_path / "prometheus.conf"
    conf.write_text(f"authPlugin AuthenticationToken\nauthParams token:{TOKEN}\n"
                    f"tlsTrustCertsFilePath {cert}\n")
    cfg = PrometheusConfig.read(f"https://localhost:{srv.port}", conf, 5)
    assert cfg.tls_enable_hostname_verification is None and cfg.auth_params == f"token:{TOKEN}"
    with client_from_config(cfg, retries=0) as c, \
            pytest.raises(ConnectionFailed, match="TLS certificate verification failed"):
        c.series(["up"], T0, T0)
    with client_from_config(PrometheusConfig.read(f"https://127.0.0.1:{srv.port}", conf, 5)) as c:
        assert c.series(["up"], T0, T0) == [{"__name__": "up"}]  # the right name: accepted
    assert srv.seen == [(srv.seen[0][0], f"Bearer {TOKEN}")]  # the impostor name never saw it
    conf.write_text(conf.read_text() + "tlsEnableHostnameVerification=maybe\n")
    with pytest.raises(Exception, match="expected true or false"):
        PrometheusConfig.read("https://localhost:1", conf, 5)


@pytest.mark.live
@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_never_leaves_prometheus_origin(status: int, servers: list[Server]) -> None:
    """Followed to another host, the redirect carried the credential (and the TLS client
    certificate) there."""
    foreign = Server(reply(SERIES))
    servers.append(foreign)
    prom = Server(reply(b"", status, Location=f"http://127.0.0.1:{foreign.port}/api/v1/series"))
    servers.append(prom)
    cfg = PrometheusConfig(f"http://127.0.0.1:{prom.port}", auth_plugin="token",
                           auth_params=f"token:{TOKEN}")
    with client_from_config(cfg, retries=0) as c, pytest.raises(HttpError) as e:
        c.series(["up"], T0, T0)
    assert str(e.value).endswith("another origin than --prometheus-url's: not followed")
    assert foreign.seen == [] and len(prom.seen) == 1


@pytest.mark.live
def test_a_redirect_within_the_origin_is_followed(servers: list[Server]) -> None:
    hops: list[str] = []

    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        hops.append(h.path)
        if h.path.startswith("/prom/"):
            reply(SERIES)(h)
        else:
            reply(b"", 302, Location="/prom" + h.path)(h)

    prom = Server(answer)
    servers.append(prom)
    with PrometheusClient(f"http://127.0.0.1:{prom.port}") as c:
        assert c.series(["up"], T0, T0) == [{"__name__": "up"}]
    assert len(hops) == 2 and hops[1].startswith("/prom/api/v1/series?")


SECRET = "pa:ss/w<rd&>+x y"
ECHOES = {
    "as is": SECRET,
    "percent, lower case": quote(SECRET, safe="").lower(),
    "percent, path style": quote(SECRET),
    "JSON, Go's HTML escapes": json.dumps(SECRET)[1:-1].replace("<", "\\u003c")
    .replace(">", "\\u003e").replace("&", "\\u0026"),
    "JSON, escaped slash": json.dumps(SECRET)[1:-1].replace("/", "\\/"),
}


@pytest.mark.parametrize("echo", list(ECHOES.values()), ids=list(ECHOES))
def test_messages_never_echo_a_secret_in_any_escaped_form(echo: str) -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(400, text=f"bad request from {echo} (user ops)",
                              headers={"content-type": "text/plain"})

    url = f"https://ops:{quote(SECRET, safe='')}@prom:9090"
    with client_from_config(PrometheusConfig(url), transport=httpx.MockTransport(handler)) as c, \
            pytest.raises(AdminError) as e:
        c.series(["up"], T0, T0)
    assert str(e.value) == "GET https://prom:9090/api/v1/series: 400 Bad Request: bad request " \
                           "from *** (user ops)"


def test_the_admin_client_s_warnings_apply_to_prometheus() -> None:
    lines: list[str] = []
    cfg = PrometheusConfig("http://prom.example:9090", auth_plugin="token",
                           auth_params=f"token:{TOKEN}")
    client_from_config(cfg, warn=lines.append).close()
    assert lines == ["the bearer token is sent over plain http to prom.example: anyone on the "
                     "network path can read and reuse it; use an https:// --prometheus-url"]


# --- 10. bounded answers -------------------------------------------------------------------------

@pytest.mark.live
def test_a_gzip_bomb_stops_at_the_cap(servers: list[Server]) -> None:
    bomb = gzip.compress(b"[" + b" " * (16 << 20) + b"]")  # 16 MiB in ~16 KiB
    assert len(bomb) < 1 << 20
    prom = Server(reply(bomb, Content_Encoding="gzip", Content_Type="application/json"))
    servers.append(prom)
    tracemalloc.start()
    try:
        with PrometheusClient(f"http://127.0.0.1:{prom.port}", max_response_bytes=1 << 20,
                              retries=0) as c, pytest.raises(HttpError) as e:
            c.series(["up"], T0, T0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(e.value).endswith("the answer is larger than 1 MiB (raise --max-response-size)")
    assert peak < 16 << 20  # the decoded bytes were counted as they came, never all held


@pytest.mark.live
def test_a_byte_a_second_cannot_outlast_the_request_timeout() -> None:
    """The timeout was per read: a server sending a byte every 0.3 s never tripped it."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def dribble() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            for b in b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + b" " * 40:
                if stop.wait(0.3):
                    return
                try:
                    conn.sendall(bytes([b]))
                except OSError:
                    return

    t = threading.Thread(target=dribble, daemon=True)
    t.start()
    start = time.monotonic()
    try:
        with PrometheusClient(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=1,
                              retries=0) as c, pytest.raises(RequestTimeout) as e:
            c.series(["up"], T0, T0)
    finally:
        stop.set()
        listener.close()
        t.join(5)
    assert time.monotonic() - start < 3
    assert "no answer within 1 s (--request-timeout)" in str(e.value)


def test_too_many_requests_are_refused_before_the_first() -> None:
    sent: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        sent.append(req)
        return httpx.Response(200, json={"status": "success", "data": {"resultType": "matrix",
                                                                        "result": []}})

    with PrometheusClient("http://prom", transport=httpx.MockTransport(handler), max_points=10,
                          max_requests=5) as c:
        with pytest.raises(UsageError, match=r"would take 10 requests \(at most 5\): use a "
                                             "longer --step or a shorter range"):
            c.query_range("up", T0, T0 + 99 * 60_000, 60_000)
        assert sent == []
        c.query_range("up", T0, T0 + 49 * 60_000, 60_000)  # 5 requests: allowed
        assert len(sent) == 5


# --- 12. sample times ----------------------------------------------------------------------------

@pytest.mark.parametrize("when", ['"Infinity"', '"-Infinity"', '"NaN"', "1e308", '"1e400"', "-5",
                                  "253402300800"])
def test_a_sample_time_that_is_not_a_time_is_one_line(when: str) -> None:
    body = ('{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"1"},'
            f'"values":[[{when},"1"]]}}]}}}}')

    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body.encode())

    with PrometheusClient("http://prom", transport=httpx.MockTransport(handler)) as c, \
            pytest.raises(HttpError) as e:
        c.query_range("up", T0, T0, 60_000)
    assert str(e.value).startswith("GET http://prom/api/v1/query_range: sample time ")
    assert str(e.value).endswith("is not a time (expected Unix seconds from 1970 to 9999)")
