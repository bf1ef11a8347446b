"""The one way lbctl keeps a credential out of what it prints: messages, traces, notes.

Two things can carry a secret into a line of text:

* **a URL's user info** (``https://user:secret@prometheus``): :func:`url_without_userinfo`
  shows one URL with ``***@`` in its place, and :func:`redact` removes it from every URL inside
  a longer text;
* **a credential the client knows** (a token, a password, an OAuth2 client secret): :func:`redact`
  replaces it, and its JSON-, ``repr``- and URL-escaped forms (a server may echo it in any of
  them, e.g. inside a JSON error body or a query string), with ``***``.

The admin client, the Prometheus client and the CLI's notes all call these two functions, so a
form of a secret handled for one is handled for all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

__all__ = ["MIN_SECRET", "redact", "url_without_userinfo"]

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


def _forms(secret: str) -> set[str]:
    """A secret as it may appear in text: as is, JSON-escaped, ``repr``-escaped, URL-encoded."""
    return {secret, json.dumps(secret)[1:-1], repr(secret)[1:-1], quote(secret, safe=""),
            quote_plus(secret)}


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without any of ``secrets`` (in any of their escaped forms, longest first) and
    without user info in any http(s) URL it contains."""
    forms: set[str] = set()
    for s in secrets:
        if s:
            forms |= _forms(s)
    for f in sorted(forms, key=len, reverse=True):
        if len(f) >= MIN_SECRET:
            text = text.replace(f, "***")
    return _USERINFO.sub(r"\1***@", text)
