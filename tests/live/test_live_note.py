"""A command given no snapshot reads the live cluster and says so on stderr, naming the URL; a
failed read stays one error line naming the request (issue 13 item 11)."""

from __future__ import annotations

import pytest

from lbctl.sandbox import Fault, TestCluster
from tests.live.live_helpers import Lbctl, assert_no_secret

pytestmark = pytest.mark.live

COMMANDS = [("recommend",), ("explain",), ("propose",)]


def _note(cluster: TestCluster) -> str:
    return f"lbctl: no snapshot given: reading the live cluster at {cluster.admin_url}"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_going_live_is_said_with_the_url(command: tuple[str, ...], cluster: TestCluster,
                                         lbctl: Lbctl) -> None:
    res = lbctl(*command, "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert _note(cluster) in res.stderr.splitlines()
    assert res.stdout.lstrip().startswith("{")  # the note is not in the output
    assert_no_secret(res.stderr)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_on_a_terminal_the_note_comes_before_the_read(command: tuple[str, ...], cluster: TestCluster,
                                                      lbctl: Lbctl, monkeypatch) -> None:
    monkeypatch.setattr("lbctl.cli.connection.is_terminal", lambda _s: True)
    cluster.faults.append(Fault(r"configuration/runtime", status=500, reason="Internal error"))
    res = lbctl(*command)
    assert res.exit_code == 10
    # what a terminal shows: the text after the last carriage return of each line
    lines = [x.split("\r")[-1] for x in res.stderr.split("\n")]
    lines = [x for x in lines if x.strip()]
    assert lines[0] == _note(cluster)
    assert lines[-1].startswith("lbctl: error: GET ") and "configuration/runtime" in lines[-1]
    assert "500 Internal Server Error: Internal error" in lines[-1]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_failed_live_read_is_one_line_naming_method_path_and_reason(
        command: tuple[str, ...], cluster: TestCluster, lbctl: Lbctl) -> None:
    cluster.faults.append(Fault(r"configuration/runtime", status=500, reason="Internal error"))
    res = lbctl(*command)
    assert res.exit_code == 10
    [line] = res.stderr.splitlines()
    assert line.startswith(f"lbctl: error: GET {cluster.admin_url}/admin/v2/brokers/configuration/runtime: ")
    assert line.endswith("500 Internal Server Error: Internal error")


def test_a_url_with_credentials_is_shown_without_them(cluster: TestCluster, lbctl: Lbctl) -> None:
    from lbctl.safe.redact import url_without_userinfo as shown_url

    assert shown_url("http://admin:SECRET-ADMIN-SIGNATURE@pulsar:8080") == "http://***@pulsar:8080"


def test_a_snapshot_given_means_no_note(cluster: TestCluster, lbctl: Lbctl, tmp_path) -> None:
    snap = tmp_path / "snap.json"
    assert lbctl("snapshot", "export", "-f", str(snap)).exit_code == 0
    for command in ("recommend", "explain", "propose"):
        res = lbctl(command, str(snap))
        assert res.exit_code == 0, res.stderr
        assert "reading the live cluster" not in res.stderr
