"""Reading the journal of changes (written by :mod:`lbctl.executor`): the one reader.

Each line is one :class:`~lbctl.model.wire.journal.JournalRecord` (one step of one request, or a
line of an ``apply``/``drain`` run), decoded in C against its declaration; ``time`` is read by
the one time parser (:func:`~lbctl.model.wire.journal.record_time`: RFC 3339, or the epoch
seconds of older journals). A line that is not such a record (a crash while appending tears the
last one) is skipped with its line number — a journal is an audit trail, and one torn line must
not hide the rest. ``lbctl journal`` reads it whole (:func:`read_journal`); ``apply --resume``,
``drain`` and the executor's grace-period check read it, or its tail, with :func:`read_records`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from lbctl.errors import ConfigError, UsageError
from lbctl.model.wire.journal import JournalRecord, record_time

__all__ = ["Journal", "JournalEntry", "decode_lines", "iso", "maybe_applied", "parse_since",
           "read_journal", "read_records"]

_DECODER = msgspec.json.Decoder(JournalRecord)
_WHAT = "a journal (JSON lines)"


@dataclass(frozen=True)
class JournalEntry:
    """A journal line as ``lbctl journal`` shows it (its time parsed)."""

    time: datetime
    run: str
    state: str
    action: str
    method: str
    url: str
    body: Any
    status: int | None
    error: str | None
    # what an apply or drain run wrote it for (None on an unload's or split-bundle's lines)
    reason: str | None = None
    bundle: str | None = None
    step: int | None = None
    plan: str | None = None
    outcome: str | None = None
    why: str | None = None
    kind: str | None = None
    result: str | None = None
    destination: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"time": iso(self.time), "run": self.run, "state": self.state,
                "action": self.action, "method": self.method, "url": self.url, "body": self.body,
                "status": self.status, "error": self.error, "reason": self.reason,
                "bundle": self.bundle, "step": self.step, "outcome": self.outcome}

    @classmethod
    def of(cls, rec: JournalRecord) -> JournalEntry:
        def text(v: object) -> str:
            return v if isinstance(v, str) else ""

        return cls(time=record_time(rec.time), run=rec.run, state=rec.state,
                   action=text(rec.action), method=text(rec.method), url=text(rec.url),
                   body=None if rec.body is msgspec.UNSET else rec.body,
                   status=rec.status if isinstance(rec.status, int) else None,
                   error=rec.error if isinstance(rec.error, str) else None,
                   reason=_opt(rec.reason), bundle=_opt(rec.bundle),
                   step=rec.step if isinstance(rec.step, int) else None, plan=_opt(rec.plan),
                   outcome=_opt(rec.outcome), why=_opt(rec.why), kind=_opt(rec.kind),
                   result=_opt(rec.result), destination=_opt(rec.destination))


def _opt(v: object) -> str | None:
    return v if isinstance(v, str) else None


@dataclass(frozen=True)
class Journal:
    path: str
    entries: tuple[JournalEntry, ...]
    skipped: tuple[str, ...]  # "line N: why"


def iso(t: datetime) -> str:
    """``t`` as a line's ``time`` is written (RFC 3339 UTC, milliseconds)."""
    u = t.astimezone(UTC)
    return u.strftime("%Y-%m-%dT%H:%M:%S.") + f"{u.microsecond // 1000:03d}Z"


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``--since``: a duration back from now (``90m``, ``2h``, ``7d``) or a date/time
    (``2026-03-12``, ``2026-03-12T14:00``, UTC unless it says otherwise)."""
    now = now or datetime.now(UTC)
    m = _DURATION.match(text.strip().lower())
    if m:
        try:
            return now - timedelta(**{_UNIT[m.group(2)]: float(m.group(1))})
        except OverflowError:  # past year 1 (datetime's range): a typo, not a journal's age
            raise UsageError(f"--since {text!r}: reaches back before year 1") from None
    try:
        return record_time(text.strip())
    except ValueError:
        raise UsageError(f"--since {text!r}: expected a duration (30m, 2h, 7d) or a date/time "
                         "(2026-03-12 or 2026-03-12T14:00:00Z)") from None


def decode_lines(data: bytes) -> tuple[list[JournalRecord], list[str]]:
    """The records of a journal's bytes, and ``"line N: why"`` for each line that is not one."""
    records: list[JournalRecord] = []
    skipped: list[str] = []
    for n, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = _DECODER.decode(line)
            record_time(rec.time)
            _check_body(rec.body)
            _check_body(rec.previous)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, OverflowError,
                OSError) as e:
            skipped.append(f"line {n}: {str(e).splitlines()[0] if str(e) else 'unreadable'}")
            continue
        except RecursionError:  # msgspec skips an unknown key's value recursively (hostile20)
            skipped.append(f"line {n}: nested too deeply")
            continue
        records.append(rec)
    return records, skipped


