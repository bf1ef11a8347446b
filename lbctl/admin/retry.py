"""The one retry policy of lbctl's HTTP clients (the admin REST client and the Prometheus client).

A policy says how many times a failed request is asked again, how long to wait before each
attempt, and which failures are worth another attempt; each client keeps only its loop (an
asyncio one for the admin client's fan-out, a plain one for Prometheus' sequential reads).
What holds for every policy, because it holds for every request lbctl makes:

* **Mutations are never retried** — a PUT that failed may still have reached the broker; it is
  reported instead (``pulsar-admin`` does not retry them either).
* **A slow answer is not retried**: a timeout after the request was sent would only multiply the
  wait. A connection that could not be made, or was dropped, is.
* **Backoff** doubles per attempt; a ``Retry-After`` the server sent with a status the policy
  names is waited for instead when longer, up to a cap (a server cannot park lbctl for minutes).

Each client's policy (what its docstring documents):

* admin: GETs on connection errors, dropped connections, 429 and 5xx; 0.2 s, 0.4 s;
  ``Retry-After`` of a 429 honoured up to 5 s (:data:`ADMIN`);
* Prometheus: connection failures, 429 and 502/503/504; 0.5 s, 1 s (:data:`PROMETHEUS`). Halving a
  range query Prometheus finds too large (422) is that client's own logic, not a retry.
"""

from __future__ import annotations

import contextlib

import msgspec

from lbctl.admin.errors import AdminError, ConnectionFailed, RequestTimeout


class RetryPolicy(msgspec.Struct, frozen=True):
    """How a failed read is asked again (module docstring)."""

    #: attempts after the first one
    retries: int = 2
    #: seconds before the first retry, doubled for each one after
    backoff: float = 0.2
    #: statuses worth another attempt (connection failures always are)
    statuses: frozenset[int] = frozenset({429, *range(500, 600)})
    #: statuses whose ``Retry-After`` is honoured, and the longest wait it may ask for (seconds)
    retry_after_statuses: frozenset[int] = frozenset({429})
    retry_after_cap: float = 5.0

    def retryable(self, error: AdminError) -> bool:
        """Whether ``error`` (of a read) is worth another attempt."""
        if isinstance(error, RequestTimeout):
            return not error.sent  # a connect timeout; a slow answer is not retried
        if isinstance(error, ConnectionFailed):
            return True
        return error.status is not None and error.status in self.statuses

    def delay(self, attempt: int, error: AdminError) -> float:
        """Seconds to wait before retry number ``attempt`` (1, 2, …) after ``error``."""
        wait = self.backoff * 2 ** (attempt - 1)
        if error.retry_after is not None and error.status in self.retry_after_statuses:
            wait = max(wait, min(error.retry_after, self.retry_after_cap))
        return float(wait)

    def next_delay(self, attempt: int, error: AdminError, *, mutation: bool = False) -> float:
        """The wait before retry ``attempt`` after ``error``; ``error`` itself is raised when it
        is not retried (a mutation, attempts used up, or a failure not worth another)."""
        if mutation or attempt > self.retries or not self.retryable(error):
            raise error
        return self.delay(attempt, error)


#: the admin REST client's (lbctl.admin.client)
ADMIN = RetryPolicy()
#: the Prometheus client's (lbctl.admin.prometheus)
PROMETHEUS = RetryPolicy(backoff=0.5, statuses=frozenset({429, 502, 503, 504}))


def retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header given as a number of seconds (an HTTP date, or
    nothing usable, is None)."""
    with contextlib.suppress(ValueError):
        seconds = float(value or "")
        if seconds >= 0:
            return seconds
    return None
