"""Client authentication as Pulsar's client plugins do it, from ``authPlugin`` + ``authParams``.

* ``AuthenticationToken`` (``token``): ``authParams`` is ``token:<jwt>``, ``file:///path`` (the file
  is re-read on every request, as ``AuthenticationToken``'s supplier does, so rotated tokens work),
  JSON ``{"token": …}`` / ``{"file": …}``, or the raw token — and, so that a token need not sit
  on the command line (``/proc/PID/cmdline`` is world-readable), ``env:VAR`` (the environment
  variable ``VAR``) or ``token:-`` (one line read from standard input). Sends
  ``Authorization: Bearer <jwt>``.
* ``AuthenticationTls`` (``tls``): ``tlsCertFile:/p,tlsKeyFile:/p`` or the same as JSON; the
  certificate is presented in the TLS handshake, no header.
* ``AuthenticationOAuth2`` (``oauth2``): JSON ``{"type": "client_credentials", "issuerUrl",
  "privateKey", "audience", "scope"}``; the client-credentials flow of ``ClientCredentialsFlow``:
  discover ``token_endpoint`` from ``<issuerUrl>/.well-known/openid-configuration``, post the key
  file's ``client_id``/``client_secret``, cache the access token and refresh it after 90 % of
  ``expires_in`` (``AuthenticationOAuth2``'s early refresh). Sends ``Authorization: Bearer …`` and
  ``X-Pulsar-Auth-Method-Name: token``. The client secret is posted only over https to the
  issuer's own origin (scheme, host and port of ``issuerUrl``); a ``token_endpoint`` elsewhere is
  refused unless the parameters say ``"allowForeignTokenEndpoint": true``.
* ``AuthenticationBasic`` (``basic``): JSON ``{"userId", "password"}`` → ``Authorization: Basic``.

Secrets (tokens, client secrets, passwords) never leave this module except in the header that
carries them: ``repr`` shows ``<redacted>``, and :meth:`Auth.secrets` lists every secret seen so
that the client can scrub them from any message. A credential holding a control character or a
non-ASCII character (which no HTTP header can carry) is refused up front, without echoing it.

Plugin names: :data:`PLUGIN_TABLE` is the one list — Pulsar's short class name, its fully
qualified name and lbctl's short alias — from which the ``--auth-plugin`` help and the error for
an unknown name are both built.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lbctl.errors import ConfigError

_PKG = "org.apache.pulsar.client.impl.auth."


@dataclass(frozen=True)
class Plugin:
    """One client auth plugin: Pulsar's class (short and fully qualified) and lbctl's kind."""

    short: str
    qualified: str
    kind: str


#: the auth plugins lbctl speaks (``--auth-plugin`` takes any of the three names of each)
PLUGIN_TABLE: tuple[Plugin, ...] = (
    Plugin("AuthenticationToken", _PKG + "AuthenticationToken", "token"),
    Plugin("AuthenticationTls", _PKG + "AuthenticationTls", "tls"),
    Plugin("AuthenticationOAuth2", _PKG + "oauth2.AuthenticationOAuth2", "oauth2"),
    Plugin("AuthenticationBasic", _PKG + "AuthenticationBasic", "basic"),
)
PLUGINS: dict[str, str] = {
    name.lower(): p.kind for p in PLUGIN_TABLE for name in (p.short, p.qualified, p.kind)
}
#: "AuthenticationToken, AuthenticationTls, …": the help text and the error message read this
PLUGIN_NAMES = ", ".join(p.short for p in PLUGIN_TABLE)


def plugin_kind(name: str) -> str:
    """``token``/``tls``/``oauth2``/``basic`` of a plugin name (short, qualified or alias)."""
    kind = PLUGINS.get(name.strip().lower())
    if kind is None:
        from lbctl.safe.text import shorten

        raise ConfigError(f"auth: unsupported auth plugin {shorten(name, 120)!r} (supported: "
                          f"{PLUGIN_NAMES}, short or fully qualified)")
    return kind


def check_credential(value: str, what: str) -> str:
    """A credential must be printable ASCII: a control character would break (or smuggle) an HTTP
    header, and a header cannot carry other characters. The value itself is never echoed."""
    bad = next((i for i, ch in enumerate(value) if not (0x20 <= ord(ch) < 0x7F)), None)
    if bad is not None:
        ch = value[bad]
        kind = "a control character" if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F else (
            "a non-ASCII character")
        raise ConfigError(f"auth: the {what} holds {kind} at position {bad + 1} (credentials "
                          "must be printable ASCII); check how it was written or copied")
    return value


#: AuthenticationOAuth2 refreshes when 90 % of the token's lifetime has passed
OAUTH2_REFRESH_FRACTION = 0.9


class Auth:
    """No authentication; the base of every plugin."""

    name = "none"

    def headers(self) -> dict[str, str]:
        return {}

    def client_cert(self) -> tuple[str, str] | None:
        return None

    def secrets(self) -> list[str]:
        return []

    #: whether :meth:`headers` carries the secret itself (a bearer token, a password)
    headers_are_secret = False
    #: what the credential is called in warnings
    credential_name = "credential"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class TokenAuth(Auth):
    """``AuthenticationToken``: a fixed token, or a file read again on every request."""

    name = "token"
    headers_are_secret = True
    credential_name = "bearer token"

    def __init__(self, token: str | None = None, path: str | None = None):
        self._token = token
        self._path = path
        self._seen: set[str] = set()
        if token is not None:
            token = token.strip()
            self._token = token
            if not token:
                raise ConfigError("auth: the token is empty")
            check_credential(token, "token")
            self._seen.add(token)
        else:
            self._read()  # fail early on a missing file

    def _read(self) -> str:
        assert self._path is not None
        from lbctl.safe.files import read_regular

        path = str(Path(self._path).expanduser())
        raw = read_regular(path, what="a token file", limit=1 << 20, follow=True,
                           error=lambda m: ConfigError(f"auth: token file {m}"))
        try:
            tok = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise ConfigError(f"auth: token file {self._path} is not text") from None
        if not tok:
            raise ConfigError(f"auth: token file {self._path} is empty")
        self._seen.add(tok)
        check_credential(tok, f"token in {self._path}")
        return tok

    #: where the credential came from (a context), said after a later read's error
    origin: str | None = None

    def token(self) -> str:
        if self._token is not None:
            return self._token
        try:
            return self._read()
        except ConfigError as e:
            raise from_origin(e, self.origin) from None

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token()}"}

    def secrets(self) -> list[str]:
        return list(self._seen)


class TlsAuth(Auth):
    """``AuthenticationTls``: the client certificate and key, presented in the handshake."""

    name = "tls"
    credential_name = "client certificate"

    def __init__(self, cert_file: str, key_file: str):
        import os

        from lbctl.safe.files import open_regular

        for what, p in (("certificate", cert_file), ("key", key_file)):
            prefix = f"auth: TLS client {what} "

            def problem(m: str, prefix: str = prefix) -> ConfigError:
                return ConfigError(prefix + m)

            os.close(open_regular(str(Path(p).expanduser()), what=f"a TLS client {what} file",
                                  error=problem, follow=True))
        self.cert_file = str(Path(cert_file).expanduser())
        self.key_file = str(Path(key_file).expanduser())

    def client_cert(self) -> tuple[str, str]:
        return (self.cert_file, self.key_file)


class BasicAuth(Auth):
    """``AuthenticationBasic``: user id and password in an ``Authorization: Basic`` header."""

    name = "basic"
    headers_are_secret = True
    credential_name = "password"

    def __init__(self, user: str, password: str):
        check_credential(user, "user id")
        check_credential(password, "password")
        self._user, self._password = user, password
        self._value = base64.b64encode(f"{user}:{password}".encode()).decode()

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Basic {self._value}"}

    def secrets(self) -> list[str]:
        return [self._password, self._value]


@dataclass
class _CachedToken:
    value: str
    refresh_at: float  # time.monotonic()


@dataclass
class OAuth2Auth(Auth):
    """``AuthenticationOAuth2`` with the client-credentials flow and a cached access token."""

    issuer_url: str
    private_key: str  # file:///path or data:application/json;base64,…
    audience: str | None = None
    scope: str | None = None
    timeout: float = 30.0
    verify: Any = True
    clock: Any = time.monotonic
    #: "allowInsecureTokenEndpoint": an http issuer or a token endpoint on another origin
    allow_insecure: bool = False
    _cached: _CachedToken | None = field(default=None, repr=False)
    _seen: set[str] = field(default_factory=set, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    name = "oauth2"
    headers_are_secret = True
    credential_name = "OAuth2 bearer token"

    def __repr__(self) -> str:
        return f"<OAuth2Auth issuer={self.issuer_url!r} audience={self.audience!r}>"

    def _key(self) -> tuple[str, str]:
        raw = self.private_key
        try:
            if raw.startswith("data:"):
                _, _, payload = raw.partition(",")
                text = base64.b64decode(payload).decode() if ";base64" in raw.split(",")[0] else payload
            else:
                from lbctl.safe.files import read_regular

                path = raw[len("file://"):] if raw.startswith("file://") else raw
                text = read_regular(str(Path(path).expanduser()), what="an OAuth2 key file",
                                    limit=1 << 20, follow=True,
                                    error=lambda m: ConfigError(f"auth: OAuth2 private key {m}")
                                    ).decode("utf-8")
            key = json.loads(text)
            cid, secret = key["client_id"], key["client_secret"]
        except (ValueError, KeyError, TypeError):
            raise ConfigError("auth: the OAuth2 private key must be JSON with client_id and "
                              "client_secret") from None
        self._seen.add(str(secret))
        check_credential(str(cid), "OAuth2 client_id")
        check_credential(str(secret), "OAuth2 client_secret")
        return str(cid), str(secret)

    def _check_endpoint(self, endpoint: object) -> str:
        """The token endpoint must be https on the issuer's origin (``allow_insecure`` waives it):
        a discovery document is data from the network, and the client secret is posted there."""
        from urllib.parse import urlsplit

        from lbctl.admin.errors import Unauthorized
        from lbctl.safe.redact import url_without_userinfo

        if not isinstance(endpoint, str) or not endpoint.startswith(("https://", "http://")):
            raise Unauthorized("OAuth2: the discovery document of "
                               f"{url_without_userinfo(self.issuer_url)} names no http(s) token_endpoint",
                               status=401)
        if self.allow_insecure:
            return endpoint
        try:
            mine, theirs = urlsplit(self.issuer_url), urlsplit(endpoint)
            same = (theirs.scheme == "https" and mine.scheme == "https"
                    and (theirs.hostname or "").lower() == (mine.hostname or "").lower()
                    and (theirs.port or 443) == (mine.port or 443))
        except ValueError:
            same = False
        if not same:
            from lbctl.safe.text import shorten

            raise Unauthorized(
                f"OAuth2: refusing to send the client secret to {shorten(url_without_userinfo(endpoint), 200)}"
                f": the token endpoint must be https on the issuer's origin "
                f"({url_without_userinfo(self.issuer_url)}); set \"allowInsecureTokenEndpoint\": true in "
                "--auth-params to allow it", status=401)
        return endpoint

    def _fetch(self) -> _CachedToken:
        import httpx

        from lbctl.admin.errors import Unauthorized
        from lbctl.safe.redact import url_without_userinfo

        if not self.allow_insecure and not self.issuer_url.startswith("https://"):
            raise Unauthorized(f"OAuth2: the issuer {url_without_userinfo(self.issuer_url)} is not https; "
                               "set \"allowInsecureTokenEndpoint\": true in --auth-params to "
                               "allow it", status=401)
        cid, secret = self._key()
        endpoint = "?"
        try:
            with httpx.Client(timeout=self.timeout, verify=self.verify, follow_redirects=False,
                              trust_env=False) as http:
                meta = http.get(self.issuer_url.rstrip("/") + "/.well-known/openid-configuration")
                meta.raise_for_status()
                doc = meta.json()
                endpoint = self._check_endpoint(doc.get("token_endpoint")
                                                if isinstance(doc, dict) else None)
                form = {"grant_type": "client_credentials", "client_id": cid, "client_secret": secret}
                if self.audience:
                    form["audience"] = self.audience
                if self.scope:
                    form["scope"] = self.scope
                resp = http.post(endpoint, data=form)
                if resp.status_code != 200:
                    raise Unauthorized(f"OAuth2 token request to {url_without_userinfo(endpoint)} failed: "
                                       f"HTTP {resp.status_code}", status=401)
                body = resp.json()
                token = body["access_token"]
                expires = float(body.get("expires_in") or 3600)
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise Unauthorized(f"OAuth2 token request to {url_without_userinfo(self.issuer_url)} failed: "
                               f"{type(e).__name__}", status=401) from None
        if not isinstance(token, str) or not token:
            raise Unauthorized("OAuth2: the token endpoint returned no access_token", status=401)
        self._seen.add(token)
        try:
            check_credential(token, "OAuth2 access token")
        except ConfigError as e:
            raise Unauthorized(str(e), status=401) from None
        import math

        if not math.isfinite(expires) or expires <= 0:
            expires = 3600.0
        return _CachedToken(token, self.clock() + OAUTH2_REFRESH_FRACTION * min(expires, 86400.0))

    def token(self) -> str:
        with self._lock:
            if self._cached is None or self.clock() >= self._cached.refresh_at:
                self._cached = self._fetch()
            return self._cached.value

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token()}", "X-Pulsar-Auth-Method-Name": "token"}

    def secrets(self) -> list[str]:
        return list(self._seen)


def url_auth(auth: Auth, userinfo: tuple[str, str] | None,
             url_name: str = "admin URL") -> tuple[Auth, str | None]:
    """The auth to use when ``userinfo`` (``user:pass@`` taken out of a URL) may be given
    alongside a configured one, and the one warning line to show (None: nothing to say). The
    URL's user name and password become basic auth only when nothing else is configured; with
    another auth they are not sent, and the user is told so (they were dropped silently), in
    words that never hold the password (nor the user name: a URL may carry a token there)."""
    if userinfo is None:
        return auth, None
    if type(auth) is Auth:
        return BasicAuth(*userinfo), None
    return auth, (f"the user name and password in the {url_name} are ignored: the "
                  f"{auth.credential_name} of the configured {auth.name} authentication is used "
                  f"(remove them from the URL, or the other authentication)")


def from_origin(error: ConfigError, origin: str | None) -> ConfigError:
    """``error`` with where its credential came from appended (``origin``: a context's, see
    :func:`lbctl.admin.contexts.origin`), still one line; ``error`` itself without one."""
    if not origin:
        return error
    return ConfigError(f"{error} ({origin})")


def make_auth(plugin: str | None, params: str | None, *, cert_file: str | None = None,
              key_file: str | None = None, timeout: float = 30.0, verify: Any = True,
              stdin: Any = None, env: dict[str, str] | None = None,
              origin: str | None = None) -> Auth:
    """The :class:`Auth` for a pulsar-admin ``--auth-plugin``/``--auth-params`` pair.

    Without a plugin, ``tlsCertificateFilePath``/``tlsKeyFilePath`` (``cert_file``/``key_file``)
    still give a client certificate, as they do for pulsar-admin. ``stdin``/``env`` are where
    ``token:-`` and ``env:VAR`` read (the process's by default). ``origin`` (a context gave the
    credential) ends every auth error, now or on a later read of a token file.
    """
    try:
        auth = _make_auth(plugin, params, cert_file=cert_file, key_file=key_file,
                          timeout=timeout, verify=verify, stdin=stdin, env=env)
    except ConfigError as e:
        raise from_origin(e, origin) from None
    if isinstance(auth, TokenAuth):
        auth.origin = origin
    return auth


def _make_auth(plugin: str | None, params: str | None, *, cert_file: str | None,
               key_file: str | None, timeout: float, verify: Any, stdin: Any,
               env: dict[str, str] | None) -> Auth:
    if not plugin:
        if cert_file and key_file:
            return TlsAuth(cert_file, key_file)
        return Auth()
    kind = plugin_kind(plugin)
    params = (params or "").strip()
    if kind == "token":
        return _token(params, stdin=stdin, env=env)
    if kind == "tls":
        p = _pairs(params)
        cert = p.get("tlsCertFile") or cert_file
        key = p.get("tlsKeyFile") or key_file
        if not cert or not key:
            raise ConfigError("auth: AuthenticationTls needs tlsCertFile and tlsKeyFile")
        return TlsAuth(cert, key)
    if kind == "basic":
        p = _json(params, "AuthenticationBasic")
        if "userId" not in p or "password" not in p:
            raise ConfigError('auth: AuthenticationBasic needs {"userId": …, "password": …}')
        return BasicAuth(str(p["userId"]), str(p["password"]))
    p = _json(params, "AuthenticationOAuth2")
    if p.get("type", "client_credentials") != "client_credentials":
        raise ConfigError("auth: AuthenticationOAuth2 supports type client_credentials only")
    for k in ("issuerUrl", "privateKey"):
        if not p.get(k):
            raise ConfigError(f"auth: AuthenticationOAuth2 needs {k}")
    return OAuth2Auth(str(p["issuerUrl"]), str(p["privateKey"]), p.get("audience"), p.get("scope"),
                      timeout=timeout, verify=verify,
                      allow_insecure=str(p.get("allowInsecureTokenEndpoint")).lower() == "true")


def _token(params: str, *, stdin: Any = None, env: dict[str, str] | None = None) -> TokenAuth:
    if not params:
        raise ConfigError("auth: AuthenticationToken needs --auth-params (token:…, file://…, "
                          "env:VAR or token:-)")
    if params in ("token:-", "-"):
        return TokenAuth(token=_stdin_token(stdin))
    if params.startswith(("env:", "token:env:")):
        return TokenAuth(token=_env_token(params.rsplit("env:", 1)[1], env))
    if params.startswith("token:"):
        return TokenAuth(token=params[len("token:"):])
    if params.startswith("file://"):
        return TokenAuth(path=params[len("file://"):])
    if params.startswith("{"):
        p = _json(params, "AuthenticationToken")
        if "token" in p:
            return TokenAuth(token=str(p["token"]))
        if "file" in p:
            return TokenAuth(path=str(p["file"]))
        raise ConfigError('auth: AuthenticationToken JSON needs "token" or "file"')
    return TokenAuth(token=params)


def _env_token(var: str, env: dict[str, str] | None) -> str:
    import os

    source = os.environ if env is None else env
    value = source.get(var)
    if not var or value is None:
        raise ConfigError(f"auth: the environment variable {var[:64]!r} (env:{var[:64]}) is not set")
    if not value.strip():
        raise ConfigError(f"auth: the environment variable {var[:64]} is empty")
    return value


def _stdin_token(stdin: Any) -> str:
    import sys

    stream = sys.stdin if stdin is None else stdin
    if stream is None or getattr(stream, "closed", False):
        raise ConfigError("auth: token:- reads the token from standard input, which is closed")
    try:
        line = stream.readline(1 << 16)
    except (OSError, ValueError, UnicodeDecodeError):
        raise ConfigError("auth: cannot read the token from standard input") from None
    if not line.strip():
        raise ConfigError("auth: token:- found no token on standard input")
    return str(line).strip()


def _json(params: str, plugin: str) -> dict[str, Any]:
    try:
        obj = json.loads(params)
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        raise ConfigError(f"auth: {plugin} expects JSON --auth-params")  # never echo the params
    return obj


def _pairs(params: str) -> dict[str, str]:
    if params.startswith("{"):
        return {k: str(v) for k, v in _json(params, "AuthenticationTls").items()}
    out: dict[str, str] = {}
    for item in params.split(","):
        k, sep, v = item.partition(":")
        if sep:
            out[k.strip()] = v.strip()
    return out
