"""A throwaway self-signed certificate for 127.0.0.1 (imported as a plain module, like
factories.py): the TLS tests' broker or token issuer that the client must not trust."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def self_signed(tmp: Path, name: str) -> tuple[Path, Path]:
    """``tmp/NAME.pem`` and ``tmp/NAME.key``, valid for 127.0.0.1 (skips without openssl)."""
    if shutil.which("openssl") is None:  # pragma: no cover
        pytest.skip("openssl is not installed")
    cert, key = tmp / f"{name}.pem", tmp / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key
