"""How lbctl finds and talks to a cluster, configured the way ``pulsar-admin`` is.

Precedence (highest first)::

    command-line flags (--admin-url, --auth-plugin, …)
    > client.conf from --client-conf, else $PULSAR_CLIENT_CONF, else
      $PULSAR_HOME/conf/client.conf when that file exists
    > defaults (http://localhost:8080, no auth, 30 s request timeout)

That is pulsar-admin's lookup: ``bin/pulsar-admin`` (``bin/pulsar-admin-common.sh``) sets
``DEFAULT_CLIENT_CONF=$PULSAR_HOME/conf/client.conf`` and passes ``$PULSAR_CLIENT_CONF`` when set,
else that default, to ``PulsarAdminTool.main`` as its first argument. The script derives
``PULSAR_HOME`` from its own location, which lbctl does not share, so lbctl reads the variable;
and since a missing ``conf/client.conf`` under it is the common case of a ``PULSAR_HOME`` set for
other tools, it is skipped quietly (a file named by ``--client-conf`` or ``$PULSAR_CLIENT_CONF``
must exist).

``client.conf`` is a Java properties file; the keys read are those of Pulsar's ``conf/client.conf``
(``webServiceUrl``, ``authPlugin``, ``authParams``, ``tlsTrustCertsFilePath``,
``tlsAllowInsecureConnection``, ``tlsEnableHostnameVerification``, ``tlsCertificateFilePath``,
``tlsKeyFilePath``, and the keystore settings ``useKeyStoreTls``, ``tlsTrustStoreType``,
``tlsTrustStorePath``, ``tlsTrustStorePassword``, ``tlsKeyStoreType``, ``tlsKeyStorePath``,
``tlsKeyStorePassword``) plus lbctl's own ``brokerHostAllow`` (comma-separated host patterns, see
``--broker-host-allow``); everything else in it is ignored.

TLS hostname verification: pulsar-admin leaves it off unless
``tlsEnableHostnameVerification=true``; lbctl turns it **on** whenever a credential is sent (a
token, a password, an OAuth2 token or a client certificate), since otherwise any certificate the CA
store trusts — for any name — would receive it. An explicit ``tlsEnableHostnameVerification=false``
(or ``--no-tls-enable-hostname-verification``) or ``--tls-allow-insecure`` still turns it off, with
a warning.

Values are checked here: the admin URL must be an ``http(s)://host[:port]`` URL (a valid port, a
closed IPv6 bracket, no blanks), the request timeout a finite number of seconds up to a day.

This module reads files only; it never imports httpx, so the CLI's help stays fast.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

from lbctl.errors import ConfigError, UsageError
from lbctl.records import replace
from lbctl.safe.redact import url_without_userinfo

DEFAULT_ADMIN_URL = "http://localhost:8080"
#: seconds; pulsar-admin's default is 300 s, which is too long to wait for one dead broker
DEFAULT_REQUEST_TIMEOUT = 30.0
#: the longest --request-timeout accepted (a day): an infinite one would hang a command forever
MAX_REQUEST_TIMEOUT = 86400.0
ENV_CLIENT_CONF = "PULSAR_CLIENT_CONF"
ENV_PULSAR_HOME = "PULSAR_HOME"

_KEYS = {
    "webServiceUrl": "admin_url",
    "authPlugin": "auth_plugin",
    "authParams": "auth_params",
    "tlsTrustCertsFilePath": "tls_trust_cert_path",
    "tlsAllowInsecureConnection": "tls_allow_insecure",
    "tlsEnableHostnameVerification": "tls_enable_hostname_verification",
    "tlsCertificateFilePath": "tls_cert_file",
    "tlsKeyFilePath": "tls_key_file",
    "useKeyStoreTls": "use_key_store_tls",
    "tlsTrustStoreType": "tls_trust_store_type",
    "tlsTrustStorePath": "tls_trust_store_path",
    "tlsTrustStorePassword": "tls_trust_store_password",
    "tlsKeyStoreType": "tls_key_store_type",
    "tlsKeyStorePath": "tls_key_store_path",
    "tlsKeyStorePassword": "tls_key_store_password",
    "brokerHostAllow": "broker_host_allow",
}
_BOOLEANS = {"tls_allow_insecure", "tls_enable_hostname_verification", "use_key_store_tls"}


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
    token: str | None = field(default=None, repr=False)
    token_file: str | None = None
    broker_host_allow: str | None = None
    use_key_store_tls: bool | None = None
    tls_trust_store_type: str | None = None
    tls_trust_store_path: str | None = None
    tls_trust_store_password: str | None = field(default=None, repr=False)
    tls_key_store_type: str | None = None
    tls_key_store_path: str | None = None
    tls_key_store_password: str | None = field(default=None, repr=False)
    #: not a flag: where the credential came from when a context gave it
    #: (:func:`lbctl.admin.contexts.origin`), said at the end of an auth error
    context_origin: str | None = None


@dataclass(frozen=True)
class ConnectionConfig:
    """The resolved connection settings. Secrets (the fields with ``repr=False``) are never
    printed."""

    admin_url: str = DEFAULT_ADMIN_URL
    auth_plugin: str | None = None
    auth_params: str | None = field(default=None, repr=False)
    tls_trust_cert_path: str | None = None
    tls_allow_insecure: bool = False
    #: None: on when a credential is sent (see the module docstring)
    tls_enable_hostname_verification: bool | None = None
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    debug: bool = False
    client_conf: str | None = None
    broker_host_allow: str | None = None
    use_key_store_tls: bool = False
    tls_trust_store_type: str | None = None
    tls_trust_store_path: str | None = None
    tls_trust_store_password: str | None = field(default=None, repr=False)
    tls_key_store_type: str | None = None
    tls_key_store_path: str | None = None
    tls_key_store_password: str | None = field(default=None, repr=False)
    #: where the credential came from when a context gave it (an auth error says so)
    auth_origin: str | None = None

    def __repr__(self) -> str:  # secrets excluded by field(repr=False); keep it explicit
        return (f"ConnectionConfig(admin_url={self.admin_url!r}, auth_plugin={self.auth_plugin!r}, "
                f"auth_params={'<redacted>' if self.auth_params else None})")

    @property
    def host_patterns(self) -> tuple[str, ...]:
        """``--broker-host-allow`` / ``brokerHostAllow`` as a tuple of patterns."""
        return tuple(p.strip() for p in (self.broker_host_allow or "").split(",") if p.strip())


def read_client_conf(path: str | Path) -> dict[str, str]:
    """The client.conf keys lbctl uses, as strings, read as ``pulsar-admin`` reads the file
    (``java.util.Properties.load``: :mod:`lbctl.properties`)."""
    from lbctl.properties import read_properties

    return {k: v for k, v in read_properties(path, "client.conf").items() if k in _KEYS}


def conf_settings(path: str | Path) -> dict[str, object]:
    """The settings a client.conf gives, by :class:`ConnectionConfig` field name (booleans
    checked; a blank value is no setting): the one reading of the file's keys, for the admin
    client (``--client-conf``) and the Prometheus client (``--prometheus-conf``) alike."""
    out: dict[str, object] = {}
    for key, value in read_client_conf(path).items():
        attr = _KEYS[key]
        if value.strip():
            out[attr] = _bool(key, value, str(path)) if attr in _BOOLEANS else value
    return out


def resolve_connection(opts: ConnectionOptions, env: dict[str, str] | None = None) -> ConnectionConfig:
    """Merge flags over client.conf over defaults (see the module docstring)."""
    env = dict(os.environ) if env is None else env
    conf_path = opts.client_conf or env.get(ENV_CLIENT_CONF) or default_client_conf(env)
    cfg = ConnectionConfig(debug=opts.debug, client_conf=conf_path)
    if conf_path:
        cfg = replace(cfg, **conf_settings(conf_path))
    names = {f.name for f in fields(ConnectionConfig)}
    flags = {
        attr: getattr(opts, attr)
        for attr in (*_KEYS.values(), "request_timeout")
        if attr in names and getattr(opts, attr) is not None
    }
    flags.update(_token_flags(opts))
    cfg = replace(cfg, **flags, auth_origin=opts.context_origin)
    t = cfg.request_timeout
    if not math.isfinite(t) or t <= 0 or t > MAX_REQUEST_TIMEOUT:
        raise UsageError(f"--request-timeout must be a number of seconds between 0 and "
                         f"{MAX_REQUEST_TIMEOUT:g}, got {t:g}")
    url = cfg.admin_url.strip().rstrip("/")
    check_admin_url(url)
    return replace(cfg, admin_url=url)


def default_client_conf(env: dict[str, str]) -> str | None:
    """``$PULSAR_HOME/conf/client.conf`` when ``PULSAR_HOME`` is set and the file is there (module
    docstring), else ``None``."""
    home = env.get(ENV_PULSAR_HOME)
    if not home:
        return None
    path = os.path.join(home, "conf", "client.conf")
    return path if os.path.isfile(path) else None


def _token_flags(opts: ConnectionOptions) -> dict[str, object]:
    """pulsarctl's ``--token TOKEN`` / ``--token-file FILE``: AuthenticationToken shortcuts."""
    if opts.token is None and opts.token_file is None:
        return {}
    if opts.token is not None and opts.token_file is not None:
        raise UsageError("give --token or --token-file, not both")
    if opts.auth_plugin or opts.auth_params:
        raise UsageError("--token/--token-file replace --auth-plugin/--auth-params: give one or "
                         "the other")
    params = (f"token:{opts.token}" if opts.token is not None
              else f"file://{opts.token_file}")
    return {"auth_plugin": "AuthenticationToken", "auth_params": params}


