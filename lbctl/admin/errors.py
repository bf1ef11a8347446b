"""Errors of the admin REST API and the one table that maps them to exit codes.

Every failure of a request ends as one :class:`AdminError` subclass whose message is one line:
``<METHOD> <url>: <status> <reason>`` where ``reason`` is the broker's ``{"reason": …}`` body
(``org.apache.pulsar.common.policies.data.ErrorData``, what ``RestException`` writes), else the
first line of a non-JSON body (the servlet container's 401 page), else the HTTP reason phrase.

Each class carries its :class:`~lbctl.errors.ExitStatus`.

Messages never carry credentials: the client redacts every secret its auth knows and the user
info of URLs before an error is built (see :meth:`lbctl.admin.client.AdminClient.redact`).
"""

from __future__ import annotations

from lbctl.errors import ExitStatus, LbctlError


class AdminError(LbctlError):
    """A request to the admin REST API failed; ``str()`` is the one-line message."""

    exit_code = ExitStatus.HTTP_ERROR
    status: int | None = None
    retry_after: float | None = None  # seconds, from a 429/503 Retry-After header

    def __init__(self, message: str, *, status: int | None = None, sent: bool = True):
        super().__init__(message)
        if status is not None:
            self.status = status
        #: False only when the request certainly never reached a server (connection refused)
        self.sent = sent


class ConnectionFailed(AdminError):
    """Connection refused, unreachable host, TLS handshake failure or a dropped connection."""

    exit_code = ExitStatus.CONNECTION


class RequestTimeout(AdminError):
    """No complete answer within ``--request-timeout``."""

    exit_code = ExitStatus.TIMEOUT


class Unauthorized(AdminError):
    """401: missing or rejected credentials."""

    exit_code = ExitStatus.UNAUTHORIZED


class Forbidden(AdminError):
    """403: authenticated but not allowed (most admin calls need super-user)."""

    exit_code = ExitStatus.FORBIDDEN


class NotFound(AdminError):
    """404: tenant, namespace, bundle, cluster or broker not found."""

    exit_code = ExitStatus.NOT_FOUND


class Conflict(AdminError):
    """409: concurrent modification or an operation the load manager does not support."""

    exit_code = ExitStatus.CONFLICT


class PreconditionFailed(AdminError):
    """412: invalid names, unsupported split algorithm, no owner for the bundle, …"""

    exit_code = ExitStatus.PRECONDITION_FAILED


class ServerError(AdminError):
    """5xx: the broker failed (also the extensible load manager's load-report)."""

    exit_code = ExitStatus.SERVER_ERROR


class HttpError(AdminError):
    """Any other unexpected status, too many redirects, or a body that is not what was expected."""

    exit_code = ExitStatus.HTTP_ERROR


_BY_STATUS: dict[int, type[AdminError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: PreconditionFailed,
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

    text = body.decode("utf-8", "replace").strip()  # whole: redaction runs before any cut
    if not text:
        return ""
    if text.startswith("{"):
        import json

        try:
            obj = json.loads(body) if len(body) <= 1 << 20 else None
        except (ValueError, RecursionError):
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
    return _one_line(text)  # shortened by the caller, after redaction


def _one_line(text: str) -> str:
    return " ".join(text.split())
