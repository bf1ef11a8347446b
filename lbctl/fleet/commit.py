"""The four tables are committed as one unit: staged, then published; a crash is recovered.

An ingest writes its rows for all four tables under ``OUT/_staging/<run>/<table>/…`` (Spark's
directories, invisible to readers of ``OUT/<table>``: names starting with ``_`` are not data).
Only when every table is written does it *publish*:

1. the plan — every Parquet file to move, and the files to record in the manifest — is written
   to ``OUT/_staging/<run>/_PUBLISH.json`` (atomically, fsync'ed): from here on the run counts;
2. each file is renamed into ``OUT/<table>/cluster=…/date=…/`` (same file system, unique names);
3. the manifest records the input files; the staging directory is removed.

Every ingest, report and whatif first recovers: a staging directory with a plan is published to
the end (the renames and the manifest update are idempotent), one without a plan is deleted, so
after ``kill -9`` at any point the tables hold either all of a run's rows or none of them, and
the next ingest re-reads whatever was not recorded. Which snapshots are already stored is decided
from the published ``snapshots`` table only, so nothing staged but unpublished can hide a row.

A lock file (``OUT/_lbctl_fleet.lock``, ``flock``) keeps two ingests apart and keeps reports off a
directory an ingest is writing; the kernel releases it when a process dies.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import orjson

from lbctl.errors import LbctlError, UsageError
from lbctl.fleet.files import read_manifest, write_manifest

STAGING = "_staging"
LOCK = "_lbctl_fleet.lock"
PLAN = "_PUBLISH.json"
PLAN_FORMAT = "lbctl/fleet-publish@1"
TABLE_NAMES = ("snapshots", "brokers", "bundles", "topics")


@contextlib.contextmanager
def locked(out: Path, *, write: bool) -> Iterator[list[str]]:
    """Hold ``OUT``'s lock: exclusive to write (ingest), shared to read (report, whatif); yields
    what recovery did.

    A reader that finds the directory free also recovers an interrupted ingest (it briefly
    takes the lock exclusively to do so)."""
    done: list[str] = []
    if write:
        try:  # one wording for a disk's refusal, the job's own (session.job_error; walk21)
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise LbctlError(f"cannot write {out}: {e.strerror or e}") from None
    elif not out.is_dir():
        yield done
        return
    path = out / LOCK
    from lbctl.safe.files import open_private

    try:  # never through a link (O_NOFOLLOW); shared with other readers as before (umask)
        fd, _ = open_private(str(path), mode=0o666, error=LbctlError, what="a lock file")
        fh: IO[str] = os.fdopen(fd, "r+")
    except LbctlError as e:
        if write:  # the directory refused the lock file: said as the job says it (walk21)
            _, said, reason = str(e).partition(": cannot open: ")
            if said or str(e).endswith(": permission denied"):
                raise LbctlError(f"cannot write {out}: {reason or 'Permission denied'}") from None
            raise UsageError(f"{out}: cannot write: {e}") from None
        yield done  # a read-only directory: nothing can be writing it through lbctl
        return
    try:
        if write:
            _flock(fh, fcntl.LOCK_EX, out, "another `lbctl fleet ingest` is writing it")
            done += recover(out)
        else:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                done += recover(out)
                fcntl.flock(fh, fcntl.LOCK_SH)  # downgrade: other readers may come in
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                _flock(fh, fcntl.LOCK_SH, out, "an `lbctl fleet ingest` is writing it")
        yield done
    finally:
        fh.close()  # releases the lock


def _flock(fh: IO[str], how: int, out: Path, why: str) -> None:
    try:
        fcntl.flock(fh, how | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EACCES):
            raise UsageError(f"{out}: busy: {why}; try again when it ends") from None
        raise


def new_run(out: Path) -> Path:
    """A fresh staging directory for this run."""
    run = out / STAGING / f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
    run.mkdir(parents=True)
    return run


def discard(run: Path) -> None:
    shutil.rmtree(run, ignore_errors=True)
    with contextlib.suppress(OSError):
        run.parent.rmdir()  # the staging directory, when no other run is in it


def recover(out: Path) -> list[str]:
    """Finish publishing runs that had started to, delete the others; what was done."""
    done: list[str] = []
    staging = out / STAGING
    if not staging.is_dir():
        return done
    for run in sorted(p for p in staging.iterdir() if p.is_dir()):
        if (run / PLAN).is_file():
            _roll_forward(out, run)
            done.append(f"published the interrupted run {run.name}")
        else:
            discard(run)
            done.append(f"discarded the unfinished run {run.name}")
    with contextlib.suppress(OSError):
        staging.rmdir()
    return done


def publish(out: Path, run: Path, manifest_update: dict[str, list[int]]) -> None:
    """Publish a staged run (see the module docstring)."""
    moves = []
    for table in TABLE_NAMES:
        root = run / table
        if not root.is_dir():
            continue
        for f in sorted(root.rglob("*.parquet")):
            rel = f.relative_to(run)
            if any(part.startswith((".", "_")) for part in rel.parts):
                continue  # Spark's own bookkeeping (_temporary, .crc)
            moves.append(str(rel))
    plan = {"format": PLAN_FORMAT, "moves": moves, "manifest": manifest_update}
    _write_durably(run / PLAN, orjson.dumps(plan))
    _roll_forward(out, run)


def _roll_forward(out: Path, run: Path) -> None:
    try:
        from lbctl.safe.files import read_regular

        # the one safe reader: a FIFO or a link planted in the output directory is not waited
        # on nor followed (a torn or foreign plan is discarded as before)
        plan = orjson.loads(read_regular(str(run / PLAN), what="a fleet commit plan",
                                         error=LbctlError))
        moves, update = plan["moves"], plan["manifest"]
    except (OSError, ValueError, KeyError, TypeError, LbctlError):
        discard(run)  # a torn plan is never written (atomic rename); be safe anyway
        return
    for rel in moves:
        src, dst = run / rel, out / rel
        if src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)
    manifest = read_manifest(out)
    manifest.update({str(k): list(v) for k, v in update.items()})
    write_manifest(out, manifest)
    discard(run)


def _write_durably(path: Path, data: bytes) -> None:
    from lbctl.safe.files import open_private

    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # a crash's leftover (or a planted link: unlinked, never followed)
    fd, _ = open_private(str(tmp), new=True, mode=0o666,
                         error=lambda m: UsageError(f"cannot write: {m}"))
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
