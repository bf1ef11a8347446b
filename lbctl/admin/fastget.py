"""A minimal HTTP/1.1 GET over asyncio for the admin client's fan-out of load reports.

Why: ``monitor-brokers`` reads one load report per broker per refresh; through httpx → httpcore →
anyio each GET costs ~1.2 ms of client CPU (request and header objects, anyio cancel scopes,
h11's state machine), so 200 brokers spend ~250 ms of CPU on a refresh whose network wait is one
round trip. This module sends the same GET with a few bytes written on an ``asyncio.Protocol``
and parses the answer in place: ~0.1 ms a request.

It is *only* a wire: :class:`lbctl.admin.client.AdminClient` decides whether a request may use it
(GET, an ASCII URL without user info, header values without control characters, no injected
transport) and keeps every policy — which origins are trusted, redirects, retries, the
``--request-timeout`` deadline (its ``asyncio.timeout`` wraps the whole exchange), the
response size cap (passed in here and enforced while reading), error messages. TLS uses the
client's own :class:`ssl.SSLContext` (verification and hostname checks as configured) with the
URL's host as the server name.

Connections are HTTP/1.1 keep-alive, one idle list per origin, kept across refreshes (the
client's event loop lives as long as the client). An idle connection the server has closed is
replaced on first use: when a reused connection fails before any byte of the answer arrives,
the GET (idempotent) is sent once more on a new connection, as httpcore does.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass

#: the longest response head accepted (status line and headers)
MAX_HEAD = 64 * 1024


class FetchError(Exception):
    """A failure of the wire; the admin client maps each kind to its one-line message."""


class ConnectFailed(FetchError):
    """The connection could not be made (the OSError is the ``__cause__``)."""


class ConnectTimedOut(FetchError):
    """The connection was not made within the connect timeout."""


class Dropped(FetchError):
    """The server closed the connection or answered something that is not HTTP/1.x."""


class TooLarge(FetchError):
    """The body is larger than the cap (declared or streamed)."""


@dataclass(slots=True)
class Reply:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes


class _Conn(asyncio.Protocol):
    """One connection: bytes in a buffer, a future to wait on for more."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False
        self.received = False  # any byte of the current answer

    # -- protocol callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self.received = True
        self._wake()

    def eof_received(self) -> bool:
        self.closed = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        w = self.waiter
        if w is not None and not w.done():
            w.set_result(None)

    # -- reading
    async def _more(self) -> None:
        if self.closed:
            raise Dropped("connection closed by the server")
        self.waiter = asyncio.get_running_loop().create_future()
        try:
            await self.waiter
        finally:
            self.waiter = None

    def close(self) -> None:
        """Close now: nothing is left to send (an answer was read, or the exchange failed), and a
        TLS close_notify exchange would need the loop to keep running after the client closes."""
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    async def exchange(self, request: bytes, cap: int, skip_redirect_body: bool) -> tuple[Reply, bool]:
        """Send ``request``; the reply and whether the connection may be reused."""
        assert self.transport is not None
        self.received = False
        self.transport.write(request)
        while True:
            status, version, headers = await self._head()
            if not 100 <= status < 200:
                break
        keep = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
        if status in (204, 304) or (skip_redirect_body and status in (301, 302, 303, 307, 308)
                                     and headers.get("location")):
            # a redirect's body is not read (nor is the connection reused when it has one)
            empty = headers.get("content-length") == "0" and "transfer-encoding" not in headers
            return Reply(status, headers, b""), keep and empty
        te = headers.get("transfer-encoding", "").lower()
        if te:
            if te != "chunked":
                raise Dropped(f"unsupported transfer-encoding {te!r}")
            return Reply(status, headers, await self._chunked(cap)), keep
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.isdigit():
                raise Dropped("bad content-length")
            n = int(declared)
            if n > cap:
                raise TooLarge
            while len(self.buf) < n:
                await self._more()
            body = bytes(self.buf[:n])
            del self.buf[:n]
            return Reply(status, headers, body), keep and not self.buf
        while not self.closed:  # delimited by the end of the connection
            if len(self.buf) > cap:
                raise TooLarge
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        if len(self.buf) > cap:
            raise TooLarge
        return Reply(status, headers, bytes(self.buf)), False

    async def _head(self) -> tuple[int, str, dict[str, str]]:
        while True:
            i = self.buf.find(b"\r\n\r\n")
            if i >= 0:
                break
            if len(self.buf) > MAX_HEAD:
                raise Dropped("response head too large")
            await self._more()
        lines = self.buf[:i].decode("latin-1").split("\r\n")
        del self.buf[:i + 4]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or len(parts[1]) != 3 \
                or not parts[1].isdigit():
            raise Dropped("not an HTTP/1.x status line")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise Dropped("malformed header line")
            key, value = name.lower(), value.strip(" \t")
            if key in headers:
                if key == "content-length" and headers[key] != value:
                    raise Dropped("conflicting content-length headers")
                if key != "content-length":
                    headers[key] += ", " + value
                continue
            headers[key] = value
        return int(parts[1]), parts[0], headers

    async def _chunked(self, cap: int) -> bytes:
        out = bytearray()
        while True:
            while (i := self.buf.find(b"\r\n")) < 0:
                if len(self.buf) > MAX_HEAD:
                    raise Dropped("chunk size line too long")
                await self._more()
            size_text = self.buf[:i].split(b";", 1)[0].strip()
            del self.buf[:i + 2]
            try:
                size = int(size_text, 16)
            except ValueError:
                raise Dropped("bad chunk size") from None
            if size < 0:
                raise Dropped("bad chunk size")
            if size == 0:  # the last chunk; trailers up to an empty line are ignored
                while True:
                    while (j := self.buf.find(b"\r\n")) < 0:
                        if len(self.buf) > MAX_HEAD:
                            raise Dropped("trailers too long")
                        await self._more()
                    line = self.buf[:j]
                    del self.buf[:j + 2]
                    if not line:
                        return bytes(out)
            if len(out) + size > cap:
                raise TooLarge
            while len(self.buf) < size + 2:
                await self._more()
            out += self.buf[:size]
            del self.buf[:size + 2]


