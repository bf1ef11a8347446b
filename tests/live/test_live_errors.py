"""Every failure class gives one line on stderr and its own exit code; no secret in any output."""

from __future__ import annotations

import socket

import pytest

from lbctl.cli.app import app
from lbctl.errors import EXIT_CODES
from lbctl.sandbox import Fault, TestCluster
from tests.live.live_helpers import SECRETS, USER_TOKEN, Lbctl, assert_no_secret

pytestmark = pytest.mark.live


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _case(name: str, c: TestCluster, lbctl: Lbctl):  # -> result of the command
    rng = c.ranges("public/default")[0]
    unload = ("unload", "public/default", "-b", rng, "--yes")
    if name == "401":
        return lbctl("monitor-brokers", "--once", token="eyJ.wrong.SECRET-ADMIN-SIGNATURE-NOT")
    if name == "403":
        return lbctl("monitor-brokers", "--once", token=USER_TOKEN)
    if name == "404":  # the broker's 404 (an unknown namespace is refused before, with exit 2)
        c.faults.append(Fault(r"/unload$", status=404, method="PUT",
                              reason="Namespace does not exist"))
        return lbctl(*unload)
    if name in ("409", "412"):
        c.faults.append(Fault(r"/unload$", status=int(name), method="PUT",
                              reason=f"injected {name} for token {SECRETS[0]}"))
        return lbctl(*unload)
    if name == "500":
        c.faults.append(Fault(r"configuration/runtime", status=500, reason="Internal error"))
        return lbctl("recommend")
    if name == "timeout":
        c.faults.append(Fault(r"configuration/runtime", kind="hang"))
        args = lbctl.args("snapshot", "export", "-f", "x.json")
        args[args.index("--request-timeout") + 1] = "0.3"
        return lbctl.runner.invoke(app, args)
    if name == "refused":
        args = ["--admin-url", f"http://127.0.0.1:{_closed_port()}", "monitor-brokers", "--once"]
        return lbctl.runner.invoke(app, args)
    raise AssertionError(name)


EXPECTED = {"401": (5, "401 Unauthorized"), "403": (6, "403 Forbidden: This operation requires"),
            "404": (7, "404 Not Found: Namespace does not exist"), "409": (8, "409 Conflict"),
            "412": (9, "412 Precondition Failed"), "500": (10, "500 Internal Server Error"),
            "timeout": (4, "no answer within 0.3 s"), "refused": (3, "connection refused")}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_error_is_one_line_with_its_exit_code(name: str, cluster: TestCluster, lbctl: Lbctl,
                                              tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = _case(name, cluster, lbctl)
    code, text = EXPECTED[name]
    assert res.exit_code == code, (res.exit_code, res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lbctl: error: "), res.stderr
    assert text in lines[0]
    assert EXIT_CODES[code]
    assert_no_secret(res.stdout, res.stderr)


def test_exit_codes_are_distinct() -> None:
    codes = [c for c, _ in EXPECTED.values()]
    assert len(set(codes)) == len(codes)
    assert not set(codes) & {0, 1, 2}


def test_500_on_reads_is_retried_then_succeeds(cluster: TestCluster, lbctl: Lbctl) -> None:
    cluster.faults.append(Fault(r"configuration/runtime", status=503, times=2))
    res = lbctl("monitor-brokers", "--once", "--summary")
    assert res.exit_code == 0, res.stderr
    assert len(cluster.requests("GET", "configuration/runtime")) == 3


def test_a_failed_mutation_is_not_retried(cluster: TestCluster, lbctl: Lbctl) -> None:
    cluster.faults.append(Fault(r"/unload$", status=503, method="PUT", times=1))
    res = lbctl("unload", "tenant-a/orders", "--yes")
    assert res.exit_code == 10
    assert len(cluster.requests("PUT")) == 1


def test_dropped_mutation_says_it_may_have_been_applied(cluster: TestCluster, lbctl: Lbctl) -> None:
    cluster.faults.append(Fault(r"/unload$", kind="drop", method="PUT"))
    res = lbctl("unload", "tenant-a/orders", "--yes")
    assert res.exit_code == 3 and "may have been applied" in res.stderr
    assert len(cluster.requests("PUT")) == 1


def test_debug_trace_has_no_token(cluster: TestCluster, lbctl: Lbctl) -> None:
    res = lbctl.runner.invoke(app,
                              ["--debug", *lbctl.args("monitor-brokers", "--once", "--summary")])
    assert res.exit_code == 0
    assert "lbctl: debug: GET http://" in res.stderr and "load-report -> 200" in res.stderr
    assert_no_secret(res.stdout, res.stderr)
