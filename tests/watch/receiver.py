"""A webhook receiver on loopback: records each POSTed JSON body; can be told to fail."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback_http import LoopbackHTTPServer


class Receiver:
    def __init__(self) -> None:
        self.bodies: list[Any] = []
        self.fail = False
        outer = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(n))
                if outer.fail:
                    self.send_response(500)
                else:
                    outer.bodies.append(body)
                    self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_a: object) -> None:
                return

        self.httpd = LoopbackHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook/secret-token"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
