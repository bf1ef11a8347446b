r"""The one way lbctl keeps a credential out of what it prints: messages, traces, notes.

Two things can carry a secret into a line of text:

* **a URL's user info** (``https://user:secret@prometheus``): :func:`url_without_userinfo`
  shows one URL with ``***@`` in its place, and :func:`redact` removes it from every URL inside
  a longer text;
* **a credential the client knows** (a token, a password, an OAuth2 client secret): :func:`redact`
  replaces it with ``***`` however a server may have escaped it when echoing it (inside a JSON
  error body, a query string, a URL): each of its characters may be written as itself, as
  percent-escaped UTF-8 in either hex case (``%2f``, ``%2F``; ``+`` for a blank), as a JSON
  ``\uXXXX`` escape in either case (Go's encoder writes ``<``, ``>``, ``&`` so) or a JSON/``repr``
  backslash escape (``\/``, ``\"``, ``\'``, ``\\``) — any mix of them.

The admin client, the Prometheus client and the CLI's notes all call these two functions, so a
form of a secret handled for one is handled for all.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

__all__ = ["MIN_SECRET", "redact", "split_userinfo", "url_without_userinfo"]

#: shorter strings are not replaced (a 1-3 character "secret" would blank out ordinary words)
MIN_SECRET = 4
_USERINFO = re.compile(r"(https?://)[^/@\s]+@")


def url_without_userinfo(url: str) -> str:
    """``url`` with its user info shown as ``***`` (``http://user:secret@host/p`` →
    ``http://***@host/p``); a string that is not ``scheme://…`` is returned as it is."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    host, tail = rest[:cut], rest[cut:]
    if "@" in host:
        host = "***@" + host.rsplit("@", 1)[1]
    return f"{scheme}{sep}{host}{tail}"


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``https://user:pass@host/…`` → (``https://host/…``, (user, pass)); basic auth in the URL
    (the admin URL and ``--prometheus-url`` alike), taken out so that no HTTP library sends it
    on its own."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, (unquote(parts.username), unquote(parts.password or ""))


def _char(ch: str) -> str:
    """A pattern of one character of a secret in any of the forms the module docstring lists."""
    alts = [re.escape(ch), "".join(f"%(?i:{b:02x})" for b in ch.encode("utf-8", "surrogatepass"))]
    code = ord(ch)
    if code < 0x10000:
        alts.append(f"\\\\u(?i:{code:04x})")
    else:  # a UTF-16 surrogate pair, as JSON writes characters beyond the BMP
        hi, lo = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        alts.append(f"\\\\u(?i:{hi:04x})\\\\u(?i:{lo:04x})")
    if ch in "/\"'\\":
        alts.append(re.escape("\\" + ch))
    if ch == " ":
        alts.append(r"\+")
    return "(?:" + "|".join(alts) + ")"


@functools.lru_cache(maxsize=64)
def _pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for all ``secrets`` (longest first), or None when none is long enough."""
    kept = sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)
    if not kept:
        return None
    return re.compile("|".join("".join(_char(ch) for ch in s) for s in kept))


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without any of ``secrets`` (in any of their escaped forms) and without user info
    in any http(s) URL it contains."""
    pattern = _pattern(tuple(secrets))
    if pattern is not None:
        text = pattern.sub("***", text)
    return _USERINFO.sub(r"\1***@", text)
