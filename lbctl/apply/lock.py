"""One apply (or drain) per cluster at a time: a lock file that names its holder.

The lock is an exclusive ``flock`` on ``<state dir>/locks/<cluster>.lock`` (``$LBCTL_LOCK_DIR``,
else a ``locks`` directory beside the default journal). ``flock`` is released by the kernel when
the holder exits — even by ``kill -9`` — so a lock never goes stale; while it is held, the file
says who holds it (process id, user, host, command, since when, journal), and a second apply is
refused with that line (:class:`~lbctl.errors.Locked`, exit 14). The holder line never carries the
command line's arguments (they may hold a credential).

It guards the machine (and state directory) lbctl runs on: two operators applying from two hosts
are not seen by each other — Pulsar has no cluster-wide lock an admin client could take.
"""

from __future__ import annotations

import contextlib
import fcntl
import getpass
import json
import os
import re
import socket
import time
from pathlib import Path
from types import TracebackType

from lbctl.errors import ConfigError, Locked


def lock_dir() -> Path:
    env = os.environ.get("LBCTL_LOCK_DIR")
    if env:
        return Path(env).expanduser()
    from lbctl.executor import default_journal

    return default_journal().parent / "locks"


def lock_path(cluster: str, directory: Path | None = None) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", cluster)[:100] or "cluster"
    return (directory or lock_dir()) / f"{safe}.lock"


class ClusterLock:
    """``with ClusterLock(cluster, what=..., journal=...):`` — or :class:`~lbctl.errors.Locked`."""

    def __init__(self, cluster: str, *, what: str, journal: Path | str | None = None,
                 directory: Path | None = None):
        self.cluster = cluster
        self.path = lock_path(cluster, directory)
        self.what = what
        self.journal = str(journal) if journal else None
        self._fd: int | None = None

    def __enter__(self) -> ClusterLock:
        from lbctl.safe.files import open_private, private_dir

        try:
            private_dir(str(self.path.parent))
        except OSError as e:
            raise ConfigError(f"cannot create the lock file {self.path}: "
                              f"{e.strerror or e}") from None
        # never through a link: truncating the holder line must not truncate another file
        fd, _ = open_private(str(self.path), what="a lock file",
                             error=lambda m: ConfigError(f"cannot open the lock file: {m}"))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise Locked(f"another lbctl run holds the lock of cluster {self.cluster}: "
                         f"{holder} (lock file {self.path}); wait for it to finish or stop it"
                         ) from None
        except OSError as e:
            os.close(fd)
            raise ConfigError(f"cannot lock {self.path}: {e.strerror or e}") from None
        info = {"pid": os.getpid(), "user": _user(), "host": socket.gethostname(),
                "command": self.what, "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "journal": self.journal}
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def holder_info(fd: int) -> dict[str, object]:
    """What the lock file open on ``fd`` says of its holder (empty when unreadable)."""
    try:
        raw = os.pread(fd, 4096, 0)
        info = json.loads(raw.decode("utf-8", "replace") or "{}")
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _holder(fd: int) -> str:
    """``pid 123 (alice@host, lbctl apply plan.json, since 2026-…; journal …)``."""
    from lbctl.safe.text import shorten

    info = holder_info(fd)
    if "pid" not in info:
        return "a process that has not written its name yet"
    text = (f"pid {info.get('pid')} ({info.get('user')}@{info.get('host')}, "
            f"{info.get('command')}, since {info.get('since')}")
    if info.get("journal"):
        text += f"; journal {info['journal']}"
    return shorten(text + ")", 400)
