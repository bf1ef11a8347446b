"""Errors lbctl reports to its user, each carrying a one-line message.

::

    LbctlError                 exit 1 unless stated
    ├── UsageError             exit 2: a bad flag, an unknown strategy or setting
    ├── ConfigError            a setting value or broker.conf that cannot be read
    └── SnapshotError          a snapshot file that cannot be read or is malformed
        └── SnapshotFormatError   names the file, the JSON path and what was expected

The CLI catches these in one place (``lbctl.cli.app``) and prints ``lbctl: error: <message>``;
nothing else reaches the user as a traceback.
"""

from __future__ import annotations


class LbctlError(Exception):
    """Base of every error lbctl reports; ``str(error)`` is the one-line message."""

    exit_code = 1


class UsageError(LbctlError):
    """The command line asked for something that does not exist (exit code 2)."""

    exit_code = 2


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
