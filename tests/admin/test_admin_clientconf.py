"""client.conf and flags resolve like pulsar-admin's: flags > client.conf > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.admin.clientconf import (
    DEFAULT_ADMIN_URL,
    ConnectionOptions,
    read_client_conf,
    resolve_connection,
)
from lbctl.errors import ConfigError, UsageError

CONF = """# Pulsar client.conf
webServiceUrl=https://pulsar.example.com:8443/
brokerServiceUrl=pulsar+ssl://pulsar.example.com:6651/
authPlugin=org.apache.pulsar.client.impl.auth.AuthenticationToken
authParams=file:///etc/pulsar/tokens/admin.jwt
tlsAllowInsecureConnection=false
tlsEnableHostnameVerification=true
tlsTrustCertsFilePath=/etc/pulsar/certs/ca.cert.pem
tlsCertificateFilePath=
"""


def test_defaults() -> None:
    cfg = resolve_connection(ConnectionOptions(), env={})
    assert cfg.admin_url == DEFAULT_ADMIN_URL and cfg.auth_plugin is None
    assert cfg.tls_enable_hostname_verification is None and cfg.request_timeout == 30  # on with a credential


def test_client_conf_from_env_and_flags_win(tmp_path: Path) -> None:
    conf = tmp_path / "client.conf"
    conf.write_text(CONF)
    cfg = resolve_connection(ConnectionOptions(), env={"PULSAR_CLIENT_CONF": str(conf)})
    assert cfg.admin_url == "https://pulsar.example.com:8443"
    assert cfg.auth_params == "file:///etc/pulsar/tokens/admin.jwt"
    assert cfg.tls_enable_hostname_verification is True and cfg.tls_cert_file is None
    assert cfg.tls_trust_cert_path == "/etc/pulsar/certs/ca.cert.pem"
    cfg = resolve_connection(ConnectionOptions(admin_url="http://other:8080",
                                               tls_enable_hostname_verification=False,
                                               client_conf=str(conf), request_timeout=5),
                             env={"PULSAR_CLIENT_CONF": "/nonexistent"})
    assert cfg.admin_url == "http://other:8080" and cfg.request_timeout == 5
    assert cfg.tls_enable_hostname_verification is False
    assert cfg.auth_plugin.endswith("AuthenticationToken")
    assert "admin.jwt" not in repr(cfg)


def test_client_conf_is_read_as_java_reads_it(tmp_path: Path) -> None:
    """Issue 25 #2: ``webServiceUrl https://…`` (a blank as the separator) was ignored, so the
    token went in clear text to http://localhost:8080; continuations and \\u escapes too."""
    conf = tmp_path / "client.conf"
    conf.write_bytes(b"webServiceUrl https://pulsar.example.com:8443\n"
                     b"authPlugin AuthenticationToken\n"
                     b"authParams token:abc\\\n    def\\u0047\n")
    cfg = resolve_connection(ConnectionOptions(client_conf=str(conf)), env={})
    assert cfg.admin_url == "https://pulsar.example.com:8443"
    assert cfg.auth_params == "token:abcdefG"


def test_only_known_keys_are_read(tmp_path: Path) -> None:
    conf = tmp_path / "client.conf"
    conf.write_text(CONF + "tlsProvider=Conscrypt\n")
    assert "brokerServiceUrl" not in read_client_conf(conf)
    assert "tlsProvider" not in read_client_conf(conf)


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such client.conf"):
        resolve_connection(ConnectionOptions(client_conf=str(tmp_path / "nope")), env={})
    bad = tmp_path / "bad.conf"
    bad.write_text("tlsAllowInsecureConnection=yes\n")
    with pytest.raises(ConfigError, match="expected true or false"):
        resolve_connection(ConnectionOptions(client_conf=str(bad)), env={})
    with pytest.raises(UsageError, match="must start with http"):
        resolve_connection(ConnectionOptions(admin_url="pulsar://x:6650"), env={})
    with pytest.raises(UsageError) as e:
        resolve_connection(ConnectionOptions(admin_url="ftp://u:SECRET@x"), env={})
    assert "SECRET" not in str(e.value)


def test_tls_settings_make_the_ssl_context(tmp_path: Path) -> None:
    import ssl

    from lbctl.admin.client import client_from_config

    cfg = resolve_connection(ConnectionOptions(admin_url="https://pulsar:8443"), env={})
    with client_from_config(cfg) as c:
        ctx = c._verify
        assert isinstance(ctx, ssl.SSLContext)
        assert ctx.check_hostname is False and ctx.verify_mode == ssl.CERT_REQUIRED
    cfg = resolve_connection(ConnectionOptions(admin_url="https://pulsar:8443",
                                               tls_enable_hostname_verification=True), env={})
    with client_from_config(cfg) as c:
        assert c._verify.check_hostname is True
    cfg = resolve_connection(ConnectionOptions(admin_url="https://pulsar:8443",
                                               tls_allow_insecure=True), env={})
    with client_from_config(cfg) as c:
        assert c._verify is False
    with pytest.raises(ConfigError, match="TLS: (cannot load certificates|trust certificates .*no such file)"):
        client_from_config(resolve_connection(ConnectionOptions(
            admin_url="https://pulsar:8443", tls_trust_cert_path=str(tmp_path / "none.pem")), env={}))
