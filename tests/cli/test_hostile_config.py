"""A hostile client.conf and environment (hostile17).

Every case gives one line and a non-zero exit, without reaching anything but the closed loopback
port it names. New: pulsar-admin's comma-separated host list (``http://h1:8080,h2:8080``, which
``AsyncHttpConnector``'s ``PulsarServiceNameResolver`` takes) was refused in urllib's words
("Port could not be cast to integer value as '1,127.0.0.2:9'"); it now says one host is expected.
The other cases are guards: they held before.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app

SECRET = "pw-s3cret-conf"

#: client.conf bodies → (exit code, a piece of the one error line)
CASES: dict[str, tuple[bytes, int, str]] = {
    "binary": (os.urandom(512) + b"\0", 1, "binary"),
    "utf-16": ("webServiceUrl=http://127.0.0.1:9\n".encode("utf-16"), 1, "binary"),
    "duplicate keys, the last wins (java.util.Properties)": (
        b"webServiceUrl=http://127.0.0.2:9\nwebServiceUrl=http://127.0.0.1:9\n", 3,
        "http://127.0.0.1:9/"),
    "unknown keys": (b"fooBar=1\nwebServiceUrl=http://127.0.0.1:9\n", 3, "cannot connect"),
    "user info": (f"webServiceUrl=http://user:{SECRET}@127.0.0.1:9\n".encode(), 3,
                  "http://127.0.0.1:9/"),
    "ftp scheme": (b"webServiceUrl=ftp://127.0.0.1:9\n", 2, "must start with http://"),
    "pulsar scheme": (b"webServiceUrl=pulsar://127.0.0.1:6650\n", 2, "must start with http://"),
    "file URL": (b"webServiceUrl=file:///etc/passwd\n", 2, "must start with http://"),
    "IPv6 literal": (b"webServiceUrl=http://[::1]:9\n", 3, "http://[::1]:9/"),
    "IPv6 unclosed": (b"webServiceUrl=http://[::1:9\n", 2, "bad admin URL"),
    "trailing garbage port": (b"webServiceUrl=http://127.0.0.1:80abc\n", 2, "bad admin URL"),
    "two ports": (b"webServiceUrl=http://127.0.0.1:80:90\n", 2, "bad admin URL"),
    "port out of range": (b"webServiceUrl=http://127.0.0.1:99999\n", 2, "bad admin URL"),
    "host list": (b"webServiceUrl=http://127.0.0.1:9,127.0.0.2:9\n", 2, "one host expected"),
    "host list with user info": (
        f"webServiceUrl=http://u:{SECRET}@127.0.0.1:9,127.0.0.2:9\n".encode(), 2,
        "one host expected"),
    "blank host": (b"webServiceUrl=http:// :9\n", 2, "blanks"),
    "a 4 MB line": (b"webServiceUrl=http://" + b"a" * (4 << 20) + b"\n", 2, "bad admin URL"),
    "bad unicode escape": (b"webServiceUrl=http://127.0.0.1:9\\u12\n", 1, "\\uXXXX"),
}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.delenv("PULSAR_HOME", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))


def _one_line(res: object, code: int) -> str:
    stderr: str = res.stderr  # type: ignore[attr-defined]
    assert res.exit_code == code, stderr  # type: ignore[attr-defined]
    assert stderr.count("\n") == 1 and stderr.startswith("lbctl: error: "), stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    assert SECRET not in stderr
    assert len(stderr) < 600, stderr[:200]
    return stderr


@pytest.mark.parametrize("how", ["--client-conf", "PULSAR_CLIENT_CONF"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_client_conf_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           case: str, how: str) -> None:
    body, code, piece = CASES[case]
    conf = tmp_path / "client.conf"
    conf.write_bytes(body)
    args = ["--request-timeout", "2", "brokers"]
    if how == "--client-conf":
        args = ["--client-conf", str(conf), *args]
    else:
        monkeypatch.setenv("PULSAR_CLIENT_CONF", str(conf))
    line = _one_line(CliRunner().invoke(app, args), code)
    assert piece in line, line


@pytest.mark.parametrize("flag", ["http://127.0.0.1:9,127.0.0.2:9", "https://h1:8443,h2:8443/"])
def test_a_host_list_on_the_command_line_says_one_host(flag: str) -> None:
    line = _one_line(CliRunner().invoke(app, ["--admin-url", flag, "brokers"]), 2)
    assert "one host expected" in line


@pytest.mark.parametrize("var, args", [
    ("PULSAR_CLIENT_CONF", ["--request-timeout", "2", "brokers"]),
    ("LBCTL_JOURNAL", ["journal"]),
    ("LBCTL_CONTEXTS", ["context", "list"]),
])
@pytest.mark.parametrize("target", ["directory", "fifo", "/dev/zero", "/dev/null"])
def test_a_variable_naming_no_regular_file_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, var: str, args: list[str],
        target: str) -> None:
    """A fifo is never opened (that would wait for a writer forever), a device never read."""
    if target == "directory":
        path = str(tmp_path)
    elif target == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    else:
        path = target
    monkeypatch.setenv(var, path)
    line = _one_line(CliRunner().invoke(app, args), 1)
    assert path in line
