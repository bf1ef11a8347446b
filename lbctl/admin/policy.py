"""Where lbctl's credentials may go: one policy for the admin client and the Prometheus client.

A credential (a bearer token, a password, an OAuth2 token, a TLS client certificate) is sent
only where the user pointed lbctl, and what could expose it is said:

* **Origins.** A request goes to a *trusted origin* only (``scheme://host:port``,
  :func:`origin_of`): the admin client's are the admin URL's and its cluster's brokers
  (:mod:`lbctl.admin.client`); the Prometheus client's is ``--prometheus-url``'s alone. A
  redirect elsewhere, or from https to http (:func:`downgrade`), is not followed; a TLS client
  certificate is therefore never presented to another host either.
* **TLS.** Server certificates and hostnames are checked as :mod:`lbctl.admin.tls` decides from
  client.conf's keys (``tlsEnableHostnameVerification`` absent: on whenever a credential is sent).
* **Warnings.** :func:`connection_warnings`: a secret header over plain http to another machine,
  ``--tls-allow-insecure``, hostname verification turned off.
* **Messages.** Secrets and URL user info are scrubbed by :func:`lbctl.safe.redact.redact`.
"""

from __future__ import annotations

import functools
from urllib.parse import urljoin, urlsplit

from lbctl.admin.auth import Auth
from lbctl.admin.clientconf import ConnectionConfig
from lbctl.admin.tls import sends_credential


@functools.lru_cache(maxsize=4096)  # a refresh asks for the same few hundred URLs' origins
def origin_of(url: str) -> str:
    """``scheme://host:port`` with the default port made explicit (``http://h`` = ``http://h:80``)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or (443 if scheme == "https" else 80)
    host = (parts.hostname or "").lower()
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def join_location(base: str, location: str) -> str | None:
    """The absolute URL of a ``Location`` header, or None when it is not a usable http(s) URL."""
    if any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in location):
        return None
    try:
        url = urljoin(base, location)
        parts = urlsplit(url)
        _ = parts.port  # raises on a bad port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return url


def downgrade(current: str, target: str) -> bool:
    """Whether a redirect would leave https for plain http (never followed)."""
    return urlsplit(current).scheme == "https" and urlsplit(target).scheme != "https"


def connection_warnings(cfg: ConnectionConfig, auth: Auth, url_name: str = "admin URL") -> list[str]:
    """One line per way the credential could leak that the user chose (never a refusal);
    ``url_name`` names the URL in the advice ("admin URL", "--prometheus-url")."""
    out: list[str] = []
    if not sends_credential(auth):
        return out
    host = urlsplit(cfg.admin_url).hostname or cfg.admin_url
    if cfg.admin_url.startswith("http://") and auth.headers_are_secret and not loopback(host):
        out.append(f"the {auth.credential_name} is sent over plain http to {host}: anyone on the "
                   f"network path can read and reuse it; use an https:// {url_name}")
    elif cfg.admin_url.startswith("https://"):
        if cfg.tls_allow_insecure:
            out.append(f"--tls-allow-insecure: any server certificate is accepted for {host}, so "
                       f"the {auth.credential_name} may be sent to an impostor")
        elif cfg.tls_enable_hostname_verification is False:
            out.append("TLS hostname verification is off (tlsEnableHostnameVerification=false): "
                       f"a certificate for any name that the CA store trusts is accepted for "
                       f"{host}, so the {auth.credential_name} may be sent to an impostor")
    return out


def loopback(host: str) -> bool:
    """Loopback traffic never crosses a network (no warning about plain http there)."""
    import ipaddress

    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


