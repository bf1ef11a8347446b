"""Every check of a command's inputs comes before its side effects: a bad ``--admin-url`` or
``--webhook`` is its own one-line usage error (exit 2) before ``lbctl watch`` binds its port or
writes its history, whatever the port's state; a ``--port`` range past 65535 before the sandbox
listens."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # the machine's context, PULSAR_HOME and client.conf are kept out by tests/conftest.py
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else already listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        yield s.getsockname()[1]
    finally:
        s.close()


BAD_URLS = ["http://[::1", "http://host:99999", "ftp://host", "http://exa mple"]


@pytest.mark.parametrize("url", BAD_URLS)
def test_watch_checks_the_admin_url_before_binding_or_writing(
        tmp_path: Path, busy_port: int, url: str) -> None:
    history = tmp_path / "h"
    r = CliRunner().invoke(app, ["--admin-url", url, "watch", "--history", str(history),
                                 "--count", "1", "--listen", f"127.0.0.1:{busy_port}"])
    assert r.exit_code == 2, r.stderr
    assert r.stderr.startswith("lbctl: error: ") and "admin URL" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not history.exists()  # nothing written


@pytest.mark.parametrize("hook", ["http://[::1/x", "hooks.example.com/x", "http://:80/x",
                                  "https://h:0/x"])
def test_watch_checks_webhooks_before_binding_or_writing(
        tmp_path: Path, busy_port: int, hook: str) -> None:
    history = tmp_path / "h"
    r = CliRunner().invoke(app, ["--admin-url", "http://127.0.0.1:9", "watch", "--history",
                                 str(history), "--count", "1", "--webhook", hook,
                                 "--listen", f"127.0.0.1:{busy_port}"])
    assert r.exit_code == 2, r.stderr
    assert r.stderr.startswith("lbctl: error: ") and "--webhook" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not history.exists()


@pytest.mark.parametrize("args", [
    ["recommend"], ["explain"], ["monitor-brokers", "--once"], ["brokers"],
    ["drain", "b1:8080", "--dry-run"],
])
def test_a_bad_admin_url_is_a_usage_error_everywhere(args: list[str]) -> None:
    r = CliRunner().invoke(app, ["--admin-url", BAD_URLS[0], *args])
    assert r.exit_code == 2, r.stderr
    assert "bad admin URL" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_sandbox_refuses_a_port_range_past_65535_before_listening() -> None:
    r = CliRunner().invoke(app, ["sandbox", "--port", "65535", "--brokers", "3"])
    assert r.exit_code == 2, r.stderr
    assert "runs past port 65535" in r.stderr and len(r.stderr.strip().splitlines()) == 1
