"""The watcher's history: a directory of rotated, compressed snapshot@1 sequences.

Every capture is appended to ``lbctl-history-<UTC hour>.jsonl.gz`` (one gzip member per line, via
:func:`lbctl.sources.snapshot.append_snapshot`: a crash or a full disk leaves the file as it was
before the append, and a member cut short by an earlier crash is removed first). The files are
plain snapshot sequences, so ``recommend``, ``explain``, ``simulate`` and ``fleet ingest`` read
them as they are (``lbctl recommend history/*.jsonl.gz --all-cycles``).

Retention is by age (a file whose hour ended longer ago than ``max_age``) and by size (the oldest
files go first until the directory fits ``max_bytes``); the file being written is never removed.
A capture is *acknowledged* once :meth:`History.append` returned: it is on disk (fsynced), and a
watcher killed after that and restarted finds it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from msgspec import Struct

from lbctl.errors import UsageError
from lbctl.model.cluster import ClusterState
from lbctl.safe.files import private_dir, refuse_link
from lbctl.sources.files import HISTORY_GLOB

PREFIX, SUFFIX = HISTORY_GLOB.split("*")
_NAME = re.compile(r"^lbctl-history-(\d{8}T\d{2})\.jsonl\.gz$")
_HOUR_MS = 3_600_000


class Retention(Struct, frozen=True):
    """How much history to keep: files older than ``max_age_s`` go, then the oldest until the
    directory holds at most ``max_bytes`` (None: no limit)."""

    max_age_s: float | None = 7 * 86_400.0
    max_bytes: int | None = None


def hour_of(epoch_ms: int) -> str:
    """The file key of the UTC hour holding ``epoch_ms``: ``YYYYMMDDTHH``."""
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%Y%m%dT%H")


def _hour_start_ms(key: str) -> int:
    return int(datetime.strptime(key, "%Y%m%dT%H").replace(tzinfo=UTC).timestamp() * 1000)


class History:
    """The history directory (created 0700 when missing)."""

    def __init__(self, directory: Path, retention: Retention | None = None):
        self.dir = directory
        self.retention = retention or Retention()
        refuse_link(directory, error=UsageError)
        if directory.exists() and not directory.is_dir():
            raise UsageError(f"{directory}: not a directory")
        private_dir(str(directory))

    def files(self) -> list[Path]:
        """The history's files, oldest first (only names this module writes)."""
        names = sorted(n for n in os.listdir(self.dir) if _NAME.match(n))
        return [self.dir / n for n in names]

    def path_for(self, state: ClusterState) -> Path:
        return self.dir / f"{PREFIX}{hour_of(state.captured_at)}{SUFFIX}"

    def append(self, state: ClusterState) -> Path:
        """Append one capture (acknowledged when this returns) and apply the retention."""
        from lbctl.sources.snapshot import append_snapshot

        path = self.path_for(state)
        append_snapshot(state, path)
        self.prune(state.captured_at, keep=path)
        return path

    def prune(self, now_ms: int, *, keep: Path | None = None) -> list[Path]:
        """Remove what the retention no longer keeps; returns the files removed."""
        removed: list[Path] = []
        files = self.files()
        r = self.retention
        for f in files:
            m = _NAME.match(f.name)
            assert m is not None
            ended = _hour_start_ms(m.group(1)) + _HOUR_MS
            if f != keep and r.max_age_s is not None and now_ms - ended > r.max_age_s * 1000:
                removed.append(f)
        left = [f for f in files if f not in removed]
        if r.max_bytes is not None:
            sizes = {f: f.stat().st_size for f in left}
            total = sum(sizes.values())
            for f in left:
                if total <= r.max_bytes:
                    break
                if f == keep:
                    continue
                removed.append(f)
                total -= sizes[f]
        for f in removed:
            f.unlink(missing_ok=True)
        return removed

    def recent(self, limit: int) -> list[ClusterState]:
        """The last ``limit`` captures (at most), oldest first: what a restarted watcher replays to
        rebuild the strategies' memory and its own view."""
        from lbctl.sources.files import snapshot_files

        out: list[ClusterState] = []
        for f in reversed(self.files()):
            states = snapshot_files([f]).read().states
            out[:0] = states
            if len(out) >= limit:
                break
        return out[-limit:] if limit else []

    def __iter__(self) -> Iterator[Path]:
        return iter(self.files())
