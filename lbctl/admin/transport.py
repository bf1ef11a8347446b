"""The admin client's wire: an httpx transport that speaks HTTP/1.1 on asyncio, for fan-out.

Why a transport of its own: ``monitor-brokers`` asks every broker for its load report on each
refresh. Through httpx's default transport (httpcore over anyio, with h11's state machine) each
request costs about 1 ms of client CPU, so 200 brokers spend ~250 ms of CPU on a refresh whose
network wait is one round trip (``benchmarks/monitor_brokers.py`` compares both). This transport
writes the request httpx built — its method, target, headers and body exactly as httpx encoded
them — on an :class:`asyncio.Protocol` and parses the answer in place.

It is only a wire, behind httpx's public transport API (:class:`httpx.AsyncBaseTransport`): the
:class:`~lbctl.admin.client.AdminClient` keeps every rule — trusted origins, redirects (never
followed here), retries, the request deadline, the response size cap (the body is streamed to
it), messages — and can be given any other transport instead (``httpx.MockTransport``).

* **Keep-alive.** Idle connections are kept per origin for as long as the transport lives (the
  client's), so a refresh reuses the previous one's. A connection goes back to the idle list only
  once its answer was read to the end — at once when the whole body came with the head (it is
  handed over as bytes: a small answer is not streamed); an answer closed unread (a redirect's
  body still arriving) closes it. There is no pool limit: the client bounds its concurrency.
* **No cookies** (:class:`NoCookiesClient`): a server's are neither kept nor sent back.
* **A stale connection.** When a reused connection turns out closed before any byte of the answer
  arrived (the server dropped an idle connection), a GET or HEAD is sent once more on a new one, as
  httpcore does; any other method is not resent (the server may have acted on it).
* **Parsing is h11's**, rule for rule (h11 0.16's ``_abnf``, ``_readers``, ``_receivebuffer`` and
  ``_headers``; a differential test feeds both generated answers): heads end at a blank line with
  CRLF or bare LF line ends, the status line is ``HTTP/d.d SP 3DIGIT [SP reason]``, header lines
  are ``token ":" OWS value OWS`` (obs-folded lines joined), ``Content-Length`` is ASCII digits
  only (20 at most; equal repeats merged, different ones refused), ``Transfer-Encoding`` only
  ``chunked`` and once, a chunk size 1-20 hex digits (an extension after ``;``, blanks before the
  CRLF), trailers are header lines. A status below 100 (``000``, ``099``) or an unasked ``101`` is
  a protocol error; 1xx answers are skipped; 600-999 is an answer, never a success.
* **Timeouts** come from the request's ``timeout`` extension (:class:`httpx.Timeout`): ``connect``
  covers TCP and the TLS handshake, ``read`` each wait for bytes of the answer.
* **Errors are httpx's**: :class:`httpx.ConnectError` (with its :class:`OSError` as the cause),
  :class:`httpx.ConnectTimeout`, :class:`httpx.ReadTimeout`, :class:`httpx.RemoteProtocolError`
  (closed early, not HTTP/1.x, bad framing) and :class:`httpx.LocalProtocolError` (a header or
  target h11 would refuse to send).
* **Plain GETs** (:func:`plain_url`, :class:`GetTemplate`, :meth:`Http1Transport.send_message`):
  the admin client writes a GET to a URL httpx would keep as written straight on this wire, the
  bytes httpx would have built (its headers, in its order) without building an httpx request: a
  first refresh of 200 brokers spent a quarter of its CPU parsing URLs and building requests.
  The answer is the same ``httpx.Response`` — or, when its whole body came with its head and is
  not encoded, a :class:`WholeAnswer` with what the client reads of one — and every rule above
  holds.
* **Connections started ahead** (:meth:`Http1Transport.open_ahead`): a fan-out's new
  connections all start before its requests are built; each is its request's own (same errors,
  same timeout), and an http origin at an IPv4 address is a bare non-blocking socket
  (:func:`_dial`) rather than ``create_connection``'s round of resolution and futures; the
  fan-out's host names are resolved together, in a few executor jobs (:func:`_resolve_ahead`),
  and a name of one IPv4 address is dialled the same way.
* **TLS** with the given :class:`ssl.SSLContext` (verification and hostname checks as configured;
  ``True``: httpx's default CA store, loaded at the first https connection; ``False``: none) and
  the URL's host as the server name.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import os
import re
import socket
import ssl
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpx  # noqa: TID253  # a transport subclasses httpx's; this module is imported on first use

#: the longest response head accepted (status line and headers), and a chunk-size or trailer line
MAX_HEAD = 64 * 1024
#: h11's grammar of what it reads (h11/_abnf.py): the status line, a chunk header
_STATUS_LINE = re.compile(rb"HTTP/([0-9]\.[0-9]) ([0-9]{3})(?: ((?:[ \t]|[^\x00\s])*))?")
#: what h11 refuses inside a header value once its outer blanks are stripped (NUL, CR, LF, VT, FF)
_BAD_FIELD = re.compile(rb"[\x00\n\r\x0b\x0c]")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;.*)?[ \t]*")
_OBS_FOLD = re.compile(rb"[ \t]+")
_BLANK_BYTES = b" \t"
_BLANK_LINE = re.compile(rb"\n\r?\n")
_DIGITS = re.compile(rb"[0-9]+")
#: h11's CONTENT_LENGTH_MAX_DIGITS
MAX_LENGTH_DIGITS = 20
#: what h11 refuses in a header name (RFC 9110 ``token``), a header value (controls but HTAB),
#: and a request target (controls, space, DEL)
_BAD_NAME = re.compile(rb"[^-!#$%&'*+.^_`|~0-9A-Za-z]")
_BAD_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_BAD_TARGET = re.compile(rb"[\x00-\x20\x7f]")
#: methods sent again on a new connection when a reused one was found closed
_RESEND = frozenset({"GET", "HEAD"})
_EMPTY = b""

Origin = tuple[str, str, int]
#: the extension of a response whose whole body came with its head and needs no decoding (no
#: ``Content-Encoding``): its bytes, which iterating the response would give
WHOLE_BODY = "lbctl.whole_body"


class _Conn(asyncio.Protocol):
    """One connection: the bytes received so far, and a future to wait on for more."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[bool] | None = None
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
            w.set_result(True)

    def close(self) -> None:
        """Close now: nothing is left to send (an answer was read, or the exchange failed), and
        a TLS close_notify exchange would need the loop to keep running after the client closes."""
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    # -- reading
    async def more(self, timeout: float | None) -> None:
        """Wait for more bytes; a closed connection is an early end of the answer."""
        if self.closed:
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body" if self.received
                else "Server disconnected without sending a response.")
        loop = asyncio.get_running_loop()
        waiter = self.waiter = loop.create_future()
        # a timer on the waiter itself: what asyncio.timeout does, for a fraction of its cost
        # (each answer waits here at least once)
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
        try:
            more = await waiter
        finally:
            self.waiter = None
            if timer is not None:
                timer.cancel()
        if not more:
            raise httpx.ReadTimeout(f"no bytes within {timeout:g} s")

    def take(self, n: int) -> bytes:
        piece = bytes(self.buf[:n])
        del self.buf[:n]
        return piece

    async def line(self, timeout: float | None, what: str) -> bytes:
        """One CRLF-terminated line (without the CRLF): h11's ``maybe_extract_next_line``."""
        while (i := self.buf.find(b"\r\n")) < 0:
            if len(self.buf) > MAX_HEAD:
                raise httpx.RemoteProtocolError(f"{what} too long")
            await self.more(timeout)
        return self.take(i + 2)[:-2]

    async def lines(self, timeout: float | None, what: str, *, head: bool = False) -> list[bytes]:
        """The lines up to the next blank line (CRLF or bare LF ends), without their ends; an
        empty list when a blank line comes first: h11's ``maybe_extract_lines``."""
        while True:
            buf = self.buf
            if buf[:1] == b"\n" or buf[:2] == b"\r\n":
                self.take(1 if buf[:1] == b"\n" else 2)
                return []
            i = buf.find(b"\r\n\r\n")
            if i >= 0 and buf.count(b"\n", 0, i) == buf.count(b"\r\n", 0, i):
                # CRLF throughout, as every server writes: no bare LF ends the head earlier
                return self.take(i + 4)[:-4].split(b"\r\n")
            m = _BLANK_LINE.search(buf)
            if m is not None:
                break
            if head and buf and buf[0] < 0x21:  # h11 refuses it without waiting for the rest
                raise httpx.RemoteProtocolError("illegal status line")
            if len(buf) > MAX_HEAD:
                raise httpx.RemoteProtocolError(f"{what} too large")
            await self.more(timeout)
        lines = self.take(m.end()).split(b"\n")[:-2]
        return [ln[:-1] if ln[-1:] == b"\r" else ln for ln in lines]

    async def head(self, timeout: float | None) -> tuple[int, bytes, bytes, list[tuple[bytes, bytes]]]:
        """``(status, version, reason, headers)`` of the next final response head (1xx ones are
        read and skipped)."""
        while True:
            lines = await self.lines(timeout, "response head", head=True)
            if not lines:
                raise httpx.RemoteProtocolError("no response line received")
            m = _STATUS_LINE.fullmatch(lines[0])
            if m is None:
                raise httpx.RemoteProtocolError("illegal status line")
            headers = header_fields(lines[1:])
            status = int(m[2])
            if status < 100:
                raise httpx.RemoteProtocolError(f"status code {m[2].decode()} out of range")
            if status == 101:  # h11: a protocol switch nobody asked for
                raise httpx.RemoteProtocolError("unexpected 101 Switching Protocols")
            if status >= 200:
                return status, b"HTTP/" + m[1], m[3] or _EMPTY, headers


