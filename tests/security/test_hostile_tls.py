"""A TLS server whose certificate names another host (hostile17).

With a credential to send, lbctl checks the server's name (clientconf's module docstring): the
handshake fails before any request is written, so the token never leaves, and the one line now
says which check failed (``IP address mismatch, certificate is not valid for '127.0.0.1'``, or a
self-signed certificate) where it said only "TLS certificate verification failed"."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app

TOKEN = "tok-SECRET-never-sent"


def _certificate(tmp: Path, name: str) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:  # pragma: no cover
        pytest.skip("openssl not installed")
    cert, key = tmp / "other.pem", tmp / "other.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=DNS:{name}"], check=True, capture_output=True)
    return cert, key


class _TlsServer:
    """Accepts TLS connections with the given certificate and records every request head it
    reads (none, when the client refuses the certificate)."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.heads: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    with self.ctx.wrap_socket(conn, server_side=True) as tls:
                        self.heads.append(tls.recv(65536))
                        tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                except (OSError, ssl.SSLError):
                    continue

    def stop(self) -> None:
        self.sock.close()
        self.thread.join(5)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[_TlsServer, Path]]:
    cert, key = _certificate(tmp_path, "other.example")
    s = _TlsServer(cert, key)
    yield s, cert
    s.stop()


@pytest.mark.parametrize("trust, why", [(True, "IP address mismatch"),
                                        (False, "self-signed certificate")])
def test_a_wrong_name_gets_no_token_and_says_why(server: tuple[_TlsServer, Path],
                                                 trust: bool, why: str) -> None:
    srv, cert = server
    args = ["--admin-url", f"https://127.0.0.1:{srv.port}", "--token", TOKEN,
            "--request-timeout", "5"]
    if trust:
        args += ["--tls-trust-cert-path", str(cert)]
    res = CliRunner().invoke(app, [*args, "brokers"])
    assert res.exit_code == 3, res.stderr
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("lbctl: error: ")
    assert f"TLS certificate verification failed: {why}" in res.stderr
    assert TOKEN not in res.stdout + res.stderr
    assert srv.heads == []  # no request was written, let alone the token
