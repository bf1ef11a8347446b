"""The watcher's status server does not let a silent client hold a thread and a socket."""

from __future__ import annotations

import socket
import time

from lbctl.watch.server import StatusServer


def test_a_client_that_sends_nothing_is_let_go() -> None:
    server = StatusServer(("127.0.0.1", 0), lambda: None, lambda: (True, "ok"),
                          request_timeout=0.3)
    try:
        host, port = server.httpd.server_address[:2]
        with socket.create_connection((str(host), int(port)), timeout=10) as s:
            started = time.monotonic()
            assert s.recv(1) == b""  # closed by the server, not by the 10 s guard here
            assert time.monotonic() - started < 9
    finally:
        server.close()
