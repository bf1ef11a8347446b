"""Issue 12, the admin client's side: where credentials may go, what they may hold, how they are
given, and the values the connection settings accept."""

from __future__ import annotations

import io
import json
import os
import ssl
from pathlib import Path

import pytest

from lbctl.admin.auth import PLUGIN_NAMES, PLUGIN_TABLE, make_auth, plugin_kind
from lbctl.admin.client import LOAD_REPORT, AdminClient, call, client_from_config, unload_call
from lbctl.admin.clientconf import ConnectionOptions, resolve_connection
from lbctl.admin.errors import HttpError
from lbctl.errors import ConfigError, UsageError
from lbctl.safe.redact import redact as redact_secrets
from tests.http_mock import mock

httpx = pytest.importorskip("httpx")

A = "http://admin:8080"
TOKEN = "eyJ.payload.SIGNATURE-SECRET"


def client(url: str = A, **kw) -> AdminClient:
    kw.setdefault("backoff", 0.0)
    return AdminClient(url, auth=make_auth("token", f"token:{TOKEN}"), **kw)


@mock
def test_a_redirect_to_another_host_is_refused_and_names_the_target() -> None:
    mock.put(A + "/admin/v2/namespaces/t/n/unload").mock(return_value=httpx.Response(
        307, headers={"Location": "http://evil:80/admin/v2/namespaces/t/n/unload"}))
    mock.get(A + "/admin/v2/brokers").mock(return_value=httpx.Response(200, json=["b1:8080"]))
    evil = mock.route(host="evil").mock(return_value=httpx.Response(204))
    with client() as c, pytest.raises(HttpError, match=r"redirected to http://evil:80/admin/.*"
                                                       r"not followed \(the change was not made\)"):
        c.request(unload_call("t/n"))
    assert not evil.called


BUNDLE = "/admin/v2/namespaces/t/n/0x00000000_0x40000000"


@mock
@pytest.mark.parametrize(("status", "location", "why"), [
    # issue 25 #3: a 307 from PUT …/A/unload to …/B/split split B with the token
    (307, "http://b1:8080/admin/v2/namespaces/t/n/0x40000000_0x80000000/split", "the path or query"),
    (308, "http://b1:8080" + BUNDLE + "/split", "the path or query"),
    (307, "http://b1:8080" + BUNDLE + "/unload?destinationBroker=evil%3A8080", "the path or query"),
    (307, "http://b1:8080" + BUNDLE + "/unload?authoritative=maybe", "the path or query"),
    (301, "http://b1:8080" + BUNDLE + "/unload", "the method"),
    (302, "http://b1:8080" + BUNDLE + "/unload", "the method"),
    (303, "http://b1:8080" + BUNDLE + "/unload", "the method"),
])
def test_a_mutation_s_redirect_never_changes_the_request(status: int, location: str,
                                                         why: str) -> None:
    mock.put(A + BUNDLE + "/unload").mock(return_value=httpx.Response(
        status, headers={"Location": location}))
    brokers = mock.get(A + "/admin/v2/brokers").mock(
        return_value=httpx.Response(200, json=["b1:8080"]))
    elsewhere = mock.route(host="b1").mock(return_value=httpx.Response(204))
    with client() as c, pytest.raises(HttpError) as e:
        c.request(unload_call("t/n", "0x00000000_0x40000000"))
    message = str(e.value)
    assert f"the {status} redirect to " in message and "\n" not in message
    assert message.endswith(f"would change {why} of the PUT: not followed (the change was not made)")
    assert not elsewhere.called and not brokers.called  # nothing sent anywhere after the redirect


@mock
def test_a_mutation_s_redirect_may_change_the_host_to_an_owner() -> None:
    """Pulsar's own redirect (PulsarWebResource.validateNamespaceBundleOwnership): another host
    and port, the same path and query (escapes written either way), ``authoritative`` set."""
    mock.put(A + BUNDLE + "/unload", params={"destinationBroker": "b2:8080"}).mock(
        return_value=httpx.Response(307, headers={
            "Location": "http://b1:8080/admin/v2/namespaces/t/n/0x00000000_0x40000000/%75nload"
                        "?destinationBroker=b2%3a8080&authoritative=false"}))
    mock.get(A + "/admin/v2/brokers").mock(return_value=httpx.Response(200, json=["b1:8080"]))
    owner = mock.put("http://b1:8080" + BUNDLE + "/unload").mock(return_value=httpx.Response(204))
    with client() as c:
        assert c.request(unload_call("t/n", "0x00000000_0x40000000", "b2:8080")).status == 204
    assert owner.calls.last.request.method == "PUT"


