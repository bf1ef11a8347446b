"""Hostile HTTP on the wire, from a loopback server, at the admin client and the Prometheus
client alike (hostile17): a body or a head dripped a byte at a time, a chunked body that never
ends, gzip and deflate bombs, a 10 MB header, 200,000 headers, a Content-Length that lies (short,
negative, 20 digits, beside chunked), random bytes, an HTTP/0.9 answer, an endless stream of
``100 Continue``, a 400 MB body. Each ends within the request deadline (the process is bounded by
a subprocess timeout: a hang fails, no speed is asserted) with one line on stderr and a
non-zero exit, and nothing written. Guards: each held before (the transport's deadline and caps);
kept so that a change to the wire keeps them."""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.paths import EXAMPLES

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
Handler = Callable[[socket.socket], None]


def _drip_body(c: socket.socket) -> None:
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000"
              b"\r\n\r\n[")
    for _ in range(120):
        time.sleep(0.25)
        c.sendall(b" ")


def _drip_head(c: socket.socket) -> None:
    c.sendall(b"HTTP/1.1 200 OK\r\n")
    for _ in range(120):
        time.sleep(0.25)
        c.sendall(b"X-A: b\r\n")


def _drip_chunks(c: socket.socket) -> None:
    c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    for _ in range(120):
        time.sleep(0.25)
        c.sendall(b"1\r\n \r\n")


def _encoded(encoding: bytes, body: bytes) -> Handler:
    def send(c: socket.socket) -> None:
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: "
                  + encoding + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    return send


def _raw(data: bytes, then_wait: float = 0.0) -> Handler:
    def send(c: socket.socket) -> None:
        c.sendall(data)
        time.sleep(then_wait)
    return send


def _continues(c: socket.socket) -> None:
    for _ in range(20000):
        c.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" * 10)


def _huge_body(c: socket.socket) -> None:
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (400 << 20))
    chunk = b" " * (1 << 20)
    for _ in range(400):
        c.sendall(chunk)


_BOMB_SIZE = 300 << 20
CASES: dict[str, Handler] = {
    "a body dripped": _drip_body,
    "a head dripped": _drip_head,
    "chunks dripped": _drip_chunks,
    "gzip bomb": _encoded(b"gzip", gzip.compress(b"\0" * _BOMB_SIZE, 1)),
    "deflate bomb": _encoded(b"deflate", zlib.compress(b" " * _BOMB_SIZE, 9)),
    "a corrupt gzip body": _encoded(b"gzip", b"0123456789"),
    "an unknown encoding": _encoded(b"br", b"{}"),
    "a 10 MB header": _raw(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (10 << 20)
                           + b"\r\nContent-Length: 2\r\n\r\n{}"),
    "200,000 headers": _raw(b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 200_000
                            + b"Content-Length: 2\r\n\r\n{}"),
    "Content-Length longer than the body": _raw(
        b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"a\":1}"),
    "Content-Length negative": _raw(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}"),
    "Content-Length of 20 digits": _raw(
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n{}", 3),
    "two different Content-Lengths": _raw(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"),
    "random bytes": _raw(os.urandom(5000)),
    "HTTP/0.9": _raw(b"{}"),
    "status 999": _raw(b"HTTP/1.1 999 Nope\r\nContent-Length: 2\r\n\r\n{}"),
    "endless 100 Continue": _continues,
    "a 400 MB body": _huge_body,
}


class _Server:
    """Answers every connection with ``handler`` after reading the request head."""

    def __init__(self, handler: Handler) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.handler = handler
        self.threads: list[threading.Thread] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            t = threading.Thread(target=self._one, args=(conn,), daemon=True)
            self.threads.append(t)
            t.start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(40)
            try:
                head = b""
                while b"\r\n\r\n" not in head:
                    more = conn.recv(65536)
                    if not more:
                        return
                    head += more
                self.handler(conn)
            except OSError:
                return

    def stop(self) -> None:
        self.sock.close()
        for t in self.threads:
            t.join(45)


@pytest.fixture(params=list(CASES))
def server(request: pytest.FixtureRequest) -> Iterator[_Server]:
    s = _Server(CASES[request.param])
    yield s
    s.stop()


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULSAR_", "LBCTL_"))}
    env["PYTHONPATH"] = str(ROOT)
    env["LBCTL_JOURNAL"] = str(tmp_path / "journal.jsonl")
    return subprocess.run([sys.executable, "-m", "lbctl", *args], env=env, capture_output=True,
                          text=True, timeout=90, stdin=subprocess.DEVNULL, cwd=tmp_path)


def _one_line(p: subprocess.CompletedProcess[str]) -> None:
    assert p.returncode != 0, p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("lbctl: error:")]
    assert len(errors) == 1, p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_the_admin_client(server: _Server, tmp_path: Path) -> None:
    p = _run(tmp_path, "--admin-url", f"http://127.0.0.1:{server.port}", "--request-timeout",
             "3", "snapshot", "export", "-f", str(tmp_path / "out.json"))
    _one_line(p)
    assert sorted(os.listdir(tmp_path)) == []  # no snapshot, no journal, no temporary file


def test_the_prometheus_client(server: _Server, tmp_path: Path) -> None:
    p = _run(tmp_path, "snapshot", "from-prometheus", "--prometheus-url",
             f"http://127.0.0.1:{server.port}", "--since", "10m", "--step", "1m",
             "--reference", str(EXAMPLES / "hot-broker.json"), "--request-timeout", "3",
             "-f", str(tmp_path / "out.jsonl"))
    _one_line(p)
    assert sorted(os.listdir(tmp_path)) == []