_HOST_LABEL = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?")
#: an IPv6 zone id (``fe80::1%eth0``): RFC 6874's unreserved characters, nothing a URL parser
#: would read as a delimiter (``/ ? # @ ] %``)
_ZONE = re.compile(r"[A-Za-z0-9._~-]+")


def valid_host(host: str) -> bool:
    """A DNS name, an IPv4 address or (bracket-less) an IPv6 address, with a zone id of
    unreserved characters (``fe80::1%eth0``) if any."""
    if not host or len(host) > 253:
        return False
    if ":" in host:
        import ipaddress

        address, pct, zone = host.partition("%")
        if pct and _ZONE.fullmatch(zone) is None:
            return False
        try:
            ipaddress.IPv6Address(address)
        except ValueError:
            return False
        return True
    return all(_HOST_LABEL.fullmatch(label) for label in host.rstrip(".").split("."))


def without_zone(host: str) -> str:
    """An IPv6 address without its zone id (``fe80::1%eth0`` → ``fe80::1``); names and IPv4
    addresses as they are. A zone only says which interface to use: it never names the host
    (``--broker-host-allow`` patterns, TLS server names)."""
    return host.partition("%")[0] if ":" in host else host


def parse_host_port(text: str) -> tuple[str, int] | None:
    """``host:port`` or ``[v6]:port`` → (host, port); None when it is anything else (a path, user
    info, a missing or out-of-range port, blanks)."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1 : end + 2] != ":":
            return None
        host, port_text = text[1:end], text[end + 2 :]
        if ":" not in host:
            return None
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep or ":" in host:
            return None
    if not port_text.isascii() or not port_text.isdigit() or len(port_text) > 5:
        return None
    port = int(port_text)
    if not 0 < port < 65536 or not valid_host(host):
        return None
    return host, port


def check_admin_url(url: str) -> None:
    """The admin URL must be ``http(s)://host[:port][/path]`` with a valid host and port."""
    from urllib.parse import urlsplit

    shown = url_without_userinfo(url)[:200]
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"admin URL must start with http:// or https://, got {shown!r}")
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in url) or not url.isprintable():
        raise UsageError(f"admin URL holds blanks or control characters: {shown!r}")
    netloc = url.split("://", 1)[1].split("/", 1)[0]
    if "," in netloc.rpartition("@")[2]:
        raise UsageError(f"bad admin URL {shown!r}: one host expected (pulsar-admin's "
                         "comma-separated host list, AsyncHttpConnector's "
                         "PulsarServiceNameResolver, is not supported: give one of them)")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise UsageError(f"bad admin URL {shown!r}: {e}") from None
    host = parts.hostname or ""
    if not valid_host(host):
        raise UsageError(f"bad admin URL {shown!r}: expected a host name or address")
    if port == 0:
        raise UsageError(f"bad admin URL {shown!r}: port 0")
    if parts.query or parts.fragment:
        raise UsageError(f"bad admin URL {shown!r}: no query or fragment expected")


def _bool(key: str, value: str, path: str) -> bool:
    v = value.strip().lower()
    if v in ("true", "false"):
        return v == "true"
    raise ConfigError(f"{path}: {key}: expected true or false, got {value!r}")

