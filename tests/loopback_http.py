"""A loopback HTTP server for the tests whose request threads end with it.

``http.server.ThreadingHTTPServer`` runs each connection in a *daemon* thread that
``server_close()`` does not wait for (socketserver's ``block_on_close`` joins only non-daemon
threads). A handler still running when its test ends — stalled on purpose, or waiting for the next
request on a kept-alive connection — then outlives the test, and that thread holds the server
(its target is the server's bound ``process_request_thread``). When the thread finally ends, it
drops the last reference to a server whose listening socket a test never closed, and the
``ResourceWarning`` it raises is reported, as an error (``filterwarnings = error``), by whichever
test runs at that moment: a flake that CI blames on an unrelated test.

:class:`LoopbackHTTPServer` makes the request threads non-daemon, so ``server_close()`` joins
them, and gives every accepted connection a timeout, so a client that never sends nor closes
cannot make that join wait forever. A client that hangs up before its answer is written (lbctl
stops reading after the first refused answer of a fan-out) is not reported: socketserver's
``handle_error`` would print that ``BrokenPipeError`` to ``sys.stderr``, which a ``CliRunner``
running at that moment captures as the command's own output. Close it as any ``ThreadingHTTPServer``: ``shutdown()``
(when ``serve_forever`` runs in a thread), then ``server_close()``.
"""

from __future__ import annotations

import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Seconds an accepted connection may stay silent: long enough for any test's keep-alive gap on a
#: loaded machine, short enough that a forgotten client delays ``server_close`` instead of hanging.
IDLE_SECONDS = 30.0


class LoopbackHTTPServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` whose ``server_close()`` waits for every request thread."""

    daemon_threads = False  # socketserver.ThreadingMixIn then joins them in server_close()
    block_on_close = True

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        conn.settimeout(IDLE_SECONDS)  # a handler's own ``timeout`` (if set) overrides it
        return conn, addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client gone before its answer (broken pipe, reset) is the client's business; any
        other handler error is reported as socketserver reports it."""
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def send_json(handler: BaseHTTPRequestHandler, body: bytes, status: int = 200) -> None:
    """``handler``'s answer: ``status`` with ``body`` (JSON text, already encoded), its type and
    length said — the one way the tests' loopback servers answer JSON."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
