"""The light wire (lbctl/admin/transport.py) reads answers exactly as h11 does (issue 25 #15).

Generated answers — status lines, header lines, Content-Length and Transfer-Encoding values,
chunk sizes and trailers, with the variants where readers disagree (bare LF line ends, non-ASCII
digits, signs and blanks in lengths, status 000/099/101/700, obs-fold, NUL and VT in values) —
are sent by a loopback server, then closed, and read through ``httpx.AsyncClient`` on
:class:`~lbctl.admin.transport.Http1Transport`; h11 (installed with httpx) reads the same bytes.
Both must agree: the same status, reason, version, headers and body, or both an error."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import h11
import httpx  # noqa: TID253  # a test of an httpx transport
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lbctl.admin.transport import Http1Transport

Outcome = tuple[Any, ...] | str


def h11_reads(answer: bytes) -> Outcome:
    """What h11 makes of ``answer`` to a GET, the connection closed after it."""
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "127.0.0.1")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(answer)
    conn.receive_data(b"")
    head: h11.Response | None = None
    body = b""
    try:
        while True:
            event = conn.next_event()
            if isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                body += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                break
            elif not isinstance(event, h11.InformationalResponse):
                return "error"  # closed (or waiting) before the end of the answer
    except h11.RemoteProtocolError:
        return "error"
    assert head is not None
    return (head.status_code, bytes(head.reason), b"HTTP/" + bytes(head.http_version),
            [(bytes(n), bytes(v)) for n, v in head.headers.raw_items()], body)


class Wire:
    """A loopback server answering each connection with the current bytes, then closing."""

    def __init__(self) -> None:
        self.runner = asyncio.Runner()
        self.answer = b""
        self.server = self.runner.run(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/"

    async def _handle(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            await r.readuntil(b"\r\n\r\n")
            w.write(self.answer)
            await w.drain()
        finally:
            w.close()

    def read(self, answer: bytes) -> Outcome:
        self.answer = answer

        async def get() -> Outcome:
            async with httpx.AsyncClient(transport=Http1Transport(), timeout=5) as http:
                try:
                    r = await http.send(http.build_request("GET", self.url), stream=True)
                    body = b"".join([piece async for piece in r.aiter_raw()])
                    await r.aclose()
                except httpx.RemoteProtocolError:
                    return "error"
                return (r.status_code, r.extensions["reason_phrase"], r.extensions["http_version"],
                        list(r.headers.raw), body)

        return self.runner.run(get())

    def close(self) -> None:
        self.server.close()
        self.runner.close()


@pytest.fixture(scope="module")
def wire() -> Iterator[Wire]:
    w = Wire()
    yield w
    w.close()


def test_the_issue_s_answers(wire: Wire) -> None:
    """Status and lengths ASCII digits only, bare-LF heads, the chunk-size grammar, status
    000/099 refused: each as h11 reads it."""
    cases = {
        b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok": (200, b"OK", b"HTTP/1.1",
                                                      [(b"Content-Length", b"2")], b"ok"),
        b"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n": "error",
        b"HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n": "error",
        b"HTTP/1.1 101 Switching\r\n\r\n": "error",
        "HTTP/1.1 ٢٠٠ OK\r\n\r\n".encode(): "error",
        b"HTTP/1.1 200 OK\r\nContent-Length: \xb2\r\n\r\nab": "error",
        b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nab": "error",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nab": (200, b"OK", b"HTTP/1.1",
                                                              [(b"Content-Length", b"2")], b"ab"),
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n 2\r\nab\r\n0\r\n\r\n": "error",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y \r\nab\r\n0\r\n\n": (
            200, b"OK", b"HTTP/1.1", [(b"Transfer-Encoding", b"chunked")], b"ab"),
        b"HTTP/1.1 700 Odd\r\nContent-Length: 0\r\n\r\n": (700, b"Odd", b"HTTP/1.1",
                                                          [(b"Content-Length", b"0")], b""),
    }
    for answer, expected in cases.items():
        assert h11_reads(answer) == expected, answer
        assert wire.read(answer) == expected, answer


def answering(answer: bytes) -> tuple[str, threading.Thread]:
    """A loopback server in a thread: one connection, answered with ``answer``, then closed."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with listener:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(answer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}", t


