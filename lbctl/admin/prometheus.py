"""A read-only client of Prometheus' HTTP API: ``/api/v1/series`` and ``/api/v1/query_range``.

lbctl reads load-balancing history from the Prometheus that scrapes a Pulsar cluster
(:mod:`lbctl.sources.prometheus` turns the series into snapshots). This module only speaks HTTP,
and lives here because ``lbctl.admin`` is the one place httpx is imported. It reuses the admin
client's pieces: authentication from ``authPlugin``/``authParams`` (:func:`lbctl.admin.auth.make_auth`
— a bearer token with ``AuthenticationToken``, ``AuthenticationBasic`` for basic auth, a client
certificate with ``AuthenticationTls``; user info in the URL, ``https://user:pass@prom``, is basic
auth too), TLS trust from the same client.conf keys (:func:`lbctl.admin.tls.verify_for`), the
error classes and their exit codes, and the redaction of secrets from every message.

Bounded, whatever the server does:

* **Chunked.** Prometheus refuses a range query of more than 11,000 points per series
  (``exceeded maximum resolution of 11,000 points per timeseries``); :func:`plan_chunks` cuts a
  range into consecutive chunks of at most :data:`MAX_POINTS` steps, and fewer when the series
  count known from ``/api/v1/series`` times the steps would pass :data:`DEFAULT_MAX_SAMPLES` (a
  budget well under Prometheus' own ``--query.max-samples``, 50 million). A chunk Prometheus still
  finds too large (422 ``too many samples``) is halved and asked again, down to one step.
* **Timed.** Every request has ``--request-timeout`` on the wire and the same ``timeout`` query
  parameter, so that Prometheus abandons the evaluation too. A slow answer is not retried (it
  would multiply the wait); connection failures, 429 and 502/503/504 are retried ``retries``
  times with exponential backoff (:data:`lbctl.admin.retry.PROMETHEUS`).
* **Partial data is never silent.** An answer with ``warnings`` (a federated or remote-read
  Prometheus, Thanos' partial responses) raises :class:`PartialData` unless the caller allows it,
  in which case the warnings are handed back with the data for the caller to mark.
"""

from __future__ import annotations

import contextlib
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from lbctl.admin.auth import Auth, BasicAuth, make_auth
from lbctl.admin.clientconf import ConnectionConfig
from lbctl.admin.errors import (
    AdminError,
    ConnectionFailed,
    HttpError,
    RequestTimeout,
    error_class,
    reason_of,
)
from lbctl.admin.retry import PROMETHEUS, RetryPolicy, retry_after
from lbctl.records import replace
from lbctl.safe.redact import redact, url_without_userinfo

#: Prometheus' limit of points per series in one range query (``api/v1`` ``query_range``)
MAX_POINTS = 11_000
#: samples (series × steps) one request may ask for; Prometheus' default ``query.max-samples`` is
#: 50,000,000, and a response of that size would be gigabytes of JSON
DEFAULT_MAX_SAMPLES = 2_000_000
DEFAULT_TIMEOUT = 30.0
_TOO_LARGE = re.compile(r"too many samples|maximum resolution|max-samples", re.I)


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
    tls_enable_hostname_verification: bool = False
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    request_timeout: float = DEFAULT_TIMEOUT


@dataclass
class Series:
    """One series of a range query: its labels and its finite points (epoch ms → value)."""

    labels: dict[str, str]
    points: dict[int, float]