class FastGet:
    """Keep-alive connections per origin, and the GET itself."""

    def __init__(self) -> None:
        self._idle: dict[str, list[_Conn]] = {}

    async def get(self, *, scheme: str, host: str, port: int, netloc: str, target: str,
                  headers: dict[str, str], ssl_context: ssl.SSLContext | None,
                  connect_timeout: float, cap: int) -> Reply:
        """GET ``target`` (path and query) from ``scheme://netloc``."""
        origin = f"{scheme}://{netloc}"
        lines = [f"GET {target} HTTP/1.1", f"Host: {netloc}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")
        idle = self._idle.setdefault(origin, [])
        while idle:
            conn = idle.pop()
            if conn.closed or conn.buf:
                conn.close()
                continue
            try:
                return await self._use(conn, idle, request, cap)
            except Dropped:
                if conn.received:
                    raise
                # a stale keep-alive connection: the GET is sent again on a new one
        conn = await self._connect(host, port, ssl_context, connect_timeout)
        return await self._use(conn, idle, request, cap)

    async def _use(self, conn: _Conn, idle: list[_Conn], request: bytes, cap: int) -> Reply:
        reuse = False
        try:
            reply, reuse = await conn.exchange(request, cap, skip_redirect_body=True)
            return reply
        finally:
            if reuse and not conn.closed:
                idle.append(conn)
            else:
                conn.close()

    @staticmethod
    async def _connect(host: str, port: int, ctx: ssl.SSLContext | None, timeout: float) -> _Conn:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):  # TCP and the TLS handshake, as httpx's connect
                raw, conn = await loop.create_connection(_Conn, host, port)
                if ctx is not None:
                    # TLS upgraded here rather than by create_connection(ssl=…): on a refused
                    # certificate the socket is ours to close at once
                    try:
                        tls = await loop.start_tls(raw, conn, ctx, server_hostname=host)
                    except BaseException:
                        raw.close()
                        raise
                    if tls is None:  # pragma: no cover  (only when the transport is closing)
                        raw.close()
                        raise ConnectionResetError("connection closed during the TLS handshake")
                    conn.transport = tls
        except TimeoutError:
            raise ConnectTimedOut from None
        except OSError as e:  # refused, unreachable, unknown host, TLS verification (ssl.SSLError)
            raise ConnectFailed(str(e)) from e
        return conn

    def close(self) -> None:
        for conns in self._idle.values():
            for c in conns:
                c.close()
        self._idle = {}
