"""How lbctl finds and talks to a cluster, configured the way ``pulsar-admin`` is.

Precedence (highest first)::

    command-line flags (--admin-url, --auth-plugin, …)
    > client.conf from --client-conf, else $PULSAR_CLIENT_CONF
    > defaults (http://localhost:8080, no auth, 30 s request timeout)

``client.conf`` is a Java properties file; the keys read are those of Pulsar's ``conf/client.conf``
(``webServiceUrl``, ``authPlugin``, ``authParams``, ``tlsTrustCertsFilePath``,
``tlsAllowInsecureConnection``, ``tlsEnableHostnameVerification``, ``tlsCertificateFilePath``,
``tlsKeyFilePath``); everything else in it is ignored. As in pulsar-admin, hostname verification
is off unless ``tlsEnableHostnameVerification=true``.

This module reads files only; it never imports httpx, so the CLI's help stays fast.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from lbctl.errors import ConfigError, UsageError

DEFAULT_ADMIN_URL = "http://localhost:8080"
#: seconds; pulsar-admin's default is 300 s, which is too long to wait for one dead broker
DEFAULT_REQUEST_TIMEOUT = 30.0
ENV_CLIENT_CONF = "PULSAR_CLIENT_CONF"

_KEYS = {
    "webServiceUrl": "admin_url",
    "authPlugin": "auth_plugin",
    "authParams": "auth_params",
    "tlsTrustCertsFilePath": "tls_trust_cert_path",
    "tlsAllowInsecureConnection": "tls_allow_insecure",
    "tlsEnableHostnameVerification": "tls_enable_hostname_verification",
    "tlsCertificateFilePath": "tls_cert_file",
    "tlsKeyFilePath": "tls_key_file",
}
_BOOLEANS = {"tls_allow_insecure", "tls_enable_hostname_verification"}


@dataclass(frozen=True)
class ConnectionOptions:
    """What the user gave on the command line (``None`` = not given) — unresolved."""

    admin_url: str | None = None
    auth_plugin: str | None = None
    auth_params: str | None = field(default=None, repr=False)
    tls_trust_cert_path: str | None = None
    tls_allow_insecure: bool | None = None
    tls_enable_hostname_verification: bool | None = None
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    request_timeout: float | None = None
    client_conf: str | None = None
    debug: bool = False


@dataclass(frozen=True)
class ConnectionConfig:
    """The resolved connection settings. ``auth_params`` may hold a secret: never printed."""

    admin_url: str = DEFAULT_ADMIN_URL
    auth_plugin: str | None = None
    auth_params: str | None = field(default=None, repr=False)
    tls_trust_cert_path: str | None = None
    tls_allow_insecure: bool = False
    tls_enable_hostname_verification: bool = False
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    debug: bool = False
    client_conf: str | None = None

    def __repr__(self) -> str:  # auth_params excluded by field(repr=False); keep it explicit
        return (f"ConnectionConfig(admin_url={self.admin_url!r}, auth_plugin={self.auth_plugin!r}, "
                f"auth_params={'<redacted>' if self.auth_params else None})")


def read_client_conf(path: str | Path) -> dict[str, str]:
    """The client.conf keys lbctl uses, as strings (Java properties: ``key=value``, ``#`` comments)."""
    from lbctl.properties import read_properties

    return {k: v for k, v in read_properties(path, "client.conf").items() if k in _KEYS}


def resolve_connection(opts: ConnectionOptions, env: dict[str, str] | None = None) -> ConnectionConfig:
    """Merge flags over client.conf over defaults (see the module docstring)."""
    env = dict(os.environ) if env is None else env
    conf_path = opts.client_conf or env.get(ENV_CLIENT_CONF) or None
    cfg = ConnectionConfig(debug=opts.debug, client_conf=conf_path)
    if conf_path:
        updates: dict[str, object] = {}
        for key, value in read_client_conf(conf_path).items():
            attr = _KEYS[key]
            if value == "":
                continue
            updates[attr] = _bool(key, value, conf_path) if attr in _BOOLEANS else value
        cfg = replace(cfg, **updates)  # type: ignore[arg-type]  # str or bool per _KEYS/_BOOLEANS
    flags = {
        attr: getattr(opts, attr)
        for attr in (*_KEYS.values(), "request_timeout")
        if getattr(opts, attr) is not None
    }
    cfg = replace(cfg, **flags)
    if cfg.request_timeout <= 0:
        raise UsageError("--request-timeout must be a positive number of seconds")
    url = cfg.admin_url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"admin URL must start with http:// or https://, got {_safe_url(url)!r}")
    return replace(cfg, admin_url=url)


def _bool(key: str, value: str, path: str) -> bool:
    v = value.strip().lower()
    if v in ("true", "false"):
        return v == "true"
    raise ConfigError(f"{path}: {key}: expected true or false, got {value!r}")


def _safe_url(url: str) -> str:
    """A URL without user info (``http://user:secret@host`` → ``http://***@host``)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    if "@" in host:
        host = "***@" + host.rsplit("@", 1)[1]
    return f"{scheme}{sep}{host}{slash}{path}"
