"""The one client of Pulsar's admin REST API (the only module that imports httpx, lazily).

Every endpoint lbctl uses is one :class:`Endpoint` in :data:`ENDPOINTS` — a method and a path
template exactly as the official admin v2 OpenAPI spec spells it (a test checks them against
Pulsar 4.1.1's published spec). A request is described by a :class:`Call`
before it is sent, so that the executor can show a mutation exactly as it will go over the wire.

Behaviour, mirroring ``pulsar-admin``'s ``AsyncHttpConnector`` where it matters:

* Redirects (301/302/303/307/308) are followed here, not by httpx, up to 5 hops (AHC's
  ``maxRedirects``): the method, body and every header — including ``Authorization``, which httpx
  drops on a cross-host redirect — are kept (303 alone turns into a body-less GET). A broker answers
  a bundle operation for a bundle it does not own with a 307 to the owner.
* Reads (GET) are retried with exponential backoff on connection errors, dropped connections,
  429 (honouring ``Retry-After`` up to 5 s) and 5xx. Mutations are never retried: a failed PUT is
  reported, with a warning when it may have reached the broker.
* Fan-out to many brokers runs concurrently on one event loop, bounded by ``max_concurrency``;
  one refresh of 200 brokers costs about one round trip.
* Every failure becomes one :mod:`lbctl.admin.errors` error with a one-line message built from the
  broker's ``{"reason": …}``; secrets the auth knows and URL user info are scrubbed from it, and from
  ``--debug`` traces.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote, urlencode, urljoin, urlsplit

from lbctl.admin.auth import Auth, make_auth
from lbctl.admin.clientconf import ConnectionConfig, _safe_url
from lbctl.admin.errors import (
    AdminError,
    ConnectionFailed,
    HttpError,
    RequestTimeout,
    error_class,
    reason_of,
)

MAX_REDIRECTS = 5
DEFAULT_RETRIES = 2
DEFAULT_BACKOFF = 0.2  # seconds, doubled per attempt
DEFAULT_CONCURRENCY = 256
_REDIRECTS = (301, 302, 303, 307, 308)
_PARAM = re.compile(r"\{([^}]+)\}")

T = TypeVar("T")


@dataclass(frozen=True)
class Endpoint:
    """A method and an admin path template as the OpenAPI spec names them (``basePath`` included)."""

    method: str
    template: str
    text: bool = False  # the broker answers plain text (a Java String), not JSON

    @property
    def mutation(self) -> bool:
        return self.method != "GET"


def _ep(method: str, template: str, *, text: bool = False) -> Endpoint:
    return Endpoint(method, "/admin/v2" + template, text)


CLUSTERS = _ep("GET", "/clusters")
LOCAL_BROKERS = _ep("GET", "/brokers")  # the local cluster's brokers (Pulsar 3.x+)
ACTIVE_BROKERS = _ep("GET", "/brokers/{cluster}")
RUNTIME_CONFIG = _ep("GET", "/brokers/configuration/runtime")
LOAD_REPORT = _ep("GET", "/broker-stats/load-report")
BROKER_TOPICS = _ep("GET", "/broker-stats/topics")
BROKER_METRICS = _ep("GET", "/broker-stats/metrics")  # brk_lb_* (the extensible LB's load data)
TENANTS = _ep("GET", "/tenants")
NAMESPACES = _ep("GET", "/namespaces/{tenant}")
BUNDLES = _ep("GET", "/namespaces/{tenant}/{namespace}/bundles")
UNLOAD_NAMESPACE = _ep("PUT", "/namespaces/{tenant}/{namespace}/unload")
UNLOAD_BUNDLE = _ep("PUT", "/namespaces/{tenant}/{namespace}/{bundle}/unload")
SPLIT_BUNDLE = _ep("PUT", "/namespaces/{tenant}/{namespace}/{bundle}/split")
# placement data beside load (docs/snapshot-policies.md)
ISOLATION_POLICIES = _ep("GET", "/clusters/{cluster}/namespaceIsolationPolicies")
FAILURE_DOMAINS = _ep("GET", "/clusters/{cluster}/failureDomains")
ANTI_AFFINITY = _ep("GET", "/namespaces/{tenant}/{namespace}/antiAffinity", text=True)
NAMESPACE_TOPICS = _ep("GET", "/namespaces/{tenant}/{namespace}/topics")
PERSISTENT_PARTITIONED = _ep("GET", "/persistent/{tenant}/{namespace}/partitioned")
NON_PERSISTENT_PARTITIONED = _ep("GET", "/non-persistent/{tenant}/{namespace}/partitioned")
PERSISTENT_PARTITIONS = _ep("GET", "/persistent/{tenant}/{namespace}/{topic}/partitions")
NON_PERSISTENT_PARTITIONS = _ep("GET", "/non-persistent/{tenant}/{namespace}/{topic}/partitions")
BROKER_VERSION = _ep("GET", "/brokers/version", text=True)

#: every endpoint lbctl may request (the spec test reads this)
ENDPOINTS: tuple[Endpoint, ...] = (
    CLUSTERS, LOCAL_BROKERS, ACTIVE_BROKERS, RUNTIME_CONFIG, LOAD_REPORT, BROKER_TOPICS, TENANTS, NAMESPACES,
    BUNDLES, UNLOAD_NAMESPACE, UNLOAD_BUNDLE, SPLIT_BUNDLE, BROKER_METRICS,
    ISOLATION_POLICIES, FAILURE_DOMAINS, ANTI_AFFINITY, NAMESPACE_TOPICS, PERSISTENT_PARTITIONED,
    NON_PERSISTENT_PARTITIONED, PERSISTENT_PARTITIONS, NON_PERSISTENT_PARTITIONS, BROKER_VERSION,
)


@dataclass(frozen=True)
class Call:
    """One request, fully described before it is sent (what a dry run shows)."""

    endpoint: Endpoint
    path_params: tuple[tuple[str, str], ...] = ()
    query: tuple[tuple[str, str], ...] = ()
    body: Any = None  # JSON-able, or None for Pulsar's empty entity
    base: str | None = None  # another broker than the admin URL

    @property
    def method(self) -> str:
        return self.endpoint.method

    @property
    def path(self) -> str:
        values = dict(self.path_params)
        return _PARAM.sub(lambda m: quote(values[m.group(1)], safe=""), self.endpoint.template)

    def url(self, admin_url: str) -> str:
        u = (self.base or admin_url).rstrip("/") + self.path
        return f"{u}?{urlencode(self.query)}" if self.query else u

    def body_bytes(self) -> bytes:
        if self.body is None:
            return b""
        import json

        return json.dumps(self.body, separators=(",", ":")).encode()

    def describe(self, admin_url: str) -> str:
        """``PUT http://…/split?unload=true  body: [1610612736]`` — exactly what is sent."""
        text = f"{self.method} {_safe_url(self.url(admin_url))}"
        return text + (f"  body: {self.body_bytes().decode()}" if self.body is not None else "")


