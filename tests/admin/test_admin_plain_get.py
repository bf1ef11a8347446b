"""The admin client's plain GETs (``AdminClient._plain_get``): written by its wire without
building an httpx request, they must be the very bytes httpx would have built, to the same origin.

Against httpx itself: generated URLs (:func:`lbctl.admin.transport.plain_url` vs ``httpx.URL``)
and header sets (:class:`~lbctl.admin.transport.GetTemplate` vs ``build_request`` + the wire's
``_message``); then on a real loopback socket, the bytes a fan-out sends with and without the
plain path.
"""

from __future__ import annotations

import gzip
import socket
import threading
from collections.abc import Iterator
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.admin.auth import make_auth
from lbctl.admin.client import LOAD_REPORT, AdminClient, call
from lbctl.admin.errors import AdminError, HttpError
from lbctl.admin.transport import (
    GetTemplate,
    RawHeaders,
    _message,
    async_client,
    origin_key,
    plain_url,
)

httpx = pytest.importorskip("httpx")

_HOSTS = st.one_of(
    st.sampled_from(["127.0.0.1", "10.0.0.255", "256.1.1.1", "01.2.3.4", "1.2.3", "Broker-1",
                     "broker-1.pulsar.svc", "b..c", "a-", "xn--bcher-kva", "localhost"]),
    st.text("abcAZ019.-_", min_size=1, max_size=12))
_PORTS = st.one_of(st.sampled_from(["80", "443", "8080", "08080", "0", "65535", "65536", "99999"]),
                   st.integers(1, 70000).map(str))
_PATHS = st.one_of(
    st.sampled_from(["/admin/v2/broker-stats/load-report", "/", "/a/./b", "/a/../b", "/a/.",
                     "/.hidden", "/a..b/c.d", "/x%41", "/a b", "/ü", "/a;b", "/a:b"]),
    st.lists(st.text("abZ09._~-%+ :", max_size=6), max_size=4).map(lambda p: "/" + "/".join(p)))
_QUERIES = st.one_of(st.just(""), st.sampled_from(["?a=b", "?authoritative=true&x=1", "?", "?a b",
                                                   "?a=%20", "?a+b", "?#f"]),
                     st.text("ab=&._~-%+?", max_size=8).map(lambda q: "?" + q))


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.sampled_from(["http", "https", "HTTP"]), _HOSTS, _PORTS, _PATHS, _QUERIES)
def test_a_plain_url_is_what_httpx_makes_of_it(scheme: str, host: str, port: str, path: str,
                                               query: str) -> None:
    url = f"{scheme}://{host}:{port}{path}{query}"
    plain = plain_url(url)
    if plain is None:
        return  # httpx's way, as before
    parsed = httpx.URL(url)  # never refused: a plain URL is one httpx keeps
    origin, host_header, target = plain
    assert origin == origin_key(parsed)
    assert host_header == parsed.netloc
    assert target == parsed.raw_path


def test_the_urls_lbctl_asks_are_plain_and_others_are_not() -> None:
    assert plain_url("http://127.0.0.1:8080/admin/v2/broker-stats/load-report") == (
        ("http", "127.0.0.1", 8080), b"127.0.0.1:8080", b"/admin/v2/broker-stats/load-report")
    assert plain_url("https://broker-1.pulsar:8443/admin/v2/brokers?x=1") is not None
    for other in ("http://Broker:8080/", "http://b:80/", "https://b:443/", "http://b/",
                  "http://[::1]:8080/", "http://b:8080/a/../c", "http://256.0.0.1:8080/",
                  "http://b:8080/a%2Fb", "http://u:p@b:8080/", "http://b:8080/#f"):
        assert plain_url(other) is None, other


_HEADERS = [
    {"Accept": "application/json"},
    {"Accept": "application/json", "Authorization": "Bearer abc.def"},
    {"Accept": "application/json", "X-Custom": "v  with  spaces", "Authorization": "Basic eDp5"},
]


@pytest.mark.parametrize("headers", _HEADERS)
@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/admin/v2/broker-stats/load-report",
                                 "https://broker-7.example:8443/admin/v2/brokers?a=b&c=d"])
def test_a_template_writes_the_bytes_httpx_builds(headers: dict[str, str], url: str) -> None:
    http = async_client(None, verify=False, timeout=7.0)
    first = http.build_request("GET", "http://10.1.2.3:9/x", headers=headers)
    template = GetTemplate(first)
    assert template.usable and (template.read, template.connect) == (7.0, 7.0)
    req = http.build_request("GET", url, headers=headers)
    _, host, target = plain_url(url)
    assert template.message(host, target) == _message(req, b"")


def test_a_header_h11_refuses_is_refused_by_the_template_too() -> None:
    http = async_client(None, verify=False, timeout=7.0)
    with pytest.raises(httpx.LocalProtocolError):
        GetTemplate(http.build_request("GET", "http://h:1/", headers={"X": "a\x00b"}))


_OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


