"""Java keystores for TLS, as Pulsar's clients read them (``useKeyStoreTls=true``).

``tlsTrustStoreType``/``tlsTrustStorePath``/``tlsTrustStorePassword`` name the CA certificates and
``tlsKeyStoreType``/``tlsKeyStorePath``/``tlsKeyStorePassword`` the client's certificate and key,
as in ``KeyStoreSSLContext`` (type ``JKS`` by default, or ``PKCS12``).

* **JKS** is read here, with no dependency: the file is a list of entries (a trusted certificate,
  or a private key with its certificate chain) followed by a SHA-1 digest keyed by the store
  password, which is checked. A private key is protected by Sun's ``KeyProtector`` (a SHA-1 key
  stream XOR-ed over the PKCS#8 key, then a SHA-1 check of the password and the key).
* **PKCS12** needs the ``cryptography`` package (``pip install cryptography``); without it the
  error says so, and how to convert the store to PEM files instead.

Python's ``ssl`` loads a certificate chain and key from files only, so the client key is written
to a private temporary directory (0700), loaded, and removed at once.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import struct
import tempfile
from dataclasses import dataclass, field
from typing import Any

from lbctl.admin.clientconf import ConnectionConfig
from lbctl.errors import ConfigError

_JKS_MAGIC = 0xFEEDFEED
_WHITENER = b"Mighty Aphrodite"  # the constant Sun's JavaKeyStore mixes into its integrity digest
_KEY_PROTECTOR_OID = b"\x2b\x06\x01\x04\x01\x2a\x02\x11\x01\x01"  # 1.3.6.1.4.1.42.2.17.1.1


@dataclass
class Store:
    """What a keystore holds: trusted certificates and private keys with their chains (DER)."""

    trusted: list[bytes] = field(default_factory=list)
    keys: list[tuple[bytes, list[bytes]]] = field(default_factory=list)  # (PKCS#8, chain)


def _pem(kind: str, der: bytes) -> str:
    body = base64.encodebytes(der).decode().replace("\n", "")
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----\n"


def read_store(path: str, kind: str | None, password: str | None, what: str) -> Store:
    from lbctl.safe.files import read_regular

    data = read_regular(path, what=f"a {what}", limit=64 << 20, follow=True,
                        error=lambda m: ConfigError(f"TLS: {what} {m}"))
    t = (kind or "JKS").strip().upper()
    if t == "JKS":
        return parse_jks(data, password or "", path)
    if t in ("PKCS12", "P12", "PFX"):
        return _parse_pkcs12(data, password, path)
    raise ConfigError(f"TLS: {what} type {t[:20]!r} is not supported (JKS or PKCS12)")


class _Reader:
    def __init__(self, data: bytes, path: str):
        self.data, self.pos, self.path = data, 0, path

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ConfigError(f"TLS: {self.path}: truncated or corrupt JKS keystore")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u16(self) -> int:
        value: int = struct.unpack(">H", self.take(2))[0]
        return value

    def u32(self) -> int:
        value: int = struct.unpack(">I", self.take(4))[0]
        return value

    def utf(self) -> str:
        return self.take(self.u16()).decode("utf-8", "replace")


def parse_jks(data: bytes, password: str, path: str) -> Store:
    """A JKS keystore (``sun.security.provider.JavaKeyStore`` format, version 1 or 2)."""
    r = _Reader(data, path)
    if len(data) < 32 or r.u32() != _JKS_MAGIC:
        raise ConfigError(f"TLS: {path}: not a JKS keystore (set the store type to PKCS12?)")
    version = r.u32()
    if version not in (1, 2):
        raise ConfigError(f"TLS: {path}: unsupported JKS version {version}")
    store = Store()
    for _ in range(r.u32()):
        tag = r.u32()
        r.utf()  # alias
        r.take(8)  # creation time
        if tag == 1:
            protected = r.take(r.u32())
            chain = []
            for _ in range(r.u32()):
                if version == 2:
                    r.utf()  # certificate type, X.509
                chain.append(r.take(r.u32()))
            store.keys.append((_unprotect(protected, password, path), chain))
        elif tag == 2:
            if version == 2:
                r.utf()
            store.trusted.append(r.take(r.u32()))
        else:
            raise ConfigError(f"TLS: {path}: unknown JKS entry type {tag}")
    body, digest = data[:r.pos], r.take(20)
    pw = password.encode("utf-16-be")
    if hashlib.sha1(pw + _WHITENER + body).digest() != digest:
        raise ConfigError(f"TLS: {path}: the keystore password is wrong (or the file is corrupt)")
    return store


def _der_items(data: bytes, path: str) -> list[tuple[int, bytes]]:
    """The (tag, content) items of a DER SEQUENCE's content."""
    out = []
    pos = 0
    while pos < len(data):
        tag = data[pos]
        length = data[pos + 1] if pos + 1 < len(data) else 0
        pos += 2
        if length & 0x80:
            n = length & 0x7F
            length = int.from_bytes(data[pos:pos + n], "big")
            pos += n
        if pos + length > len(data):
            raise ConfigError(f"TLS: {path}: corrupt key entry in the JKS keystore")
        out.append((tag, data[pos:pos + length]))
        pos += length
    return out


