"""The watcher's HTTP endpoint: ``/metrics``, ``/healthz`` and the status page ``/``.

Read-only and small: a threaded server from the standard library on the address given
(``--listen``, loopback by default — expose it deliberately), answering GET and HEAD only.
``/healthz`` is 200 while captures succeed and 503 once the last capture failed or none arrived
for three intervals, so a Kubernetes liveness/readiness probe or a systemd watchdog can use it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lbctl.errors import UsageError
from lbctl.watch.status import Status, metrics_text, page_html


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9470`` for IPv6); one line on a bad value."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--listen {text!r}: give HOST:PORT, e.g. 127.0.0.1:9470")
    return host.strip("[]") or "127.0.0.1", int(port)


class StatusServer:
    """Serves ``status()`` (the watcher's last published status) until :meth:`close`."""

    def __init__(self, address: tuple[str, int], status: Callable[[], Status | None],
                 healthy: Callable[[], tuple[bool, str]],
                 clock: Callable[[], float] = time.time, request_timeout: float = 10.0,
                 counters: Callable[[], tuple[int, int]] | None = None):
        self._status, self._healthy, self._clock = status, healthy, clock
        self._counters = counters
        outer = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "lbctl-watch"
            # a client that connects and sends nothing (or stops half-way) would otherwise hold
            # a thread and a socket for as long as it stays; Prometheus' scrape_timeout is 10 s
            timeout = request_timeout

            def do_GET(self) -> None:
                outer._answer(self, body=True)

            def do_HEAD(self) -> None:
                outer._answer(self, body=False)

            def log_message(self, format: str, *args: object) -> None:
                return  # no access log on stderr: stdout/stderr belong to the notifications

        try:
            self.httpd = ThreadingHTTPServer(address, Handler)
        except OSError as e:
            import errno

            # a second watcher (another --history) on the default port: say what to do
            hint = ("; another lbctl watch? give this one --listen HOST:PORT, or --listen '' "
                    "for no status page" if e.errno == errno.EADDRINUSE else "")
            raise UsageError(f"--listen {address[0]}:{address[1]}: {e.strerror or e}{hint}") \
                from None
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="lbctl-watch-http",
                                       daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        h = str(host)
        return f"http://{'[' + h + ']' if ':' in h else h}:{port}"

    def _answer(self, h: BaseHTTPRequestHandler, *, body: bool) -> None:
        path = h.path.split("?", 1)[0]
        status = 200
        if path == "/metrics":
            text = metrics_text(self._status(), int(self._clock() * 1000),
                                self._counters() if self._counters is not None else None)
            ctype = "text/plain; version=0.0.4; charset=utf-8"
        elif path == "/healthz":
            ok, why = self._healthy()
            status, text, ctype = (200 if ok else 503), why + "\n", "text/plain; charset=utf-8"
        elif path in ("/", "/index.html"):
            text, ctype = page_html(self._status(), self._healthy()), "text/html; charset=utf-8"
        else:
            status, text, ctype = 404, "not found\n", "text/plain; charset=utf-8"
        data = text.encode()
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        h.send_header("Cache-Control", "no-store")
        h.end_headers()
        if body:
            h.wfile.write(data)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