class WholeAnswer:
    """What the admin client reads of an ``httpx.Response`` (``status_code``, ``headers.get``,
    ``extensions``, ``aclose``) for an answer whose whole body came with its head without a
    ``Content-Encoding`` (:data:`WHOLE_BODY`: nothing to stream or decode), without building
    one: an ``httpx.Response`` and its ``Headers`` cost ~25 µs, a tenth of a first refresh's
    CPU for 200 brokers. Its connection is idle again already."""

    __slots__ = ("extensions", "headers", "status_code")

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]],
                 extensions: dict[str, Any]) -> None:
        self.status_code = status
        self.headers = RawHeaders(headers)
        self.extensions = extensions

    async def aclose(self) -> None:
        return None


class RawHeaders:
    """``httpx.Headers.get`` over the raw header lines: the name matched without case, the
    values of a repeated header joined with ``", "``, decoded as httpx decodes them (ASCII when
    every name and value is, else UTF-8 when every one is, else ISO-8859-1)."""

    __slots__ = ("_encoding", "_raw")

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._raw = raw
        self._encoding: str | None = None

    def get(self, key: str, default: Any = None) -> Any:
        encoding = self._encoding or self._find_encoding()
        name = key.lower().encode(encoding)
        items = [v.decode(encoding) for k, v in self._raw if k.lower() == name]
        return ", ".join(items) if items else default

    def _find_encoding(self) -> str:
        for encoding in ("ascii", "utf-8"):
            try:
                for k, v in self._raw:
                    k.decode(encoding)
                    v.decode(encoding)
            except UnicodeDecodeError:
                continue
            self._encoding = encoding
            return encoding
        self._encoding = "iso-8859-1"
        return self._encoding