def call(endpoint: Endpoint, *, base: str | None = None, query: dict[str, Any] | None = None,
         body: Any = None, **path_params: str) -> Call:
    q = tuple((k, _query_value(v)) for k, v in (query or {}).items() if v is not None)
    return Call(endpoint, tuple(path_params.items()), q, body, base)


def _query_value(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


@dataclass
class Response:
    status: int
    body: bytes
    url: str
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        import orjson

        if not self.body.strip():
            return None
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:
            raise HttpError(f"GET {self.url}: the response is not JSON") from None

    def text(self) -> str | None:
        """A plain-text answer (Jersey writes a ``String`` as is, whatever the content type);
        one that happens to be a JSON string is unquoted."""
        import orjson

        body = self.body.decode("utf-8", "replace").strip()
        if not body:
            return None
        if body.startswith('"'):
            try:
                value = orjson.loads(body)
            except orjson.JSONDecodeError:
                return body
            return value if isinstance(value, str) else body
        return body


class AdminClient:
    """Synchronous facade over one asyncio loop and one ``httpx.AsyncClient``."""

    def __init__(
        self,
        admin_url: str,
        *,
        auth: Auth | None = None,
        timeout: float = 30.0,
        verify: Any = True,
        transport: Any = None,
        retries: int = DEFAULT_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        max_concurrency: int = DEFAULT_CONCURRENCY,
        max_redirects: int = MAX_REDIRECTS,
        trace: Callable[[str], None] | None = None,
    ):
        self.admin_url = admin_url.rstrip("/")
        self.auth = auth or Auth()
        self.timeout = timeout
        self._verify = verify
        self._transport = transport
        self.retries = retries
        self.backoff = backoff
        self.max_concurrency = max_concurrency
        self.max_redirects = max_redirects
        self._trace = trace
        self._runner: asyncio.Runner | None = None
        self._http: dict[str, Any] = {}  # origin → httpx.AsyncClient
        self._sem: asyncio.Semaphore | None = None
        #: every (method, url) sent, in order (tests and the journal read it)
        self.sent: list[tuple[str, str]] = []

    # ---- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._runner is not None:
            clients = list(self._http.values())

            async def close_all() -> None:
                await asyncio.gather(*(c.aclose() for c in clients), return_exceptions=True)

            with contextlib.suppress(Exception):
                self._runner.run(close_all())
            self._runner.close()
            self._runner = None
            self._http = {}

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._runner is None:
            self._runner = asyncio.Runner()
        return self._runner.run(coro)

    def _client(self, url: str) -> Any:
        """One ``httpx.AsyncClient`` per origin: httpcore's pool scans every connection it holds
        for each request, so one pool for 200 brokers costs seconds; 200 pools of one cost ms."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        http = self._http.get(origin)
        if http is None:
            import httpx

            if self._verify is True:  # one context for all pools: loading the CA store costs ~20 ms
                self._verify = httpx.create_ssl_context()
            _no_sniffio()

            http = self._http[origin] = httpx.AsyncClient(
                follow_redirects=False,
                verify=self._verify,
                transport=self._transport,
                timeout=httpx.Timeout(self.timeout, connect=min(10.0, self.timeout)),
                limits=httpx.Limits(max_connections=self.max_concurrency,
                                    max_keepalive_connections=self.max_concurrency),
                trust_env=False,
            )
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.max_concurrency)
        return http

    # ---- redaction -------------------------------------------------------------------------
    def redact(self, text: str) -> str:
        """``text`` without any secret the auth has seen and without URL user info."""
        for s in sorted(self.auth.secrets(), key=len, reverse=True):
            if s:
                text = text.replace(s, "***")
        return re.sub(r"(https?://)[^/@\s]+@", r"\1***@", text)

    def _debug(self, line: str) -> None:
        if self._trace is not None:
            self._trace(self.redact(line))

    # ---- requests ----------------------------------------------------------------------------
    async def arequest(self, c: Call) -> Response:
        """Send ``c`` (following redirects, retrying reads) and return a 2xx response."""
        attempts = 1 if c.endpoint.mutation else 1 + self.retries
        last: AdminError | None = None
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(self._delay(attempt, last))
            try:
                resp = await self._follow(c)
            except AdminError as e:
                if attempt + 1 < attempts and _retryable(e):
                    last = e
                    continue
                raise
            if resp.status < 300:
                return resp
            err = self._status_error(c, resp)
            if attempt + 1 < attempts and _retryable(err):
                last = err
                continue
            raise err
        raise AssertionError("unreachable")  # pragma: no cover

    def _delay(self, attempt: int, last: AdminError | None) -> float:
        delay = float(self.backoff * (2 ** (attempt - 1)))
        retry_after = last.retry_after if last is not None else None
        if retry_after is not None:
            delay = max(delay, min(retry_after, 5.0))
        return delay

    async def _follow(self, c: Call) -> Response:
        method, url, body = c.method, c.url(self.admin_url), c.body_bytes()
        headers = {"Accept": "application/json"}
        if method != "GET":
            headers["Content-Type"] = "application/json"
        for _hop in range(self.max_redirects + 1):
            send_headers = {**headers, **self.auth.headers()}  # recomputed per hop (token files)
            start = time.perf_counter()
            http = self._client(url)
            assert self._sem is not None
            try:
                async with self._sem, asyncio.timeout(self.timeout):
                    self.sent.append((method, url))
                    r = await http.request(method, url, content=body if method != "GET" else None,
                                           headers=send_headers)
            except BaseException as e:
                raise self._transport_error(c, method, url, e) from None
            location = r.headers.get("location")
            if self._trace is not None:
                ms = (time.perf_counter() - start) * 1000
                self._debug(f"{method} {url} -> {r.status_code}"
                            + (f" Location: {location}" if location and r.status_code in _REDIRECTS
                               else "") + f" ({ms:.1f} ms)")
            if r.status_code in _REDIRECTS and location:
                url = urljoin(url, location)
                if r.status_code == 303:
                    method, body = "GET", b""
                continue
            return Response(r.status_code, r.content, url,
                            {"content-type": r.headers.get("content-type", ""),
                             "retry-after": r.headers.get("retry-after", "")})
        raise HttpError(self.redact(f"{c.method} {_safe_url(c.url(self.admin_url))}: too many "
                                    f"redirects (more than {self.max_redirects})"))

    def _transport_error(self, c: Call, method: str, url: str, e: BaseException) -> AdminError:
        import httpx

        if isinstance(e, asyncio.CancelledError | KeyboardInterrupt):
            raise e
        where = f"{method} {_safe_url(url)}"
        maybe = (" (the change may have been applied: check before retrying)"
                 if c.endpoint.mutation else "")
        if isinstance(e, httpx.ConnectTimeout):
            return RequestTimeout(self.redact(f"{where}: connection timed out after "
                                              f"{self.timeout:g} s"), sent=False)
        if isinstance(e, httpx.TimeoutException | asyncio.TimeoutError | TimeoutError):
            return RequestTimeout(self.redact(f"{where}: no answer within {self.timeout:g} s"
                                              f" (--request-timeout){maybe}"))
        if isinstance(e, httpx.ConnectError):
            detail = _reason_text(e)
            return ConnectionFailed(self.redact(f"{where}: cannot connect ({detail})"), sent=False)
        if isinstance(e, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
            return ConnectionFailed(self.redact(f"{where}: connection dropped by the server{maybe}"))
        if isinstance(e, httpx.HTTPError):
            return HttpError(self.redact(f"{where}: {type(e).__name__}: {_reason_text(e)}"))
        if isinstance(e, OSError):
            return ConnectionFailed(self.redact(f"{where}: {_reason_text(e)}"), sent=False)
        raise e

    def _status_error(self, c: Call, resp: Response) -> AdminError:
        from http import HTTPStatus

        try:
            phrase = HTTPStatus(resp.status).phrase
        except ValueError:
            phrase = ""
        reason = reason_of(resp.body, resp.headers.get("content-type", ""))
        text = f"{c.method} {_safe_url(resp.url)}: {resp.status} {phrase}".rstrip()
        if reason and reason != phrase:
            text += f": {reason}"
        err = error_class(resp.status)(self.redact(text), status=resp.status)
        if resp.status == 429:
            with contextlib.suppress(ValueError):
                err.retry_after = float(resp.headers.get("retry-after") or 0)
        return err

    # ---- sync helpers --------------------------------------------------------------------------
    def request(self, c: Call) -> Response:
        return self.run(self.arequest(c))

    async def ajson(self, c: Call) -> Any:
        """The decoded JSON answer; a plain-text endpoint's answer as a string (``None`` when
        empty; a JSON string is unquoted)."""
        resp = await self.arequest(c)
        if c.endpoint.text:
            return resp.text()
        return resp.json()

    def json(self, c: Call) -> Any:
        return self.run(self.ajson(c))

    def gather(self, calls: Sequence[Call]) -> list[Any]:
        """The JSON of every call, concurrently; a failed call's slot holds its :class:`AdminError`."""

        async def one(c: Call) -> Any:
            try:
                return await self.ajson(c)
            except AdminError as e:
                return e

        async def all_() -> list[Any]:
            return list(await asyncio.gather(*(one(c) for c in calls)))

        return self.run(all_())

    # ---- typed reads ---------------------------------------------------------------------------
    def clusters(self) -> list[str]:
        return _str_list(self.json(call(CLUSTERS)), "GET /admin/v2/clusters")

    def active_brokers(self, cluster: str) -> list[str]:
        return _str_list(self.json(call(ACTIVE_BROKERS, cluster=cluster)),
                         f"GET /admin/v2/brokers/{cluster}")

    def runtime_config(self, base: str | None = None) -> dict[str, Any]:
        cfg = self.json(call(RUNTIME_CONFIG, base=base))
        if not isinstance(cfg, dict):
            raise HttpError("GET /admin/v2/brokers/configuration/runtime: expected an object")
        return cfg

    def bundles(self, namespace: str) -> Any:
        """``BundlesData`` of a namespace, as decoded (the caller checks its shape)."""
        tenant, ns = split_namespace(namespace)
        return self.json(call(BUNDLES, tenant=tenant, namespace=ns))

    def broker_url(self, broker_id: str) -> str:
        """``http(s)://<broker id>``: the admin URL's scheme on the broker's web address."""
        if broker_id.startswith(("http://", "https://")):
            return broker_id.rstrip("/")
        return f"{urlsplit(self.admin_url).scheme}://{broker_id}"


