"""The one client of Pulsar's admin REST API (the only module that imports httpx, lazily).

Every endpoint lbctl uses is one :class:`Endpoint` in :data:`ENDPOINTS` — a method and a path
template exactly as the official admin v2 OpenAPI spec spells it (a test checks them against
Pulsar 4.1.1's published spec). A request is described by a :class:`Call`
before it is sent, so that the executor can show a mutation exactly as it will go over the wire.

Behaviour, mirroring ``pulsar-admin``'s ``AsyncHttpConnector`` where it matters:

* Redirects (301/302/303/307/308) are followed here, not by httpx, up to 5 hops (AHC's
  ``maxRedirects``): the method, body and headers are kept (303 alone turns a read into a
  body-less GET). A broker answers a bundle operation for a bundle it does not own with a 307 to
  the owner: the request URI with another host and port and the ``authoritative`` query parameter
  set (``PulsarWebResource.validateNamespaceBundleOwnership``). So a **mutation** (PUT, POST,
  DELETE) follows only a 307 or 308 that keeps its path and query (but ``authoritative=true|false``):
  anything else — a 301/302/303, which would turn it into a GET, or another path or query, which
  would turn "unload A" into "split B" — is refused in one line, nothing sent to the target.
* **Where credentials go.** A request — and so a credential — only goes to a *trusted origin*:
  the admin URL's, or a broker of this cluster (an id of ``GET /admin/v2/brokers``, which must be
  ``host:port``) reached on the admin URL's scheme, and only if its host matches
  ``--broker-host-allow`` when that is set. A redirect to any other origin, or from https to
  http, is not followed: it is an error naming the target (for a mutation: the change was not
  made, since the server that answered with the redirect did not make it).
* Response bodies are read as a stream and refused past ``--max-response-size``.
* Reads (GET) are retried with exponential backoff on connection errors, dropped connections,
  429 (honouring ``Retry-After`` up to 5 s) and 5xx. Mutations are never retried: a failed PUT is
  reported, with a warning when it may have reached the broker (:data:`lbctl.admin.retry.ADMIN`).
* Fan-out to many brokers runs concurrently on one event loop, bounded by ``max_concurrency``;
  one refresh of 200 brokers costs about one round trip. A fan-out's connections to its trusted
  origins are all started before its requests are built (:meth:`AdminClient._open_ahead`), and
  each request is written as soon as its own connection is up. Requests go through one
  ``httpx.AsyncClient`` whose transport is :class:`lbctl.admin.transport.Http1Transport` (HTTP/1.1
  on asyncio, keep-alive connections kept across refreshes) unless the caller gives another:
  httpx's default transport costs ~1 ms of CPU a request, most of a 200-broker refresh. The
  transport only carries bytes; every rule above is this module's. A GET to a plain URL is
  written on that transport directly, the bytes httpx would build (:meth:`AdminClient._plain_get`).
* Every failure becomes one :mod:`lbctl.admin.errors` error with a one-line message built from the
  broker's ``{"reason": …}``; secrets the auth knows (and their quoted and escaped forms) and URL
  user info are scrubbed from it, and from ``--debug`` traces — before anything is shortened.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import re
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from lbctl.admin.auth import Auth, make_auth, url_auth
from lbctl.admin.clientconf import ConnectionConfig, parse_host_port, without_zone
from lbctl.admin.clock import ClusterClock
from lbctl.admin.errors import (
    AdminError,
    ConnectionFailed,
    HttpError,
    RequestTimeout,
    error_class,
    reason_of,
)
from lbctl.admin.policy import connection_warnings, downgrade, join_location, origin_of
from lbctl.admin.retry import ADMIN, RetryPolicy, retry_after
from lbctl.admin.tls import verify_for
from lbctl.records import replace
from lbctl.safe.redact import redact, split_userinfo, url_without_userinfo
from lbctl.safe.text import shorten

MAX_REDIRECTS = 5
DEFAULT_CONCURRENCY = 256
#: a fan-out to this many origins or more has its connections started at once first
#: (:meth:`AdminClient._open_ahead`)
OPEN_AHEAD_MIN = 8
#: the header only ``lbctl sandbox`` sets, with its cluster clock (``now=<epoch s>; speed=<N>``):
#: read from a loopback answer only (:attr:`AdminClient.clock`, :mod:`lbctl.admin.clock`)
SANDBOX_CLOCK_HEADER = "X-Lbctl-Sandbox-Clock"
_MAX_URLS = 4096  # parsed URLs kept (:meth:`AdminClient._httpx_url`)
_MAX_TEMPLATES = 64  # GET templates kept, one per set of headers (:meth:`AdminClient._plain_get`)
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
# apply / drain (issue 15): ownership, lookups and dynamic configuration
OWNED_NAMESPACES = _ep("GET", "/brokers/{clusterName}/{brokerId}/ownedNamespaces")
DYNAMIC_CONFIG_NAMES = _ep("GET", "/brokers/configuration")
DYNAMIC_CONFIG_VALUES = _ep("GET", "/brokers/configuration/values")
UPDATE_DYNAMIC_CONFIG = _ep("POST", "/brokers/configuration/{configName}/{configValue}")
DELETE_DYNAMIC_CONFIG = _ep("DELETE", "/brokers/configuration/{configName}")
#: the lookup v2 API (its own base path, ``/lookup``): who owns a topic's bundle, assigning it when
#: nobody does — what a client's reconnection does after an unload
LOOKUP_TOPIC = Endpoint("GET", "/lookup/v2/topic/{topic-domain}/{tenant}/{namespace}/{topic}")

#: every endpoint lbctl may request (the spec test reads this)
ENDPOINTS: tuple[Endpoint, ...] = (
    CLUSTERS, LOCAL_BROKERS, ACTIVE_BROKERS, RUNTIME_CONFIG, LOAD_REPORT, BROKER_TOPICS, TENANTS, NAMESPACES,
    BUNDLES, UNLOAD_NAMESPACE, UNLOAD_BUNDLE, SPLIT_BUNDLE, BROKER_METRICS,
    ISOLATION_POLICIES, FAILURE_DOMAINS, ANTI_AFFINITY, NAMESPACE_TOPICS, PERSISTENT_PARTITIONED,
    NON_PERSISTENT_PARTITIONED, PERSISTENT_PARTITIONS, NON_PERSISTENT_PARTITIONS, BROKER_VERSION,
    OWNED_NAMESPACES, DYNAMIC_CONFIG_NAMES, DYNAMIC_CONFIG_VALUES, UPDATE_DYNAMIC_CONFIG,
    DELETE_DYNAMIC_CONFIG, LOOKUP_TOPIC,
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
        if not self.path_params and "{" not in self.endpoint.template:
            return self.endpoint.template  # (a broker's load report: asked 200 times a refresh)
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
        text = f"{self.method} {url_without_userinfo(self.url(admin_url))}"
        return text + (f"  body: {self.body_bytes().decode()}" if self.body is not None else "")


def call(endpoint: Endpoint, *, base: str | None = None, query: dict[str, Any] | None = None,
         body: Any = None, **path_params: str) -> Call:
    q = tuple((k, _query_value(v)) for k, v in (query or {}).items() if v is not None)
    for name, value in path_params.items():
        if not isinstance(value, str):  # a name taken from an answer of another shape (a
            # tenant list holding numbers or lists): the URL cannot be made; one line, exit 11
            raise HttpError(f"{endpoint.method} {endpoint.template}: the cluster's answer gave "
                            f"the {name} {shorten(repr(value), 80)}, not a name")
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
    """Synchronous facade over one asyncio loop and one ``httpx.AsyncClient``; ``transport`` is
    that client's (default: :class:`lbctl.admin.transport.Http1Transport` with ``verify``)."""

    def __init__(
        self,
        admin_url: str,
        *,
        auth: Auth | None = None,
        timeout: float = 30.0,
        verify: Any = True,
        transport: Any = None,
        retries: int = ADMIN.retries,
        backoff: float = ADMIN.backoff,
        max_concurrency: int = DEFAULT_CONCURRENCY,
        max_redirects: int = MAX_REDIRECTS,
        trace: Callable[[str], None] | None = None,
        broker_host_allow: Sequence[str] = (),
        max_response_bytes: int | None = None,
    ):
        self.admin_url = admin_url.rstrip("/")
        self.auth = auth or Auth()
        self.timeout = timeout
        self._verify = verify
        self._transport = transport
        #: how failed reads are asked again (mutations never are)
        self.retry: RetryPolicy = replace(ADMIN, retries=retries, backoff=backoff)
        self.max_concurrency = max_concurrency
        self.max_redirects = max_redirects
        self._trace = trace
        self._runner: asyncio.Runner | None = None
        self._http: Any = None  # the httpx.AsyncClient, made on first use
        self._wire: Any = None  # its Http1Transport when this client made it (no ``transport``)
        self._urls: dict[str, Any] = {}  # URL → httpx.URL (:meth:`_httpx_url`)
        #: broker id → its URL (:meth:`broker_url`: a refresh asks each id twice)
        self._broker_urls: dict[str, str] = {}
        self._templates: dict[tuple[tuple[str, str], ...], Any] = {}  # (:meth:`_plain_get`)
        self._sem: asyncio.Semaphore | None = None
        #: every (method, url) sent, in order (tests and the journal read it)
        self.sent: list[tuple[str, str]] = []
        self.scheme = urlsplit(self.admin_url).scheme
        #: host patterns (fnmatch, case-insensitive) a broker must match to be contacted
        self.broker_host_allow = tuple(p.strip().lower() for p in broker_host_allow if p.strip())
        #: origins requests (and credentials) may go to: the admin URL's and this cluster's brokers
        self._origin = origin_of(self.admin_url)
        self._trusted: set[str] = {self._origin}
        #: brokers' origins refused by --broker-host-allow, with the pattern text for the message
        self._refused: set[str] = set()
        self._brokers_asked = False
        self.max_response_bytes = max_response_bytes
        #: the cluster's clock, fed by every answer's ``Date`` and (loopback hosts only) the
        #: :data:`SANDBOX_CLOCK_HEADER`: apply's speed and the watcher's times both read it
        self.clock = ClusterClock()

    # ---- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._runner is not None:
            http, self._http = self._http, None
            if http is not None:
                with contextlib.suppress(Exception):
                    self._runner.run(http.aclose())  # its transport's connections too
            self._runner.close()
            self._runner = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._runner is None:
            self._runner = asyncio.Runner()
        return self._runner.run(coro)

    def _client(self) -> Any:
        """The one ``httpx.AsyncClient``: redirects are this module's, proxies and ``.netrc``
        are not read (``trust_env=False``), and the deadline of a request is ``timeout``."""
        if self._http is None:
            from lbctl.admin.transport import Http1Transport, async_client

            if self._transport is None:
                self._wire = Http1Transport(verify=self._verify)
            self._http = async_client(self._transport or self._wire, verify=self._verify,
                                      timeout=self.timeout)
        return self._http

    # ---- redaction -------------------------------------------------------------------------
    def redact(self, text: str) -> str:
        """``text`` without any secret the auth has seen — nor its JSON-, ``repr``- or
        URL-escaped forms — and without URL user info."""
        return redact(text, self.auth.secrets())

    def _debug(self, line: str) -> None:
        if self._trace is not None:
            self._trace(self.redact(line))

    # ---- where requests may go --------------------------------------------------------------
    def trust_brokers(self, broker_ids: Sequence[str]) -> None:
        """Trust the origins of these brokers of the cluster (ids as ``GET /brokers`` lists them;
        invalid ones are skipped: :meth:`broker_url` reports them)."""
        for b in broker_ids:
            with contextlib.suppress(AdminError):
                self.broker_url(b)

    def host_allowed(self, host: str, port: int | None = None) -> bool:
        """Whether ``--broker-host-allow`` lets this broker receive requests (no patterns: yes);
        an IPv6 zone id (``%eth0``) is not part of what the patterns match."""
        if not self.broker_host_allow:
            return True
        h = without_zone(host).lower()
        hp = f"{h}:{port}" if port is not None else h
        return any(fnmatch.fnmatchcase(h, p) or fnmatch.fnmatchcase(hp, p)
                   for p in self.broker_host_allow)

    def _check_target(self, c: Call, url: str, hop: int) -> None:
        """Refuse to send to an origin that is not trusted (before any byte is sent)."""
        o = origin_of(url)
        if o in self._trusted:
            return
        where = f"{c.method} {url_without_userinfo(c.url(self.admin_url))}"
        if o in self._refused:
            raise HttpError(self.redact(
                f"{where}: {url_without_userinfo(o)} does not match --broker-host-allow "
                f"({', '.join(self.broker_host_allow)}): not contacted"), sent=hop > 0)
        raise HttpError(self.redact(
            f"{where}: {url_without_userinfo(url)} is neither the admin URL nor a broker of this cluster: "
            "not contacted"), sent=hop > 0)

    async def _may_follow(self, c: Call, current: str, target: str) -> None:
        """A redirect may only go to a trusted origin and never from https to http; the brokers
        of the cluster are asked for once, the first time a redirect leaves the admin URL."""
        where = f"{c.method} {url_without_userinfo(c.url(self.admin_url))}"
        not_made = " (the change was not made)" if c.endpoint.mutation else ""
        if downgrade(current, target):
            raise HttpError(self.redact(f"{where}: refusing to follow a redirect from https to "
                                        f"{url_without_userinfo(target)}{not_made}"))
        o = origin_of(target)
        if o not in self._trusted and o not in self._refused and not self._brokers_asked:
            self._brokers_asked = True
            with contextlib.suppress(AdminError):
                listed = (await self.arequest(call(LOCAL_BROKERS))).json()
                if isinstance(listed, list):
                    self.trust_brokers([b for b in listed if isinstance(b, str)])
        if o in self._trusted:
            return
        why = ("does not match --broker-host-allow" if o in self._refused
               else "is neither the admin URL nor a broker of this cluster")
        raise HttpError(self.redact(f"{where}: redirected to {url_without_userinfo(target)}, which {why}: "
                                    f"not followed{not_made}"))

    def _check_same_call(self, c: Call, status: int, current: str, target: str) -> None:
        """A mutation's redirect may change the host, never the request (module docstring)."""
        change = ("the method" if status not in (307, 308)
                  else None if _same_request(current, target) else "the path or query")
        if change is None:
            return
        raise HttpError(self.redact(
            f"{c.method} {url_without_userinfo(c.url(self.admin_url))}: the {status} redirect to "
            f"{shorten(url_without_userinfo(target), 200)} would change {change} of the {c.method}: "
            "not followed (the change was not made)"))

    # ---- requests ----------------------------------------------------------------------------
    async def arequest(self, c: Call) -> Response:
        """Send ``c`` (following redirects, retrying reads as :attr:`retry` says) and return a
        2xx response."""
        attempt = 0
        while True:
            try:
                resp = await self._follow(c)
            except AdminError as e:
                err = e
            else:
                if resp.status < 300:
                    return resp
                err = self._status_error(c, resp)
            attempt += 1
            await asyncio.sleep(self.retry.next_delay(attempt, err, mutation=c.endpoint.mutation))

    async def _follow(self, c: Call) -> Response:
        method, url, body = c.method, c.url(self.admin_url), c.body_bytes()
        headers = {"Accept": "application/json"}
        if method != "GET":
            headers["Content-Type"] = "application/json"
        for hop in range(self.max_redirects + 1):
            self._check_target(c, url, hop)
            send_headers = {**headers, **self.auth.headers()}  # recomputed per hop (token files)
            start = time.perf_counter()
            asked = self.clock.source()
            http = self._client()
            if self._sem is None:
                self._sem = asyncio.Semaphore(self.max_concurrency)
            try:
                async with self._sem, asyncio.timeout(self.timeout):
                    self.sent.append((method, url))
                    plain = self._plain_get(http, method, url, send_headers)
                    if plain is not None:
                        r = await self._wire.send_message("GET", *plain, light=True)
                    else:
                        req = http.build_request(method, self._httpx_url(url),
                                                 content=body if method != "GET" else None,
                                                 headers=send_headers)
                        r = await http.send(req, stream=True)
                    try:
                        status, rheaders = r.status_code, r.headers
                        self._heard(url, asked, rheaders)
                        location = rheaders.get("location") if status in _REDIRECTS else None
                        if location:
                            content = b""  # not read: the connection is not reused
                        else:
                            content = await self._read_body(c, url, r)
                    finally:
                        await r.aclose()
            except AdminError:
                raise
            except BaseException as e:
                raise self._transport_error(c, method, url, e) from None
            if self._trace is not None:
                ms = (time.perf_counter() - start) * 1000
                self._debug(f"{method} {url} -> {status}"
                            + (f" Location: {location}" if location and status in _REDIRECTS
                               else "") + f" ({ms:.1f} ms)")
            if status in _REDIRECTS and location:
                target = join_location(url, location)
                if target is None:
                    raise HttpError(self.redact(
                        f"{c.method} {url_without_userinfo(c.url(self.admin_url))}: redirected to an invalid "
                        f"URL {shorten(url_without_userinfo(location), 200)!r}"))
                if c.endpoint.mutation:
                    self._check_same_call(c, status, url, target)
                await self._may_follow(c, url, target)
                url = target
                if status == 303:
                    method, body = "GET", b""
                continue
            if status < 300:
                return Response(status, content, url)
            return Response(status, content, url, {
                "content-type": rheaders.get("content-type", ""),
                "retry-after": rheaders.get("retry-after", "")})
        raise HttpError(self.redact(f"{c.method} {url_without_userinfo(c.url(self.admin_url))}: too many "
                                    f"redirects (more than {self.max_redirects})"))

    def cluster_speed(self) -> float:
        """Cluster seconds per wall second: 1 on a real cluster, a loopback sandbox's ``--speed``
        once it has answered (so that apply's and drain's windows are cluster time there). An
        unreadable or non-positive value (a stepped test clock) counts as 1
        (:meth:`lbctl.admin.clock.ClusterClock.speed`)."""
        return self.clock.speed()

    def _heard(self, url: str, asked: float, headers: Any) -> None:
        """An answer's clock headers to :attr:`clock`, dated midway through its request. A
        ``Date`` counts from the admin URL's own origin only: the per-broker requests (a load
        report from each broker's own URL) come from brokers whose clocks may disagree by
        seconds, and samples from two of them would read as a clock that runs fast or slow
        (``ClusterClock.rate`` over first and last); the admin URL is the one clock the
        watcher dates its captures by, as it asked who leads there."""
        date, sandbox = headers.get("date"), headers.get(SANDBOX_CLOCK_HEADER)
        if date and origin_of(url) != self._origin:
            date = None
        if date or sandbox is not None:
            local = (asked + self.clock.source()) / 2
            if sandbox is not None:
                self._note_clock(url, sandbox, local)
            self.clock.heard(local, date)

    def _note_clock(self, url: str, value: str, local: float | None = None) -> None:
        """The sandbox's clock header (answered at ``local``; now if not said), believed from
        a loopback host only."""
        if _loopback(url):
            self.clock.heard(self.clock.source() if local is None else local, None, value)

    def _cap(self) -> int:
        from lbctl.safe.files import LIMITS

        return self.max_response_bytes or LIMITS.max_response_bytes

    def _too_big(self, c: Call, url: str, cap: int) -> HttpError:
        from lbctl.safe.files import human_size

        return HttpError(self.redact(
            f"{c.method} {url_without_userinfo(url)}: the response is larger than {human_size(cap)} "
            "(raise --max-response-size)"))

    async def _read_body(self, c: Call, url: str, r: Any) -> bytes:
        """The body, refused as soon as it passes ``max_response_bytes`` (one the transport
        read whole with the head is taken as it is: :data:`lbctl.admin.transport.WHOLE_BODY`).

        The cap counts decoded bytes and bounds memory: a gzip or deflate body is inflated here,
        a piece at a time (:func:`lbctl.admin.bodies.read_capped`, the Prometheus client's
        reader too)."""
        from lbctl.admin.bodies import read_capped
        from lbctl.admin.transport import WHOLE_BODY

        cap = self._cap()
        whole = r.extensions.get(WHOLE_BODY)
        if whole is not None:  # the transport's, read already (no decoding): the same bytes
            if len(whole) > cap:
                raise self._too_big(c, url, cap)
            return bytes(whole)
        return await read_capped(r, cap, "response", lambda words: HttpError(
            self.redact(f"{c.method} {url_without_userinfo(url)}: {words}")))

    def _plain_get(self, http: Any, method: str, url: str, headers: dict[str, str]
                   ) -> tuple[tuple[str, str, int], bytes, float | None, float | None] | None:
        """A GET on this client's own wire to a :func:`~lbctl.admin.transport.plain_url`, as
        ``(origin, the request's bytes, read timeout, connect timeout)`` for
        :meth:`Http1Transport.send_message <lbctl.admin.transport.Http1Transport.send_message>`:
        the very bytes httpx would build (:class:`~lbctl.admin.transport.GetTemplate`, made
        from a request httpx built once per set of headers), without building a request and a
        URL each time (~0.2 ms of CPU a request; a first refresh of 200 brokers is ~25 % of it).
        None for anything else: httpx builds it and sends it as before."""
        if method != "GET" or self._wire is None:
            return None
        from lbctl.admin.transport import GetTemplate, plain_url

        parts = plain_url(url)
        if parts is None:
            return None
        origin, host, target = parts
        key = tuple(headers.items())
        template = self._templates.get(key)
        if template is None:
            if len(self._templates) >= _MAX_TEMPLATES:
                self._templates.clear()
            template = GetTemplate(http.build_request("GET", self._httpx_url(url),
                                                      headers=headers))
            self._templates[key] = template
        if not template.usable:
            return None
        return origin, template.message(host, target), template.read, template.connect

    def _httpx_url(self, url: str) -> Any:
        """``httpx.URL(url)``, parsed once per URL: a refresh asks the same few hundred URLs
        again, and parsing is half of what ``build_request`` costs (~40 µs a request)."""
        parsed = self._urls.get(url)
        if parsed is None:
            import httpx

            if len(self._urls) >= _MAX_URLS:
                self._urls.clear()
            parsed = self._urls[url] = httpx.URL(url)
        return parsed

    def _transport_error(self, c: Call, method: str, url: str, e: BaseException) -> AdminError:
        import httpx

        if isinstance(e, asyncio.CancelledError | KeyboardInterrupt):
            raise e
        where = f"{method} {url_without_userinfo(url)}"
        maybe = (" (the change may have been applied: check before retrying)"
                 if c.endpoint.mutation else "")
        if isinstance(e, httpx.ConnectTimeout):
            return RequestTimeout(self.redact(f"{where}: connection timed out after "
                                              f"{self.timeout:g} s"), sent=False)
        if isinstance(e, httpx.TimeoutException | asyncio.TimeoutError | TimeoutError):
            return RequestTimeout(self.redact(f"{where}: no answer within {self.timeout:g} s"
                                              f" (--request-timeout){maybe}"))
        if isinstance(e, httpx.ConnectError):
            detail = self._detail(e)
            return ConnectionFailed(self.redact(f"{where}: cannot connect ({detail})"), sent=False)
        if isinstance(e, httpx.RemoteProtocolError) and "location header" in str(e).lower():
            return HttpError(self.redact(f"{where}: redirected to an invalid URL (the server's "
                                         f"Location header: {shorten(str(e), 160)})"))
        if isinstance(e, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
            return ConnectionFailed(self.redact(f"{where}: {dropped_or_malformed(e)}{maybe}"))
        if isinstance(e, httpx.LocalProtocolError | httpx.UnsupportedProtocol | httpx.InvalidURL):
            return HttpError(self.redact(f"{where}: the request could not be built "
                                         f"({self._detail(e)})"), sent=False)
        if isinstance(e, httpx.HTTPError):
            return HttpError(self.redact(f"{where}: {type(e).__name__}: {self._detail(e)}"))
        if isinstance(e, OSError):
            return ConnectionFailed(self.redact(f"{where}: {self._detail(e)}"), sent=False)
        if isinstance(e, ValueError | UnicodeError):  # a URL or header httpx cannot encode
            return HttpError(self.redact(f"{where}: the request could not be built "
                                         f"({self._detail(e)})"), sent=False)
        raise e

    def _detail(self, e: BaseException) -> str:
        """The short cause of ``e``, redacted first and shortened after."""
        return shorten(self.redact(_reason_text(e)), 160)

    def _status_error(self, c: Call, resp: Response) -> AdminError:
        from http import HTTPStatus

        try:
            phrase = HTTPStatus(resp.status).phrase
        except ValueError:
            phrase = ""
        reason = shorten(self.redact(reason_of(resp.body, resp.headers.get("content-type", ""))),
                         MAX_REASON)  # redacted first: a cut could split a secret
        text = f"{c.method} {url_without_userinfo(resp.url)}: {resp.status} {phrase}".rstrip()
        if reason and reason != phrase:
            text += f": {reason}"
        err = error_class(resp.status)(self.redact(text), status=resp.status)
        err.retry_after = retry_after(resp.headers.get("retry-after"))
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
            self._open_ahead(calls)
            try:
                return list(await asyncio.gather(*(one(c) for c in calls)))
            finally:
                if self._wire is not None:
                    await self._wire.settle()

        return self.run(all_())

    def _open_ahead(self, calls: Sequence[Call]) -> None:
        """A fan-out's connections started at once before its requests are built
        (:meth:`Http1Transport.open_ahead`), to the trusted origins of its reads only (a refused
        origin is never contacted; a mutation's connection is its own); nothing when the caller
        gave the transport, or for fewer than :data:`OPEN_AHEAD_MIN` origins."""
        if len(calls) < OPEN_AHEAD_MIN:
            return
        from lbctl.admin.transport import connect_timeout, origin_key, plain_url

        self._client()
        wire = self._wire
        if wire is None:
            return
        by_base = {c.base or self.admin_url: c for c in calls if c.method == "GET"}
        trusted = [c.url(self.admin_url) for b, c in by_base.items()
                   if origin_of(b) in self._trusted][: self.max_concurrency]
        if len(trusted) >= OPEN_AHEAD_MIN:  # (the requests' own URLs: parsed once for both)
            connect = connect_timeout(self.timeout)
            origins = []
            for u in trusted:
                plain = plain_url(u)
                if plain is not None:
                    origins.append(plain[0])
                elif (parsed := self._httpx_url(u)).scheme in ("http", "https"):
                    origins.append(origin_key(parsed))
            wire.open_ahead(origins, connect)

    # ---- typed reads ---------------------------------------------------------------------------
    def clusters(self) -> list[str]:
        return _str_list(self.json(call(CLUSTERS)), "GET /admin/v2/clusters")

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
        """``<admin URL's scheme>://host:port`` of a broker id (never a downgrade to http). An id
        that is not exactly ``host:port`` (a scheme, a path, user info, a bad port) is an error;
        a host outside ``--broker-host-allow`` is remembered as refused, and any request to it
        fails before it is sent."""
        url = self._broker_urls.get(broker_id)
        if url is not None:  # (its origin trusted or refused already: the patterns never change)
            return url
        host, port = parse_broker_id(broker_id)
        netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        url = f"{self.scheme}://{netloc}"
        o = origin_of(url)
        if o not in self._trusted:
            if self.host_allowed(host, port):
                self._trusted.add(o)
            else:
                self._refused.add(o)
        if len(self._broker_urls) >= _MAX_URLS:
            self._broker_urls.clear()
        self._broker_urls[broker_id] = url
        return url


#: the longest server reason kept in a message (after redaction)
MAX_REASON = 300


_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _loopback(url: str) -> bool:
    """``url``'s host is this machine's (``localhost`` or a loopback address): ``lbctl sandbox``
    listens on nothing else, and no remote answer may stretch apply's time windows."""
    import ipaddress

    host = (urlsplit(url).hostname or "").lower()
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost
        return False


def _escapes_normalised(path: str) -> str:
    """A path with its percent-escapes in RFC 3986's normal form (upper-case hex; unreserved
    characters unescaped), so that the same path written two ways compares equal."""

    def one(m: re.Match[str]) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if ch in _UNRESERVED else "%" + m.group(1).upper()

    return _ESCAPE.sub(one, path)


def _same_request(current: str, target: str) -> bool:
    """Whether ``target`` asks for what ``current`` did: the same path, the same query parameters
    in the same order, but for Pulsar's ``authoritative`` flag (true or false), which a broker's
    redirect sets (``PulsarWebResource``: ``replaceQueryParam("authoritative", …)``)."""
    a, b = urlsplit(current), urlsplit(target)
    if _escapes_normalised(a.path) != _escapes_normalised(b.path):
        return False
    qa = parse_qsl(a.query, keep_blank_values=True)
    qb = parse_qsl(b.query, keep_blank_values=True)
    if any(k == "authoritative" and v not in ("true", "false") for k, v in qb):
        return False
    return ([kv for kv in qa if kv[0] != "authoritative"]
            == [kv for kv in qb if kv[0] != "authoritative"])


def parse_broker_id(broker_id: str) -> tuple[str, int]:
    """``host:port`` of a broker id as ``GET /admin/v2/brokers`` lists it (``[v6]:port`` too)."""
    parsed = parse_host_port(broker_id)
    if parsed is None:
        raise HttpError(f"broker id {shorten(broker_id, 100)!r} is not host:port: not contacted",
                        sent=False)
    return parsed




#: Pulsar's ``NamedEntity`` pattern for tenant, namespace and cluster names (``^[-=:.\\w]*$``,
#: ``\\w`` being ASCII in Java); "." and ".." are refused on top: they would walk the URL's path
_NAMED_ENTITY = re.compile(r"[-=:.A-Za-z0-9_]+")


def check_name(kind: str, name: str, whole: str) -> None:
    from lbctl.errors import UsageError

    if _NAMED_ENTITY.fullmatch(name) is None or name in (".", ".."):
        raise UsageError(f"bad {kind} name in {shorten(whole, 120)!r}: Pulsar allows letters, "
                         "digits and - = : . _ only (and not . or ..)")


def split_namespace(namespace: str) -> tuple[str, str]:
    """``tenant/namespace`` checked by Pulsar's naming rules before any URL is built."""
    from lbctl.errors import UsageError

    parts = namespace.strip("/").split("/")
    if len(parts) != 2 or not all(parts):
        raise UsageError(f"bad namespace {shorten(namespace, 120)!r}: expected tenant/namespace")
    check_name("tenant", parts[0], namespace)
    check_name("namespace", parts[1], namespace)
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


def update_config_call(name: str, value: str) -> Call:
    """``pulsar-admin brokers update-dynamic-config --config NAME --value VALUE``."""
    return call(UPDATE_DYNAMIC_CONFIG, configName=name, configValue=value)


def delete_config_call(name: str) -> Call:
    """``pulsar-admin brokers delete-dynamic-config --config NAME``: back to broker.conf's value."""
    return call(DELETE_DYNAMIC_CONFIG, configName=name)


def lookup_call(topic: str, *, base: str | None = None) -> Call:
    """``GET /lookup/v2/topic/{domain}/{tenant}/{namespace}/{topic}`` of a full topic name
    (``persistent://tenant/ns/name``)."""
    domain, _, rest = topic.partition("://")
    parts = rest.split("/", 2)
    if domain not in ("persistent", "non-persistent") or len(parts) != 3:
        from lbctl.errors import UsageError

        raise UsageError(f"bad topic name {shorten(topic, 120)!r}: expected "
                         "persistent://tenant/namespace/topic")
    return Call(LOOKUP_TOPIC, (("topic-domain", domain), ("tenant", parts[0]),
                               ("namespace", parts[1]), ("topic", parts[2])), base=base)


def dropped_or_malformed(e: BaseException) -> str:
    """What a protocol error says: the connection ended early, or the answer is not HTTP/1.x as
    h11 reads it (a status 000, a bad length: :mod:`lbctl.admin.transport`)."""
    text = str(e)
    if type(e).__name__ != "RemoteProtocolError" or "closed" in text or "disconnected" in text:
        return "connection dropped by the server"
    return f"malformed answer from the server ({shorten(text, 80)})"


def _reason_text(e: BaseException) -> str:
    """A short cause: the errno of the first OSError in the chain, else known phrases."""
    import errno
    import ssl

    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError) and seen.verify_message:
            # which check failed: a host name the certificate does not name (a wrong or
            # intercepting server), a self-signed or expired one
            return f"TLS certificate verification failed: {seen.verify_message.rstrip('.')}"
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
    return text or type(e).__name__


