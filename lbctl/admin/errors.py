"""Errors of the admin REST API and the one table that maps them to exit codes.

Every failure of a request ends as one :class:`AdminError` subclass whose message is one line:
``<METHOD> <url>: <status> <reason>`` where ``reason`` is the broker's ``{"reason": …}`` body
(``org.apache.pulsar.common.policies.data.ErrorData``, what ``RestException`` writes), else the
first line of a non-JSON body (the servlet container's 401 page), else the HTTP reason phrase.

Exit codes (:data:`EXIT_CODES` is the single source; a test keeps the README's table equal to it)::

    0    success
    1    any other error (a bad snapshot, an unexpected response)
    2    usage error (bad flag, unknown setting, unknown bundle or broker)
    3    connection refused / host unreachable / connection dropped
    4    timeout (no answer within --request-timeout)
    5    401 authentication required or rejected
    6    403 not authorised
    7    404 not found
    8    409 conflict
    9    412 precondition failed
    10   5xx server error
    11   another HTTP error (other 4xx, too many redirects, malformed response)
    12   a mutation was refused (not confirmed, or no terminal and no --yes)
    130  interrupted

Messages never carry credentials: the client redacts every secret its auth knows and the user
info of URLs before an error is built (see :meth:`lbctl.admin.client.AdminClient.redact`).
"""

from __future__ import annotations

from lbctl.errors import LbctlError


class AdminError(LbctlError):
    """A request to the admin REST API failed; ``str()`` is the one-line message."""

    exit_code = 11
    status: int | None = None

    def __init__(self, message: str, *, status: int | None = None, sent: bool = True):
        super().__init__(message)
        if status is not None:
            self.status = status
        #: False only when the request certainly never reached a server (connection refused)
        self.sent = sent


class ConnectionFailed(AdminError):
    """Connection refused, unreachable host, TLS handshake failure or a dropped connection."""

    exit_code = 3


class RequestTimeout(AdminError):
    """No complete answer within ``--request-timeout``."""

    exit_code = 4


class Unauthorized(AdminError):
    """401: missing or rejected credentials."""

    exit_code = 5


class Forbidden(AdminError):
    """403: authenticated but not allowed (most admin calls need super-user)."""

    exit_code = 6


class NotFound(AdminError):
    """404: tenant, namespace, bundle, cluster or broker not found."""

    exit_code = 7


class Conflict(AdminError):
    """409: concurrent modification or an operation the load manager does not support."""

    exit_code = 8


class PreconditionFailed(AdminError):
    """412: invalid names, unsupported split algorithm, no owner for the bundle, …"""

    exit_code = 9


class ServerError(AdminError):
    """5xx: the broker failed (also the extensible load manager's load-report)."""

    exit_code = 10


class HttpError(AdminError):
    """Any other unexpected status, too many redirects, or a body that is not what was expected."""

    exit_code = 11


class MutationRefused(LbctlError):
    """A change to the cluster was not confirmed (answered no, or no terminal without ``--yes``)."""

    exit_code = 12


_BY_STATUS: dict[int, type[AdminError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: PreconditionFailed,
}

#: exit code → what it means; the one table (README and tests read it)
EXIT_CODES: dict[int, str] = {
    0: "success",
    1: "other error (bad input file, unexpected failure)",
    2: "usage error (bad flag, unknown setting, bundle or broker)",
    ConnectionFailed.exit_code: "connection refused, unreachable or dropped",
    RequestTimeout.exit_code: "timeout (--request-timeout)",
    Unauthorized.exit_code: "HTTP 401 authentication required",
    Forbidden.exit_code: "HTTP 403 not authorised",
    NotFound.exit_code: "HTTP 404 not found",
    Conflict.exit_code: "HTTP 409 conflict",
    PreconditionFailed.exit_code: "HTTP 412 precondition failed",
    ServerError.exit_code: "HTTP 5xx server error",
    HttpError.exit_code: "other HTTP error, too many redirects, malformed response",
    MutationRefused.exit_code: "change not confirmed (no terminal and no --yes, or answered no)",
    130: "interrupted",
}


def error_class(status: int) -> type[AdminError]:
    """The error class of an HTTP status (the mapping; exit codes follow from the class)."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if 500 <= status <= 599:
        return ServerError
    return HttpError


def reason_of(body: bytes, content_type: str = "") -> str:
    """Pulsar's ``{"reason": …}``, else the first meaningful line of the body (HTML stripped)."""
    import re

    text = body[:4096].decode("utf-8", "replace").strip()
    if not text:
        return ""
    if text.startswith("{"):
        import json

        try:
            obj = json.loads(body)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            for key in ("reason", "message", "error"):
                if isinstance(obj.get(key), str):
                    return _one_line(obj[key])
    if "html" in content_type or text.lstrip().startswith("<"):
        title = re.search(r"<title>(.*?)</title>", text, re.S | re.I)
        if title:
            return _one_line(title.group(1))
        text = re.sub(r"<[^>]+>", " ", text)
    return _one_line(text)[:200]


def _one_line(text: str) -> str:
    return " ".join(text.split())
