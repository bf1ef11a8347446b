"""SIGTERM during a capture stops ``lbctl watch`` at once (hostile-server sweep, round 3): the
handler only set a flag read between ticks, so a capture waiting on a stalled admin URL (or
reading a huge broker list) kept the process alive until it ended — past ``timeout``'s and a
service manager's stop timeout. A capture only reads: it is abandoned, as Ctrl-C abandons it."""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.loopback_http import LoopbackHTTPServer

pytestmark = pytest.mark.live


class _Stall(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    #: set when the test ends, so the stall ends with it: a 30 s sleep outlived the test, and
    #: its thread, the server's last holder, then freed the server's unclosed listening socket
    #: (a ResourceWarning, an error) in whichever later test was running
    release = threading.Event()

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "100")
        self.end_headers()
        self.wfile.flush()
        self.release.wait(30)  # the head, then nothing

    def log_message(self, *args: Any) -> None:
        pass


def test_sigterm_abandons_a_capture_in_flight(tmp_path: Path) -> None:
    _Stall.release.clear()
    httpd = LoopbackHTTPServer(("127.0.0.1", 0), _Stall)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("PULSAR_CLIENT_CONF", None)
    p = subprocess.Popen(
        [sys.executable, "-m", "lbctl", "--admin-url", f"http://127.0.0.1:{httpd.server_port}",
         "--request-timeout", "60", "watch", "--count", "1", "--listen", "",
         "--history", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        time.sleep(3)  # started and waiting on the stalled answer
        assert p.poll() is None
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=15)  # was: the capture's 60 s, retried
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        _Stall.release.set()
        httpd.shutdown()
        httpd.server_close()  # joins the stalled request's thread
    assert p.returncode == 1
    assert err.decode().strip().splitlines()[-1] == (
        "lbctl: error: no capture succeeded in 1 attempt(s): stopped during the capture")


def test_ctrl_c_after_the_anomalies_are_saved_still_queues_their_plan(tmp_path: Path) -> None:
    """SIGINT while the tick notifies (a slow webhook): the anomaly is already saved as raised,
    so a restart never raises it again — the tick must finish (its healing plan queued) before
    the watcher stops. Python's default SIGINT raised inside the webhook's POST instead, and the
    plan was never made."""
    from tests.sandbox.life_helpers import living_hot

    got = threading.Event()

    class _SlowHook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            got.set()
            time.sleep(3)
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    hook = LoopbackHTTPServer(("127.0.0.1", 0), _SlowHook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    c, _life, _clock = living_hot(3)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("PULSAR_CLIENT_CONF", None)
    history = tmp_path / "h"
    p = subprocess.Popen(
        [sys.executable, "-m", "lbctl", "--admin-url", c.admin_url, "watch", "--count", "1",
         "--listen", "", "--no-doctor", "--history", str(history), "--grace", "out-of-band=0s",
         "--heal", "out-of-band=approve", "--webhook", f"http://127.0.0.1:{hook.server_port}/h"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        assert got.wait(60), "no notification arrived"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        hook.shutdown()
        hook.server_close()
        c.stop()
    assert b'"event":"raised"' in out and b"out-of-band" in out
    assert "Traceback" not in err.decode()
    plans = list(os.listdir(history / "plans")) if (history / "plans").is_dir() else []
    assert any(n.endswith(".meta.json") for n in plans), err.decode()