def _check_body(body: Any) -> None:
    """A request body (or a setting's ``previous`` value) is any JSON value, decoded as it is:
    an integer past 64 bits (no body
    lbctl sends holds one), or nesting past 255 levels, would decode, then fail the JSON writer
    of it (``journal -o json``: "internal error: Integer exceeds 64-bit range", hostile20). Such
    a line is not lbctl's."""
    if body is None or isinstance(body, str | bool | float | msgspec.UnsetType):
        return
    import orjson  # what the JSON outputs write it with

    try:
        orjson.dumps(body)
    except TypeError as e:  # an integer past 64 bits, nesting past orjson's 255 levels
        raise ValueError(f"body: {e} (not a body lbctl sends)") from None


def maybe_applied(records: Iterable[JournalRecord]) -> list[JournalRecord]:
    """The request lines (``sending``, ``done``) of requests that may have been applied, in
    order. A request the broker refused — the same run's ``failed`` line for it carries an HTTP
    status — was never applied, and its ``sending`` line is dropped: the grace-period guard must
    not refuse to send again what never happened (a failed balancer restore, then ``drain
    --restore``). A ``failed`` line without a status (a timeout, a dropped connection) may follow
    an applied request: that ``sending`` line stays."""
    import orjson

    out: list[JournalRecord | None] = []
    waiting: dict[tuple[str, str, str, bytes], int] = {}  # (run, request) → its sending line
    for r in records:
        if r.state not in ("sending", "done", "failed"):
            continue
        key = (r.run, str(r.method), str(r.url),
               orjson.dumps(None if r.body is msgspec.UNSET else r.body))
        if r.state == "sending":
            waiting[key] = len(out)
            out.append(r)
        elif r.state == "done":
            waiting.pop(key, None)
            out.append(r)
        elif isinstance(r.status, int) and key in waiting:
            out[waiting.pop(key)] = None
    return [r for r in out if r is not None]


def read_records(path: Path | str, *, tail_bytes: int | None = None) -> list[JournalRecord]:
    """Every record of a journal (a torn or foreign line is skipped); with ``tail_bytes``, of its
    last that many bytes only (recent records: the grace period, a resume's history). A journal
    that cannot be read raises :class:`~lbctl.errors.ConfigError`."""
    from lbctl.safe.files import open_regular, read_regular

    if tail_bytes is None:
        data = read_regular(str(path), what=_WHAT, error=ConfigError)
    else:
        fd = open_regular(str(path), what=_WHAT, error=ConfigError)
        try:
            size = os.fstat(fd).st_size
            data = os.pread(fd, tail_bytes, max(0, size - tail_bytes))
        except OSError as e:
            raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
        finally:
            os.close(fd)
    return decode_lines(data)[0]


def read_journal(path: Path) -> Journal:
    """The whole journal as ``lbctl journal`` shows it; a journal that does not exist is empty."""
    if not path.exists():
        return Journal(str(path), (), ())
    from lbctl.safe.files import read_regular

    records, skipped = decode_lines(read_regular(str(path), what=_WHAT, error=ConfigError))
    if skipped and not records:  # not a torn journal: another file (a snapshot, a plan, garbage)
        raise ConfigError(f"{path}: not a journal: none of its {len(skipped)} non-empty line(s) "
                          f"is a journal record ({skipped[0]})")
    return Journal(str(path), tuple(JournalEntry.of(r) for r in records), tuple(skipped))
