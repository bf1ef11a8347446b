"""The --prometheus-url flags: time ranges, steps and their mistakes, without a Prometheus."""

from __future__ import annotations

import socket
import threading

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.cli.prometheus import PrometheusArgs, request_of
from lbctl.errors import UsageError
from lbctl.sources.prometheus import parse_duration, parse_time
from tests.prom_helpers import free_port

NOW = 1_772_360_130_500  # 2026-03-01T10:15:30.500Z


@pytest.mark.parametrize(("text", "ms"), [("30s", 30_000), ("1m", 60_000), ("1h30m", 5_400_000),
                                          ("7d", 604_800_000), ("90", 90_000), ("250ms", 250),
                                          ("1w", 604_800_000), ("1.5h", 5_400_000)])
def test_durations(text: str, ms: int) -> None:
    assert parse_duration(text) == ms


@pytest.mark.parametrize("text", ["", "0s", "-1h", "1x", "h", "1h 30m", "abc", "0"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(UsageError, match="bad duration"):
        parse_duration(text)


def test_times() -> None:
    assert parse_time("2026-03-01T10:00:00Z") == 1_772_359_200_000
    assert parse_time("2026-03-01T11:00:00+01:00") == 1_772_359_200_000
    assert parse_time("1772359200") == 1_772_359_200_000
    for bad in ("2026-03-01T10:00:00", "yesterday", "2026-13-01T00:00:00Z"):
        with pytest.raises(UsageError, match="expected RFC 3339 with an offset"):
            parse_time(bad)


def test_since_is_on_the_step_grid() -> None:
    req = request_of(None, PrometheusArgs("http://p", since="2h", step="1m"), now_ms=NOW)
    assert req.start_ms % 60_000 == 0 and req.end_ms == NOW - NOW % 60_000
    assert req.end_ms - req.start_ms == 2 * 3_600_000  # 121 samples, the last within a step of now
    req = request_of(None, PrometheusArgs("http://p", start="2026-03-01T10:00:00Z",
                                          end="2026-03-01T10:05:00Z", step="30s"), now_ms=NOW)
    assert (req.start_ms, req.end_ms, req.step_ms) == (1_772_359_200_000, 1_772_359_500_000,
                                                       30_000)


def test_a_since_range_does_not_read_the_step_after_its_end_before_it_is_over() -> None:
    """``--since`` ends within a step of now: the step after it (the last snapshot's observed
    decisions) is not over, so it is not read; a range that ended a step ago or more reads it."""
    req = request_of(None, PrometheusArgs("http://p", since="2h", step="1m"), now_ms=NOW)
    assert req.horizon_ms == NOW and req.read_end_ms == req.end_ms
    req = request_of(None, PrometheusArgs("http://p", start="2026-03-01T10:00:00Z",
                                          end="2026-03-01T10:05:00Z", step="30s"), now_ms=NOW)
    assert req.read_end_ms == req.end_ms + 30_000


@pytest.mark.parametrize(("args", "message"), [
    (["--since", "2h", "--start", "2026-03-01T10:00:00Z"], "give --since or --start, not both"),
    ([], "--prometheus-url needs a time range: --since DURATION or --start TIME"),
    (["--since", "2h", "--step", "0"], "bad --step '0': must be more than zero"),
    (["--since", "soon"], "bad --since 'soon'"),
    (["--start", "2026-03-01T10:00:00Z", "--end", "2026-03-01T09:00:00Z"],
     "the end (2026-03-01T09:00:00Z) is before the start (2026-03-01T10:00:00Z)"),
])
def test_bad_ranges_are_usage_errors(args: list[str], message: str) -> None:
    res = CliRunner().invoke(app, ["recommend", "--prometheus-url", "http://127.0.0.1:1", *args])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"lbctl: error: {message}") and res.stderr.count("\n") == 1


def test_prometheus_flags_alone_or_with_files_are_errors(tmp_path) -> None:
    snap = tmp_path / "s.json"
    snap.write_text("{}")
    res = CliRunner().invoke(app, ["explain", "--since", "2h"])
    assert res.exit_code == 2 and res.stderr == "lbctl: error: --since needs --prometheus-url\n"
    res = CliRunner().invoke(app, ["recommend", str(snap), "--prometheus-url", "http://p",
                                   "--since", "1h"])
    assert res.exit_code == 2
    assert res.stderr == "lbctl: error: give snapshot files or --prometheus-url, not both\n"
    res = CliRunner().invoke(app, ["simulate"])
    assert res.exit_code == 2
    assert res.stderr == ("lbctl: error: give snapshot files, or --prometheus-url with "
                          "--since/--start (the live cluster as a file: lbctl snapshot export "
                          "-f snap.json)\n")


def test_from_prometheus_needs_a_jsonl(tmp_path) -> None:
    res = CliRunner().invoke(app, ["snapshot", "from-prometheus", "--prometheus-url",
                                   "http://127.0.0.1:1", "--since", "1h", "-f",
                                   str(tmp_path / "x.json")])
    assert res.exit_code == 2
    assert "a sequence is written as .jsonl (optionally .jsonl.gz)" in res.stderr
    assert not (tmp_path / "x.json").exists()


def test_a_missing_prometheus_conf_is_one_line(tmp_path) -> None:
    res = CliRunner().invoke(app, ["recommend", "--prometheus-url", "http://127.0.0.1:1",
                                   "--since", "1h", "--prometheus-conf", str(tmp_path / "nope")])
    assert res.exit_code != 0 and res.stderr.startswith("lbctl: error: ")
    assert res.stderr.count("\n") == 1


def test_a_prometheus_that_is_down_is_one_line() -> None:
    port = free_port()
    res = CliRunner().invoke(app, ["recommend", "--prometheus-url", f"http://127.0.0.1:{port}",
                                   "--since", "1h"])
    assert res.exit_code == 3
    assert res.stderr == (f"lbctl: error: GET http://127.0.0.1:{port}/api/v1/series: cannot "
                          "connect (connection refused); is Prometheus running there?\n")


def test_a_dropped_connection_is_one_line() -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    port = srv.getsockname()[1]

    srv.settimeout(0.2)
    done = threading.Event()

    def serve() -> None:
        # However many times the client retries, every connection is read and dropped.
        while not done.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            conn.recv(4096)
            conn.close()

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    res = CliRunner().invoke(app, ["recommend", "--prometheus-url", f"http://127.0.0.1:{port}",
                                   "--since", "1h"])
    done.set()
    server.join()
    srv.close()
    assert res.exit_code == 3
    assert res.stderr == (f"lbctl: error: GET http://127.0.0.1:{port}/api/v1/series: connection "
                          "dropped by the server\n")


def test_prometheus_conf_authenticates_and_an_empty_prometheus_is_one_line(tmp_path) -> None:
    """client.conf's keys authenticate to Prometheus (here a bearer token); a Prometheus without
    any Pulsar series says so in one line."""
    import json
    from http.server import BaseHTTPRequestHandler

    from tests.loopback_http import LoopbackHTTPServer, send_json

    seen: list[str | None] = []

    class Empty(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the http.server API's name
            seen.append(self.headers.get("Authorization"))
            body = json.dumps({"status": "success", "data": []}).encode()
            send_json(self, body)

        def log_message(self, *args: object) -> None:
            pass

    srv = LoopbackHTTPServer(("127.0.0.1", 0), Empty)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    conf = tmp_path / "prometheus.conf"
    conf.write_text("authPlugin=org.apache.pulsar.client.impl.auth.AuthenticationToken\n"
                    "authParams=token:prom-s3cret\n")
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        res = CliRunner().invoke(app, ["recommend", "--prometheus-url", url, "--since", "1h",
                                       "--prometheus-conf", str(conf)])
    finally:
        srv.shutdown()
        srv.server_close()
    assert seen == ["Bearer prom-s3cret"]
    assert res.exit_code == 1 and res.stderr.count("\n") == 1
    assert res.stderr.startswith(f"lbctl: error: Prometheus at {url} has no pulsar_lb_cpu_usage "
                                 "series between ")
    assert "prom-s3cret" not in res.stderr