def _unprotect(protected: bytes, password: str, path: str) -> bytes:
    """Sun's ``KeyProtector.recover``: the PKCS#8 key inside an ``EncryptedPrivateKeyInfo``."""
    (tag, seq), *_ = _der_items(protected, path) or [(0, b"")]
    items = _der_items(seq, path) if tag == 0x30 else []
    if len(items) != 2 or items[0][0] != 0x30 or items[1][0] != 0x04:
        raise ConfigError(f"TLS: {path}: corrupt key entry in the JKS keystore")
    algorithm = _der_items(items[0][1], path)
    if not algorithm or algorithm[0][1] != _KEY_PROTECTOR_OID:
        raise ConfigError(f"TLS: {path}: the key entry is not protected the JKS way (convert the "
                          "store to PKCS12)")
    blob = items[1][1]
    salt, encrypted, check = blob[:20], blob[20:-20], blob[-20:]
    pw = password.encode("utf-16-be")
    stream = bytearray()
    digest = salt
    while len(stream) < len(encrypted):
        digest = hashlib.sha1(pw + digest).digest()
        stream += digest
    key = bytes(a ^ b for a, b in zip(encrypted, stream, strict=False))
    if hashlib.sha1(pw + key).digest() != check:
        raise ConfigError(f"TLS: {path}: the key password is wrong")
    return key


def _parse_pkcs12(data: bytes, password: str | None, path: str) -> Store:
    try:
        from cryptography.hazmat.primitives.serialization import (  # type: ignore[import-not-found, unused-ignore]
            Encoding,
            NoEncryption,
            PrivateFormat,
            pkcs12,
        )
    except ImportError:
        raise ConfigError(f"TLS: {path}: PKCS12 keystores need the 'cryptography' package (pip "
                          "install cryptography), or convert it to PEM: openssl pkcs12 -in "
                          "STORE.p12 -out STORE.pem, then use --tls-trust-cert-path / "
                          "--tls-cert-file / --tls-key-file") from None
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(
            data, password.encode() if password else None)
    except (ValueError, TypeError) as e:
        raise ConfigError(f"TLS: {path}: cannot open the PKCS12 keystore ({e})") from None
    store = Store()
    chain = [c.public_bytes(Encoding.DER) for c in ([cert] if cert else []) + list(extra or [])]
    if key is not None:
        der = key.private_bytes(Encoding.DER, PrivateFormat.PKCS8, NoEncryption())
        store.keys.append((der, chain))
    else:
        store.trusted.extend(chain)
    return store


def load_keystores(cfg: ConnectionConfig) -> tuple[str | None, Any]:
    """The trust store as PEM text (``cadata``) and a loader of the key store into a context."""
    cadata = None
    if cfg.tls_trust_store_path:
        trust = read_store(cfg.tls_trust_store_path, cfg.tls_trust_store_type,
                           cfg.tls_trust_store_password, "trust store")
        certs = trust.trusted + [c for _, chain in trust.keys for c in chain]
        if not certs:
            raise ConfigError(f"TLS: {cfg.tls_trust_store_path}: the trust store holds no "
                              "certificate")
        cadata = "".join(_pem("CERTIFICATE", c) for c in certs)
    chain = None
    if cfg.tls_key_store_path:
        ks = read_store(cfg.tls_key_store_path, cfg.tls_key_store_type,
                        cfg.tls_key_store_password, "key store")
        if not ks.keys:
            raise ConfigError(f"TLS: {cfg.tls_key_store_path}: the key store holds no private key")
        chain = ks.keys[0]
    return cadata, chain


def load_key_into(ctx: Any, entry: tuple[bytes, list[bytes]]) -> None:
    """``ctx.load_cert_chain`` for a (PKCS#8 key, chain) pair, through a private temporary file
    that exists only while it is loaded."""
    key, chain = entry
    with tempfile.TemporaryDirectory(prefix="lbctl-tls-") as d:
        os.chmod(d, 0o700)
        path = os.path.join(d, "client.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, ("".join(_pem("CERTIFICATE", c) for c in chain)
                          + _pem("PRIVATE KEY", key)).encode())
        finally:
            os.close(fd)
        try:
            ctx.load_cert_chain(path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)
