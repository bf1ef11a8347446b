"""One place builds the TLS settings of both clients (lbctl/admin/tls.py): what ``verify`` each
client gets from the same client.conf keys."""

from __future__ import annotations

import ssl
from pathlib import Path

from lbctl.admin.auth import Auth, make_auth
from lbctl.admin.client import client_from_config
from lbctl.admin.clientconf import ConnectionConfig
from lbctl.admin.prometheus import PrometheusConfig
from lbctl.admin.prometheus import client_from_config as prometheus_client
from lbctl.admin.tls import verify_for
from tests.tls_helpers import self_signed

TOKEN = "token:eyJhbGciOiJIUzI1NiJ9.c3VwZXJ1c2Vy.TLS-TEST-SIGNATURE"


def test_plain_http_without_a_certificate_needs_no_context() -> None:
    assert verify_for(ConnectionConfig(admin_url="http://admin:8080"), Auth()) is True


def test_https_gets_a_context_and_insecure_without_a_certificate_none() -> None:
    ctx = verify_for(ConnectionConfig(admin_url="https://admin:8443"), Auth())
    assert isinstance(ctx, ssl.SSLContext) and ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.check_hostname is False  # no credential sent, no explicit setting
    token = make_auth("token", TOKEN)
    with_token = verify_for(ConnectionConfig(admin_url="https://admin:8443"), token)
    assert isinstance(with_token, ssl.SSLContext) and with_token.check_hostname is True
    assert verify_for(ConnectionConfig(admin_url="https://admin:8443", tls_allow_insecure=True),
                      token) is False


def test_both_clients_build_their_context_from_the_same_trust_file(tmp_path: Path) -> None:
    cert, _ = self_signed(tmp_path, "ca")
    admin = client_from_config(ConnectionConfig(admin_url="https://admin:8443", auth_plugin="token",
                                                auth_params=TOKEN, tls_trust_cert_path=str(cert)))
    prom = prometheus_client(PrometheusConfig(url="https://prom:9090", auth_plugin="token",
                                              auth_params=TOKEN, tls_trust_cert_path=str(cert)))
    try:
        for ctx in (admin._verify, prom._verify):
            assert isinstance(ctx, ssl.SSLContext)
            assert ctx.cert_store_stats()["x509"] == 1  # the trust file alone, not the CA store
        # one policy (issue 25 #1): both check host names when a credential is sent and
        # tlsEnableHostnameVerification is not given
        assert admin._verify.check_hostname is True
        assert prom._verify.check_hostname is True
    finally:
        admin.close()
        prom.close()
