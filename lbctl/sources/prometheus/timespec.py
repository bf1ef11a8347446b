"""Time ranges as the flags give them: Prometheus' durations and RFC 3339 instants, in epoch ms."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from lbctl.errors import UsageError

#: the longest duration accepted (100 years): longer ones reach before 1970 or overflow
MAX_DURATION_MS = 100 * 31_536_000_000
#: the latest time accepted (9999-12-31T23:59:59.999Z)
MAX_TIME_MS = 253_402_300_799_999

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000,
            "w": 604_800_000, "y": 31_536_000_000}


def parse_duration(text: str, what: str = "duration") -> int:
    """Prometheus' durations (``90s``, ``1m``, ``1h30m``, ``7d``; a bare number is seconds) → ms."""
    s = text.strip()
    shown = text[:60]
    if re.fullmatch(r"\d+(?:\.\d+)?", s):
        total = float(s) * 1000
    else:
        pos, total = 0, 0.0
        for m in _DURATION.finditer(s):
            if m.start() != pos:
                break
            total += float(m.group(1)) * _UNIT_MS[m.group(2)]
            pos = m.end()
        if pos != len(s) or not s:
            raise UsageError(f"bad {what} {shown!r}: expected e.g. 30s, 1m, 2h, 7d")
    if not math.isfinite(total) or total > MAX_DURATION_MS:  # checked before it becomes an int
        raise UsageError(f"bad {what} {shown!r}: at most 100 years")
    ms = round(total)
    if ms <= 0:
        raise UsageError(f"bad {what} {shown!r}: must be more than zero")
    return ms


def parse_time(text: str, what: str = "time") -> int:
    """RFC 3339 (``2026-03-01T10:00:00Z``, an offset required) or Unix seconds → epoch ms."""
    s = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", s):
        seconds = float(s)
        if not seconds * 1000 <= MAX_TIME_MS:  # inf and huge alike
            raise UsageError(f"bad {what} {text[:60]!r}: after the year 9999")
        return round(seconds * 1000)
    try:
        dt = datetime.fromisoformat(s.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        dt = None
    if dt is None or dt.tzinfo is None:
        raise UsageError(f"bad {what} {text[:60]!r}: expected RFC 3339 with an offset "
                         "(2026-03-01T10:00:00Z) or Unix seconds")
    return round(dt.astimezone(UTC).timestamp() * 1000)
