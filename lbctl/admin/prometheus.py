"""A read-only client of Prometheus' HTTP API: ``/api/v1/series`` and ``/api/v1/query_range``.

lbctl reads load-balancing history from the Prometheus that scrapes a Pulsar cluster
(:mod:`lbctl.sources.prometheus` turns the series into snapshots). This module only speaks HTTP,
and lives here because ``lbctl.admin`` is the one place httpx is imported. It reuses the admin
client's pieces: authentication from ``authPlugin``/``authParams`` (:func:`lbctl.admin.auth.make_auth`
— a bearer token with ``AuthenticationToken``, ``AuthenticationBasic`` for basic auth, a client
certificate with ``AuthenticationTls``; user info in the URL, ``https://user:pass@prom``, is basic
auth too), TLS trust from the same client.conf keys (:func:`lbctl.admin.tls.verify_for`), the
error classes and their exit codes, the credential policy (:mod:`lbctl.admin.policy`), the light
wire (:class:`lbctl.admin.transport.Http1Transport`) and the redaction of secrets from every
message.

Bounded, whatever the server does:

* **Chunked.** Prometheus refuses a range query of more than 11,000 points per series
  (``exceeded maximum resolution of 11,000 points per timeseries``); :func:`plan_chunks` cuts a
  range into consecutive chunks of at most :data:`MAX_POINTS` steps, and fewer when the series
  count known from ``/api/v1/series`` times the steps would pass :data:`DEFAULT_MAX_SAMPLES` (a
  budget well under Prometheus' own ``--query.max-samples``, 50 million). A chunk Prometheus still
  finds too large (422 ``too many samples``) is halved and asked again, down to one step.
* **Timed.** ``--request-timeout`` is each request's overall deadline — connection, head and
  body together, so a server sending a byte a second cannot outlast it — and its ``timeout``
  query parameter, so that Prometheus abandons the evaluation too. A slow answer is not retried
  (it would multiply the wait); connection failures, 429 and 502/503/504 are retried ``retries``
  times with exponential backoff (:data:`lbctl.admin.retry.PROMETHEUS`).
* **Sized.** An answer is read as a stream and refused past ``--max-response-size``, counted
  after decompression: a gzip answer is inflated by lbctl, chunk by chunk, never beyond the cap
  (a 1 MiB gzip bomb stops at the cap, not at gigabytes). Answers are asked gzip-compressed,
  but from a Prometheus on this machine (a loopback address), where compressing saves no
  network and costs both sides CPU.
* **Counted.** One client sends at most :data:`MAX_REQUESTS` requests; a range that would take
  more is refused before the first one (:func:`chunk_count`), as the callers check the number of
  steps (:data:`lbctl.sources.prometheus.request.MAX_STEPS`).
* **Credentials stay home**, by the admin client's policy (:mod:`lbctl.admin.policy`): hostname
  verification on whenever a credential is sent (unless ``tlsEnableHostnameVerification=false``
  says otherwise), redirects followed only within ``--prometheus-url``'s origin and never from
  https to http (so neither a header nor the TLS client certificate reaches another host), every
  message scrubbed of the secrets in any escaped form.
* **Partial data is never silent.** An answer with ``warnings`` (a federated or remote-read
  Prometheus, Thanos' partial responses) raises :class:`PartialData` unless the caller allows it,
  in which case the warnings are handed back with the data for the caller to mark.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import re
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, fields
from itertools import repeat
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

import msgspec

from lbctl.admin.auth import Auth, make_auth, url_auth
from lbctl.admin.clientconf import ConnectionConfig
from lbctl.admin.errors import (
    AdminError,
    ConnectionFailed,
    HttpError,
    RequestTimeout,
    error_class,
    reason_of,
)
from lbctl.admin.policy import connection_warnings, downgrade, join_location, origin_of
from lbctl.admin.retry import PROMETHEUS, RetryPolicy, retry_after
from lbctl.records import replace
from lbctl.safe.redact import redact, split_userinfo, url_without_userinfo

#: Prometheus' limit of points per series in one range query (``api/v1`` ``query_range``)
MAX_POINTS = 11_000
#: samples (series × steps) one request may ask for; Prometheus' default ``query.max-samples`` is
#: 50,000,000, and a response of that size would be gigabytes of JSON
DEFAULT_MAX_SAMPLES = 2_000_000
DEFAULT_TIMEOUT = 30.0
#: requests one client may send (retries and halved chunks included)
MAX_REQUESTS = 10_000
#: the latest sample time accepted (9999-12-31T23:59:59Z, in seconds): later, or not finite, is
#: not a Prometheus timestamp
MAX_TIMESTAMP = 253_402_300_799
MAX_REDIRECTS = 5
#: requests one client has in flight at once (Prometheus' own ``--query.max-concurrency`` is 20)
DEFAULT_CONCURRENCY = 4
_REDIRECTS = (301, 302, 303, 307, 308)
_TOO_LARGE = re.compile(r"too many samples|maximum resolution|max-samples", re.I)

T = TypeVar("T")
A = TypeVar("A")


class PartialData(HttpError):
    """Prometheus answered, with warnings that part of the data may be missing."""


@dataclass(frozen=True)
class PrometheusConfig:
    """Where Prometheus is and how to reach it (client.conf's keys, without ``webServiceUrl``)."""

    url: str
    auth_plugin: str | None = None
    auth_params: str | None = field(default=None, repr=False)
    tls_trust_cert_path: str | None = None
    tls_allow_insecure: bool = False
    #: None (not given): on whenever a credential is sent, as for the admin client
    tls_enable_hostname_verification: bool | None = None
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    request_timeout: float = DEFAULT_TIMEOUT
    #: the --prometheus-conf file these settings were read from (named by auth errors)
    conf: str | None = None

    @classmethod
    def read(cls, url: str, conf: str | Path | None, request_timeout: float) -> PrometheusConfig:
        """``url`` with the auth and TLS settings of a client.conf-style file, read as the admin
        client reads ``--client-conf`` (:func:`lbctl.admin.clientconf.conf_settings`: an absent
        key stays unset, a boolean must be true or false)."""
        from lbctl.admin.clientconf import conf_settings

        given = conf_settings(conf) if conf else {}
        names = {f.name for f in fields(cls)}
        kept: dict[str, Any] = {k: v for k, v in given.items() if k in names}
        kept.pop("conf", None)
        return cls(url=url, request_timeout=request_timeout, **kept,
                   conf=str(conf) if conf else None)

    def connection(self, url: str) -> ConnectionConfig:
        """These settings as the admin client's, for the shared TLS and warning rules."""
        return ConnectionConfig(
            admin_url=url, tls_trust_cert_path=self.tls_trust_cert_path,
            tls_allow_insecure=self.tls_allow_insecure,
            tls_enable_hostname_verification=self.tls_enable_hostname_verification)


@dataclass
class Series:
    """One series of a range query: its labels and its finite samples as answered, in time
    order: ``times`` (epoch ms) and ``values`` side by side (columns: a reader on the step grid
    takes them as they are), or as a mapping (:attr:`points`)."""

    labels: dict[str, str]
    times: list[int]
    values: list[float]

    @property
    def points(self) -> dict[int, float]:
        """Epoch ms → value (a time answered twice: its last value)."""
        return dict(zip(self.times, self.values, strict=True))

    def merge(self, other: Series) -> None:
        """``other``'s samples added (the same series, from another chunk)."""
        points = self.points
        points.update(other.points)
        self.times, self.values = list(points), list(points.values())


@dataclass
class RangeResult:
    series: list[Series]
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RangeQuery:
    """One ``query_range``: a PromQL expression over ``[start, end]`` every ``step`` (ms), of
    about ``series`` series (what the chunks are sized by)."""

    query: str
    start_ms: int
    end_ms: int
    step_ms: int
    series: int = 1


# ---- a range answer, decoded straight into columns -------------------------------------------
class _RangeSeries(msgspec.Struct):
    metric: dict[str, str]
    values: list[tuple[float, float]] = []


class _Matrix(msgspec.Struct):
    resultType: str
    result: list[_RangeSeries]


class _RangeAnswer(msgspec.Struct):
    status: str
    data: _Matrix
    warnings: list[str] = []


class _RawSeries(msgspec.Struct):
    metric: dict[str, str]
    values: msgspec.Raw = msgspec.Raw(b"[]")


class _RawMatrix(msgspec.Struct):
    resultType: str
    result: list[_RawSeries]


class _RawAnswer(msgspec.Struct):
    status: str
    data: _RawMatrix
    warnings: list[str] = []


#: lax: Prometheus writes sample values as strings ("0.25", "NaN"), read here as floats in C
_RANGE_DECODER = msgspec.json.Decoder(_RangeAnswer, strict=False)
#: the same answer with each series' samples left as their JSON text (:func:`_columns_of`)
_RAW_DECODER = msgspec.json.Decoder(_RawAnswer)
_FLOATS = msgspec.json.Decoder(list[float])
#: what a JSON number is written with; what is left of a series' samples without them is their
#: punctuation, which says whether they are ``[[t,"v"],…]``
_NUMBER_BYTES = b"0123456789.eE+-"
_PUNCTUATION = b'[]"'
#: "-0" is read as +0.0 by the lax decoding, as -0.0 by ``float``: such an answer is read the slow way
_MINUS_ZERO = b'"-0"'
_TO_MS = 1000.0
#: what a series' values may be written with when its times are the grid's (:func:`_on_grid`)
_VALUE_BYTES = _NUMBER_BYTES + b","


@functools.lru_cache(maxsize=8)
def _pairs_punctuation(n: int) -> bytes:
    """The punctuation of ``n`` samples as Prometheus writes them: ``[[,""],[,""],…]``."""
    return b"[" + b",".join(repeat(b'[,""]', n)) + b"]"


def _columns_of(raw: bytes) -> tuple[list[float], list[float]] | None:
    """A series' samples, written exactly ``[[t,"v"],[t,"v"],…]`` with numbers for every ``t``
    and ``v``, as two columns of floats (times in seconds, values) decoded in one pass in C, with
    no object per sample (half the cost of decoding pairs, measured on captured answers). The
    punctuation left once the number characters are taken out must be that of ``n`` pairs, and
    what is left once the punctuation is taken out must be ``2n`` JSON numbers: then each pair is
    one number and one string holding one number, which is what the typed decoding reads
    (msgspec's own number reading either way). ``None`` otherwise (``NaN``, ``+Inf``, a third
    item, a space …): the caller decodes the pairs one by one."""
    punctuation = raw.translate(None, _NUMBER_BYTES)
    n = (len(punctuation) - 1) // 6
    if punctuation != _pairs_punctuation(n):
        return None
    try:
        flat = _FLOATS.decode(b"[" + raw.translate(None, _PUNCTUATION) + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):  # 1e400, "-", "1.2.3" …
        return None
    if len(flat) != 2 * n:
        return None
    return flat[0::2], flat[1::2]


@functools.lru_cache(maxsize=4)
def _grid_text(start_ms: int, end_ms: int, step_ms: int
               ) -> tuple[list[int], dict[bytes, int], list[bytes]]:
    """A range query's evaluation times (epoch ms) and the text of its series' samples around
    them, as :func:`_on_grid` splits it at the quotes: a series' first piece (``[[t,``) → the
    step it starts at, and the piece before each later step's value (``],[t,``). A time is
    written as :func:`_seconds` writes it (the query's own ``start``/``end``), which is how
    Prometheus writes a sample's time (``marshalTimestamp``, util/jsonutil): whole seconds, then
    a point and three digits when there are milliseconds (a time before 1970 is written
    otherwise: such a grid is not read this way). Made once per chunk (every query of a chunk
    has the same grid); never changed, only sliced."""
    grid = list(range(start_ms, end_ms + 1, step_ms))
    texts = [_seconds(t).encode() for t in grid]
    return (grid, {b"[[" + t + b",": i for i, t in enumerate(texts)},
            [b"],[" + t + b"," for t in texts])


def _on_grid(raw: bytes, grid: tuple[list[int], dict[bytes, int], list[bytes]]
             ) -> tuple[list[int], list[float]] | None:
    """A series' samples whose times are consecutive steps of the query's grid, written as the
    grid's own text (:func:`_grid_text`), and each value a JSON number in its quotes — exactly
    ``[[t,"v"],[t,"v"],…]``, as a range query answers: the grid's times (ms) and the values,
    with no time decoded. The text is split at its quotes: the pieces between the values must
    be the grid's, piece by piece, and the values only number characters, ``n`` JSON numbers
    once joined. Why: a decoded time is a float made, compared with the grid and dropped, one
    per sample, each allocated between two values; the values then lie on twice the memory,
    and every later pass over them (the columns, the records, the lines written) reads twice
    the cache lines. Measured on the 3 h × 100 brokers × 500 bundles history (answers replayed
    from memory): a fifth of the whole read's CPU, several times what decoding the times costs.
    ``None`` otherwise: the series is decoded with its times (:func:`_columns_of`), whose
    result on such a text is the same (the grid's times, as floats equal to the grid's)."""
    times, firsts, joints = grid
    pieces = raw.split(b'"')
    n = len(pieces) // 2
    first = firsts.get(pieces[0])
    if first is None or not n or len(pieces) % 2 == 0 or pieces[-1] != b"]]" \
            or pieces[2:-1:2] != joints[first + 1:first + n]:
        return None
    text = b",".join(pieces[1::2])
    if text.translate(None, _VALUE_BYTES):  # a letter, a space, a bracket, a backslash …
        return None
    try:
        values = _FLOATS.decode(b"[" + text + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):  # 1e400, "-", "1.2.3", "" …
        return None
    if len(values) != n:  # a value holding a comma
        return None
    return times[first:first + n], values


@dataclass
class _Columns:
    """A successful matrix answer decoded: per series its labels and its samples' times
    (seconds) and values, as floats; ``body`` for the checked reading (:meth:`builtins`). A
    series whose index is in ``on_grid`` has its times as the grid's (epoch ms, checked by
    :func:`_on_grid`), not in seconds."""

    series: list[tuple[dict[str, str], list[Any], list[float]]]
    warnings: list[str]
    body: bytes
    on_grid: set[int] = field(default_factory=set)

    def builtins(self) -> Any:
        """The ``data`` the checked reading takes: what the typed decoding made of it, as plain
        values (or the plain JSON when it did not take it)."""
        try:
            return msgspec.to_builtins(_RANGE_DECODER.decode(self.body).data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            import orjson

            return orjson.loads(self.body)["data"]


def _decode_range(body: bytes, grid: tuple[int, int, int] | None = None) -> _Columns | None:
    """A successful matrix answer decoded in one pass (labels as ``str``, sample times and values
    as ``float``: what the checked reading would make of them): each series' samples straight to
    columns — on the query's ``grid`` (start, end, step in ms, when given) with no time decoded
    (:func:`_on_grid`), else with its times (:func:`_columns_of`) — or, if one series is written
    otherwise, every pair decoded as a record; ``None`` when anything does not fit (a ``+Inf``
    value, a label that is not a string, not JSON …) or the answer holds a ``"-0"``: those go
    the checked way (:meth:`PrometheusClient._series_checked`), with its messages."""
    try:
        answer = _RAW_DECODER.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
        return None
    if answer.status != "success" or answer.data.resultType != "matrix" or _MINUS_ZERO in body:
        return None
    text = _grid_text(*grid) if grid is not None and grid[0] >= 0 else None
    series: list[tuple[dict[str, str], list[Any], list[float]]] = []
    on_grid: set[int] = set()
    for item in answer.data.result:
        raw = bytes(item.values)
        ready = _on_grid(raw, text) if text is not None else None
        if ready is not None:
            on_grid.add(len(series))
            series.append((item.metric, *ready))
            continue
        columns = _columns_of(raw)
        if columns is None:
            return _decode_pairs(body)
        series.append((item.metric, *columns))
    return _Columns(series, answer.warnings, body, on_grid)


def _decode_pairs(body: bytes) -> _Columns | None:
    """:func:`_decode_range` the slower way, pair by pair, for an answer not written as
    Prometheus writes it."""
    try:
        answer = _RANGE_DECODER.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
        return None
    series = []
    for item in answer.data.result:
        times, values = zip(*item.values, strict=True) if item.values else ((), ())
        series.append((item.metric, list(times), list(values)))
    return _Columns(series, answer.warnings, body)


def _fast_series(data: _Columns, start_ms: int, end_ms: int, step_ms: int
                 ) -> list[Series] | None:
    """The series of a decoded matrix, each converted at once, not sample by sample. A series
    whose times are consecutive steps of the query's grid (as a range query answers) takes the
    grid's times as they are; any other has its times checked (in range) and converted. Every
    value must be finite (checked on the sum: a NaN or an infinity makes it so). ``None`` when a
    series has an odd sample: the caller reads the answer the checked way instead."""
    grid_ms = list(range(start_ms, end_ms + 1, step_ms))  # a slice of it shares its ints
    grid_s = [t / _TO_MS for t in grid_ms]
    first_of = {t: i for i, t in enumerate(grid_s)}
    out = []
    isfinite = math.isfinite
    on_grid = data.on_grid
    for k, (labels, times, vals) in enumerate(data.series):
        if not vals:
            out.append(Series(labels, [], []))
            continue
        if not isfinite(sum(vals)):
            return None
        if k in on_grid:  # the grid's times already (_on_grid)
            out.append(Series(labels, times, vals))
            continue
        first = first_of.get(times[0])
        if first is not None and times == grid_s[first:first + len(times)]:
            out.append(Series(labels, grid_ms[first:first + len(times)], vals))
            continue
        if not (isfinite(sum(times)) and min(times) >= 0 and max(times) <= MAX_TIMESTAMP):
            return None
        ms = list(map(round, map(float.__mul__, times, repeat(_TO_MS))))
        out.append(Series(labels, ms, vals))
    return out


def chunk_count(start_ms: int, end_ms: int, step_ms: int, series: int = 1, *,
                max_points: int = MAX_POINTS, max_samples: int = DEFAULT_MAX_SAMPLES) -> int:
    """How many chunks :func:`plan_chunks` makes, without making them."""
    if step_ms <= 0 or end_ms < start_ms:
        return 0
    steps = (end_ms - start_ms) // step_ms + 1
    per = max(1, min(max_points, max_samples // max(1, series)))
    return -(-steps // per)


def plan_chunks(start_ms: int, end_ms: int, step_ms: int, series: int = 1, *,
                max_points: int = MAX_POINTS, max_samples: int = DEFAULT_MAX_SAMPLES
                ) -> list[tuple[int, int]]:
    """Consecutive ``(start, end)`` evaluation ranges covering ``start, start+step, …, <= end``,
    each of at most ``max_points`` steps and at most ``max_samples`` samples for ``series`` series
    (at least one step each). Chunk boundaries stay on the step grid, so the timestamps are exactly
    those one unchunked query would evaluate."""
    if step_ms <= 0:
        raise ValueError("step must be positive")
    if end_ms < start_ms:
        return []
    steps = (end_ms - start_ms) // step_ms + 1
    per = max(1, min(max_points, max_samples // max(1, series)))
    out = []
    i = 0
    while i < steps:
        n = min(per, steps - i)
        out.append((start_ms + i * step_ms, start_ms + (i + n - 1) * step_ms))
        i += n
    return out


class PrometheusClient:
    """Synchronous to its callers; the requests of one call (:meth:`query_ranges`,
    :meth:`series_many`) run concurrently on its event loop, at most :attr:`max_concurrency` at
    once, every rule of the module docstring holding for each."""

    def __init__(self, url: str, *, auth: Auth | None = None, timeout: float = DEFAULT_TIMEOUT,
                 verify: Any = True, transport: Any = None, retries: int = PROMETHEUS.retries,
                 backoff: float = PROMETHEUS.backoff, max_points: int = MAX_POINTS,
                 max_samples: int = DEFAULT_MAX_SAMPLES, allow_partial: bool = False,
                 trace: Callable[[str], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 max_response_bytes: int | None = None, max_requests: int = MAX_REQUESTS,
                 max_concurrency: int = DEFAULT_CONCURRENCY, auth_note: str | None = None):
        self.url = url.rstrip("/")
        #: what a 401 or 403 answer adds in brackets: which credential was sent, from where
        #: (:func:`auth_note`); None adds nothing
        self.auth_note = auth_note
        self.auth = auth or Auth()
        self.timeout = timeout
        #: how failed requests are asked again
        self.retry: RetryPolicy = replace(PROMETHEUS, retries=retries, backoff=backoff)
        self.max_points = max_points
        self.max_samples = max_samples
        self.allow_partial = allow_partial
        self._verify = verify
        self._transport = transport
        self._trace = trace
        self._sleep = sleep
        self._http: Any = None
        self._runner: asyncio.Runner | None = None
        self.max_response_bytes = max_response_bytes
        self.max_requests = max_requests
        #: requests in flight at once (:meth:`query_ranges`, :meth:`series_many`)
        self.max_concurrency = max_concurrency
        self._encoding = "identity" if _loopback(self.url) else "gzip"
        #: requests sent so far (attempts and redirects included)
        self.requests = 0
        #: every URL requested with its query string, in order (tests read it)
        self.sent: list[str] = []
        #: answers read ahead (:meth:`read_ahead`), by URL, each served once instead of a request
        self._ahead: dict[str, tuple[int, Any, bytes]] = {}

    # ---- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> PrometheusClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._runner is not None:
            http, self._http = self._http, None
            if http is not None:
                with contextlib.suppress(Exception):
                    self._runner.run(http.aclose())
            self._runner.close()
            self._runner = None

    def interrupt(self) -> None:
        """From another thread than the one running this client's requests: cancel them (that
        thread's call raises ``CancelledError``), now or as soon as its loop runs."""
        runner = self._runner
        if runner is None:
            return
        loop = runner.get_loop()

        def cancel() -> None:
            for task in asyncio.all_tasks(loop):
                task.cancel()

        with contextlib.suppress(RuntimeError):  # closed meanwhile: nothing runs
            loop.call_soon_threadsafe(cancel)

    def _run(self, fn: Callable[[A], Coroutine[Any, Any, T]], items: Sequence[A]) -> list[T]:
        """:meth:`_all` of ``fn`` over ``items`` on this client's loop. Its result is handed back
        through a box, the task itself ending with ``None``: on the main thread
        ``asyncio.Runner`` puts Python's SIGINT handler back at the end, and ``signal.signal``
        builds (and drops) an error message holding the ``repr`` of the handler it replaces —
        the finished task with its whole result (a history's answers: 0.1–0.3 s of CPU,
        measured). The coroutine is made once the task runs: a task cancelled before its first
        step leaves no coroutine never awaited."""
        if self._runner is None:
            self._runner = asyncio.Runner()
        box: list[list[T]] = []
        self._runner.run(self._boxed(fn, items, box))
        return box[0]

    async def _boxed(self, fn: Callable[[A], Coroutine[Any, Any, T]], items: Sequence[A],
                     box: list[list[T]]) -> None:
        box.append(await self._all(fn, items))

    def _client(self) -> Any:
        """One ``httpx.AsyncClient`` on the light wire: redirects are this module's, proxies and
        ``.netrc`` are not read."""
        if self._http is None:
            from lbctl.admin.transport import async_client

            self._http = async_client(self._transport, verify=self._verify, timeout=self.timeout)
        return self._http

    def redact(self, text: str) -> str:
        return redact(text, self.auth.secrets())

    # ---- the API -------------------------------------------------------------------------------
    def series(self, match: Sequence[str], start_ms: int, end_ms: int) -> list[dict[str, str]]:
        """``GET /api/v1/series``: the label sets of every series matching any selector."""
        return self.series_many([match], start_ms, end_ms)[0]

    def series_many(self, matches: Sequence[Sequence[str]], start_ms: int, end_ms: int
                    ) -> list[list[dict[str, str]]]:
        """:meth:`series` of each of ``matches``, asked concurrently (at most
        :attr:`max_concurrency` at once); in the order given."""
        return self._run(lambda m: self._aseries(m, start_ms, end_ms), matches)

    async def _aseries(self, match: Sequence[str], start_ms: int, end_ms: int
                       ) -> list[dict[str, str]]:
        params: list[tuple[str, str]] = [("match[]", m) for m in match]
        params += [("start", _seconds(start_ms)), ("end", _seconds(end_ms))]
        data, _ = await self._get("/api/v1/series", params)
        if not isinstance(data, list) or not all(isinstance(s, dict) for s in data):
            raise HttpError(self._where("/api/v1/series") + ": expected a list of label sets")
        return [{str(k): str(v) for k, v in s.items()} for s in data]

    def query_range(self, query: str, start_ms: int, end_ms: int, step_ms: int,
                    series: int = 1) -> RangeResult:
        """``GET /api/v1/query_range`` over ``[start, end]``, chunked (module docstring); the
        points of a series found in several chunks are merged."""
        return self.query_ranges([RangeQuery(query, start_ms, end_ms, step_ms, series)])[0]

    def query_ranges(self, queries: Sequence[RangeQuery],
                     done: Callable[[int, RangeResult], None] | None = None
                     ) -> list[RangeResult]:
        """:meth:`query_range` of each query, asked concurrently (at most
        :attr:`max_concurrency` requests at once: Prometheus evaluates them on its own cores
        while the answers already in are decoded); in the order given. Refused before the first
        request if they would take more than :attr:`max_requests`.

        ``done(i, result)``, when given, is called once per query, in the order given, as soon
        as that query and every one before it are answered — while the later ones are still
        being evaluated, so the caller's work on the first answers overlaps Prometheus' on the
        rest instead of starting after the last answer. It runs on this client's loop, after
        the request that took the freed slot was sent. An error it raises stops the calls and
        is raised once every query is answered; a failed query's error comes first, as it
        would without ``done``."""
        self.check_requests(sum(
            chunk_count(q.start_ms, q.end_ms, q.step_ms, q.series, max_points=self.max_points,
                        max_samples=self.max_samples) for q in queries))
        if done is None:
            return self._run(self._aquery_range, queries)
        got: dict[int, RangeResult] = {}
        taken = [0]  # results handed to ``done`` so far
        failed: list[BaseException] = []
        open_ = [True]  # False once this call returned: a hop left on the loop does nothing

        def flush() -> None:
            while open_[0] and not failed and taken[0] in got:
                i = taken[0]
                taken[0] += 1
                try:
                    done(i, got.pop(i))
                except Exception as e:  # raised by query_ranges, not by the loop
                    failed.append(e)

        async def one(item: tuple[int, RangeQuery]) -> RangeResult:
            res = await self._aquery_range(item[1])
            got[item[0]] = res
            # two hops: the task waiting for this slot sends its request before ``done`` runs
            loop = asyncio.get_running_loop()
            loop.call_soon(loop.call_soon, flush)
            return res

        try:
            results = self._run(one, list(enumerate(queries)))
            flush()  # any not handed over on the loop
        finally:
            open_[0] = False
        if failed:
            raise failed[0]
        return results

    async def _aquery_range(self, q: RangeQuery) -> RangeResult:
        merged: dict[tuple[tuple[str, str], ...], Series] = {}
        warnings: list[str] = []
        for s, e in plan_chunks(q.start_ms, q.end_ms, q.step_ms, q.series,
                                max_points=self.max_points, max_samples=self.max_samples):
            for part in await self._range_adaptive(q.query, s, e, q.step_ms, warnings):
                key = tuple(sorted(part.labels.items()))
                have = merged.get(key)
                if have is None:
                    merged[key] = part
                else:
                    have.merge(part)
        return RangeResult(list(merged.values()), warnings)

    async def _all(self, fn: Callable[[A], Coroutine[Any, Any, T]], items: Sequence[A]
                   ) -> list[T]:
        """``fn`` of every item, in order, at most :attr:`max_concurrency` running at once.
        On a failure the ones after it are cancelled, the ones before it run to their end, and
        the first failure in order is raised — the one asking them one after the other would
        have met."""
        if len(items) == 1:
            return [await fn(items[0])]
        sem = asyncio.Semaphore(max(1, self.max_concurrency))

        async def bounded(item: A) -> T:
            async with sem:
                return await fn(item)

        tasks = [asyncio.ensure_future(bounded(item)) for item in items]

        def first_failed() -> int | None:
            return next((i for i, t in enumerate(tasks)
                         if t.done() and not t.cancelled() and t.exception() is not None), None)

        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            while (first := first_failed()) is not None:
                for t in tasks[first + 1:]:
                    t.cancel()
                before = [t for t in tasks[:first] if not t.done()]
                if not before:
                    err = tasks[first].exception()
                    assert err is not None
                    raise err
                await asyncio.wait(before, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return [t.result() for t in tasks]

    def check_requests(self, more: int) -> None:
        """Refuse, before sending any, ``more`` requests that would pass :attr:`max_requests`."""
        if self.requests + more > self.max_requests:
            from lbctl.errors import UsageError

            raise UsageError(f"reading this range from Prometheus would take {more:,} requests "
                             f"(at most {self.max_requests:,}): use a longer --step or a shorter "
                             "range")

    async def _range_adaptive(self, query: str, s: int, e: int, step: int,
                              warnings: list[str]) -> list[Series]:
        try:
            return await self._range_once(query, s, e, step, warnings)
        except AdminError as err:
            steps = (e - s) // step + 1
            if steps <= 1 or err.status not in (400, 422) or not _TOO_LARGE.search(str(err)):
                raise
            mid = s + (steps // 2) * step
            return (await self._range_adaptive(query, s, mid - step, step, warnings)
                    + await self._range_adaptive(query, mid, e, step, warnings))

    async def _range_once(self, query: str, s: int, e: int, step: int,
                          warnings: list[str]) -> list[Series]:
        data, warns = await self._get("/api/v1/query_range", _range_params(query, s, e, step),
                                      grid=(s, e, step))
        warnings += warns
        if isinstance(data, _Columns):
            fast = _fast_series(data, s, e, step)
            if fast is not None:
                return fast
            data = data.builtins()
        return self._series_checked(data)

    def _series_checked(self, data: Any) -> list[Series]:
        """A matrix as plain JSON values, every sample checked one by one: an answer the typed
        decoding did not take (or took with an odd sample) goes through here, for the same
        result and the same one-line errors."""
        where = self._where("/api/v1/query_range")
        if not isinstance(data, dict) or data.get("resultType") != "matrix" \
                or not isinstance(data.get("result"), list):
            raise HttpError(f"{where}: expected a matrix result")
        out = []
        for item in data["result"]:
            if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
                raise HttpError(f"{where}: malformed series in the result")
            points: dict[int, float] = {}
            for pair in item.get("values") or []:
                try:
                    t, v = pair
                    value = float(v)
                    seconds = float(t)
                except (TypeError, ValueError):
                    raise HttpError(self.redact(f"{where}: malformed sample {pair!r:.60}")) from None
                if not 0 <= seconds <= MAX_TIMESTAMP:  # NaN, Infinity, 1e400, 1e308 …
                    raise HttpError(self.redact(
                        f"{where}: sample time {t!r:.40} is not a time (expected Unix seconds "
                        "from 1970 to 9999)"))
                ms = round(seconds * 1000)
                if math.isfinite(value):
                    points[ms] = value
            out.append(Series({str(k): str(v) for k, v in item["metric"].items()}, list(points),
                              list(points.values())))
        return out

    # ---- requests ------------------------------------------------------------------------------
    def _where(self, path: str) -> str:
        return f"GET {url_without_userinfo(self.url + path)}"

    async def _get(self, path: str, params: list[tuple[str, str]], *,
                   grid: tuple[int, int, int] | None = None) -> tuple[Any, list[str]]:
        """One API call: ``(data, warnings)``; retries as the module docstring says. ``grid``:
        a range query's (start, end, step in ms), its answer decoded straight into
        :class:`_Columns` when it fits."""
        params = self._with_timeout(params)
        attempt = 0
        while True:
            try:
                return await self._get_once(path, params, grid)
            except AdminError as e:
                attempt += 1
                delay = self.retry.next_delay(attempt, e)
                if self._sleep is time.sleep:  # the real wait: the other requests go on meanwhile
                    await asyncio.sleep(delay)
                else:  # an injected clock (tests)
                    self._sleep(delay)

    def _with_timeout(self, params: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [*params, ("timeout", f"{self.timeout:g}s")]

    # ---- reading ahead -----------------------------------------------------------------------
    def can_read_ahead(self) -> bool:
        """Whether :meth:`read_ahead` may be used: not when requests are traced (the trace
        lists the requests sent, each with its time)."""
        return self._trace is None

    def reader(self) -> PrometheusClient:
        """Another client of the same settings, with its own connection and event loop, for
        :meth:`read_ahead` on another thread; its requests are not this client's (not in
        :attr:`sent`, not counted against :attr:`max_requests`)."""
        other = PrometheusClient(self.url, auth=self.auth, timeout=self.timeout,
                                 verify=self._verify, transport=self._transport,
                                 max_points=self.max_points,
                                 max_samples=self.max_samples,
                                 max_response_bytes=self.max_response_bytes,
                                 max_concurrency=self.max_concurrency,
                                 auth_note=self.auth_note)
        other._encoding = self._encoding
        return other

    def range_urls(self, queries: Sequence[RangeQuery]) -> list[str]:
        """The URLs :meth:`query_ranges` of ``queries`` asks first, chunk by chunk."""
        return [self._url("/api/v1/query_range",
                          self._with_timeout(_range_params(q.query, s, e, q.step_ms)))
                for q in queries
                for s, e in plan_chunks(q.start_ms, q.end_ms, q.step_ms, q.series,
                                        max_points=self.max_points, max_samples=self.max_samples)]

    def read_ahead(self, urls: Sequence[str]) -> dict[str, tuple[int, Any, bytes]]:
        """Each URL's answer as it came (status, headers, body), asked concurrently and nothing
        decoded, for another client to serve in place of the same requests (:meth:`serve`):
        the waiting on Prometheus, on a thread of its own, with no Python work to speak of
        (the decoding stays on the thread that builds: two threads decoding and building at
        once only take turns on the interpreter, and the turns cost). A URL whose request
        failed is left out: asked again when it is needed, its error raised then."""

        async def one(url: str) -> tuple[int, Any, bytes] | None:
            try:
                return await self._exchange(self._where("/api/v1/query_range"), url)
            except (AdminError, OSError):
                return None

        answers = self._run(one, urls)
        return {u: a for u, a in zip(urls, answers, strict=True) if a is not None}

    def serve(self, answers: dict[str, tuple[int, Any, bytes]]) -> None:
        """Answers read ahead (:meth:`read_ahead`), each served once to the first request of its
        URL instead of asking Prometheus (the request is counted and listed as sent all the
        same); those not asked for by the next call are dropped then."""
        self._ahead = answers

    def _url(self, path: str, params: list[tuple[str, str]]) -> str:
        return f"{self.url}{path}?{urlencode(params)}"

    async def _get_once(self, path: str, params: list[tuple[str, str]],
                        grid: tuple[int, int, int] | None
                        ) -> tuple[Any, list[str]]:
        where = self._where(path)
        target = self._url(path, params)
        self.sent.append(target)
        for _ in range(MAX_REDIRECTS + 1):
            self.check_requests(1)
            self.requests += 1
            ahead = self._ahead.pop(target, None)
            status, headers, body = (ahead if ahead is not None
                                     else await self._exchange(where, target))
            location = headers.get("location") if status in _REDIRECTS else None
            if not location:
                break
            target = self._redirect(where, target, location)
        else:
            raise HttpError(self.redact(f"{where}: too many redirects (more than "
                                        f"{MAX_REDIRECTS})"))
        if status >= 300:
            raise self._status_error(where, status, headers, body)
        fast = _decode_range(body, grid) if grid is not None else None
        if fast is not None:
            data: Any = fast
            warnings = fast.warnings
        else:
            try:
                import orjson

                answer = orjson.loads(body)
            except ValueError:
                raise HttpError(self.redact(f"{where}: the response is not JSON (is this "
                                            "Prometheus' address?)")) from None
            if not isinstance(answer, dict) or answer.get("status") != "success" \
                    or "data" not in answer:
                raise HttpError(self.redact(f"{where}: not a Prometheus API answer"))
            data = answer["data"]
            raw_warnings = answer.get("warnings") or []
            if not isinstance(raw_warnings, list):  # the API's warnings are a list of strings
                raise HttpError(self.redact(f"{where}: not a Prometheus API answer (warnings "
                                            "is not a list)"))
            warnings = [str(w) for w in raw_warnings]
        if warnings and not self.allow_partial:
            raise PartialData(self.redact(
                f"{where}: Prometheus returned partial data ({'; '.join(warnings)[:200]}); "
                "--allow-partial accepts it and marks the gaps"))
        return data, warnings

    def _redirect(self, where: str, current: str, location: str) -> str:
        """Where a redirect may go: within ``--prometheus-url``'s origin, never from https to
        http (:mod:`lbctl.admin.policy`); else an error naming the target, nothing sent there."""
        target = join_location(current, location)
        if target is None:
            raise HttpError(self.redact(f"{where}: redirected to an invalid URL "
                                        f"{url_without_userinfo(location)[:200]!r}"))
        shown = url_without_userinfo(target)[:200]
        if downgrade(current, target):
            raise HttpError(self.redact(f"{where}: refusing to follow a redirect from https to "
                                        f"{shown}"))
        if origin_of(target) != origin_of(self.url):
            raise HttpError(self.redact(f"{where}: redirected to {shown}, another origin than "
                                        "--prometheus-url's: not followed"))
        return target

    async def _exchange(self, where: str, url: str) -> tuple[int, Any, bytes]:
        """One request within the overall deadline: ``(status, headers, body)``."""
        import httpx

        start = time.perf_counter()
        http = self._client()
        try:
            async with asyncio.timeout(self.timeout):
                req = http.build_request("GET", url, headers={
                    **self.auth.headers(), "Accept": "application/json",
                    "Accept-Encoding": self._encoding})
                r = await http.send(req, stream=True)
                try:
                    redirect = r.status_code in _REDIRECTS and "location" in r.headers
                    body = b"" if redirect else await self._read_body(where, r)
                finally:
                    await r.aclose()
        except AdminError:
            raise
        except httpx.ConnectTimeout:
            raise RequestTimeout(self.redact(f"{where}: connection timed out after "
                                             f"{self.timeout:g} s"), sent=False) from None
        except (httpx.TimeoutException, TimeoutError):
            raise RequestTimeout(self.redact(f"{where}: no answer within {self.timeout:g} s "
                                             "(--request-timeout)")) from None
        except httpx.ConnectError as e:
            from lbctl.admin.client import _reason_text

            raise ConnectionFailed(self.redact(f"{where}: cannot connect ({_reason_text(e)}); "
                                               "is Prometheus running there?"),
                                   sent=False) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
            from lbctl.admin.client import dropped_or_malformed

            raise ConnectionFailed(self.redact(f"{where}: {dropped_or_malformed(e)}")) from None
        except httpx.HTTPError as e:
            raise HttpError(self.redact(f"{where}: {type(e).__name__}")) from None
        except (ValueError, UnicodeError):  # a URL or header httpx cannot encode
            raise HttpError(self.redact(f"{where}: the request could not be built"),
                            sent=False) from None
        if self._trace is not None:
            ms = (time.perf_counter() - start) * 1000
            self._trace(self.redact(f"GET {url} -> {r.status_code} ({ms:.1f} ms)"))
        return r.status_code, r.headers, body

    def _cap(self) -> int:
        from lbctl.safe.files import LIMITS

        return self.max_response_bytes or LIMITS.max_response_bytes

    async def _read_body(self, where: str, r: Any) -> bytes:
        """The body, inflated here (gzip or deflate) and refused as soon as its decoded size
        passes the cap: the compressed stream is fed to zlib a piece at a time, asking for no
        more output than the cap leaves."""
        from lbctl.admin.bodies import read_capped

        return await read_capped(r, self._cap(), "answer",
                                 lambda words: HttpError(self.redact(f"{where}: {words}")))

    def _status_error(self, where: str, status: int, headers: Any, body: bytes) -> AdminError:
        from http import HTTPStatus

        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        reason = reason_of(body, headers.get("content-type", ""))
        text = f"{where}: {status} {phrase}".rstrip()
        if reason and reason != phrase:
            text += f": {reason}"
        if status in (401, 403) and self.auth_note:
            text += f" ({self.auth_note})"
        err = error_class(status)(self.redact(text), status=status)
        err.retry_after = retry_after(headers.get("retry-after"))
        return err


def _loopback(url: str) -> bool:
    """Whether ``url`` is this machine's (``localhost``, 127.0.0.0/8, ``::1``): answers are then
    asked uncompressed — gzip would cost Prometheus and lbctl CPU to save no network at all
    (measured: a third of a history read's request time); any other host, gzip."""
    import ipaddress

    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _range_params(query: str, s: int, e: int, step: int) -> list[tuple[str, str]]:
    return [("query", query), ("start", _seconds(s)), ("end", _seconds(e)),
            ("step", _seconds(step))]


def _seconds(ms: int) -> str:
    """Epoch milliseconds as the decimal seconds Prometheus reads, exactly."""
    whole, frac = divmod(ms, 1000)
    return f"{whole}.{frac:03d}" if frac else str(whole)


def client_from_config(cfg: PrometheusConfig, *, transport: Any = None,
                       trace: Callable[[str], None] | None = None,
                       warn: Callable[[str], None] | None = None, **kwargs: Any
                       ) -> PrometheusClient:
    """A :class:`PrometheusClient` for ``cfg``, authenticated, trusted and warned about as the
    admin client (:mod:`lbctl.admin.policy`, :func:`lbctl.admin.tls.verify_for`)."""
    from lbctl.admin.tls import verify_for
    from lbctl.errors import UsageError

    url = cfg.url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--prometheus-url must start with http:// or https://, got "
                         f"{url_without_userinfo(url)!r}")
    url, userinfo = split_userinfo(url)
    keys = _auth_keys(cfg)
    where = f"for --prometheus-url {url}" + (f", from {keys} in --prometheus-conf {cfg.conf}"
                                              if keys else "")
    auth = make_auth(cfg.auth_plugin, cfg.auth_params, cert_file=cfg.tls_cert_file,
                     key_file=cfg.tls_key_file, timeout=cfg.request_timeout, origin=where)
    auth, ignored = url_auth(auth, userinfo, "--prometheus-url")
    if ignored is not None and warn is not None:
        warn(ignored)
    connection = cfg.connection(url)
    verify = verify_for(connection, auth)
    if hasattr(auth, "verify"):
        auth.verify = verify
    if warn is not None:
        for line in connection_warnings(connection, auth, "--prometheus-url"):
            warn(line)
    kwargs.setdefault("auth_note", auth_note(cfg, auth))
    return PrometheusClient(url, auth=auth, timeout=cfg.request_timeout, verify=verify,
                            transport=transport, trace=trace, **kwargs)


def _auth_keys(cfg: PrometheusConfig) -> str | None:
    """The client.conf keys that made the credential (None: the file gave none)."""
    if cfg.auth_plugin:
        return "authPlugin/authParams"
    if cfg.tls_cert_file and cfg.tls_key_file:
        return "tlsCertificateFilePath/tlsKeyFilePath"
    return None


def auth_note(cfg: PrometheusConfig, auth: Auth) -> str:
    """What a 401 or 403 from Prometheus ends with: which credential lbctl sent and where it came
    from, or that it sent none and how to give one. Before, the line said only ``401
    Unauthorized``, and the operator could not tell an absent ``--prometheus-conf`` from a stale
    token (walk23). Never the credential itself: a token file's path or an environment variable's
    name, at most."""
    from lbctl.admin.auth import BasicAuth, TokenAuth

    if type(auth) is Auth:
        return ("no credential was sent: give --prometheus-conf FILE with authPlugin and "
                "authParams, or USER:PASS@ in --prometheus-url for basic auth")
    keys = _auth_keys(cfg)
    if keys is None and isinstance(auth, BasicAuth):
        return "sent: basic auth with the user name and password in --prometheus-url"
    how = f"of {auth.name} auth"
    if isinstance(auth, TokenAuth):
        params = (cfg.auth_params or "").strip()
        path = getattr(auth, "_path", None)
        if path:
            how = f"in the token file {path}"
        elif params.startswith(("env:", "token:env:")):
            how = f"in ${params.rsplit('env:', 1)[1]}"
    return f"sent: the {auth.credential_name} {how}, from {keys} in --prometheus-conf {cfg.conf}"
