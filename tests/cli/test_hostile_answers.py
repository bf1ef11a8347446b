"""Answers of the wrong shape, and credentials in the admin URL (hostile17).

* **Valid JSON of the wrong shape at every admin endpoint lbctl reads** (the loopback test cluster
  answers one path with it, the others as usual): one line, a non-zero exit, never ``internal
  error``. Before: a tenant list holding numbers or lists (``[1, "a", null]``) failed building the
  next URL (``TypeError: quote_from_bytes() expected bytes``), and a broker's version answered as
  a deeply nested array overflowed the stack (``RecursionError``).
* **Prometheus' ``warnings`` not a list** (``"warnings": 5``): ``TypeError: 'int' object is not
  iterable`` before; now "not a Prometheus API answer", exit 11.
* **User info in the admin URL** (``webServiceUrl=http://user:pass@host``): httpx turned it into an
  ``Authorization: Basic`` header that replaced ``--token``'s bearer token, and its password,
  unknown to the auth, was printed when the server echoed it. It is now taken out of the URL and
  becomes basic auth only when no other auth is configured, as ``--prometheus-url`` does.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import TestCluster, hot_cluster
from tests.loopback_http import LoopbackHTTPServer, send_json
from tests.paths import EXAMPLES
from tests.prom_helpers import TwoBrokerPrometheus

pytestmark = pytest.mark.live

DEEP = b"[" * 5000 + b"]" * 5000
#: the wrong shapes: every JSON type where another is expected, lists of the wrong items, an
#: object of the wrong keys, numbers past any range, and nesting past any recursion limit
SHAPES: list[Any] = [None, [], {}, 1, -1, "x", True, [[]], [1, "a", None], {"x": {}},
                     10**30, 1.5e308, {"a": [{"b": None}]}, DEEP]
#: the admin paths lbctl reads (a capture, brokers, doctor, watch), as regexes
PATHS = [r"/brokers/configuration/runtime$", r"/brokers$", r"/broker-stats/load-report",
         r"/broker-stats/topics", r"/tenants$", r"/namespaces/[^/]+$", r"/bundles$",
         r"/namespaceIsolationPolicies", r"/failureDomains", r"/antiAffinity",
         r"/namespaces/[^/]+/[^/]+/topics$", r"/partitioned$", r"/ownedNamespaces",
         r"/leaderBroker", r"/brokers/version", r"/configuration/values"]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))


@pytest.fixture(scope="module")
def cluster() -> Iterator[TestCluster]:
    c = hot_cluster(3)
    yield c
    c.stop()


def _answering(cluster: TestCluster, monkeypatch: pytest.MonkeyPatch, pattern: str,
               shape: Any) -> None:
    """``cluster`` answers a successful GET of a path matching ``pattern`` with ``shape``."""
    body = shape if isinstance(shape, bytes) else json.dumps(shape).encode()
    route = cluster._route

    def wrong(broker: str, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        answer = route(broker, method, path, *args, **kwargs)
        if method == "GET" and answer[0] == 200 and re.search(pattern, path):
            return 200, body, "application/json", {}
        return answer

    monkeypatch.setattr(cluster, "_route", wrong)


def _one_clean_line(res: Any) -> None:
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    errors = [line for line in res.stderr.splitlines() if "error:" in line]
    assert len(errors) <= 1, res.stderr
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr


def _run(cluster: TestCluster, *args: str) -> Any:
    return CliRunner().invoke(app, ["--admin-url", cluster.admin_url, "--request-timeout", "3",
                                    *args])


@pytest.mark.parametrize("shape", [[[]], [1, "a", None], [{"x": 1}]], ids=repr)
def test_a_tenant_list_of_non_names_is_one_line(cluster: TestCluster,
                                                monkeypatch: pytest.MonkeyPatch,
                                                shape: Any) -> None:
    _answering(cluster, monkeypatch, r"/tenants$", shape)
    res = _run(cluster, "snapshot", "export", "-f", "-")
    assert res.exit_code == 11, res.stderr
    _one_clean_line(res)
    assert "not a name" in res.stderr and "tenant" in res.stderr
    assert res.stdout == ""


def test_a_deeply_nested_version_answer_is_no_recursion_error(
        cluster: TestCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    _answering(cluster, monkeypatch, r"/brokers/version$", DEEP)
    res = _run(cluster, "brokers")
    _one_clean_line(res)
    assert "RecursionError" not in res.stderr


@pytest.mark.parametrize("pattern", PATHS)
def test_every_endpoint_of_a_capture_takes_any_wrong_shape(
        cluster: TestCluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        pattern: str) -> None:
    """A capture (what recommend, explain, propose, watch and export read) and the commands
    with endpoints of their own: whatever shape one endpoint answers, one line or a result —
    never an internal error."""
    for shape in SHAPES:
        _answering(cluster, monkeypatch, pattern, shape)
        for args in (["snapshot", "export", "-f", str(tmp_path / "s.json")], ["brokers"],
                     ["doctor"]):
            res = _run(cluster, *args)
            _one_clean_line(res)
        monkeypatch.undo()


def test_watch_takes_wrong_owned_namespaces(cluster: TestCluster,
                                            monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    for shape in SHAPES:
        _answering(cluster, monkeypatch, r"/ownedNamespaces$", shape)
        res = _run(cluster, "watch", "--history", str(tmp_path / "h"), "--count", "1",
                   "--listen", "")
        _one_clean_line(res)
        monkeypatch.undo()


# -- Prometheus ----------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["series", "query_range"])
@pytest.mark.parametrize("warnings", [5, {"a": 1}, "text", True])
def test_prometheus_warnings_that_are_not_a_list(tmp_path: Path, endpoint: str,
                                                 warnings: Any) -> None:
    reference = EXAMPLES / "hot-broker.json"
    cluster = json.loads(reference.read_text())["cluster"]
    payload = {"status": "success", "data": [], "warnings": warnings}
    prom = (TwoBrokerPrometheus(cluster, series=lambda q: payload) if endpoint == "series"
            else TwoBrokerPrometheus(cluster, query_range=lambda q: payload))
    try:
        res = CliRunner().invoke(app, [
            "snapshot", "from-prometheus", "--prometheus-url", prom.url, "--since", "10m",
            "--step", "1m", "--reference", str(reference), "-f", str(tmp_path / "out.jsonl"),
            "--request-timeout", "4"])
    finally:
        prom.stop()
    _one_clean_line(res)
    assert res.exit_code == 11, res.stderr
    assert f"/api/v1/{endpoint}: not a Prometheus API answer" in res.stderr
    assert not (tmp_path / "out.jsonl").exists()


# -- user info in the admin URL ------------------------------------------------------------------


class _Recorder:
    """A loopback server that answers every request with ``status`` and a JSON ``reason`` that
    echoes the ``Authorization`` header it was sent and ``echo``, and records those headers."""

    def __init__(self, status: int = 500, echo: str = "") -> None:
        self.authorization: list[str | None] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                sent = self.headers.get("Authorization")
                outer.authorization.append(sent)
                body = json.dumps({"reason": f"refused {sent} {echo}"}).encode()
                send_json(self, body, status)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


PASSWORD = "pw-s3cret-in-url"
BASIC = "dXNlcjpwdy1zM2NyZXQtaW4tdXJs"  # base64 of user:pw-s3cret-in-url
TOKEN = "tok-SECRET-from-the-flag"


@pytest.fixture
def recorder() -> Iterator[_Recorder]:
    r = _Recorder()
    yield r
    r.stop()


@pytest.mark.parametrize("where", ["flag", "client.conf"])
def test_a_token_is_not_replaced_by_user_info_in_the_admin_url(
        recorder: _Recorder, tmp_path: Path, where: str) -> None:
    url = f"http://user:{PASSWORD}@127.0.0.1:{recorder.port}"
    if where == "flag":
        args = ["--admin-url", url]
    else:
        conf = tmp_path / "client.conf"
        conf.write_text(f"webServiceUrl={url}\n")
        args = ["--client-conf", str(conf)]
    res = CliRunner().invoke(app, [*args, "--token", TOKEN, "--request-timeout", "3", "brokers"])
    assert res.exit_code == 10, res.stderr
    assert recorder.authorization, "nothing was sent"
    assert set(recorder.authorization) == {f"Bearer {TOKEN}"}
    _one_clean_line(res)
    for secret in (PASSWORD, BASIC, TOKEN):
        assert secret not in res.stdout + res.stderr


def test_user_info_alone_is_basic_auth_and_redacted() -> None:
    recorder = _Recorder(echo=f"user:{PASSWORD}")
    url = f"http://user:{PASSWORD}@127.0.0.1:{recorder.port}"
    try:
        res = CliRunner().invoke(app, ["--admin-url", url, "--request-timeout", "3", "--debug",
                                       "brokers"])
    finally:
        recorder.stop()
    assert res.exit_code == 10, res.stderr
    assert set(recorder.authorization) == {f"Basic {BASIC}"}
    _one_clean_line(res)
    assert "refused" in res.stderr  # the server's reason is shown, its secrets masked
    for secret in (PASSWORD, BASIC):
        assert secret not in res.stdout + res.stderr
