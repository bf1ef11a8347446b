"""Anomalies: conditions seen in the captures, raised after their grace, resolved when gone.

Cruise Control's anomaly detector, in Pulsar's terms: a *condition* is what one capture shows (a
broker missing, a broker out of the band, a bundle moved back and forth...); it becomes an
*anomaly* — with an id, a severity, first and last seen — once it has lasted its kind's grace
period (a routine broker bounce or one noisy report raises nothing), and the anomaly is *resolved*
at the first capture that no longer shows it. Each anomaly is raised once and resolved once: the
tracker's state is saved with the history (``anomalies.json``, replaced atomically after every
capture), so a watcher killed and restarted neither forgets an open anomaly nor raises it again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec
from msgspec import Struct

from lbctl.errors import UsageError
from lbctl.records import replace
from lbctl.safe.files import atomic_write

SEVERITIES = ("info", "warning", "critical")
#: every kind :mod:`lbctl.watch.detect` and the watcher raise (``doctor:<rule>`` besides): what
#: ``--grace KIND=…`` may name
KINDS = ("broker-down", "report-stale", "out-of-band", "ping-pong", "unload-storm",
         "split-blocked", "balancer-paused", "leader-changed", "idle-broker", "leader-divergence",
         "unexpected-unload", "manual-unload", "unjudged-unload")
#: the anomalies' saved state, in the watcher's history directory
ANOMALY_FILE = "anomalies.json"
#: resolved anomalies kept for the status page and ``--status``
KEEP_RESOLVED = 50


class Condition(Struct, frozen=True):
    """What one capture shows: ``kind`` (e.g. ``broker-down``), what it is about, how bad, and the
    sentence an operator reads (with the lbctl command that helps, where there is one)."""

    kind: str
    subject: str
    severity: str
    message: str

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.subject}"


class Anomaly(Struct, frozen=True):
    """A condition that lasted its grace period (``raised_at`` set) or is still within it."""

    id: str
    kind: str
    subject: str
    severity: str
    message: str
    first_seen: int  # epoch ms, cluster time
    last_seen: int
    raised_at: int | None = None
    resolved_at: int | None = None


class Event(Struct, frozen=True):
    """``raised`` or ``resolved``: what the notifications send."""

    event: str
    anomaly: Anomaly


#: epoch milliseconds of 10000-01-01: no capture's time is later (Python's dates end there)
_YEAR_10000_MS = 253_402_300_800_000


class _Saved(Struct):
    open: list[Anomaly] = []
    resolved: list[Anomaly] = []


class Tracker:
    """Open anomalies (pending within their grace, or raised) and the recently resolved ones.

    ``grace_ms`` maps a kind to how long its condition must last before it is raised (0 when the
    kind is absent: raised at once)."""

    def __init__(self, grace_ms: Mapping[str, int] | None = None):
        self.grace_ms = dict(grace_ms or {})
        self.open: dict[str, Anomaly] = {}
        self.resolved: list[Anomaly] = []

    def update(self, conditions: Iterable[Condition], now: int) -> list[Event]:
        """Fold one capture's conditions in; the events it causes, in a stable order."""
        events: list[Event] = []
        seen: set[str] = set()
        for c in sorted(conditions, key=lambda c: c.id):
            if c.id in seen:
                continue
            seen.add(c.id)
            a = self.open.get(c.id)
            if a is None:
                a = Anomaly(c.id, c.kind, c.subject, c.severity, c.message, now, now)
            else:
                a = replace(a, last_seen=now, message=c.message, severity=c.severity)
            if a.raised_at is None and now - a.first_seen >= self.grace_ms.get(c.kind, 0):
                a = replace(a, raised_at=now)
                events.append(Event("raised", a))
            self.open[c.id] = a
        for key in sorted(set(self.open) - seen):
            a = self.open.pop(key)
            if a.raised_at is None:
                continue  # gone within its grace: never raised, nothing to resolve
            a = replace(a, resolved_at=now)
            self.resolved = [a, *self.resolved][:KEEP_RESOLVED]
            events.append(Event("resolved", a))
        return events

    def active(self) -> list[Anomaly]:
        """The raised, unresolved anomalies, most severe first."""
        raised = [a for a in self.open.values() if a.raised_at is not None]
        return sorted(raised, key=lambda a: (-SEVERITIES.index(a.severity), a.id))

    # --- persistence --------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        data = msgspec.json.encode(_Saved(list(self.open.values()), self.resolved))
        atomic_write(str(path), data + b"\n", error=UsageError)

    def load(self, path: Path) -> None:
        """Restore what a previous watcher saved (nothing when the file is missing)."""
        from lbctl.safe.files import read_if_present

        raw = read_if_present(path, what="the watcher's anomaly state (JSON)", error=UsageError)
        if raw is None:
            return
        try:
            saved = msgspec.json.decode(raw, type=_Saved)
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError) as e:
            raise UsageError(f"{path}: not the watcher's anomaly state ({e}); move it away to "
                             "start afresh") from None
        for a in (*saved.open, *saved.resolved):
            times = (a.first_seen, a.last_seen, a.raised_at, a.resolved_at)
            if any(t is not None and not 0 <= t < _YEAR_10000_MS for t in times):
                # a time no clock gives: printed as a date it was 'internal error: ValueError:
                # year 292278994 is out of range' (watch --status; hostile21's sweep)
                raise UsageError(f"{path}: not the watcher's anomaly state (anomaly {a.id[:80]!r}: "
                                 "a time outside years 1970-9999); move it away to start afresh")
        self.open = {a.id: a for a in saved.open}
        self.resolved = saved.resolved[:KEEP_RESOLVED]
