"""Reading the journal of changes (written by :mod:`lbctl.executor`): one JSON object per line.

Each line is one step of one request: ``sending`` before it goes out, then ``done`` or
``failed``. ``time`` is RFC 3339 UTC (older journals wrote epoch seconds; both are read). A line
that is not a JSON object is reported with its line number and skipped — a journal is an audit
trail, and one torn line (a crash while appending) must not hide the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lbctl.errors import LbctlError, UsageError


@dataclass(frozen=True)
class JournalEntry:
    time: datetime
    run: str
    state: str
    action: str
    method: str
    url: str
    body: Any
    status: int | None
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"time": iso(self.time), "run": self.run, "state": self.state,
                "action": self.action, "method": self.method, "url": self.url, "body": self.body,
                "status": self.status, "error": self.error}


@dataclass(frozen=True)
class Journal:
    path: str
    entries: tuple[JournalEntry, ...]
    skipped: tuple[str, ...]  # "line N: why"


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def parse_time(value: Any) -> datetime:
    """An RFC 3339 string, or epoch seconds (journals written before times were ISO)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC)
    if isinstance(value, str):
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return t if t.tzinfo else t.replace(tzinfo=UTC)
    raise ValueError(f"not a time: {value!r}")


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``--since``: a duration back from now (``90m``, ``2h``, ``7d``) or a date/time
    (``2026-03-12``, ``2026-03-12T14:00``, UTC unless it says otherwise)."""
    now = now or datetime.now(UTC)
    m = _DURATION.match(text.strip().lower())
    if m:
        return now - timedelta(**{_UNIT[m.group(2)]: float(m.group(1))})
    try:
        return parse_time(text.strip())
    except ValueError:
        raise UsageError(f"--since {text!r}: expected a duration (30m, 2h, 7d) or a date/time "
                         "(2026-03-12 or 2026-03-12T14:00:00Z)") from None


def read_journal(path: Path) -> Journal:
    import orjson

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Journal(str(path), (), ())
    except OSError as e:
        raise LbctlError(f"cannot read the journal {path} ({e.strerror})") from None
    entries: list[JournalEntry] = []
    skipped: list[str] = []
    for n, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            status = obj.get("status")
            entries.append(JournalEntry(
                time=parse_time(obj.get("time")), run=str(obj.get("run", "")),
                state=str(obj.get("state", "")), action=str(obj.get("action", "")),
                method=str(obj.get("method", "")), url=str(obj.get("url", "")),
                body=obj.get("body"), status=status if isinstance(status, int) else None,
                error=obj.get("error") if isinstance(obj.get("error"), str) else None))
        except (orjson.JSONDecodeError, ValueError, TypeError) as e:
            skipped.append(f"line {n}: {str(e).splitlines()[0] if str(e) else 'unreadable'}")
    return Journal(str(path), tuple(entries), tuple(skipped))
