"""What a source of cluster state is, and what one read of it gives.

A :class:`StateSource` is where a command's states come from: snapshot files
(:class:`lbctl.sources.files.SnapshotFiles`), the live cluster over the admin API
(:class:`lbctl.sources.cluster.LiveCluster`), a Prometheus range
(:class:`lbctl.sources.prometheus.source.PrometheusRange`). The command line chooses one, in one
place (:func:`lbctl.cli.state.choose`); the commands only read it.

One read (:meth:`StateSource.read`) gives a :class:`StateRead`: the states in time order — a list,
or a :class:`Streamed` sequence whose snapshots are decoded one at a time (a large ``.jsonl``:
:class:`lbctl.sources.snapshot_stream.StreamedSnapshots`) — and the lines to report: ``failures``
(a broker or a piece that could not be read, left out) and ``warnings`` (reads reconciled, gaps in
a history). A source never prints and never decides: it reports, the CLI words and shows.
Progress is a plain callback, ``progress(step, done, total)``; the CLI draws it.

A new source is a class with ``live``, ``what`` and ``read``, and one branch in the chooser: e.g.
the history directory the long-running watcher writes (rotated ``.jsonl.gz`` files) would be a
source whose read streams its files' snapshots as one :class:`Streamed` sequence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from msgspec import Struct

from lbctl.model.cluster import ClusterState

#: ``progress(step, done, total)``: how far a read is (the CLI may draw it; sources never do)
Progress = Callable[[str, int, int], None]


@runtime_checkable
class Streamed(Protocol):
    """A sequence decoded one snapshot at a time: every snapshot's header up front (cluster,
    time, settings, broker versions: what the replay chooses its load manager from), the full
    snapshots as they are needed."""

    @property
    def headers(self) -> tuple[ClusterState, ...]: ...

    def __len__(self) -> int: ...

    def states(self) -> Iterator[ClusterState]: ...


class StateRead(Struct, frozen=True):
    """One read of a source: the states (time order) and what to report about them."""

    sequence: Sequence[ClusterState] | Streamed
    failures: tuple[str, ...] = ()  # "<broker>: <error>": a part that could not be read
    warnings: tuple[str, ...] = ()  # one line each

    def __len__(self) -> int:
        return len(self.sequence)

    @property
    def states(self) -> list[ClusterState]:
        """Every state, in memory (a streamed sequence is decoded whole)."""
        if isinstance(self.sequence, Streamed):
            return list(self.sequence.states())
        return list(self.sequence)

    @property
    def last(self) -> ClusterState:
        """The latest state (a streamed sequence is decoded to its end)."""
        if isinstance(self.sequence, Streamed):
            from collections import deque

            return deque(self.sequence.states(), maxlen=1)[0]
        return self.sequence[-1]

    @property
    def report(self) -> list[str]:
        """The lines to show, failures first."""
        return [*self.failures, *self.warnings]


class StateSource(Protocol):
    """Where cluster state comes from (module docstring)."""

    @property
    def live(self) -> bool:
        """Whether a read is the running cluster as it is now (a leader's first sight, for the
        load manager: :attr:`lbctl.loadmanager.select.Options.live`)."""
        ...

    @property
    def what(self) -> str:
        """What is read, for a progress line: ``the snapshots``, ``the cluster``, ``Prometheus``."""
        ...

    def read(self, progress: Progress | None = None) -> StateRead:
        """The states, once; errors are :class:`lbctl.errors.LbctlError`s with one line."""
        ...
