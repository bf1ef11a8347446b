"""The one retry policy (lbctl/admin/retry.py) and each client's use of it."""

from __future__ import annotations

import pytest

from lbctl.admin.errors import (
    AdminError,
    ConnectionFailed,
    HttpError,
    NotFound,
    RequestTimeout,
    ServerError,
)
from lbctl.admin.retry import ADMIN, PROMETHEUS, RetryPolicy, retry_after


def _status(status: int, after: float | None = None) -> AdminError:
    e: AdminError = (ServerError if status >= 500 else HttpError)(f"GET /x: {status}", status=status)
    e.retry_after = after
    return e


def test_connection_failures_are_retried_and_slow_answers_are_not() -> None:
    for policy in (ADMIN, PROMETHEUS):
        assert policy.retryable(ConnectionFailed("refused", sent=False))
        assert policy.retryable(ConnectionFailed("dropped"))  # a read: sent again
        assert policy.retryable(RequestTimeout("connect timed out", sent=False))
        assert not policy.retryable(RequestTimeout("no answer within 30 s"))


@pytest.mark.parametrize(("status", "admin", "prometheus"), [
    (429, True, True), (500, True, False), (502, True, True), (503, True, True), (504, True, True),
    (599, True, False), (404, False, False), (422, False, False), (400, False, False)])
def test_each_client_names_its_retryable_statuses(status: int, admin: bool, prometheus: bool) -> None:
    assert ADMIN.retryable(_status(status)) is admin
    assert PROMETHEUS.retryable(_status(status)) is prometheus


def test_backoff_doubles_and_retry_after_is_honoured_up_to_the_cap() -> None:
    assert [ADMIN.delay(n, _status(503)) for n in (1, 2, 3)] == [0.2, 0.4, 0.8]
    assert [PROMETHEUS.delay(n, _status(503)) for n in (1, 2)] == [0.5, 1.0]
    assert ADMIN.delay(1, _status(429, after=3)) == 3.0
    assert ADMIN.delay(1, _status(429, after=60)) == 5.0  # capped
    assert ADMIN.delay(2, _status(429, after=0.1)) == 0.4  # never shorter than the backoff
    assert ADMIN.delay(1, _status(503, after=3)) == 0.2  # the admin client's 503: backoff only


def test_next_delay_raises_what_is_not_retried() -> None:
    err = _status(503)
    assert ADMIN.next_delay(1, err) == 0.2
    assert ADMIN.next_delay(2, err) == 0.4
    with pytest.raises(ServerError):
        ADMIN.next_delay(3, err)  # retries used up
    with pytest.raises(ServerError):
        ADMIN.next_delay(1, err, mutation=True)  # a mutation is never retried
    with pytest.raises(NotFound):
        ADMIN.next_delay(1, NotFound("GET /x: 404", status=404))
    with pytest.raises(ConnectionFailed):
        RetryPolicy(retries=0).next_delay(1, ConnectionFailed("refused", sent=False))


@pytest.mark.parametrize(("header", "seconds"), [
    ("3", 3.0), ("0.5", 0.5), ("0", 0.0), (None, None), ("", None), ("-1", None), ("nan", None),
    ("Wed, 21 Oct 2015 07:28:00 GMT", None)])
def test_retry_after_reads_seconds_only(header: str | None, seconds: float | None) -> None:
    assert retry_after(header) == seconds