def _no_sniffio() -> None:
    """httpcore asks ``import sniffio`` on every request; when sniffio is not installed each failed
    import searches ``sys.path`` again (~0.2 ms, 40 ms per 200 brokers). A ``None`` entry in
    ``sys.modules`` makes that import fail at once; httpcore then assumes asyncio, which is right."""
    import importlib.util
    import sys

    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]  # None: "not installed", fast


def split_namespace(namespace: str) -> tuple[str, str]:
    from lbctl.errors import UsageError

    parts = namespace.strip("/").split("/")
    if len(parts) != 2 or not all(parts):
        raise UsageError(f"bad namespace {namespace!r}: expected tenant/namespace")
    return parts[0], parts[1]


# ---- mutations, described ------------------------------------------------------------------------
def unload_call(namespace: str, bundle: str | None = None, destination: str | None = None) -> Call:
    """``pulsar-admin namespaces unload``: the whole namespace, or one bundle (to ``destination``)."""
    tenant, ns = split_namespace(namespace)
    if bundle is None:
        return call(UNLOAD_NAMESPACE, tenant=tenant, namespace=ns)
    return call(UNLOAD_BUNDLE, tenant=tenant, namespace=ns, bundle=bundle,
                query={"destinationBroker": destination})


def split_call(namespace: str, bundle: str, *, unload: bool = False, algorithm: str | None = None,
               boundaries: Sequence[int] | None = None) -> Call:
    """``pulsar-admin namespaces split-bundle``: ``PUT …/{bundle}/split?unload=&splitAlgorithmName=``
    with the boundaries (int64 positions) as the JSON body; no body without boundaries."""
    tenant, ns = split_namespace(namespace)
    body = [int(b) for b in boundaries] if boundaries else None
    return call(SPLIT_BUNDLE, tenant=tenant, namespace=ns, bundle=bundle,
                query={"unload": unload, "splitAlgorithmName": algorithm}, body=body)


