"""A "foreign" HTTP server on another loopback address (127.0.0.2): it must never receive a request
from lbctl — least of all a credential. It records everything it is sent."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback_http import LoopbackHTTPServer, send_json

FOREIGN_HOST = "127.0.0.2"


def foreign_host_available() -> bool:
    try:
        with socket.socket() as s:
            s.bind((FOREIGN_HOST, 0))
        return True
    except OSError:
        return False


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Foreign:
    """The server; ``answers`` maps a path to a JSON answer (default ``{}``)."""

    host: str = FOREIGN_HOST
    answers: dict[str, Any] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    def start(self) -> Foreign:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n) if n else b""
                outer.seen.append(Seen(self.command, self.path, dict(self.headers), body))
                payload = json.dumps(outer.answers.get(self.path.split("?")[0], {})).encode()
                send_json(self, payload)

            do_GET = do_PUT = do_POST = do_DELETE = _any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = LoopbackHTTPServer((self.host, 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def netloc(self) -> str:
        return f"{self.host}:{self.port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def credentials_seen(self) -> list[Seen]:
        return [s for s in self.seen
                if any(k.lower() in ("authorization", "x-pulsar-auth-method-name") for k in s.headers)
                or b"client_secret" in s.body]
