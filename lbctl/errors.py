"""Errors lbctl reports to its user, each carrying a one-line message, and the exit status of each.

::

    LbctlError                 ExitStatus.ERROR unless stated
    ├── UsageError             USAGE: a bad flag, an unknown strategy or setting
    ├── ConfigError            a setting value or broker.conf that cannot be read
    ├── SnapshotError          a snapshot file that cannot be read or is malformed
    │   └── SnapshotFormatError   names the file, the JSON path and what was expected
    ├── PlanError              a plan file that cannot be read or is not plan@1
    ├── MutationRefused        NOT_CONFIRMED: a change was not confirmed (or repeats a recent one)
    │   └── StalePlan          STALE_PLAN: a plan older than --max-age (apply --force-stale)
    ├── Locked                 LOCKED: another apply holds the cluster's lock (names the holder)
    ├── PartialRun             PARTIAL: a run stopped before its plan was carried out
    ├── NotJournaled           a change was applied but the journal could not record it
    ├── Interrupted            INTERRUPTED: Ctrl-C (a change in flight may have been applied)
    └── AdminError (lbctl.admin.errors): a failed admin request, one subclass per status

:class:`ExitStatus` is the one table of exit codes (``lbctl --help``, the README and the docs show
it). The CLI catches these errors in one place (:mod:`lbctl.cli.failures`) and prints
``lbctl: error: <message>``; nothing else reaches the user as a traceback.
"""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """What lbctl's exit code means."""

    SUCCESS = 0
    ERROR = 1
    USAGE = 2
    CONNECTION = 3
    TIMEOUT = 4
    UNAUTHORIZED = 5
    FORBIDDEN = 6
    NOT_FOUND = 7
    CONFLICT = 8
    PRECONDITION_FAILED = 9
    SERVER_ERROR = 10
    HTTP_ERROR = 11
    NOT_CONFIRMED = 12
    PARTIAL = 13
    LOCKED = 14
    STALE_PLAN = 15
    INTERRUPTED = 130

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    ExitStatus.SUCCESS: "success",
    ExitStatus.ERROR: "other error (bad input file, unexpected failure)",
    ExitStatus.USAGE: "usage error (bad flag, unknown setting, bundle or broker)",
    ExitStatus.CONNECTION: "connection refused, unreachable or dropped",
    ExitStatus.TIMEOUT: "timeout (--request-timeout)",
    ExitStatus.UNAUTHORIZED: "HTTP 401 authentication required",
    ExitStatus.FORBIDDEN: "HTTP 403 not authorised",
    ExitStatus.NOT_FOUND: "HTTP 404 not found",
    ExitStatus.CONFLICT: "HTTP 409 conflict",
    ExitStatus.PRECONDITION_FAILED: "HTTP 412 precondition failed",
    ExitStatus.SERVER_ERROR: "HTTP 5xx server error",
    ExitStatus.HTTP_ERROR: "other HTTP error, too many redirects, malformed response",
    ExitStatus.NOT_CONFIRMED: "change not confirmed (no terminal and no --yes, or answered no)",
    ExitStatus.PARTIAL: "a plan carried out in part (the journal says which actions)",
    ExitStatus.LOCKED: "another apply or drain holds the cluster's lock",
    ExitStatus.STALE_PLAN: "plan older than --max-age (--force-stale applies it anyway)",
    ExitStatus.INTERRUPTED: "interrupted",
}

#: exit code → what it means (README and tests read it)
EXIT_CODES: dict[int, str] = {int(s): s.description for s in ExitStatus}


class DoctorStatus(IntEnum):
    """``lbctl doctor``'s exit code when it examined the cluster: its findings' worst severity.

    The codes 1 and 2 are :attr:`ExitStatus.ERROR` and :attr:`ExitStatus.USAGE` of a command that
    failed; doctor reuses them, as linters do, so that ``0`` alone means "nothing to fix" and a CI
    step can gate on any non-zero code. A doctor run that could not examine the cluster exits with
    an :class:`ExitStatus` code and prints ``lbctl: error: …`` on stderr and no report on stdout;
    one that examined it prints the report (``-o json``: ``status`` says which code it chose).
    Codes 3 and above only ever mean a failure."""

    HEALTHY = 0
    WARNINGS = 1
    ERRORS = 2

    @property
    def description(self) -> str:
        return _DOCTOR_DESCRIPTIONS[self]


_DOCTOR_DESCRIPTIONS = {
    DoctorStatus.HEALTHY: "no finding, or findings of severity info only",
    DoctorStatus.WARNINGS: "at least one warning, no error",
    DoctorStatus.ERRORS: "at least one error",
}


class LbctlError(Exception):
    """Base of every error lbctl reports; ``str(error)`` is the one-line message."""

    exit_code: int = ExitStatus.ERROR


class UsageError(LbctlError):
    """The command line asked for something that does not exist."""

    exit_code = ExitStatus.USAGE


class ConfigError(LbctlError):
    """A setting value or a configuration file that cannot be used."""


class SnapshotError(LbctlError):
    """A snapshot file that cannot be opened or decoded."""


class SnapshotFormatError(SnapshotError):
    """A snapshot that decodes but breaks the snapshot v1 contract."""

    def __init__(self, file: str, path: str, expected: str):
        self.file = file
        self.path = path
        self.expected = expected
        where = f" at {path}" if path else ""
        super().__init__(f"{file}{where}: {expected}")


class PlanError(LbctlError):
    """A plan file (``lbctl apply PLAN``) that cannot be read or breaks the plan@1 contract."""


class Interrupted(LbctlError):
    """Ctrl-C (SIGINT) stopped a command; for a mutation in flight the message says it may have
    been applied."""

    exit_code = ExitStatus.INTERRUPTED


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a service manager's stop) during a command that does not handle it
    itself, raised where Ctrl-C's ``KeyboardInterrupt`` would be (:mod:`lbctl.cli.root`): the
    same clean-ups run (a temporary file removed, a request in flight journaled as interrupted)
    and the command ends with one line, ``INTERRUPTED``, where the default action killed it
    silently mid-write. A ``KeyboardInterrupt`` so that every ``except KeyboardInterrupt`` that
    ends a command cleanly ends it the same way."""


class NotJournaled(LbctlError):
    """A change was applied but its outcome could not be written to the journal."""


class MutationRefused(LbctlError):
    """A change to the cluster was not confirmed (answered no, or no terminal without ``--yes``)."""

    exit_code = ExitStatus.NOT_CONFIRMED


class StalePlan(MutationRefused):
    """A plan computed longer ago than ``--max-age``: the cluster has moved on since."""

    exit_code = ExitStatus.STALE_PLAN


class Locked(LbctlError):
    """Another ``apply`` (or ``drain``) against the same cluster holds its lock."""

    exit_code = ExitStatus.LOCKED


class PartialRun(LbctlError):
    """A run of a plan stopped before every action was carried out and verified (a signal, a
    broker gone, a failed request, an action not reassigned); the message says where it stopped
    and how to resume."""

    exit_code = ExitStatus.PARTIAL