@dataclass
class RangeResult:
    series: list[Series]
    warnings: list[str] = field(default_factory=list)


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
    """Synchronous and sequential: history is read once, chunk after chunk, in bounded memory."""

    def __init__(self, url: str, *, auth: Auth | None = None, timeout: float = DEFAULT_TIMEOUT,
                 verify: Any = True, transport: Any = None, retries: int = PROMETHEUS.retries,
                 backoff: float = PROMETHEUS.backoff, max_points: int = MAX_POINTS,
                 max_samples: int = DEFAULT_MAX_SAMPLES, allow_partial: bool = False,
                 trace: Callable[[str], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self.url = url.rstrip("/")
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
        #: every URL requested with its query string, in order (tests read it)
        self.sent: list[str] = []

    # ---- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> PrometheusClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._http is not None:
            with contextlib.suppress(Exception):
                self._http.close()
            self._http = None

    def _client(self) -> Any:
        if self._http is None:
            import httpx

            self._http = httpx.Client(
                verify=self._verify, transport=self._transport, follow_redirects=True,
                timeout=httpx.Timeout(self.timeout, connect=min(10.0, self.timeout)),
                trust_env=False)
        return self._http

    def redact(self, text: str) -> str:
        return redact(text, self.auth.secrets())

    # ---- the API -------------------------------------------------------------------------------
    def series(self, match: Sequence[str], start_ms: int, end_ms: int) -> list[dict[str, str]]:
        """``GET /api/v1/series``: the label sets of every series matching any selector."""
        params: list[tuple[str, str]] = [("match[]", m) for m in match]
        params += [("start", _seconds(start_ms)), ("end", _seconds(end_ms))]
        data, _ = self._get("/api/v1/series", params)
        if not isinstance(data, list) or not all(isinstance(s, dict) for s in data):
            raise HttpError(self._where("/api/v1/series") + ": expected a list of label sets")
        return [{str(k): str(v) for k, v in s.items()} for s in data]

    def query_range(self, query: str, start_ms: int, end_ms: int, step_ms: int,
                    series: int = 1) -> RangeResult:
        """``GET /api/v1/query_range`` over ``[start, end]``, chunked (module docstring); the
        points of a series found in several chunks are merged."""
        merged: dict[tuple[tuple[str, str], ...], Series] = {}
        warnings: list[str] = []
        for s, e in plan_chunks(start_ms, end_ms, step_ms, series, max_points=self.max_points,
                                max_samples=self.max_samples):
            for part in self._range_adaptive(query, s, e, step_ms, warnings):
                key = tuple(sorted(part.labels.items()))
                have = merged.get(key)
                if have is None:
                    merged[key] = part
                else:
                    have.points.update(part.points)
        return RangeResult(list(merged.values()), warnings)

    def _range_adaptive(self, query: str, s: int, e: int, step: int,
                        warnings: list[str]) -> list[Series]:
        try:
            return self._range_once(query, s, e, step, warnings)
        except AdminError as err:
            steps = (e - s) // step + 1
            if steps <= 1 or err.status not in (400, 422) or not _TOO_LARGE.search(str(err)):
                raise
            mid = s + (steps // 2) * step
            return (self._range_adaptive(query, s, mid - step, step, warnings)
                    + self._range_adaptive(query, mid, e, step, warnings))

    def _range_once(self, query: str, s: int, e: int, step: int,
                    warnings: list[str]) -> list[Series]:
        params = [("query", query), ("start", _seconds(s)), ("end", _seconds(e)),
                  ("step", _seconds(step))]
        data, warns = self._get("/api/v1/query_range", params)
        warnings += warns
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
                    ms = round(float(t) * 1000)
                except (TypeError, ValueError):
                    raise HttpError(f"{where}: malformed sample {pair!r:.60}") from None
                if math.isfinite(value):
                    points[ms] = value
            out.append(Series({str(k): str(v) for k, v in item["metric"].items()}, points))
        return out

    # ---- requests ------------------------------------------------------------------------------
    def _where(self, path: str) -> str:
        return f"GET {url_without_userinfo(self.url + path)}"

    def _get(self, path: str, params: list[tuple[str, str]]) -> tuple[Any, list[str]]:
        """One API call: ``(data, warnings)``; retries as the module docstring says."""
        params = [*params, ("timeout", f"{self.timeout:g}s")]
        attempt = 0
        while True:
            try:
                return self._get_once(path, params)
            except AdminError as e:
                attempt += 1
                self._sleep(self.retry.next_delay(attempt, e))

    def _get_once(self, path: str, params: list[tuple[str, str]]) -> tuple[Any, list[str]]:
        import httpx

        url = self.url + path
        where = self._where(path)
        self.sent.append(f"{url}?{urlencode(params)}")
        start = time.perf_counter()
        try:
            r = self._client().get(url, params=params, headers={**self.auth.headers(),
                                                                "Accept": "application/json"})
        except httpx.ConnectTimeout:
            raise RequestTimeout(self.redact(f"{where}: connection timed out after "
                                             f"{self.timeout:g} s"), sent=False) from None
        except httpx.TimeoutException:
            raise RequestTimeout(self.redact(f"{where}: no answer within {self.timeout:g} s "
                                             "(--request-timeout)")) from None
        except httpx.ConnectError as e:
            from lbctl.admin.client import _reason_text

            raise ConnectionFailed(self.redact(f"{where}: cannot connect ({_reason_text(e)}); "
                                               "is Prometheus running there?"),
                                   sent=False) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
            raise ConnectionFailed(self.redact(f"{where}: connection dropped by the server")
                                   ) from None
        except httpx.HTTPError as e:
            raise HttpError(self.redact(f"{where}: {type(e).__name__}")) from None
        if self._trace is not None:
            ms = (time.perf_counter() - start) * 1000
            self._trace(self.redact(f"GET {r.url} -> {r.status_code} ({ms:.1f} ms)"))
        if r.status_code >= 300:
            raise self._status_error(where, r)
        try:
            import orjson

            body = orjson.loads(r.content)
        except ValueError:
            raise HttpError(self.redact(f"{where}: the response is not JSON (is this "
                                        "Prometheus' address?)")) from None
        if not isinstance(body, dict) or body.get("status") != "success" or "data" not in body:
            raise HttpError(self.redact(f"{where}: not a Prometheus API answer"))
        warnings = [str(w) for w in body.get("warnings") or []]
        if warnings and not self.allow_partial:
            raise PartialData(self.redact(
                f"{where}: Prometheus returned partial data ({'; '.join(warnings)[:200]}); "
                "--allow-partial accepts it and marks the gaps"))
        return body["data"], warnings

    def _status_error(self, where: str, r: Any) -> AdminError:
        from http import HTTPStatus

        try:
            phrase = HTTPStatus(r.status_code).phrase
        except ValueError:
            phrase = ""
        reason = reason_of(r.content, r.headers.get("content-type", ""))
        text = f"{where}: {r.status_code} {phrase}".rstrip()
        if reason and reason != phrase:
            text += f": {reason}"
        err = error_class(r.status_code)(self.redact(text), status=r.status_code)
        err.retry_after = retry_after(r.headers.get("retry-after"))
        return err


def _seconds(ms: int) -> str:
    """Epoch milliseconds as the decimal seconds Prometheus reads, exactly."""
    whole, frac = divmod(ms, 1000)
    return f"{whole}.{frac:03d}" if frac else str(whole)


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``https://user:pass@host/…`` → (``https://host/…``, (user, pass)); basic auth in the URL."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    from urllib.parse import unquote

    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, (unquote(parts.username), unquote(parts.password or ""))


def client_from_config(cfg: PrometheusConfig, *, transport: Any = None,
                       trace: Callable[[str], None] | None = None, **kwargs: Any
                       ) -> PrometheusClient:
    """A :class:`PrometheusClient` for ``cfg``, authenticated and trusted as the admin client."""
    from lbctl.admin.tls import verify_for
    from lbctl.errors import UsageError

    url = cfg.url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--prometheus-url must start with http:// or https://, got "
                         f"{url_without_userinfo(url)!r}")
    url, userinfo = split_userinfo(url)
    auth = make_auth(cfg.auth_plugin, cfg.auth_params, cert_file=cfg.tls_cert_file,
                     key_file=cfg.tls_key_file, timeout=cfg.request_timeout)
    if userinfo is not None and type(auth) is Auth:
        auth = BasicAuth(*userinfo)
    verify = verify_for(ConnectionConfig(
        admin_url=url, tls_trust_cert_path=cfg.tls_trust_cert_path,
        tls_allow_insecure=cfg.tls_allow_insecure,
        tls_enable_hostname_verification=cfg.tls_enable_hostname_verification), auth)
    if hasattr(auth, "verify"):
        auth.verify = verify
    return PrometheusClient(url, auth=auth, timeout=cfg.request_timeout, verify=verify,
                            transport=transport, trace=trace, **kwargs)