@mock
def test_https_to_http_is_never_followed() -> None:
    S = "https://admin:8443"
    mock.get(S + "/admin/v2/clusters").mock(return_value=httpx.Response(
        301, headers={"Location": "http://admin:8443/admin/v2/clusters"}))
    plain = mock.get("http://admin:8443/admin/v2/clusters").mock(return_value=httpx.Response(200))
    with client(S) as c, pytest.raises(HttpError, match="from https to http"):
        c.clusters()
    assert not plain.called


@mock
def test_a_port_change_is_another_origin() -> None:
    mock.get(A + "/admin/v2/clusters").mock(return_value=httpx.Response(
        302, headers={"Location": "http://admin:9999/admin/v2/clusters"}))
    mock.get(A + "/admin/v2/brokers").mock(return_value=httpx.Response(200, json=[]))
    other = mock.get("http://admin:9999/admin/v2/clusters").mock(return_value=httpx.Response(200))
    with client() as c, pytest.raises(HttpError, match="not followed"):
        c.clusters()
    assert not other.called


@mock
def test_a_bad_location_is_reported_as_such() -> None:
    mock.get(A + "/admin/v2/clusters").mock(return_value=httpx.Response(
        307, headers={"Location": "http://[::1/x"}))
    with client() as c, pytest.raises(HttpError, match="redirected to an invalid URL"):
        c.clusters()


def test_ipv6_zone_ids_in_broker_ids() -> None:
    """Issue 25 #12: ``[::1%x]:8080``-like ids were internal errors (a ValueError out of the URL
    parser); a zone id is unreserved characters, and --broker-host-allow never matches it."""
    with AdminClient(A, broker_host_allow=["fe80::1", "::1"]) as c:
        assert c.broker_url("[fe80::1%eth0]:8080") == "http://[fe80::1%eth0]:8080"
        assert c.broker_url("[::1%x]:8080") == "http://[::1%x]:8080"
        for bad in ("[::1%]:8080", "[::1%x%y]:8080", "[::1%/a]:8080", "[::1%?]:8080",
                    "[::1%#]:8080", "[::1%@h]:8080", "[::1%:]:8080", "[::1%\u00e9]:8080",
                    "[::1%x]]:8080"):
            with pytest.raises(HttpError, match="not host:port"):
                c.broker_url(bad)
        c.trust_brokers(["[::1%]:8080", "[::1%/a]:8080", "[::1%@evil]:8080"])  # skipped, no error
    with AdminClient(A, broker_host_allow=["*eth0", "*%*"]) as c:
        assert not c.host_allowed("fe80::1%eth0", 8080)  # the zone is not part of the match
        c.broker_url("[fe80::1%eth0]:8080")
        with pytest.raises(HttpError, match="does not match --broker-host-allow"):
            c.request(call(LOAD_REPORT, base="http://[fe80::1%eth0]:8080"))


def test_broker_urls_keep_the_admin_scheme_and_need_host_port() -> None:
    with AdminClient("https://admin:8443") as c:
        assert c.broker_url("b1.pulsar.svc:8443") == "https://b1.pulsar.svc:8443"
        assert c.broker_url("[::1]:8443") == "https://[::1]:8443"
        for bad in ("http://b1:8080", "b1:8080/x", "u@b1:8080", "b1", "b1:99999", "b 1:80", ""):
            with pytest.raises(HttpError, match="not host:port"):
                c.broker_url(bad)


@mock
def test_broker_host_allow_keeps_other_hosts_uncontacted() -> None:
    route = mock.get("http://10.0.0.9:8080/admin/v2/broker-stats/load-report").mock(
        return_value=httpx.Response(200, json={}))
    with client(broker_host_allow=["*.pulsar.svc"]) as c:
        from lbctl.admin.client import LOAD_REPORT, call

        ok = c.broker_url("b1.pulsar.svc:8080")
        assert ok == "http://b1.pulsar.svc:8080"
        url = c.broker_url("10.0.0.9:8080")
        with pytest.raises(HttpError, match="does not match --broker-host-allow"):
            c.request(call(LOAD_REPORT, base=url))
    assert not route.called


def test_redaction_covers_escaped_forms_and_user_info() -> None:
    secret = 'tok"en\\with/odd+chars'
    text = f'{secret} {json.dumps(secret)} {secret!r} http://user:pw@host/x tok%22en%5Cwith%2Fodd%2Bchars'
    out = redact_secrets(text, [secret])
    assert "tok" not in out and "pw@" not in out