def _retryable(e: AdminError) -> bool:
    if isinstance(e, RequestTimeout):
        return not e.sent  # a connect timeout; a slow answer is not retried (it would multiply waits)
    if isinstance(e, ConnectionFailed):
        return True
    return e.status is not None and (e.status == 429 or 500 <= e.status <= 599)


def _reason_text(e: BaseException) -> str:
    """A short cause: the errno of the first OSError in the chain, else known phrases."""
    import errno

    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in (errno.ECONNREFUSED, errno.EHOSTUNREACH,
                                                        errno.ENETUNREACH, errno.ECONNRESET):
            return {errno.ECONNREFUSED: "connection refused", errno.ECONNRESET: "connection reset",
                    }.get(seen.errno, "host unreachable")
        seen = seen.__cause__ or seen.__context__
    text = " ".join(str(e).split())
    for pat, short in (("Connection refused", "connection refused"),
                       ("Name or service not known", "unknown host"),
                       ("No address associated", "unknown host"),
                       ("CERTIFICATE_VERIFY_FAILED", "TLS certificate verification failed")):
        if pat in text:
            return short
    return text[:160] or type(e).__name__


def _str_list(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise HttpError(f"{what}: expected a JSON array of strings")
    return value


def ssl_context(cfg: ConnectionConfig, auth: Auth) -> Any:
    """``verify`` for httpx: False when insecure, else a context with the trust store, the client
    certificate and hostname checks only when ``tlsEnableHostnameVerification`` (pulsar-admin)."""
    if cfg.tls_allow_insecure and auth.client_cert() is None:
        return False
    import ssl

    from lbctl.errors import ConfigError

    try:
        if cfg.tls_trust_cert_path:
            ctx = ssl.create_default_context(cafile=cfg.tls_trust_cert_path)
        else:
            import certifi

            ctx = ssl.create_default_context(cafile=certifi.where())
        ctx.check_hostname = cfg.tls_enable_hostname_verification and not cfg.tls_allow_insecure
        if cfg.tls_allow_insecure:
            ctx.verify_mode = ssl.CERT_NONE
        cert = auth.client_cert()
        if cert is not None:
            ctx.load_cert_chain(*cert)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"TLS: cannot load certificates ({getattr(e, 'strerror', None) or e})") from None
    return ctx


def client_from_config(cfg: ConnectionConfig, *, transport: Any = None,
                       trace: Callable[[str], None] | None = None, **kwargs: Any) -> AdminClient:
    """An :class:`AdminClient` for resolved connection settings."""
    auth = make_auth(cfg.auth_plugin, cfg.auth_params, cert_file=cfg.tls_cert_file,
                     key_file=cfg.tls_key_file, timeout=cfg.request_timeout)
    verify: Any = True
    if cfg.admin_url.startswith("https://") or auth.client_cert() is not None:
        verify = ssl_context(cfg, auth)
    if hasattr(auth, "verify"):
        auth.verify = verify  # the OAuth2 issuer is reached with the same trust settings
    return AdminClient(cfg.admin_url, auth=auth, timeout=cfg.request_timeout, verify=verify,
                       transport=transport, trace=trace, **kwargs)
