"""A small tmpfs for the tests of what lbctl does when the disk refuses a write: full (no room
left) or read-only. Mounting needs root on Linux (CI runs as root); elsewhere the test is
skipped with the reason. The mount is lazily unmounted when the block ends, whatever happens."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def tmpfs(where: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted at ``where`` (made if missing) for the ``with`` block."""
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", str(where)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(mnt: Path) -> None:
    """Leave no room on the tmpfs at ``mnt``: a filler file written until the disk refuses."""
    with contextlib.suppress(OSError), open(mnt / "filler", "wb") as f:
        while True:
            f.write(b"\0" * 4096)
            f.flush()


def make_read_only(mnt: Path) -> None:
    """Remount the tmpfs at ``mnt`` read-only (what it holds stays readable)."""
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)


@contextlib.contextmanager
def refusing_tmpfs(where: Path, kind: str) -> Iterator[Path]:
    """:func:`tmpfs`, then ``kind`` "full" (:func:`fill`) or "read-only"
    (:func:`make_read_only`)."""
    with tmpfs(where) as mnt:
        if kind == "full":
            fill(mnt)
        else:
            make_read_only(mnt)
        yield mnt