@pytest.fixture
def recorder() -> Iterator[tuple[list[int], list[bytes], list[bytes]]]:
    """Loopback servers answering anything with ``answer[0]`` (``{}``), keeping every request's
    bytes."""
    heads: list[bytes] = []
    answer = [_OK]
    socks: list[socket.socket] = []
    for _ in range(9):  # a fan-out of 9 origins: its connections are opened ahead
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        s.settimeout(0.1)
        socks.append(s)
    stop = threading.Event()
    serving: list[threading.Thread] = []  # joined at the end: none outlives the test

    def serve(conn: socket.socket) -> None:
        buf = b""
        with conn:
            while not stop.is_set():
                try:
                    data = conn.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                buf += data
                while b"\r\n\r\n" in buf:
                    head, buf = buf.split(b"\r\n\r\n", 1)
                    heads.append(head)
                    conn.sendall(answer[0])

    def accept(s: socket.socket) -> None:
        while not stop.is_set():
            try:
                conn, _ = s.accept()
            except TimeoutError:
                continue
            conn.settimeout(0.1)
            serving.append(threading.Thread(target=serve, args=(conn,), daemon=True))
            serving[-1].start()

    threads = [threading.Thread(target=accept, args=(s,), daemon=True) for s in socks]
    for t in threads:
        t.start()
    yield [s.getsockname()[1] for s in socks], heads, answer
    stop.set()
    for t in threads:
        t.join()
    for t in serving:  # complete now that nothing accepts
        t.join()
    for s in socks:
        s.close()


def _fan_out(ports: list[int], *, plain: bool, **kw: Any) -> list[object]:
    c = AdminClient(f"http://127.0.0.1:{ports[0]}", auth=make_auth("token", "token:abc.DEF"),
                    backoff=0.0, retries=0, **kw)
    c.trust_brokers([f"127.0.0.1:{p}" for p in ports])
    calls = [call(LOAD_REPORT, base=c.broker_url(f"127.0.0.1:{p}")) for p in ports]
    with c:
        if plain:
            out = c.gather(calls)
            assert len(c._templates) == 1  # the plain path was taken
            return out
        with patch.object(AdminClient, "_plain_get", return_value=None):
            return c.gather(calls)


def test_a_fan_out_sends_the_same_bytes_with_and_without_the_plain_path(
        recorder: tuple[list[int], list[bytes], list[bytes]]) -> None:
    ports, heads, _ = recorder
    assert _fan_out(ports, plain=True) == [{}] * len(ports)
    plain = sorted(heads)
    heads.clear()
    assert _fan_out(ports, plain=False) == [{}] * len(ports)
    assert plain == sorted(heads) and len(plain) == len(ports)
    assert all(b"Authorization: Bearer abc.DEF" in h for h in plain)


@pytest.mark.parametrize("plain", [True, False])
def test_an_answer_read_whole_meets_the_same_decoding_and_cap(
        recorder: tuple[list[int], list[bytes], list[bytes]], plain: bool) -> None:
    """A body that came whole with its head is taken as it is only when nothing decodes it
    (``WHOLE_BODY``): a gzip answer is still decoded, and the size cap still refuses."""
    ports, _, answer = recorder
    body = gzip.compress(b'{"a": 1}')
    answer[0] = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip"
                 b"\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    assert _fan_out(ports, plain=plain) == [{"a": 1}] * len(ports)
    answer[0] = _OK.replace(b"Length: 2", b"Length: 10").replace(b"{}", b"[1,2,3,44]")
    assert _fan_out(ports, plain=plain) == [[1, 2, 3, 44]] * len(ports)
    out = _fan_out(ports, plain=plain, max_response_bytes=9)
    assert all(isinstance(e, HttpError) and "larger than" in str(e) for e in out)


_RAW_NAMES = st.sampled_from([b"Content-Type", b"content-type", b"CONTENT-TYPE", b"Retry-After",
                              b"Location", b"X-\xc3\xa9", b"Content-Length"])
_RAW_VALUES = st.one_of(st.sampled_from([b"", b"application/json", b"5", b"caf\xc3\xa9",
                                         b"caf\xe9", b"a, b", b" x "]),
                        st.binary(max_size=6))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.tuples(_RAW_NAMES, _RAW_VALUES), max_size=5),
       st.sampled_from(["content-type", "Content-Type", "retry-after", "location", "x-é",
                        "content-length", "absent"]))
def test_raw_headers_read_as_httpx_headers_do(raw: list[tuple[bytes, bytes]], key: str) -> None:
    """``RawHeaders.get`` (a :class:`~lbctl.admin.transport.WholeAnswer`'s) is
    ``httpx.Headers.get`` over the same header lines: any case, repeats joined, the same
    decoding (ASCII, else UTF-8, else ISO-8859-1)."""
    try:
        expected = httpx.Headers(raw).get(key, "-")
    except UnicodeEncodeError:  # a name its encoding cannot spell: both refuse it
        with pytest.raises(UnicodeEncodeError):
            RawHeaders(raw).get(key, "-")
        return
    assert RawHeaders(raw).get(key, "-") == expected


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 0\r\n"
    b"Content-Length: 25\r\n\r\n{\"reason\": \"busy, later\"}",
    b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 7\r\n\r\nno such",
    b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://elsewhere.example:8080/x\r\n"
    b"Content-Length: 0\r\n\r\n",
])
def test_an_error_answer_read_whole_is_the_same_error(
        recorder: tuple[list[int], list[bytes], list[bytes]], answer: bytes) -> None:
    """An error status, its reason, ``Retry-After`` and a redirect's ``Location`` read from a
    :class:`~lbctl.admin.transport.WholeAnswer` (the plain path) make the same errors as from
    the ``httpx.Response`` (httpx's path)."""
    ports, _, answers = recorder
    answers[0] = answer
    light = _fan_out(ports, plain=True)
    full = _fan_out(ports, plain=False)
    assert all(isinstance(e, AdminError) for e in light)
    assert [(type(e), str(e), e.status, e.retry_after) for e in light] == \
        [(type(e), str(e), e.status, e.retry_after) for e in full]