def _str_list(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise HttpError(f"{what}: expected a JSON array of strings")
    return value


def client_from_config(cfg: ConnectionConfig, *, transport: Any = None,
                       trace: Callable[[str], None] | None = None,
                       warn: Callable[[str], None] | None = None, **kwargs: Any) -> AdminClient:
    """An :class:`AdminClient` for resolved connection settings (``warn`` gets
    :func:`connection_warnings`). User info in the admin URL (``http://user:pass@host``) is
    taken out of it and becomes basic auth when no other is configured, as for
    ``--prometheus-url``: left in, httpx turned it into an ``Authorization`` header that replaced
    a ``--token``'s, and its password, unknown to the auth, was not redacted."""
    admin_url, userinfo = split_userinfo(cfg.admin_url)
    auth = make_auth(cfg.auth_plugin, cfg.auth_params, cert_file=cfg.tls_cert_file,
                     key_file=cfg.tls_key_file, timeout=cfg.request_timeout,
                     origin=cfg.auth_origin)
    auth, ignored = url_auth(auth, userinfo)
    if ignored is not None and warn is not None:
        warn(ignored)
    if admin_url != cfg.admin_url:
        cfg = replace(cfg, admin_url=admin_url)
    verify = verify_for(cfg, auth)
    if hasattr(auth, "verify"):
        auth.verify = verify  # the OAuth2 issuer is reached with the same trust settings
    if warn is not None:
        for line in connection_warnings(cfg, auth):
            warn(line)
    kwargs.setdefault("broker_host_allow", cfg.host_patterns)
    return AdminClient(cfg.admin_url, auth=auth, timeout=cfg.request_timeout, verify=verify,
                       transport=transport, trace=trace, **kwargs)