@mock
def test_reasons_are_redacted_before_they_are_shortened() -> None:
    reason = "x" * 190 + TOKEN + "y" * 400
    mock.get(A + "/admin/v2/clusters").mock(return_value=httpx.Response(
        403, json={"reason": reason}))
    from lbctl.admin.errors import AdminError

    with client() as c, pytest.raises(AdminError) as e:
        c.clusters()
    assert TOKEN[:10] not in str(e.value) and "eyJ.pay" not in str(e.value)


@pytest.mark.parametrize("bad", ["tok\r\nX-Evil: 1", "tok\x1b[2J", "tokén", "tok\x00"])
def test_credentials_with_control_or_non_ascii_characters_are_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="credentials must be printable ASCII") as e:
        make_auth("AuthenticationToken", f"token:{bad}")
    assert bad not in str(e.value)
    with pytest.raises(ConfigError, match="printable ASCII"):
        make_auth("AuthenticationBasic", json.dumps({"userId": "u", "password": bad}))


def test_token_from_the_environment_and_from_stdin() -> None:
    auth = make_auth("AuthenticationToken", "env:LBCTL_T", env={"LBCTL_T": TOKEN})
    assert auth.headers()["Authorization"] == f"Bearer {TOKEN}"
    auth = make_auth("AuthenticationToken", "token:-", stdin=io.StringIO(TOKEN + "\n"))
    assert auth.headers()["Authorization"] == f"Bearer {TOKEN}"
    with pytest.raises(ConfigError, match="LBCTL_NOPE.*is not set"):
        make_auth("AuthenticationToken", "env:LBCTL_NOPE", env={})
    with pytest.raises(ConfigError, match="no token on standard input"):
        make_auth("AuthenticationToken", "token:-", stdin=io.StringIO(""))


def test_a_token_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "token"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="FIFO"):
        make_auth("AuthenticationToken", f"file://{fifo}")


def test_short_plugin_names_and_one_table() -> None:
    for p in PLUGIN_TABLE:
        for name in (p.short, p.qualified, p.kind, p.short.lower()):
            assert plugin_kind(name) == p.kind
    with pytest.raises(ConfigError) as e:
        plugin_kind("AuthenticationKerberos")
    assert PLUGIN_NAMES in str(e.value)


@pytest.mark.parametrize("url", ["http://[::1/x", "http://pulsar:99999", "http://pul sar:80",
                                 "http://:8080", "http://h:0", "ftp://h"])
def test_bad_admin_urls_are_usage_errors(url: str) -> None:
    with pytest.raises(UsageError):
        resolve_connection(ConnectionOptions(admin_url=url), env={})


@pytest.mark.parametrize("t", [float("inf"), float("nan"), -1.0, 0.0, 1e9])
def test_request_timeout_must_be_finite_and_bounded(t: float) -> None:
    with pytest.raises(UsageError, match="--request-timeout"):
        resolve_connection(ConnectionOptions(request_timeout=t), env={})


def test_hostname_verification_is_on_when_a_credential_is_sent() -> None:
    warnings: list[str] = []
    cfg = resolve_connection(ConnectionOptions(admin_url="https://pulsar:8443",
                                               auth_plugin="AuthenticationToken",
                                               auth_params=f"token:{TOKEN}"), env={})
    with client_from_config(cfg, warn=warnings.append) as c:
        assert isinstance(c._verify, ssl.SSLContext) and c._verify.check_hostname is True
    assert warnings == []
    cfg = resolve_connection(ConnectionOptions(admin_url="https://pulsar:8443"), env={})
    with client_from_config(cfg) as c:  # no credential: pulsar-admin's default
        assert c._verify.check_hostname is False
    cfg = resolve_connection(ConnectionOptions(admin_url="https://pulsar:8443",
                                               auth_plugin="AuthenticationToken",
                                               auth_params=f"token:{TOKEN}",
                                               tls_enable_hostname_verification=False), env={})
    with client_from_config(cfg, warn=warnings.append) as c:
        assert c._verify.check_hostname is False  # the explicit opt-out still works
    assert len(warnings) == 1 and "hostname verification is off" in warnings[0]
    cfg = resolve_connection(ConnectionOptions(admin_url="https://pulsar:8443",
                                               auth_plugin="AuthenticationToken",
                                               auth_params=f"token:{TOKEN}",
                                               tls_allow_insecure=True), env={})
    with client_from_config(cfg, warn=warnings.append):
        pass
    assert "--tls-allow-insecure" in warnings[-1]


