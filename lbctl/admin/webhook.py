"""Posting a notification to a webhook: the one place lbctl sends JSON to a URL the operator gave.

Kept with the admin client's HTTP stack (httpx lives only in :mod:`lbctl.admin`): a POST with a
short overall timeout, no redirect followed (a webhook that redirects is misconfigured, and a
redirect must never carry the body elsewhere), TLS verified with the system's CA store, the
answer's body never read beyond 64 KiB, and the URL's user info and query (where tokens of Slack
and similar hooks live) never printed in an error.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from lbctl.admin.errors import AdminError

_MAX_ANSWER = 64 * 1024


def shown(url: str) -> str:
    """The URL as an error may print it: scheme, host and port, path's first segment only."""
    u = urlsplit(url)
    host = u.hostname or "?"
    port = f":{u.port}" if u.port else ""
    first = u.path.strip("/").split("/", 1)[0]
    return f"{u.scheme}://{host}{port}/{first + '/…' if first else ''}"


def check_webhook_url(url: str) -> None:
    """``--webhook URL`` must be ``http(s)://host[:port][/path][?query]``: checked when the watcher
    starts, before it binds its port or writes a file, so that a typo is a usage error at once and
    not a failed post (or a ``ValueError`` from the URL parser) at the first anomaly."""
    from lbctl.admin.clientconf import valid_host
    from lbctl.errors import UsageError

    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--webhook must start with http:// or https://, got {url[:40]!r}")
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in url) or not url.isprintable():
        raise UsageError("--webhook URL holds blanks or control characters")
    try:
        u = urlsplit(url)
        port = u.port
    except ValueError as e:
        raise UsageError(f"bad --webhook URL: {e}") from None
    if not valid_host(u.hostname or "") or port == 0:
        raise UsageError(f"bad --webhook URL {shown(url)!r}: expected a host name or address "
                         "and a port from 1 to 65535")


def post_json(url: str, body: Any, *, timeout: float = 5.0) -> None:
    """POST ``body`` as JSON; raise :class:`AdminError` (one line, no secret) unless 2xx."""
    import httpx

    u = urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise AdminError(f"webhook {shown(url)}: not an http(s) URL", sent=False)
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False,
                          trust_env=False) as client, \
                client.stream("POST", url, json=body,
                              headers={"User-Agent": "lbctl-watch"}) as r:
            read = 0
            for chunk in r.iter_bytes():
                read += len(chunk)
                if read > _MAX_ANSWER:
                    break
            if not 200 <= r.status_code < 300:
                raise AdminError(f"webhook {shown(url)}: HTTP {r.status_code}",
                                 status=r.status_code)
    except httpx.HTTPError as e:
        raise AdminError(f"webhook {shown(url)}: {type(e).__name__}", sent=False) from None
