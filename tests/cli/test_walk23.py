"""walk23: what walk22's newcomer walk left.

* A Prometheus auth error says where it went and which credential lbctl sent, from where (the
  ``--prometheus-conf`` file's keys, an environment variable, the URL's user info), or that it
  sent none and how to give one — on the one error line.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app


def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PULSAR_CLIENT_CONF", "PULSAR_HOME", "LBCTL_CONTEXT", "LBCTL_PROM_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LBCTL_CONTEXTS", str(tmp_path / "contexts.json"))
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))


# --- 3. Prometheus auth errors say where and which credential ---------------------------------


class _Refusing(http.server.BaseHTTPRequestHandler):
    """A Prometheus behind a proxy that refuses every request with the server's status."""

    def do_GET(self) -> None:
        status = self.server.status  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"denied\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(params=[401, 403])
def refusing(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Refusing)
    server.status = request.param  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", request.param
    finally:
        server.shutdown()
        server.server_close()


def _pull(tmp_path: Path, url: str, *extra: str, env: dict[str, str] | None = None
          ) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["snapshot", "from-prometheus", "-f", str(tmp_path / "o.jsonl"),
                                 "--prometheus-url", url, "--since", "1h", *extra], env=env)
    return r.exit_code, r.stderr


def _conf(tmp_path: Path, params: str) -> Path:
    conf = tmp_path / "prom.conf"
    conf.write_text("authPlugin=org.apache.pulsar.client.impl.auth.AuthenticationToken\n"
                    f"authParams={params}\n")
    return conf


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_a_refusal_without_credentials_says_none_was_sent_and_how_to_give_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusing: tuple[str, int]) -> None:
    _env(tmp_path, monkeypatch)
    url, status = refusing
    code, err = _pull(tmp_path, url)
    line = _one_line(err)
    assert code == (5 if status == 401 else 6)
    assert f"GET {url}/api/v1/" in line and f" {status} " in line, line
    assert "no credential was sent" in line and "--prometheus-conf FILE" in line, line
    assert "USER:PASS@ in --prometheus-url" in line, line


def test_a_refusal_names_the_conf_file_and_the_token_source_never_the_token(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusing: tuple[str, int]) -> None:
    _env(tmp_path, monkeypatch)
    url, status = refusing
    token = tmp_path / "prom.jwt"
    token.write_text("s3cr3t-token\n")
    conf = _conf(tmp_path, f"file://{token}")
    line = _one_line(_pull(tmp_path, url, "--prometheus-conf", str(conf))[1])
    assert f"the token file {token}" in line, line
    assert f"authPlugin/authParams in --prometheus-conf {conf}" in line, line
    assert "s3cr3t" not in line

    conf = _conf(tmp_path, "env:LBCTL_PROM_TOKEN")
    line = _one_line(_pull(tmp_path, url, "--prometheus-conf", str(conf),
                           env={"LBCTL_PROM_TOKEN": "s3cr3t-env"})[1])
    assert "$LBCTL_PROM_TOKEN" in line and f"--prometheus-conf {conf}" in line, line
    assert "s3cr3t" not in line

    conf = _conf(tmp_path, "token:s3cr3t-inline")
    line = _one_line(_pull(tmp_path, url, "--prometheus-conf", str(conf))[1])
    assert f"bearer token of token auth, from authPlugin/authParams in --prometheus-conf {conf}" \
        in line, line
    assert "s3cr3t" not in line


def test_a_refusal_of_the_urls_user_and_password_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusing: tuple[str, int]) -> None:
    _env(tmp_path, monkeypatch)
    url, _ = refusing
    line = _one_line(_pull(tmp_path, url.replace("//", "//ops:pw-s3cr3t@"))[1])
    assert "basic auth with the user name and password in --prometheus-url" in line, line
    assert "s3cr3t" not in line and "ops:" not in line


@pytest.mark.parametrize(("params", "env", "start"), [
    ("file:///nonexistent/prom.jwt", {}, "auth: token file /nonexistent/prom.jwt: no such file"),
    ("env:LBCTL_PROM_TOKEN", {}, "auth: the environment variable 'LBCTL_PROM_TOKEN'"),
    ("", {}, "auth: AuthenticationToken needs"),
])
def test_a_bad_credential_in_the_conf_names_the_url_and_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, params: str, env: dict[str, str],
        start: str) -> None:
    """Before, "auth: token file …: no such file" alone: the same words as the admin client's,
    so nothing said it was Prometheus' credential, nor which file named it."""
    _env(tmp_path, monkeypatch)
    conf = _conf(tmp_path, params)
    code, err = _pull(tmp_path, "http://127.0.0.1:9", "--prometheus-conf", str(conf), env=env)
    line = _one_line(err)
    assert code == 1 and line.startswith(f"lbctl: error: {start}"), line
    assert line.endswith(f"(for --prometheus-url http://127.0.0.1:9, from authPlugin/authParams "
                         f"in --prometheus-conf {conf})"), line


def test_a_token_file_that_goes_away_later_is_named_with_its_origin(tmp_path: Path) -> None:
    """The token file is re-read per request: a later read's error has the same ending."""
    from lbctl.admin.prometheus import PrometheusConfig, client_from_config
    from lbctl.errors import ConfigError

    token = tmp_path / "prom.jwt"
    token.write_text("tok\n")
    conf = _conf(tmp_path, f"file://{token}")
    client = client_from_config(PrometheusConfig.read("http://127.0.0.1:9", conf, 5.0))
    token.unlink()
    with pytest.raises(ConfigError, match=r"no such file \(for --prometheus-url "
                       r"http://127\.0\.0\.1:9, from authPlugin/authParams in"):
        client.auth.headers()
    assert client.reader().auth_note == client.auth_note
