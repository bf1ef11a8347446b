"""Issue 12's security suite: the loopback test cluster (tokens required) and a foreign host on
127.0.0.2. Whatever the cluster or the network says — redirects, broker lists, OAuth2 discovery,
errors — no credential, and no mutation, ever reaches the foreign host."""

from __future__ import annotations

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from lbctl.sandbox import Fault, TestCluster
from tests.live.live_helpers import ADMIN_TOKEN, Lbctl, assert_no_secret
from tests.loopback_http import LoopbackHTTPServer, send_json
from tests.security.foreign import Foreign
from tests.tls_helpers import self_signed

pytestmark = pytest.mark.live

UNLOAD_PATH = r"/namespaces/public/default/0x[0-9a-f]+_0x[0-9a-f]+/unload"


def _first_bundle(cluster: TestCluster) -> str:
    return cluster.ranges("public/default")[0]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_of_a_mutation_to_a_foreign_host_is_not_followed(
        cluster: TestCluster, lbctl: Lbctl, foreign: Foreign, status: int) -> None:
    rng = _first_bundle(cluster)
    owner = cluster.owners[f"public/default/{rng}"]
    target = f"http://{foreign.netloc}/admin/v2/namespaces/public/default/{rng}/unload"
    cluster.faults.append(Fault(UNLOAD_PATH, kind="redirect", status=status, location=target,
                                method="PUT"))
    res = lbctl("unload", "public/default", "-b", rng, "--yes")
    assert res.exit_code != 0, res.output
    assert foreign.netloc in res.stderr and "not followed" in res.stderr
    assert "the change was not made" in res.stderr
    assert foreign.seen == []  # not even contacted
    assert cluster.owners[f"public/default/{rng}"] == owner  # nothing moved
    assert "done" not in res.stdout
    assert_no_secret(res.stdout, res.stderr)


def test_a_redirect_of_a_read_to_a_foreign_host_is_not_followed(
        cluster: TestCluster, lbctl: Lbctl, foreign: Foreign) -> None:
    cluster.faults.append(Fault(r"/brokers/configuration/runtime$", kind="redirect", status=307,
                                location=f"http://{foreign.netloc}/steal"))
    res = lbctl("recommend")
    assert res.exit_code != 0
    assert foreign.seen == []
    assert_no_secret(res.stdout, res.stderr)


def test_a_redirect_to_the_owner_broker_is_still_followed(cluster: TestCluster,
                                                          lbctl: Lbctl) -> None:
    """Pulsar's own 307 to the bundle's owner (a broker of the cluster) keeps working."""
    ranges = cluster.ranges("public/default")
    ids = list(cluster.brokers)
    rng = next(r for r in ranges if cluster.owners[f"public/default/{r}"] != ids[0])
    res = lbctl("unload", "public/default", "-b", rng, "--yes")
    assert res.exit_code == 0, res.output
    assert any(r.status == 307 for r in cluster.requests("PUT"))


def test_a_foreign_broker_in_the_broker_list_gets_nothing_outside_the_allow_list(
        cluster: TestCluster, lbctl: Lbctl, foreign: Foreign) -> None:
    from lbctl.sandbox.server import BrokerState

    cluster.brokers[foreign.netloc] = BrokerState()  # the cluster now lists the foreign host
    res = lbctl("--broker-host-allow", "127.0.0.1", "recommend")
    assert res.exit_code == 0, res.output
    assert "does not match --broker-host-allow" in res.stderr
    assert foreign.seen == []
    assert_no_secret(res.stdout, res.stderr)


def test_client_conf_broker_host_allow(cluster: TestCluster, lbctl: Lbctl, foreign: Foreign,
                                       tmp_path: Path) -> None:
    from lbctl.sandbox.server import BrokerState

    conf = tmp_path / "client.conf"
    conf.write_text("brokerHostAllow=127.0.0.1, localhost\n")
    cluster.brokers[foreign.netloc] = BrokerState()
    res = lbctl("--client-conf", str(conf), "monitor-brokers", "--once")
    assert res.exit_code == 0, res.output
    assert foreign.seen == []


@pytest.mark.parametrize("bad_id", [
    "{foreign}/x", "user@{foreign}", "http://{foreign}", "{foreign}:1", "{host}", "evil host:80",
    "{foreign}?x=1", "{foreign}#frag"])
def test_broker_ids_that_are_not_host_port_are_never_contacted(
        cluster: TestCluster, lbctl: Lbctl, foreign: Foreign, bad_id: str) -> None:
    from lbctl.sandbox.server import BrokerState

    bid = bad_id.format(foreign=foreign.netloc, host=foreign.host)
    cluster.brokers[bid] = BrokerState()
    res = lbctl("recommend", "-o", "json")
    assert res.exit_code == 0, res.output
    assert "not host:port" in res.stderr
    assert foreign.seen == []


def test_the_token_is_never_in_an_error_even_when_the_server_echoes_it(
        cluster: TestCluster, lbctl: Lbctl) -> None:
    """A server reason quoting the token (past 200 characters, escaped, URL-encoded) is redacted
    before it is shortened."""
    from urllib.parse import quote

    reason = ("x" * 180 + ADMIN_TOKEN + " " + json.dumps(ADMIN_TOKEN) + " " + quote(ADMIN_TOKEN, safe="")
              + " " + "y" * 500)
    cluster.faults.append(Fault(r"/brokers/configuration/runtime$", status=500, reason=reason))
    res = lbctl("--debug", "recommend")
    assert res.exit_code == 10
    assert_no_secret(res.stdout, res.stderr)
    assert ADMIN_TOKEN[:16] not in res.stdout + res.stderr  # not even a piece of it


