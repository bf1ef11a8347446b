"""User name and password in a URL, given alongside another authentication (hostile18).

hostile17 took ``user:pass@`` out of the admin URL (and ``--prometheus-url`` already did): it
becomes basic auth only when nothing else is configured. With ``--token`` (or a client.conf's
``authPlugin``) the user name and password were dropped silently, so a user who meant them got a
401 with no hint why. Now one warning line says so, and it never holds the password (nor the
user name, which a URL may use for a token).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app

CLOSED = "127.0.0.1:9"
USER, PASSWORD = "alice-u5er", "s3cr3t-Pa55"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("PULSAR_CLIENT_CONF", "LBCTL_TOKEN", "LBCTL_CONTEXTS", "LBCTL_CONTEXT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    monkeypatch.setattr("lbctl.cli.connection._WARNED", set())  # once per process, not per test


def _warnings(stderr: str) -> list[str]:
    assert PASSWORD not in stderr and USER not in stderr, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    return [ln for ln in stderr.splitlines() if "user name and password" in ln]


def _run(*args: str) -> str:
    res = CliRunner().invoke(app, ["--request-timeout", "2", *args])
    assert res.exit_code != 0  # nothing listens there
    return res.stderr


def test_admin_url_credentials_with_a_token_are_said_to_be_ignored() -> None:
    stderr = _run("--admin-url", f"http://{USER}:{PASSWORD}@{CLOSED}", "--token", "tok", "brokers")
    lines = _warnings(stderr)
    assert len(lines) == 1, stderr
    assert lines[0].startswith("lbctl: warning: ") and "admin URL" in lines[0]
    assert "ignored" in lines[0] and "token" in lines[0]


def test_admin_url_credentials_with_a_client_conf_plugin_are_said_to_be_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "client.conf"
    conf.write_text(f"webServiceUrl=http://{USER}:{PASSWORD}@{CLOSED}\n"
                    "authPlugin=org.apache.pulsar.client.impl.auth.AuthenticationToken\n"
                    "authParams=token:abc\n")
    monkeypatch.setenv("PULSAR_CLIENT_CONF", str(conf))
    assert len(_warnings(_run("brokers"))) == 1


def test_admin_url_credentials_alone_are_used_and_not_warned_about() -> None:
    assert _warnings(_run("--admin-url", f"http://{USER}:{PASSWORD}@{CLOSED}", "brokers")) == []


def test_no_credentials_in_the_url_no_warning() -> None:
    assert _warnings(_run("--admin-url", f"http://{CLOSED}", "--token", "tok", "brokers")) == []


def test_prometheus_url_credentials_with_a_plugin_are_said_to_be_ignored(tmp_path: Path) -> None:
    conf = tmp_path / "prometheus.conf"
    conf.write_text("authPlugin=org.apache.pulsar.client.impl.auth.AuthenticationToken\n"
                    "authParams=token:abc\n")
    stderr = _run("snapshot", "from-prometheus", "--prometheus-url",
                  f"http://{USER}:{PASSWORD}@{CLOSED}", "--prometheus-conf", str(conf),
                  "--since", "10m", "-f", str(tmp_path / "s.jsonl"))
    lines = _warnings(stderr)
    assert len(lines) == 1, stderr
    assert "--prometheus-url" in lines[0] and "ignored" in lines[0]
