"""Client authentication as Pulsar's client plugins do it, from ``authPlugin`` + ``authParams``.

* ``AuthenticationToken`` (``token``): ``authParams`` is ``token:<jwt>``, ``file:///path`` (the file
  is re-read on every request, as ``AuthenticationToken``'s supplier does, so rotated tokens work),
  JSON ``{"token": …}`` / ``{"file": …}``, or the raw token. Sends ``Authorization: Bearer <jwt>``.
* ``AuthenticationTls`` (``tls``): ``tlsCertFile:/p,tlsKeyFile:/p`` or the same as JSON; the
  certificate is presented in the TLS handshake, no header.
* ``AuthenticationOAuth2`` (``oauth2``): JSON ``{"type": "client_credentials", "issuerUrl",
  "privateKey", "audience", "scope"}``; the client-credentials flow of ``ClientCredentialsFlow``:
  discover ``token_endpoint`` from ``<issuerUrl>/.well-known/openid-configuration``, post the key
  file's ``client_id``/``client_secret``, cache the access token and refresh it after 90 % of
  ``expires_in`` (``AuthenticationOAuth2``'s early refresh). Sends ``Authorization: Bearer …`` and
  ``X-Pulsar-Auth-Method-Name: token``.
* ``AuthenticationBasic`` (``basic``): JSON ``{"userId", "password"}`` → ``Authorization: Basic``.

Secrets (tokens, client secrets, passwords) never leave this module except in the header that
carries them: ``repr`` shows ``<redacted>``, and :meth:`Auth.secrets` lists every secret seen so
that the client can scrub them from any message.
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
PLUGINS = {
    "token": "token", _PKG + "AuthenticationToken": "token",
    "tls": "tls", _PKG + "AuthenticationTls": "tls",
    "oauth2": "oauth2", _PKG + "oauth2.AuthenticationOAuth2": "oauth2",
    "basic": "basic", _PKG + "AuthenticationBasic": "basic",
}
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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class TokenAuth(Auth):
    """``AuthenticationToken``: a fixed token, or a file read again on every request."""

    name = "token"

    def __init__(self, token: str | None = None, path: str | None = None):
        self._token = token
        self._path = path
        self._seen: set[str] = set()
        if token is not None:
            if not token.strip():
                raise ConfigError("auth: the token is empty")
            self._seen.add(token)
        else:
            self._read()  # fail early on a missing file

    def _read(self) -> str:
        assert self._path is not None
        try:
            tok = Path(self._path).expanduser().read_text(encoding="utf-8").strip()
        except OSError as e:
            raise ConfigError(f"auth: cannot read token file {self._path} ({e.strerror})") from None
        except UnicodeDecodeError:
            raise ConfigError(f"auth: token file {self._path} is not text") from None
        if not tok:
            raise ConfigError(f"auth: token file {self._path} is empty")
        self._seen.add(tok)
        return tok

    def token(self) -> str:
        return self._token if self._token is not None else self._read()

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token()}"}

    def secrets(self) -> list[str]:
        return list(self._seen)


class TlsAuth(Auth):
    """``AuthenticationTls``: the client certificate and key, presented in the handshake."""

    name = "tls"

    def __init__(self, cert_file: str, key_file: str):
        for what, p in (("certificate", cert_file), ("key", key_file)):
            if not Path(p).expanduser().is_file():
                raise ConfigError(f"auth: TLS client {what} file not found: {p}")
        self.cert_file = str(Path(cert_file).expanduser())
        self.key_file = str(Path(key_file).expanduser())

    def client_cert(self) -> tuple[str, str]:
        return (self.cert_file, self.key_file)


class BasicAuth(Auth):
    """``AuthenticationBasic``: user id and password in an ``Authorization: Basic`` header."""

    name = "basic"

    def __init__(self, user: str, password: str):
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
    _cached: _CachedToken | None = field(default=None, repr=False)
    _seen: set[str] = field(default_factory=set, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    name = "oauth2"

    def __repr__(self) -> str:
        return f"<OAuth2Auth issuer={self.issuer_url!r} audience={self.audience!r}>"

    def _key(self) -> tuple[str, str]:
        raw = self.private_key
        try:
            if raw.startswith("data:"):
                _, _, payload = raw.partition(",")
                text = base64.b64decode(payload).decode() if ";base64" in raw.split(",")[0] else payload
            else:
                path = raw[len("file://"):] if raw.startswith("file://") else raw
                text = Path(path).expanduser().read_text(encoding="utf-8")
            key = json.loads(text)
            cid, secret = key["client_id"], key["client_secret"]
        except OSError as e:
            raise ConfigError(f"auth: cannot read OAuth2 private key file ({e.strerror})") from None
        except (ValueError, KeyError, TypeError):
            raise ConfigError("auth: the OAuth2 private key must be JSON with client_id and "
                              "client_secret") from None
        self._seen.add(secret)
        return str(cid), str(secret)

    def _fetch(self) -> _CachedToken:
        import httpx

        from lbctl.admin.errors import Unauthorized

        cid, secret = self._key()
        try:
            with httpx.Client(timeout=self.timeout, verify=self.verify) as http:
                meta = http.get(self.issuer_url.rstrip("/") + "/.well-known/openid-configuration")
                meta.raise_for_status()
                endpoint = meta.json()["token_endpoint"]
                form = {"grant_type": "client_credentials", "client_id": cid, "client_secret": secret}
                if self.audience:
                    form["audience"] = self.audience
                if self.scope:
                    form["scope"] = self.scope
                resp = http.post(endpoint, data=form)
                if resp.status_code != 200:
                    raise Unauthorized(f"OAuth2 token request to {endpoint} failed: "
                                       f"HTTP {resp.status_code}", status=401)
                body = resp.json()
                token = body["access_token"]
                expires = float(body.get("expires_in") or 3600)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as e:
            raise Unauthorized(f"OAuth2 token request to {self.issuer_url} failed: "
                               f"{type(e).__name__}", status=401) from None
        self._seen.add(token)
        return _CachedToken(token, self.clock() + OAUTH2_REFRESH_FRACTION * expires)

    def token(self) -> str:
        with self._lock:
            if self._cached is None or self.clock() >= self._cached.refresh_at:
                self._cached = self._fetch()
            return self._cached.value

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token()}", "X-Pulsar-Auth-Method-Name": "token"}

    def secrets(self) -> list[str]:
        return list(self._seen)


def make_auth(plugin: str | None, params: str | None, *, cert_file: str | None = None,
              key_file: str | None = None, timeout: float = 30.0, verify: Any = True) -> Auth:
    """The :class:`Auth` for a pulsar-admin ``--auth-plugin``/``--auth-params`` pair.

    Without a plugin, ``tlsCertificateFilePath``/``tlsKeyFilePath`` (``cert_file``/``key_file``)
    still give a client certificate, as they do for pulsar-admin.
    """
    if not plugin:
        if cert_file and key_file:
            return TlsAuth(cert_file, key_file)
        return Auth()
    kind = PLUGINS.get(plugin.strip()) or PLUGINS.get(plugin.strip().lower())
    if kind is None:
        known = "AuthenticationToken, AuthenticationTls, AuthenticationOAuth2, AuthenticationBasic"
        raise ConfigError(f"auth: unsupported auth plugin {plugin!r} (supported: {known})")
    params = (params or "").strip()
    if kind == "token":
        return _token(params)
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
                      timeout=timeout, verify=verify)


def _token(params: str) -> TokenAuth:
    if not params:
        raise ConfigError("auth: AuthenticationToken needs --auth-params (token:… or file://…)")
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
