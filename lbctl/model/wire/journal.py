"""One line of the journal of changes, declared once: what :mod:`lbctl.executor` writes and what
``lbctl journal``, ``apply --resume``, the grace-period check and ``drain`` read back.

A line is one JSON object. Request lines (``state``: ``sending`` before a request, then
``done``, ``failed`` or ``interrupted``) carry the request as sent — method, URL (credentials
redacted), body — and its outcome; ``apply`` and ``drain`` add what the request was for (plan,
step, bundle, …) and write lines of their own (``apply-start``, ``verified``, ``skipped``,
``paused``, ``apply-end``, ``balancer-paused``, ``balancer-restored``). A field a line does not
have is ``UNSET`` (not written). ``time`` is RFC 3339 UTC with milliseconds; journals written
before that hold epoch seconds, which are read as well (:func:`record_time`, the one parser).
"""


from datetime import UTC, datetime
from typing import Annotated, Any

from msgspec import UNSET, Meta, Struct, UnsetType

__all__ = ["JournalRecord", "format_time", "record_time", "seconds_of"]

Opt = UnsetType
#: a whole number within Java's long (msgspec decodes a JSON integer of any size into ``int``, and
#: one past 64 bits then failed the JSON writer of ``lbctl journal -o json``: hostile20)
Long = Annotated[int, Meta(ge=-(1 << 63), le=(1 << 63) - 1)]


class JournalRecord(Struct, frozen=True, kw_only=True, gc=False):
    """One line of the journal (module docstring); the field order is the written order."""

    time: str | float
    run: str = ""
    state: str = ""
    # --- a request line
    action: str | Opt = UNSET
    method: str | Opt = UNSET
    url: str | Opt = UNSET
    body: Any = UNSET
    status: Long | None | Opt = UNSET
    error: str | None | Opt = UNSET
    balancer: bool | Opt = UNSET  # a request of a balancer pause or restore
    # --- what an apply (or drain) run sends it for, and its own lines
    plan: str | Opt = UNSET
    planDigest: str | Opt = UNSET
    step: Long | Opt = UNSET
    bundle: str | Opt = UNSET
    source: str | Opt = UNSET
    destination: str | None | Opt = UNSET
    kind: str | Opt = UNSET  # apply, drain, rollback, …
    reason: str | Opt = UNSET  # the operator's --reason
    cluster: str | Opt = UNSET
    adminUrl: str | Opt = UNSET
    actions: Long | Opt = UNSET
    steps: list[Long] | Opt = UNSET
    resumes: str | None | Opt = UNSET
    outcome: str | Opt = UNSET
    owner: str | None | Opt = UNSET
    seconds: float | None | Opt = UNSET
    why: str | None | Opt = UNSET
    overloaded: list[str] | Opt = UNSET
    result: str | Opt = UNSET
    rollback: str | None | Opt = UNSET
    outcomes: dict[str, Long] | Opt = UNSET
    sent: list[Long] | Opt = UNSET  # a partial run's end: the steps whose request went out
    notSent: list[Long] | Opt = UNSET  # … and those never sent
    previous: dict[str, Any] | Opt = UNSET  # a setting's dynamic value before a pause, or null


def format_time(epoch_seconds: float) -> str:
    """A line's ``time``: RFC 3339 in UTC with milliseconds (``2026-03-12T14:05:00.123Z``)."""
    t = datetime.fromtimestamp(epoch_seconds, UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def record_time(value: object) -> datetime:
    """A line's ``time`` as an aware ``datetime``: RFC 3339 text (UTC when it names no offset),
    or epoch seconds (journals written before times were text). ``ValueError`` otherwise."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC)
    if isinstance(value, str):
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return t if t.tzinfo else t.replace(tzinfo=UTC)
    raise ValueError(f"not a time: {value!r}")


def seconds_of(value: object) -> float | None:
    """:func:`record_time` as epoch seconds, ``None`` for what is not a time."""
    try:
        return record_time(value).timestamp()
    except (ValueError, OverflowError, OSError):
        return None