def _expire(waiter: asyncio.Future[bool]) -> None:
    """A read timeout: the waiter ends with nothing more (:meth:`_Conn.more`)."""
    if not waiter.done():
        waiter.set_result(False)


def header_fields(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Header (or trailer) lines as h11 reads them: obs-folded lines joined with a blank, each
    ``name: value`` checked (h11's ``header_field``: a token, then a value without NUL or
    whitespace other than inner blanks and tabs), ``Content-Length`` merged and checked,
    ``Transfer-Encoding`` only ``chunked`` (lower-cased) and once. The names and the values are
    each checked in one pass over all of them: the same verdict as line by line, for less."""
    out: list[tuple[bytes, bytes]] = []
    length: bytes | None = None
    chunked = False
    for line in lines:
        name, sep, value = line.partition(b":")
        if not name or name[0] in _BLANK_BYTES:
            if name and name[0] in _BLANK_BYTES:  # an obs-fold: h11 joins the lines first
                return header_fields(_unfolded(lines))
            raise httpx.RemoteProtocolError("malformed header line")
        if not sep:
            raise httpx.RemoteProtocolError("malformed header line")
        value = value.strip(b" \t")
        if len(name) in (14, 17):  # Content-Length, Transfer-Encoding: checked and normalised
            key = name.lower()
            if key == b"content-length":
                if not (value.isdigit() and len(value) <= MAX_LENGTH_DIGITS):
                    value = _one_length(value)
                if length is None:
                    length = value
                elif value != length:
                    raise httpx.RemoteProtocolError("conflicting content-length headers")
                else:
                    continue
            elif key == b"transfer-encoding":
                value = value.lower()
                if chunked or value != b"chunked":
                    raise httpx.RemoteProtocolError(
                        f"unsupported transfer-encoding {value.decode('latin-1')!r}")
                chunked = True
        out.append((name, value))
    if (_BAD_NAME.search(b"".join([n for n, _ in out])) is not None
            or _BAD_FIELD.search(b"".join([v for _, v in out])) is not None):
        raise httpx.RemoteProtocolError("malformed header line")
    return out


def _one_length(value: bytes) -> bytes:
    """A Content-Length value other than plain digits: h11 accepts a list of equal lengths."""
    if _BAD_FIELD.search(value) is not None:  # refused as a header line before any length
        raise httpx.RemoteProtocolError("malformed header line")
    lengths = {v.strip() for v in value.split(b",")}
    if len(lengths) != 1:
        raise httpx.RemoteProtocolError("conflicting content-length headers")
    value = lengths.pop()
    if _DIGITS.fullmatch(value) is None or len(value) > MAX_LENGTH_DIGITS:
        raise httpx.RemoteProtocolError("bad content-length")
    return value


def _unfolded(lines: list[bytes]) -> list[bytes]:
    """h11's ``_obsolete_line_fold``: a line starting with blanks continues the one before."""
    folded: list[bytes] = []
    for line in lines:
        fold = _OBS_FOLD.match(line)
        if fold is None:
            folded.append(line)
        elif folded:
            folded[-1] += b" " + line[fold.end():]
        else:
            raise httpx.RemoteProtocolError("continuation line at start of headers")
    return folded


def _framing(method: str, status: int, version: bytes,
             headers: list[tuple[bytes, bytes]]) -> tuple[int | None, bool, bool]:
    """``(length, chunked, keep_alive)`` of an answer (headers checked by
    :func:`header_fields`); ``length`` None: up to the close. h11's ``_body_framing`` and
    ``_keep_alive``."""
    length: int | None = None
    chunked = False
    keep = version >= b"HTTP/1.1"
    for name, value in headers:
        key = name.lower()
        if key == b"content-length":
            length = int(value)
        elif key == b"transfer-encoding":
            chunked = True
        elif key == b"connection" and keep:
            keep = b"close" not in [v.strip() for v in value.lower().split(b",")]
    if method == "HEAD" or status in (204, 304):
        return 0, False, keep
    if chunked:
        return None, True, keep
    if length is None:
        return None, False, False
    return length, False, keep


class _Body(httpx.AsyncByteStream):
    """An answer's body, read from its connection as httpx iterates it; the connection goes back
    to the idle list once the body was read to the end, and is closed if it is closed unread."""

    def __init__(self, owner: Http1Transport, origin: Origin, conn: _Conn, length: int | None,
                 chunked: bool, keep: bool, timeout: float | None) -> None:
        self._owner, self._origin, self._conn = owner, origin, conn
        self._chunked, self._keep, self._timeout = chunked, keep, timeout
        self._to_close = length is None and not chunked  # delimited by the end of the connection
        self._left = length or 0  # bytes left in the body, or in the current chunk
        self._chunks = 0
        self._done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            while piece := await self._next():
                yield piece
        except BaseException:
            self._done = True
            self._conn.close()
            raise
        self._done = True
        self._owner._release(self._origin, self._conn, self._keep)

    async def _next(self) -> bytes:
        """The next piece of the body as it arrives; empty at its end."""
        conn, timeout = self._conn, self._timeout
        if self._to_close:
            while not conn.buf:
                if conn.closed:
                    return _EMPTY
                await conn.more(timeout)
            return conn.take(len(conn.buf))
        if self._chunked and self._left == 0:
            if self._chunks and await conn.line(timeout, "chunk end") != _EMPTY:
                raise httpx.RemoteProtocolError("bad chunk end")
            self._chunks += 1
            self._left = await self._chunk_size()
            if self._left == 0:  # the last chunk; trailers are checked, then ignored
                header_fields(await conn.lines(timeout, "trailers"))
                return _EMPTY
        if self._left == 0:
            return _EMPTY
        while not conn.buf:  # an early close raises
            await conn.more(timeout)
        piece = conn.take(self._left)
        self._left -= len(piece)
        return piece

    async def _chunk_size(self) -> int:
        m = _CHUNK_SIZE.fullmatch(await self._conn.line(self._timeout, "chunk size line"))
        if m is None:
            raise httpx.RemoteProtocolError("bad chunk size")
        return int(m[1], 16)

    async def aclose(self) -> None:
        if not self._done:
            self._done = True
            self._conn.close()


class Http1Transport(httpx.AsyncBaseTransport):
    """HTTP/1.1 keep-alive connections per origin, and the exchange itself (module docstring)."""

    def __init__(self, *, verify: ssl.SSLContext | bool = True) -> None:
        self._verify = verify
        self._ssl: ssl.SSLContext | None = verify if isinstance(verify, ssl.SSLContext) else None
        self._idle: dict[Origin, list[_Conn]] = {}
        #: connections being set up ahead of their requests (:meth:`open_ahead`)
        self._ahead: dict[Origin, _Dial | asyncio.Task[_Conn]] = {}

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:  # httpx's own default (True) or no verification (False), made once
            self._ssl = httpx.create_ssl_context(verify=bool(self._verify))
        return self._ssl

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout") or {}
        r = await self.send_message(request.method, origin_key(request.url),
                                    _message(request, await request.aread()),
                                    timeouts.get("read"), timeouts.get("connect"))
        assert isinstance(r, httpx.Response)  # (not light)
        return r

    async def send_message(self, method: str, origin: Origin, message: bytes,
                           read: float | None, connect: float | None, *, light: bool = False
                           ) -> httpx.Response | WholeAnswer:
        """One exchange of a request already on the wire's form (:func:`_message`'s, or
        :meth:`GetTemplate.message`'s): on an idle connection to ``origin`` when there is one
        (a stale one: a GET or HEAD sent again on a new one), else on a new one — the one
        :meth:`open_ahead` started for it, when it did. ``light``: an answer whose whole body
        came with its head, not encoded, is a :class:`WholeAnswer`."""
        idle = self._idle.setdefault(origin, [])
        while idle:
            conn = idle.pop()
            if conn.closed or conn.buf:
                conn.close()
                continue
            try:
                return await self._exchange(method, origin, conn, message, read, light)
            except httpx.RemoteProtocolError:
                if conn.received or method not in _RESEND:
                    raise
                # a stale keep-alive connection: sent again on a new one
        conn = await self._connect(origin, connect, self._ahead.pop(origin, None))
        return await self._exchange(method, origin, conn, message, read, light)

    async def _exchange(self, method: str, origin: Origin, conn: _Conn, message: bytes,
                        timeout: float | None, light: bool = False
                        ) -> httpx.Response | WholeAnswer:
        assert conn.transport is not None
        conn.received = False
        try:
            conn.transport.write(message)
            status, version, reason, headers = await conn.head(timeout)
            length, chunked, keep = _framing(method, status, version, headers)
        except BaseException:
            conn.close()
            raise
        ext = {"http_version": version, "reason_phrase": reason}
        if length is not None and len(conn.buf) >= length:
            # the whole body came with the head (a load report does): handed over as bytes, the
            # connection idle again at once — no stream to iterate, the same bytes
            whole = conn.take(length) if length else _EMPTY
            self._release(origin, conn, keep)
            if all(len(name) != 16 or name.lower() != b"content-encoding" for name, _ in headers):
                ext[WHOLE_BODY] = whole  # the body as it is, for a reader that wants it at once
                if light:
                    return WholeAnswer(status, headers, ext)
            return httpx.Response(status, headers=headers, stream=httpx.ByteStream(whole),
                                  extensions=ext)
        body = _Body(self, origin, conn, length, chunked, keep, timeout)
        return httpx.Response(status, headers=headers, stream=body, extensions=ext)

    def _release(self, origin: Origin, conn: _Conn, keep: bool) -> None:
        if keep and not conn.closed and not conn.buf:
            self._idle.setdefault(origin, []).append(conn)
        else:
            conn.close()

    async def _connect(self, origin: Origin, timeout: float | None,
                       ahead: _Dial | asyncio.Task[_Conn] | None = None,
                       resolved: asyncio.Future[Any] | None = None) -> _Conn:
        """A new connection to ``origin`` — the one :meth:`open_ahead` started, when given:
        the same connection, the same errors, within the same ``timeout`` (``resolved``: its
        host name's resolution, started by :meth:`open_ahead`; :func:`_tcp`)."""
        if isinstance(ahead, asyncio.Task):
            return await ahead  # (this method, started earlier)
        scheme, host, port = origin
        ctx = self._context() if scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            if ahead is not None:  # (an http origin: nothing after TCP; a timer on the socket)
                return (await _finish(loop, ahead, timeout))[1]
            async with asyncio.timeout(timeout):  # TCP and the TLS handshake, as httpcore's connect
                raw, conn = await _tcp(loop, host, port, resolved)
                if ctx is not None:
                    # TLS is started here rather than by create_connection(ssl=…): on a refused
                    # certificate the socket is ours to close at once
                    try:
                        tls = await loop.start_tls(raw, conn, ctx,
                                                   server_hostname=host.partition("%")[0])
                    except BaseException:
                        raw.close()
                        raise
                    if tls is None:  # pragma: no cover  (only when the transport is closing)
                        raw.close()
                        raise ConnectionResetError("connection closed during the TLS handshake")
                    conn.transport = tls
        except TimeoutError:
            raise httpx.ConnectTimeout(f"connection not made within {timeout:g} s") from None
        except OSError as e:  # refused, unreachable, unknown host, TLS verification (ssl.SSLError)
            raise httpx.ConnectError(str(e)) from e
        return conn

    def open_ahead(self, origins: Iterable[Origin], timeout: float | None) -> None:
        """Connections started ahead of a fan-out: one to each of ``origins``
        (:func:`origin_key`) that has none idle nor on its way, all at once, not waited for
        here: each is its request's own new connection (:meth:`_connect`), so each request is
        written as soon as its connection is up while the others are still being set up, built
        and answered (a first refresh of 200 brokers otherwise waited for its slowest
        connection before writing any request), and meets the errors it would have met. An
        http origin at an IPv4 address is only a socket connecting (:func:`_dial`); any other
        is a task. :meth:`settle` ends those no request took.

        The host names among them are resolved together first, in a few jobs on the loop's
        executor (:func:`_resolve_ahead`), rather than each in a job of its own: 200 broker
        names otherwise cost 200 jobs, their thread hand-overs and wake-ups (a first refresh
        of 200 brokers named by host: ~50 ms of CPU against ~40 for 200 IPv4 addresses)."""
        loop = asyncio.get_running_loop()
        dial = isinstance(loop, asyncio.SelectorEventLoop)
        names: dict[tuple[str, int], list[asyncio.Future[Any]]] = {}
        for origin in {o for o in origins if o not in self._ahead and not any(
                not c.closed for c in self._idle.get(o, ()))}:  # (a closed idle one: none)
            scheme, host, port = origin
            if dial and scheme == "http" and _is_ipv4(host):
                try:
                    self._ahead[origin] = _dial(loop, host, port)
                except OSError:
                    continue  # (failed at once: its request meets the error itself)
            else:
                resolved = None
                if dial and not _is_ipv4(host):
                    resolved = loop.create_future()
                    names.setdefault((host, port), []).append(resolved)
                self._ahead[origin] = asyncio.ensure_future(
                    self._connect(origin, timeout, resolved=resolved))
        if names:
            _resolve_ahead(loop, names)

    async def settle(self) -> None:
        """End the connections started ahead that no request took (their fan-out is over);
        one a task made already is kept idle."""
        ahead, self._ahead = self._ahead, {}
        tasks: list[tuple[Origin, asyncio.Task[_Conn]]] = []
        for origin, a in ahead.items():
            if isinstance(a, _Dial):
                a.drop()
            else:
                a.cancel()
                tasks.append((origin, a))
        made = await asyncio.gather(*(t for _, t in tasks), return_exceptions=True)
        for (origin, _), conn in zip(tasks, made, strict=True):
            if isinstance(conn, _Conn):
                self._idle.setdefault(origin, []).append(conn)

    async def aclose(self) -> None:
        await self.settle()
        for conns in self._idle.values():
            for c in conns:
                c.close()
        self._idle = {}
        await asyncio.sleep(0)  # the closed transports' callbacks run on this loop


async def _tcp(loop: asyncio.AbstractEventLoop, host: str, port: int,
               resolved: asyncio.Future[Any] | None = None) -> tuple[asyncio.Transport, _Conn]:
    """A TCP connection to ``host:port``: ``loop.create_connection``'s, for a third of its CPU
    when ``host`` is an IPv4 address on a selector loop (:func:`_dial`, :func:`_finish`).

    A host name is resolved first, as ``create_connection`` resolves it (``getaddrinfo`` of the
    host and port for a stream socket, on the loop's executor); when it names one IPv4 address
    (a cluster's broker names do), that address is dialled the same light way: a first refresh
    of 200 brokers named by host spent a third more CPU than one of 200 IPv4 addresses, most of
    it in resolving each name in a job of its own (``resolved``: the answer
    :func:`_resolve_ahead` is getting, or None when this one is to ask itself). The
    connection and its errors are the
    ones ``create_connection`` makes for a single address (``Connect call failed (address)``).
    A name that does not resolve raises the resolver's error, as ``create_connection`` does;
    one that resolves otherwise (several addresses, IPv6, none) is left to
    ``create_connection`` whole: its own resolution, order of attempts and errors."""
    if isinstance(loop, asyncio.SelectorEventLoop):
        if _is_ipv4(host):
            return await _finish(loop, _dial(loop, host, port))
        # (a name that does not resolve raises here what create_connection's resolution raises)
        infos = await resolved if resolved is not None else None
        if infos is None:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        if len(infos) == 1 and infos[0][0] == socket.AF_INET:
            return await _finish(loop, _dial(loop, *infos[0][4][:2]))
    raw, conn = await loop.create_connection(_Conn, host, port)
    assert isinstance(raw, asyncio.Transport)
    return raw, conn


#: the jobs a fan-out's host names are resolved in, at most (:func:`_resolve_ahead`): about the
#: threads of asyncio's default executor (5 or more), so the names are resolved as many at once
RESOLVE_JOBS = 8


def _resolve_ahead(loop: asyncio.AbstractEventLoop,
                   names: dict[tuple[str, int], list[asyncio.Future[Any]]]) -> None:
    """Resolve each ``(host, port)`` of ``names`` as ``create_connection`` would
    (``getaddrinfo`` for a stream socket), the names dealt over at most :data:`RESOLVE_JOBS`
    jobs on the loop's executor, and give each of its futures the answer or the resolver's
    error (a future already given up, cancelled with its connection, is left alone). A job
    that cannot run, or fails as a whole, gives None: each of its connections asks itself."""
    keys = list(names)
    for part in (keys[i::RESOLVE_JOBS] for i in range(min(RESOLVE_JOBS, len(keys)))):
        try:
            job = loop.run_in_executor(None, _getaddrinfo_all, part)
        except RuntimeError:  # (the executor is shut down)
            _give(names, part, None)
            continue
        job.add_done_callback(functools.partial(_resolved_part, names, part))


def _getaddrinfo_all(keys: list[tuple[str, int]]) -> list[Any]:
    """Each name's ``getaddrinfo`` answer, or its :class:`OSError` (on an executor thread)."""
    out: list[Any] = []
    for host, port in keys:
        try:
            out.append(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
        except OSError as e:
            out.append(e)
    return out


def _resolved_part(names: dict[tuple[str, int], list[asyncio.Future[Any]]],
                   part: list[tuple[str, int]], job: asyncio.Future[list[Any]]) -> None:
    if job.cancelled() or job.exception() is not None:
        _give(names, part, None)
        return
    for key, answer in zip(part, job.result(), strict=True):
        _give(names, [key], answer)


def _give(names: dict[tuple[str, int], list[asyncio.Future[Any]]],
          keys: list[tuple[str, int]], answer: Any) -> None:
    for key in keys:
        for fut in names[key]:
            if fut.done():
                continue
            if isinstance(answer, OSError):
                fut.set_exception(answer)
                fut.exception()  # (its connection raises it; one never started logs nothing)
            else:
                fut.set_result(answer)


class _Dial:
    """A TCP connection to an IPv4 address on its way (:func:`_dial`): its socket, connecting
    without blocking, and the future the loop ends when it is connected or failed (its taker's
    connect timeout bounds the wait: :meth:`Http1Transport._connect`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, sock: socket.socket,
                 made: asyncio.Future[None]) -> None:
        self.loop, self.sock, self.made = loop, sock, made

    def drop(self) -> None:
        """Stop waiting and close the socket (nobody took it)."""
        if self.sock.fileno() >= 0:
            self.loop.remove_writer(self.sock.fileno())
        if not self.made.cancel() and not self.made.cancelled():
            self.made.exception()  # (failed, and nobody asked: no log of it)
        self.sock.close()


def _dial(loop: asyncio.AbstractEventLoop, host: str, port: int) -> _Dial:
    """Start a TCP connection to an IPv4 address: no name to resolve, so none of
    ``create_connection``'s resolution step and ``sock_connect``'s round of futures (a first
    refresh of 200 brokers spent ~20 % of its CPU setting up connections). The socket connects
    without blocking and the loop says when it is writable. A connect call that fails at once is
    raised as it is: ``create_connection``'s error too."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        address = (host, port)
        err = sock.connect_ex(address)
        if err not in (0, errno.EINPROGRESS):
            raise OSError(err, os.strerror(err))
        made: asyncio.Future[None] = loop.create_future()
        if err:
            loop.add_writer(sock.fileno(), _made, loop, sock, address, made)
        else:
            made.set_result(None)
    except BaseException:
        sock.close()
        raise
    return _Dial(loop, sock, made)


async def _finish(loop: asyncio.AbstractEventLoop, dial: _Dial, timeout: float | None = None
                  ) -> tuple[asyncio.Transport, _Conn]:
    """The connection :func:`_dial` started, once made, on a transport of the loop; its errors
    are the ones ``create_connection`` raises (``Connect call failed …``), one not made within
    ``timeout`` s a :class:`TimeoutError` (a timer on the socket's future: what
    ``asyncio.timeout`` does, for less); a cancelled, late or failed one closes its socket."""
    timer = None if timeout is None else loop.call_later(timeout, _late, loop, dial)
    try:
        try:
            await dial.made
        finally:
            if timer is not None:
                timer.cancel()
            if dial.made.cancelled():  # (else _made or _late stopped watching, or none watched)
                loop.remove_writer(dial.sock.fileno())
        raw, conn = await loop.create_connection(_Conn, sock=dial.sock)
    except BaseException:
        dial.sock.close()
        raise
    assert isinstance(raw, asyncio.Transport)
    return raw, conn


def _made(loop: asyncio.AbstractEventLoop, sock: socket.socket, address: tuple[str, int],
          made: asyncio.Future[None]) -> None:
    """A connecting socket turned writable: connected, or failed as asyncio words it."""
    loop.remove_writer(sock.fileno())  # (not called again while its taker wakes up)
    if made.done():
        return
    err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err:
        made.set_exception(OSError(err, f"Connect call failed {address}"))
    else:
        made.set_result(None)


def _late(loop: asyncio.AbstractEventLoop, dial: _Dial) -> None:
    """A connection not made in time: its taker's connect timeout."""
    if not dial.made.done():
        loop.remove_writer(dial.sock.fileno())
        dial.made.set_exception(TimeoutError())


@functools.lru_cache(maxsize=4096)
def _is_ipv4(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


def origin_key(url: httpx.URL) -> Origin:
    """``(scheme, host, port)`` of an http(s) URL: the key of its idle connections."""
    scheme = url.scheme
    if scheme not in ("http", "https"):
        raise httpx.UnsupportedProtocol(f"unsupported URL scheme {scheme!r}")
    return scheme, url.raw_host.decode("ascii"), url.port or (443 if scheme == "https" else 80)


#: a URL httpx keeps as it is written (``httpx.URL`` of it: the same origin, ``Host`` and target):
#: http(s), a lower-case host name or IPv4 address, an explicit port, a path and a query of
#: unreserved characters only (nothing to quote, no ``.``/``..`` segment, no fragment)
_PLAIN_URL = re.compile(r"(https?)://([a-z0-9][a-z0-9.-]*):([1-9][0-9]{0,4})"
                        r"((/[A-Za-z0-9._~/-]*)(?:\?[A-Za-z0-9._~=&-]+)?)")
_IPV4_STYLE = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
_DEFAULT_PORT = {"http": 80, "https": 443}
_DOT_SEGMENTS = frozenset({".", ".."})


@functools.lru_cache(maxsize=4096)  # a fan-out asks it twice a URL (its connection, its request)
def plain_url(url: str) -> tuple[Origin, bytes, bytes] | None:
    """``(origin, Host header value, request target)`` of a URL :data:`_PLAIN_URL` accepts, as
    httpx makes them (a test compares them for generated URLs); None for any other URL, which
    goes through ``httpx.URL``. Parsing a URL is half of what building a request costs in httpx,
    and a first refresh of 200 brokers parses 200 new ones."""
    m = _PLAIN_URL.fullmatch(url)
    if m is None:
        return None
    scheme, host, port_text, target, path = m.groups()
    port = int(port_text)
    if port > 65535 or port == _DEFAULT_PORT[scheme]:
        return None
    if "." in path and not _DOT_SEGMENTS.isdisjoint(path.split("/")):
        return None  # httpx drops dot segments
    if _IPV4_STYLE.fullmatch(host) is not None:
        import ipaddress

        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return None  # httpx refuses it, in its own words
    return (scheme, host, port), f"{host}:{port}".encode("ascii"), target.encode("ascii")


class GetTemplate:
    """The bytes of a GET that httpx would build with the given headers, for any
    :func:`plain_url`: made once from one request httpx built (its headers and their order,
    ``Host`` first, and its timeouts), then only the target and ``Host`` change. The headers
    were checked as :func:`_message` checks them, the target and host by :data:`_PLAIN_URL`."""

    def __init__(self, request: httpx.Request) -> None:
        raw = request.headers.raw
        _message(request, b"")  # refuses what h11 would refuse, as the request itself
        timeouts = request.extensions.get("timeout") or {}
        self.read: float | None = timeouts.get("read")
        self.connect: float | None = timeouts.get("connect")
        self.usable = (request.method == "GET" and bool(raw) and raw[0][0] == b"Host"
                       and "transfer-encoding" not in request.headers
                       and "content-length" not in request.headers)
        self._rest = b"".join(name + b": " + value + b"\r\n" for name, value in raw[1:])

    def message(self, host: bytes, target: bytes) -> bytes:
        return b"GET " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\n" + self._rest + b"\r\n"


def _message(request: httpx.Request, body: bytes) -> bytes:
    """The request's bytes on the wire: what httpx built, refused where h11 would refuse it."""
    target = request.url.raw_path
    if _BAD_TARGET.search(target) is not None:
        raise httpx.LocalProtocolError("Illegal target characters")
    raw = request.headers.raw
    names = [name for name, _ in raw]
    if not all(names) or _BAD_NAME.search(b"".join(names)) is not None:
        raise httpx.LocalProtocolError("Illegal header name")
    if _BAD_VALUE.search(b"".join(value for _, value in raw)) is not None:
        raise httpx.LocalProtocolError("Illegal header value")
    lines = [request.method.encode("ascii") + b" " + target + b" HTTP/1.1"]
    lines += [name + b": " + value for name, value in raw]
    lines.append(_EMPTY)
    chunked = "transfer-encoding" in request.headers
    if chunked and body:  # a streamed body httpx had no length for, sent as one chunk
        body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    elif chunked:
        body = b"0\r\n\r\n"
    return b"\r\n".join(lines) + b"\r\n" + body


class _NoCookies(httpx.Cookies):
    """A cookie jar that keeps nothing: ``pulsar-admin`` keeps no cookies either
    (``AsyncHttpConnector.configureAsyncHttpClientConfig``: ``setCookieStore(null)``, apache/pulsar
    005cbf1e), and taking them is a urllib request and response per answer (~10 % of a
    200-broker refresh's CPU, benchmarks/monitor_brokers.py)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class NoCookiesClient(httpx.AsyncClient):
    """An :class:`httpx.AsyncClient` that neither stores a server's cookies nor sends any."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._none_kept = _NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._none_kept

    @cookies.setter
    def cookies(self, cookies: object) -> None:
        raise TypeError("this client keeps no cookies")


def connect_timeout(timeout: float) -> float:
    """How long a connection may take to set up: the request's deadline, 10 s at most."""
    return min(10.0, timeout)


def async_client(transport: httpx.AsyncBaseTransport | None, *, verify: ssl.SSLContext | bool,
                 timeout: float) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` the admin and Prometheus clients send through: on ``transport``
    (default: :class:`Http1Transport` with ``verify``), redirects not followed (the callers'),
    proxies and ``.netrc`` not read (``trust_env=False``), no cookies (:class:`NoCookiesClient`),
    ``timeout`` the deadline of a request (connections: :func:`connect_timeout`)."""
    if transport is None:
        transport = Http1Transport(verify=verify)
    return NoCookiesClient(
        transport=transport, follow_redirects=False,
        trust_env=False, timeout=httpx.Timeout(timeout, connect=connect_timeout(timeout)))
