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

Beside each hour's file, ``lbctl-watch-<UTC hour>.jsonl.gz`` holds what the watcher knew of each
capture that snapshot@1 has no place for (:class:`Seen`): who owned each bundle as the brokers
listed it (``ownedNamespaces``, where it differed from the load reports), the leader's unload
count and the moves that were not the leader's. A restarted watcher replays its history with
them; a history without them (an older watcher's) replays with the reports' ownership. The name
does not match ``lbctl-history-*``, so the commands that read the history never see it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import msgspec
from msgspec import Struct

from lbctl.errors import ConfigError, UsageError
from lbctl.model.cluster import ClusterState
from lbctl.safe.files import private_dir, refuse_link
from lbctl.sources.files import HISTORY_GLOB

PREFIX, SUFFIX = HISTORY_GLOB.split("*")
_NAME = re.compile(r"^lbctl-history-(\d{8}T\d{2})\.jsonl\.gz$")
_HOUR_MS = 3_600_000
SEEN_PREFIX = "lbctl-watch-"


class Seen(Struct, frozen=True, omit_defaults=True):
    """What the watcher knew of one capture besides the snapshot (module docstring).

    ``ownership``: what ``--ownership`` asked for (``admin``: each broker's ``ownedNamespaces``;
    ``reports``: the load reports); ``read``: whether the brokers' listing was read (a cluster
    refusing it is followed by its reports); ``owners``: where the listing differed from the
    reports' ownership, bundle → broker (``None``: owned by nobody at that capture);
    ``leader``/``leaderUnloads``: the leader and its ``brk_lb_unload_bundle_count``;
    ``notLeaders``: bundle → why its move at this capture was not the leader's; ``late``: bundle
    → why an earlier capture's move, judged as the leader's, was found not to be at this one
    (lbctl's apply journal recorded its unload after the capture that saw it): a restart
    replays the finding here, so the move leaves lbctl's grace map again and is not told twice."""

    capturedAt: int
    ownership: str
    read: bool = False
    owners: dict[str, str | None] = {}
    leader: str | None = None
    leaderUnloads: int | None = None
    notLeaders: dict[str, str] = {}
    late: dict[str, str] = {}

    def ownership_of(self, state: ClusterState) -> dict[str, str] | None:
        """Who owned each bundle at ``state`` as the brokers listed it (None: not read)."""
        if not self.read:
            return None
        out = dict(state.owners())
        for b, o in self.owners.items():
            if o is None:
                out.pop(b, None)
            else:
                out[b] = o
        return out


def seen_of(state: ClusterState, ownership: str, owners: dict[str, str] | None, *,
            leader: str | None = None, unloads: int | None = None,
            not_leaders: dict[str, str] | None = None,
            late: dict[str, str] | None = None) -> Seen:
    """The record of one capture: ``owners`` kept as its differences from the reports'."""
    diff: dict[str, str | None] = {}
    if owners is not None:
        reported = state.owners()
        diff = {b: o for b, o in owners.items() if reported.get(b) != o}
        diff.update({b: None for b in reported if b not in owners})
    return Seen(state.captured_at, ownership, owners is not None, diff, leader, unloads,
                dict(not_leaders or {}), dict(late or {}))


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

    def seen_path(self, history_file: Path) -> Path:
        """The file of :class:`Seen` records beside one hour's history file."""
        return self.dir / (SEEN_PREFIX + history_file.name.removeprefix(PREFIX))

    def record(self, seen: Seen, state: ClusterState) -> None:
        """Append the watcher's record of ``state`` (after the capture itself: a crash between
        the two leaves a capture replayed with its reports' ownership, nothing worse)."""
        from lbctl.safe.files import append_record, gzip_member, is_json_line

        append_record(str(self.seen_path(self.path_for(state))),
                      gzip_member(msgspec.json.encode(seen) + b"\n"), gz=True,
                      error=ConfigError, complete=is_json_line)

    def seen(self, states: list[ClusterState]) -> dict[int, Seen]:
        """The records of ``states`` (by capture time) that their hours' files hold; a file that
        cannot be read, or a line that does not decode, is left out (its captures replay with
        the reports' ownership)."""
        from lbctl.safe.files import gunzip_limited, read_regular

        out: dict[int, Seen] = {}
        want = {s.captured_at for s in states}
        decoder = msgspec.json.Decoder(Seen)
        for key in sorted({hour_of(s.captured_at) for s in states}):
            path = self.dir / f"{SEEN_PREFIX}{key}{SUFFIX}"
            if not path.exists():
                continue
            try:
                text = gunzip_limited(read_regular(str(path), what="a watcher record file"),
                                      str(path), error=ConfigError, cut_ok=True)
            except ConfigError:
                continue
            for line in text.splitlines():
                try:
                    rec = decoder.decode(line)
                except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                    continue
                if rec.capturedAt in want:
                    out[rec.capturedAt] = rec
        return out

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
            sizes = {f: f.stat().st_size + _size(self.seen_path(f)) for f in left}
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
            self.seen_path(f).unlink(missing_ok=True)
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


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