@pytest.mark.live
@pytest.mark.parametrize("code", [b"000", b"099", b"700"])
def test_status_000_099_and_700_are_never_a_success(code: bytes) -> None:
    """Through the admin client: below 100 the answer is malformed (a read is not "done"), and
    600-999 is an answer but an error."""
    from lbctl.admin.client import CLUSTERS, AdminClient, call
    from lbctl.admin.errors import AdminError, ConnectionFailed

    base, t = answering(b"HTTP/1.1 " + code + b" Fine\r\nContent-Length: 2\r\n\r\n[]")
    with AdminClient(base, retries=0) as c, pytest.raises(AdminError) as e:
        c.json(call(CLUSTERS))
    t.join(5)
    if code == b"700":
        assert e.value.status == 700 and str(e.value) == f"GET {base}/admin/v2/clusters: 700: []"
    else:
        assert isinstance(e.value, ConnectionFailed)
        assert str(e.value) == (f"GET {base}/admin/v2/clusters: malformed answer from the server "
                                f"(status code {code.decode()} out of range)")


EOL = st.sampled_from([b"\r\n", b"\r\n", b"\n", b"\r"])
VERSIONS = [b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/1.x", b"http/1.1", b"HTTP/11"]
CODES = [b"200", b"204", b"304", b"404", b"000", b"099", b"100", b"101", b"199", b"700", b"999",
         b"2xx", b"20", b"2000", "٢٠٠".encode(), b"\xb2\xb2\xb2", b" 200"]
REASONS = [b"", b" OK", b" ", b" Not Found", b" O\x00K", b" O\x7fK", b" \xe9", b" a\x0bb", b"\tOK"]
NAMES = [b"Content-Length", b"content-length", b"Transfer-Encoding", b"Connection", b"X-A",
         b" X-Fold", b"\tfold", b"X A", b"", b"X\xe9", b"Content-Length "]
VALUES = [b"", b"0", b"2", b"3", b"12", b" 2 ", b"2, 2", b"2,3", b"+2", b"-1", b"0x2", b"2.0",
          "٢".encode(), b"\xb2", b"0" * 21 + b"2", b"0" * 19 + b"2", b"chunked", b"Chunked",
          b"gzip, chunked", b"identity", b"close", b"keep-alive", b"Close, x", b"a\x00b",
          b"a\x0bb", b"a\x01b", b"a\x7fb", b"\xe9t\xe9", b"a  b"]
CHUNK_SIZES = [b"0", b"2", b"02", b"a", b"A", b" 2", b"2 ", b"2\t", b"2;x=y", b"2;", b"0x2", b"g",
               b"", b"-1", b"0" * 19 + b"2", b"0" * 20 + b"2", "٢".encode(), b"2\r"]


@st.composite
def answers(draw: st.DrawFn) -> bytes:
    eol = draw(EOL)
    line = (draw(st.sampled_from(VERSIONS)) + b" " + draw(st.sampled_from(CODES))
            + draw(st.sampled_from(REASONS)))
    out = [line]
    for _ in range(draw(st.integers(0, 4))):
        out.append(draw(st.sampled_from(NAMES)) + b":" + draw(st.sampled_from([b" ", b"", b"\t"]))
                   + draw(st.sampled_from(VALUES)))
    head = draw(EOL).join(out) + eol + draw(EOL)
    body = b""
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):  # a chunk
            body += draw(st.sampled_from(CHUNK_SIZES)) + draw(EOL) + b"ab" + draw(EOL)
        else:
            body += draw(st.sampled_from([b"ab", b"0\r\n\r\n", b"0\r\nX: y\r\n\r\n",
                                          b"0\r\n\n", b"0\r\nbad trailer\r\n\r\n", b"\r\n"]))
    if draw(st.booleans()):  # and a few raw bytes somewhere
        raw = draw(st.binary(max_size=4))
        at = draw(st.integers(0, len(head + body)))
        whole = head + body
        return whole[:at] + raw + whole[at:]
    return head + body


@pytest.mark.live  # HTTP over loopback sockets
@pytest.mark.slow  # 400 exchanges: ~5 s on an idle machine
@settings(max_examples=400, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(answer=answers())
def test_same_as_h11(wire: Wire, answer: bytes) -> None:
    assert wire.read(answer) == h11_reads(answer)
