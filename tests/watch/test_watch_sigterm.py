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