class _Issuer:
    """An https OpenID issuer on 127.0.0.1 whose discovery names ``token_endpoint``."""

    def __init__(self, tmp: Path, token_endpoint: str):
        cert, key = self_signed(tmp, "issuer")
        outer = self
        self.seen: list[tuple[str, str, bytes]] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.seen.append(("GET", self.path, b""))
                body = json.dumps({"issuer": outer.url, "token_endpoint": token_endpoint}).encode()
                send_json(self, body)

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                outer.seen.append(("POST", self.path, self.rfile.read(n)))
                body = json.dumps({"access_token": ADMIN_TOKEN, "expires_in": 60}).encode()
                send_json(self, body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}"
        self.client_ctx = ssl.create_default_context(cafile=str(cert))
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _oauth2(issuer_url: str, tmp: Path, verify: Any, **extra: Any) -> Any:
    from lbctl.admin.auth import make_auth

    key = tmp / "key.json"
    key.write_text(json.dumps({"client_id": "lbctl", "client_secret": "S3CRET-CLIENT-SECRET"}))
    params = {"type": "client_credentials", "issuerUrl": issuer_url,
              "privateKey": f"file://{key}", "audience": "pulsar", **extra}
    return make_auth("AuthenticationOAuth2", json.dumps(params), verify=verify)


@pytest.mark.parametrize("where", ["http-foreign", "https-foreign", "http-same-host"])
def test_oauth2_never_posts_the_secret_outside_the_issuer(tmp_path: Path, foreign: Foreign,
                                                          where: str) -> None:
    from lbctl.admin.errors import Unauthorized

    endpoint = {"http-foreign": f"http://{foreign.netloc}/token",
                "https-foreign": f"https://{foreign.netloc}/token",
                "http-same-host": "http://127.0.0.1:1/token"}[where]
    issuer = _Issuer(tmp_path, endpoint)
    try:
        auth = _oauth2(issuer.url, tmp_path, issuer.client_ctx)
        with pytest.raises(Unauthorized, match="refusing to send the client secret") as e:
            auth.headers()
        assert "S3CRET" not in str(e.value)
        assert [m for m, _, _ in issuer.seen] == ["GET"]  # discovery only
        assert foreign.seen == []
    finally:
        issuer.stop()


def test_oauth2_posts_to_the_issuers_own_https_endpoint(tmp_path: Path) -> None:
    issuer = _IssuerSelf(tmp_path)
    try:
        auth = _oauth2(issuer.url, tmp_path, issuer.client_ctx)
        assert auth.headers()["Authorization"] == f"Bearer {ADMIN_TOKEN}"
        assert [m for m, _, _ in issuer.seen] == ["GET", "POST"]
        assert b"client_secret=S3CRET-CLIENT-SECRET" in issuer.seen[1][2]
    finally:
        issuer.stop()


class _IssuerSelf(_Issuer):
    """An issuer whose token endpoint is on its own origin."""

    def __init__(self, tmp: Path):
        super().__init__(tmp, "")
        self._endpoint = self.url + "/oauth/token"

        handler = self.server.RequestHandlerClass
        outer = self

        def do_get(h: Any) -> None:
            outer.seen.append(("GET", h.path, b""))
            body = json.dumps({"issuer": outer.url, "token_endpoint": outer._endpoint}).encode()
            send_json(h, body)

        handler.do_GET = do_get  # type: ignore[method-assign]


def test_oauth2_refuses_an_http_issuer_before_any_request(foreign: Foreign, tmp_path: Path) -> None:
    from lbctl.admin.errors import Unauthorized

    auth = _oauth2(f"http://{foreign.netloc}", tmp_path, True)
    with pytest.raises(Unauthorized, match="not https"):
        auth.headers()
    assert foreign.seen == []


def test_the_cli_never_sends_the_oauth2_secret_to_a_foreign_token_endpoint(
        cluster: TestCluster, foreign: Foreign, tmp_path: Path) -> None:
    """End to end: an http issuer on the foreign host whose discovery names a foreign token
    endpoint: without the explicit opt-out nothing at all is sent to it (exit 5)."""
    foreign.answers["/.well-known/openid-configuration"] = {
        "token_endpoint": f"http://{foreign.netloc}/token"}
    key = tmp_path / "key.json"
    key.write_text(json.dumps({"client_id": "lbctl", "client_secret": "S3CRET-CLIENT-SECRET"}))
    params = json.dumps({"type": "client_credentials", "issuerUrl": f"http://{foreign.netloc}",
                         "privateKey": f"file://{key}"})
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    res = CliRunner().invoke(app, ["--admin-url", cluster.admin_url, "--auth-plugin",
                                   "AuthenticationOAuth2", "--auth-params", params, "recommend"])
    assert res.exit_code == 5, res.output
    assert foreign.credentials_seen() == [] and foreign.seen == []
    assert "S3CRET" not in res.output