def test_a_bearer_token_over_plain_http_warns_but_not_on_loopback() -> None:
    warnings: list[str] = []
    for url in ("http://pulsar:8080", "http://127.0.0.1:8080"):
        cfg = resolve_connection(ConnectionOptions(admin_url=url, token=TOKEN), env={})
        with client_from_config(cfg, warn=warnings.append):
            pass
    assert len(warnings) == 1 and "plain http to pulsar" in warnings[0]
    assert TOKEN not in warnings[0]


def test_token_shortcuts() -> None:
    cfg = resolve_connection(ConnectionOptions(token=TOKEN), env={})
    assert cfg.auth_plugin == "AuthenticationToken" and cfg.auth_params == f"token:{TOKEN}"
    cfg = resolve_connection(ConnectionOptions(token_file="/t"), env={})
    assert cfg.auth_params == "file:///t"
    with pytest.raises(UsageError):
        resolve_connection(ConnectionOptions(token=TOKEN, token_file="/t"), env={})


def test_names_are_checked_by_pulsars_rules_before_a_url_is_built() -> None:
    for bad in ("../..", "t/..", "./n", "t/n?x", "t/n#", "t/n%2F", "t /n", "té/n"):
        with pytest.raises(UsageError):
            unload_call(bad)
    assert unload_call("my-t.1/ns=:_x").path == "/admin/v2/namespaces/my-t.1/ns%3D%3A_x/unload"


def test_a_jks_keystore_is_read(tmp_path: Path) -> None:
    """A trust store and a key store written by the JDK's keytool load into the TLS context."""
    import shutil
    import subprocess

    if shutil.which("keytool") is None:
        pytest.skip("keytool (JDK) is not installed")
    ks = tmp_path / "client.jks"
    subprocess.run(["keytool", "-genkeypair", "-alias", "c", "-keyalg", "RSA", "-keysize", "2048",
                    "-dname", "CN=lbctl", "-validity", "2", "-storetype", "JKS", "-keystore",
                    str(ks), "-storepass", "changeit", "-keypass", "changeit"],
                   check=True, capture_output=True)
    cfg = resolve_connection(ConnectionOptions(
        admin_url="https://pulsar:8443", use_key_store_tls=True,
        tls_trust_store_path=str(ks), tls_trust_store_password="changeit",
        tls_key_store_path=str(ks), tls_key_store_password="changeit"), env={})
    with client_from_config(cfg) as c:
        assert isinstance(c._verify, ssl.SSLContext)
        assert c._verify.cert_store_stats()["x509"] >= 1
    bad = resolve_connection(ConnectionOptions(
        admin_url="https://pulsar:8443", use_key_store_tls=True,
        tls_trust_store_path=str(ks), tls_trust_store_password="wrong"), env={})
    with pytest.raises(ConfigError, match="password is wrong"):
        client_from_config(bad)


@pytest.mark.live
def test_a_gzip_bomb_stops_at_the_cap_without_being_inflated_whole() -> None:
    """The admin client counted decoded bytes after httpx had inflated each network read whole:
    a 2 MiB gzip body read in one piece became 2 GiB in memory before the cap was looked at."""
    import gzip
    import tracemalloc

    from tests.admin.test_prometheus_hardening import Server, reply

    bomb = gzip.compress(b"[" + b" " * (16 << 20) + b"]")  # 16 MiB in ~16 KiB
    srv = Server(reply(bomb, Content_Encoding="gzip", Content_Type="application/json"))
    tracemalloc.start()
    try:
        with AdminClient(f"http://127.0.0.1:{srv.port}", max_response_bytes=1 << 20,
                         retries=0) as c, pytest.raises(HttpError) as e:
            c.json(call(LOAD_REPORT))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        srv.close()
    assert str(e.value).endswith("the response is larger than 1 MiB (raise --max-response-size)")
    assert peak < 8 << 20  # the decoded bytes were counted as they came, never all held


@pytest.mark.live
def test_a_corrupt_gzip_body_is_one_clear_error() -> None:
    import gzip

    from tests.admin.test_prometheus_hardening import Server, reply

    body = gzip.compress(b'{"a": 1}')
    for bad, what in ((body[:-6], "truncated"), (body[:10] + b"\xff" * 20, "corrupt")):
        srv = Server(reply(bad, Content_Encoding="gzip", Content_Type="application/json"))
        try:
            with AdminClient(f"http://127.0.0.1:{srv.port}", retries=0) as c, \
                    pytest.raises(HttpError) as e:
                c.json(call(LOAD_REPORT))
        finally:
            srv.close()
        assert str(e.value).endswith(f"the compressed response is {what}"), str(e.value)
