"""The executor's state from anywhere: which apply or drain runs now, how far it got, who holds the
cluster's lock — and a polite request to stop after the action in flight.

The lock file names its holder while an ``flock`` holds it (:mod:`lbctl.apply.lock`); a lock no
process holds is free whatever the file says (the kernel releases it even after ``kill -9``).
Progress comes from the holder's journal: the run's ``apply-start`` lists its steps, and each step
is journaled as it is sent, done and verified. Stopping sends the holder SIGTERM, which the runner
turns into "finish the action in flight, journal, stop" (exit 13, resumable with ``--resume``) —
only on this host, since a process id means nothing elsewhere.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
from pathlib import Path

from msgspec import Struct


class Holder(Struct, frozen=True):
    lock: str  # the cluster, as the lock file names it
    pid: int | None
    user: str | None
    host: str | None
    command: str | None
    since: str | None
    journal: str | None

    @property
    def here(self) -> bool:
        return self.host == socket.gethostname()


def holders(directory: Path | None = None) -> list[Holder]:
    """The locks held now (a lock file nobody holds is skipped)."""
    from lbctl.apply.lock import holder_info, lock_dir

    d = directory or lock_dir()
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith(".lock"))
    except OSError:
        return []
    out = []
    for n in names:
        try:
            fd = os.open(d / n, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                info = holder_info(fd)
            else:
                fcntl.flock(fd, fcntl.LOCK_UN)
                continue  # free
        finally:
            os.close(fd)
        pid = info.get("pid")

        def text(key: str, info: dict[str, object] = info) -> str | None:
            v = info.get(key)
            return v if isinstance(v, str) else None

        out.append(Holder(n[:-5], pid if isinstance(pid, int) else None, text("user"),
                          text("host"), text("command"), text("since"), text("journal")))
    return out


def progress(journal: str | Path) -> str:
    """How far the journal's last run got: ``3 of 8 steps sent, 2 done, 2 verified, 0 failed``."""
    from lbctl.apply.journal import read_records

    try:
        records = read_records(Path(journal))
    except Exception as e:
        return f"journal unreadable: {e}"
    starts = [r for r in records if r.get("state") == "apply-start"]
    if not starts:
        return "no run in the journal yet"
    run = starts[-1].get("run")
    steps = starts[-1].get("steps") or []
    seen: dict[str, set[object]] = {"sending": set(), "done": set(), "verified": set(),
                                    "failed": set()}
    ended = None
    for r in records:
        if r.get("run") != run:
            continue
        if r.get("state") in seen:
            seen[str(r["state"])].add(r.get("step"))
        if r.get("state") == "apply-end":
            ended = r.get("result")
    head = f"run {run}: {len(seen['sending'])} of {len(steps)} step(s) sent, " \
           f"{len(seen['done'])} done, {len(seen['verified'])} verified, " \
           f"{len(seen['failed'])} failed"
    return head + (f"; ended {ended}" if ended else "; running")


def status_lines(directory: Path | None = None) -> list[str]:
    hs = holders(directory)
    if not hs:
        return ["no apply or drain is running (no cluster lock held)"]
    out = []
    for h in hs:
        out.append(f"cluster {h.lock}: {h.command or 'lbctl'} — pid {h.pid} "
                   f"({h.user}@{h.host}), since {h.since}")
        if h.journal:
            out.append(f"  {progress(h.journal)}; journal {h.journal}")
    return out


def stop(directory: Path | None = None) -> list[str]:
    """Ask every running apply/drain on this host to stop after the action in flight."""
    hs = holders(directory)
    if not hs:
        return ["no apply or drain is running: nothing to stop"]
    out = []
    for h in hs:
        if not h.here or h.pid is None:
            out.append(f"cluster {h.lock}: held by pid {h.pid} on {h.host}, not this host: "
                       "stop it there")
            continue
        try:
            os.kill(h.pid, signal.SIGTERM)
        except ProcessLookupError:
            out.append(f"cluster {h.lock}: pid {h.pid} has already ended")
            continue
        except PermissionError:
            out.append(f"cluster {h.lock}: pid {h.pid} belongs to another user ({h.user})")
            continue
        # a drain's or fill's run is resumed by its id, and its last line says which (walk23)
        out.append(f"cluster {h.lock}: asked pid {h.pid} to stop after the action in flight "
                   "(it exits 13; the 'resume with:' line it prints continues it)")
    return out
