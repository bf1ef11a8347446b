"""Auth plugins from authPlugin/authParams, as Pulsar's client plugins read them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import respx

from lbctl.admin.auth import BasicAuth, OAuth2Auth, TlsAuth, TokenAuth, make_auth
from lbctl.errors import ConfigError

# httpx through pytest: ruff bans module-level httpx imports (they would slow the CLI's start-up)
httpx = pytest.importorskip("httpx")


@pytest.mark.parametrize("params", ["token:abc.def", '{"token": "abc.def"}', "abc.def"])
def test_token_forms(params: str) -> None:
    auth = make_auth("org.apache.pulsar.client.impl.auth.AuthenticationToken", params)
    assert auth.headers() == {"Authorization": "Bearer abc.def"}
    assert "abc.def" in auth.secrets() and "abc.def" not in repr(auth)


def test_token_file_is_read_again_on_every_request(tmp_path: Path) -> None:
    f = tmp_path / "t.jwt"
    f.write_text("first\n")
    auth = make_auth("token", f"file://{f}")
    assert isinstance(auth, TokenAuth) and auth.headers()["Authorization"] == "Bearer first"
    f.write_text("second")
    assert auth.headers()["Authorization"] == "Bearer second"
    assert set(auth.secrets()) == {"first", "second"}


def test_missing_token_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="token file .*no such file"):
        make_auth("token", f"file://{tmp_path}/nope")


def test_tls_params(tmp_path: Path) -> None:
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("x")
    key.write_text("y")
    for params in (f"tlsCertFile:{cert},tlsKeyFile:{key}",
                   json.dumps({"tlsCertFile": str(cert), "tlsKeyFile": str(key)})):
        auth = make_auth("tls", params)
        assert isinstance(auth, TlsAuth) and auth.client_cert() == (str(cert), str(key))
        assert auth.headers() == {}


def test_basic_and_unknown_plugin() -> None:
    auth = make_auth("basic", '{"userId": "u", "password": "pw-secret"}')
    assert isinstance(auth, BasicAuth) and auth.headers()["Authorization"].startswith("Basic ")
    with pytest.raises(ConfigError, match="unsupported auth plugin") as e:
        make_auth("AuthenticationKerberos", "secret-params")
    assert "secret-params" not in str(e.value)
    with pytest.raises(ConfigError) as e2:
        make_auth("oauth2", "not json SECRET")
    assert "SECRET" not in str(e2.value)


@respx.mock
def test_oauth2_client_credentials_caches_and_refreshes_at_90_percent(tmp_path: Path) -> None:
    key = tmp_path / "key.json"
    key.write_text(json.dumps({"type": "sn_service_account", "client_id": "cid",
                               "client_secret": "CLIENT-SECRET"}))
    respx.get("https://auth.example.com/.well-known/openid-configuration").mock(
        return_value=httpx.Response(200, json={"token_endpoint": "https://auth.example.com/token"}))
    tokens = iter(["AT-1", "AT-2"])
    route = respx.post("https://auth.example.com/token").mock(side_effect=lambda req: httpx.Response(
        200, json={"access_token": next(tokens), "expires_in": 100}))
    now = [0.0]
    auth = make_auth("org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2", json.dumps({
        "type": "client_credentials", "issuerUrl": "https://auth.example.com/",
        "privateKey": f"file://{key}", "audience": "urn:pulsar", "scope": "admin"}))
    assert isinstance(auth, OAuth2Auth)
    auth.clock = lambda: now[0]
    h = auth.headers()
    assert h == {"Authorization": "Bearer AT-1", "X-Pulsar-Auth-Method-Name": "token"}
    form = dict(x.split("=") for x in route.calls.last.request.content.decode().split("&"))
    assert form == {"grant_type": "client_credentials", "client_id": "cid",
                    "client_secret": "CLIENT-SECRET", "audience": "urn%3Apulsar", "scope": "admin"}
    now[0] = 89.0
    assert auth.headers()["Authorization"] == "Bearer AT-1" and route.call_count == 1
    now[0] = 90.0
    assert auth.headers()["Authorization"] == "Bearer AT-2" and route.call_count == 2
    assert {"CLIENT-SECRET", "AT-1", "AT-2"} <= set(auth.secrets())
    assert "CLIENT-SECRET" not in repr(auth) and "AT-" not in repr(auth)


@respx.mock
def test_oauth2_failure_is_unauthorized_without_secret(tmp_path: Path) -> None:
    from lbctl.admin.errors import Unauthorized

    key = tmp_path / "key.json"
    key.write_text(json.dumps({"client_id": "cid", "client_secret": "CLIENT-SECRET"}))
    respx.get("https://auth/.well-known/openid-configuration").mock(
        return_value=httpx.Response(200, json={"token_endpoint": "https://auth/token"}))
    respx.post("https://auth/token").mock(return_value=httpx.Response(400, text="CLIENT-SECRET bad"))
    auth = make_auth("oauth2", json.dumps({"issuerUrl": "https://auth", "privateKey": str(key)}))
    with pytest.raises(Unauthorized) as e:
        auth.headers()
    assert e.value.exit_code == 5 and "CLIENT-SECRET" not in str(e.value)
