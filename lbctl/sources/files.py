"""Snapshot files as a :class:`~lbctl.sources.base.StateSource`: one file, several (a sequence),
or a ``.jsonl`` sequence — read whole (:func:`lbctl.sources.snapshot.read_snapshots`) or, when
``stream`` is asked and the file is large, validated now and decoded a snapshot at a time during
the replay (:func:`lbctl.sources.snapshot_stream.open_sequence`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from msgspec import Struct

from lbctl.sources.base import Progress, StateRead


class SnapshotFiles(Struct, frozen=True):
    """Snapshot files, in the order given (a sequence is replayed in ``capturedAt`` order)."""

    paths: tuple[Path, ...]
    stream: bool = False  # a large .jsonl may be streamed (the reader can take a Streamed)

    @property
    def live(self) -> bool:
        return False

    @property
    def what(self) -> str:
        return "the snapshots"

    def read(self, progress: Progress | None = None) -> StateRead:
        if self.stream:
            from lbctl.sources.snapshot_stream import open_sequence

            return StateRead(open_sequence(list(self.paths)))
        from lbctl.sources.snapshot import read_snapshots

        return StateRead(read_snapshots(list(self.paths)))


#: the files of ``lbctl watch``'s history directory (one ``.jsonl.gz`` sequence per UTC hour)
HISTORY_GLOB = "lbctl-history-*.jsonl.gz"


def expand(paths: Sequence[Path]) -> list[Path]:
    """A watcher's history directory stands for its files, oldest first (their names sort by
    hour); any other path is kept as given (a directory without them is refused by the reader)."""
    out: list[Path] = []
    for p in paths:
        try:
            directory = p.is_dir() and not p.is_symlink()
        except OSError:  # a name too long for the system: the reader says so, in one line
            directory = False
        if directory:
            files = sorted(p.glob(HISTORY_GLOB))
            if files:
                out += files
                continue
        out.append(p)
    return out


def snapshot_files(paths: Sequence[Path], *, stream: bool = False) -> SnapshotFiles:
    return SnapshotFiles(tuple(expand(paths)), stream)
