"""How lbctl's HTTP clients verify servers: one place builds the TLS context of the admin client
and of the Prometheus client from client.conf's keys, as ``pulsar-admin`` reads them
(``tlsTrustCertsFilePath``, ``tlsAllowInsecureConnection``, ``tlsEnableHostnameVerification``,
``useKeyStoreTls`` with its trust store and key store, ``tlsCertificateFilePath`` /
``tlsKeyFilePath`` for a client certificate).

The answer is what httpx takes as ``verify``: ``True`` (httpx's default CA store) when nothing
asks for TLS, ``False`` when certificates are not checked and none is presented, else an
:class:`ssl.SSLContext`. Which settings apply is each client's: the Prometheus client passes its
own :class:`~lbctl.admin.clientconf.ConnectionConfig` (no key store; hostname verification as its
``PrometheusConfig`` says).
"""

from __future__ import annotations

import ssl
from typing import Any

from lbctl.admin.auth import Auth
from lbctl.admin.clientconf import ConnectionConfig


def verify_for(cfg: ConnectionConfig, auth: Auth) -> ssl.SSLContext | bool:
    """``verify`` for a client of ``cfg.admin_url``: a context (:func:`ssl_context`) when the URL
    is https or a client certificate or key store is configured, else ``True``."""
    if (cfg.admin_url.startswith("https://") or auth.client_cert() is not None
            or cfg.use_key_store_tls):
        return ssl_context(cfg, auth)
    return True


def sends_credential(auth: Auth) -> bool:
    """Whether requests carry a credential (a header or a client certificate)."""
    return auth.name != "none"


def hostname_verification(cfg: ConnectionConfig, auth: Auth) -> bool:
    """``tlsEnableHostnameVerification`` as given, else on exactly when a credential is sent."""
    if cfg.tls_allow_insecure:
        return False
    if cfg.tls_enable_hostname_verification is not None:
        return cfg.tls_enable_hostname_verification
    return sends_credential(auth)


def ssl_context(cfg: ConnectionConfig, auth: Auth) -> ssl.SSLContext | bool:
    """``verify`` for httpx: False when insecure, else a context with the trust store (a PEM file,
    a keystore, or the public CA store), the client certificate, and hostname checks as
    :func:`hostname_verification` decides."""
    if cfg.tls_allow_insecure and auth.client_cert() is None and not cfg.use_key_store_tls:
        return False
    from lbctl.errors import ConfigError
    from lbctl.safe.files import open_regular

    try:
        cadata: str | None = None
        chain: Any = None
        if cfg.use_key_store_tls:
            from lbctl.admin.keystore import load_keystores

            cadata, chain = load_keystores(cfg)
        if cadata is not None:
            ctx = ssl.create_default_context(cadata=cadata)
        elif cfg.tls_trust_cert_path:
            import os

            os.close(open_regular(cfg.tls_trust_cert_path, what="a PEM file of CA certificates",
                                  follow=True, error=lambda m: ConfigError(f"TLS: trust certificates {m}")))
            ctx = ssl.create_default_context(cafile=cfg.tls_trust_cert_path)
        else:
            import certifi

            ctx = ssl.create_default_context(cafile=certifi.where())
        ctx.check_hostname = hostname_verification(cfg, auth)
        if cfg.tls_allow_insecure:
            ctx.verify_mode = ssl.CERT_NONE
        cert = auth.client_cert()
        if chain is not None:
            from lbctl.admin.keystore import load_key_into

            load_key_into(ctx, chain)
        elif cert is not None:
            ctx.load_cert_chain(*cert)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"TLS: cannot load certificates ({getattr(e, 'strerror', None) or e})") from None
    return ctx
