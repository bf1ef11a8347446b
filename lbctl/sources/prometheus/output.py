"""Whole sequences: in memory (``recommend --prometheus-url``) or streamed to a ``.jsonl``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from lbctl.collector import collector_paused
from lbctl.errors import SnapshotError, UsageError
from lbctl.model.cluster import iso_time
from lbctl.safe.files import atomic_file, refuse_unwritable
from lbctl.sources.prometheus.history import PrometheusHistory
from lbctl.sources.prometheus.request import HistoryRequest, Reference, Report

if TYPE_CHECKING:
    from lbctl.admin.prometheus import PrometheusClient
    from lbctl.model.cluster import ClusterState


def read_history(client: PrometheusClient, req: HistoryRequest,
                 progress: Callable[[str, int, int], None] | None = None
                 ) -> tuple[list[ClusterState], Report]:
    """The sequence in memory (what ``recommend --prometheus-url`` replays), and the report."""
    hist = PrometheusHistory(client, req, progress)
    with collector_paused(freeze=True):
        states = [state for state, _ in checked(hist, write=False) if state is not None]
    if not states:
        raise SnapshotError(f"no snapshot could be built from Prometheus between "
                            f"{iso_time(req.start_ms)} and {iso_time(req.end_ms)}")
    return states, hist.report


def write_history(client: PrometheusClient, req: HistoryRequest, path: str,
                  progress: Callable[[str, int, int], None] | None = None) -> Report:
    """The sequence as a ``.jsonl`` (optionally ``.gz``), streamed, each snapshot validated,
    written atomically (a temporary file renamed at the end: never half a file)."""
    import gzip
    import os

    if path == "-":  # a stream cut by a failed step would read as a whole, shorter history
        raise UsageError("-f -: standard output is not supported for a sequence (it is written "
                         "atomically, whole or not at all); give a file name ending in .jsonl "
                         "or .jsonl.gz")
    lower = path.lower()
    gz = lower.endswith(".gz")
    if not lower.removesuffix(".gz").endswith((".jsonl", ".ndjson")):
        raise UsageError(f"{path}: a sequence is written as .jsonl (optionally .jsonl.gz)")
    # before any request; a rename would swap a link for the file
    refuse_unwritable(path, what="a .jsonl file to write", error=SnapshotError)
    mask = os.umask(0o022)
    os.umask(mask)
    # the temporary file is made before any request, relative to a descriptor of the directory
    # (lbctl.safe.files.atomic_file), and renamed in that same directory; errors name ``path``
    with atomic_file(path, error=SnapshotError, mode=0o666 & ~mask) as raw:
        hist = PrometheusHistory(client, req, progress)
        out: Any = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if gz else raw
        with collector_paused(freeze=False), LineWriter(out, raw) as write:
            for _, line in checked(hist, write=True):
                write(line)
        if gz:
            out.close()
        if hist.report.snapshots == 0:
            raise SnapshotError(f"no snapshot could be built from Prometheus between "
                                f"{iso_time(req.start_ms)} and {iso_time(req.end_ms)}")
    return hist.report


#: lines handed to the writer and not yet written, at most (memory: a few lines, not the history)
WRITER_QUEUE = 4
#: bytes written between two ``fdatasync`` calls of the writer (the file's data made durable as
#: it is written, so the ``fsync`` before the rename has only the last few MiB left to wait for)
SYNC_EVERY = 8 << 20


class LineWriter:
    """Writes a history's lines on a thread of its own, as the building thread makes them.

    ``write`` (the file's, the kernel's copy of each line) and, for ``.jsonl.gz``, zlib's
    compression release the interpreter's lock, so they run on the other core while the next
    snapshot is built, instead of on the building thread. Every :data:`SYNC_EVERY` bytes the
    writer also makes what reached the file durable (``fdatasync``, where the OS has it), so the
    ``fsync`` before the rename waits only for the file's tail. At most :data:`WRITER_QUEUE`
    lines wait (bounded memory). The lines are written in the order given, by one thread. A
    write's error (a full disk) is raised on the building thread, at its next line or when the
    block ends, as the same exception (the atomic file then removes the partial file and says
    the same one line); once the block raises, the lines still waiting are dropped and the
    writer is waited for: it never outlives the file."""

    def __init__(self, out: Any, raw: Any) -> None:
        import queue
        import threading

        self._out = out
        self._raw = raw
        self._lines: queue.Queue[bytes | None] = queue.Queue(maxsize=WRITER_QUEUE)
        self._error: BaseException | None = None
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="lbctl-writer", daemon=True)

    def __enter__(self) -> Callable[[bytes], None]:
        self._thread.start()
        return self.write

    def write(self, line: bytes) -> None:
        if self._error is not None:
            raise self._error
        self._lines.put(line)

    def _run(self) -> None:
        import os

        sync = getattr(os, "fdatasync", None)  # not on every OS: the final fsync still holds
        unsynced = 0
        while (line := self._lines.get()) is not None:
            if self._error is not None or self._stop:
                continue  # drained, not written: the building thread raises
            try:
                self._out.write(line)
                unsynced += len(line)
                if sync is not None and unsynced >= SYNC_EVERY:
                    self._raw.flush()
                    sync(self._raw.fileno())
                    unsynced = 0
            except BaseException as e:  # raised on the building thread
                self._error = e

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:
            self._stop = True
        self._lines.put(None)
        self._thread.join()
        if kind is None and self._error is not None:
            raise self._error


def checked(hist: PrometheusHistory, *, write: bool
            ) -> Iterator[tuple[ClusterState | None, bytes]]:
    """Each snapshot as the state a ``.jsonl`` reader makes of its line, and (``write``) that
    line — one path for a history from a file and from Prometheus, streamed: one snapshot in
    hand at a time.

    The snapshot's dicts are decoded into the snapshot records (``msgspec.convert``: every type
    and range checked in C, as a line's decode checks them) and its typed per-bundle stats,
    already checked column by column (:meth:`PrometheusHistory.built`), are taken as they are;
    then the rules a type cannot express (:func:`lbctl.sources.snapshot_schema.state_from_wire`,
    as for a line). A plain snapshot whose brokers pass those checks by what the history's
    snapshots before it taught (:class:`~lbctl.sources.prometheus.state.DirectStates`) has only
    its other sections read so, its brokers' reports made as the reader makes them — or, when
    the line is all that is wanted (``write``), not made at all: the state is then ``None``
    (never when not ``write``). No JSON is
    made to be read back. A snapshot that is not clean, or that the
    decode refuses, is read the way a line is (:func:`lbctl.sources.snapshot.jsonl_snapshot` of
    its JSON): the same error, in the same words. The line is written by msgspec when the
    snapshot is plain (the bytes orjson writes, faster), else by orjson."""
    import msgspec

    from lbctl.model.wire.snapshot import Document
    from lbctl.sources.prometheus.state import DirectStates
    from lbctl.sources.snapshot import jsonl_snapshot
    from lbctl.sources.snapshot_schema import LearnedNames, state_from_wire

    encode = msgspec.json.Encoder().encode
    learned = LearnedNames()  # the bundle names' parts, checked once for the whole history

    def read(snap: dict[str, Any], where: str) -> ClusterState:
        return state_from_wire(msgspec.convert(snap, Document), where, learned=learned)

    direct = DirectStates(learned, read)
    for number, (snap, clean, plain) in enumerate(hist.built(), start=1):
        where = f"prometheus:{snap['capturedAt']}"
        if clean:
            try:
                state: ClusterState | None
                if write and plain and direct.valid(snap, where, figures_checked=True):
                    state = None  # checked; only its line is written
                else:
                    state = ((direct.state(snap, where, figures_checked=True) if plain else None)
                             or read(snap, where))
            except msgspec.ValidationError:
                pass
            else:
                line = b""
                if write and plain:
                    try:
                        line = encode(snap) + b"\n"
                    except (TypeError, ValueError):  # text orjson refuses too: said below
                        plain = False
                if write and not plain:
                    line = _json(snap, where)
                yield state, line
                continue
        line = _json(snap, where)
        yield jsonl_snapshot(where, line, number, last=False, check_keys=False), line


def _json(snap: dict[str, Any], where: str) -> bytes:
    """The snapshot's ``.jsonl`` line, by orjson (typed stats as their fields); a value JSON
    cannot hold (an integer beyond 64 bits from a huge sample) is the one-line error naming
    it, not a traceback."""
    import msgspec
    import orjson

    from lbctl.sources.snapshot_schema import parse_snapshot

    try:
        return orjson.dumps(snap, default=msgspec.structs.asdict,
                            option=orjson.OPT_APPEND_NEWLINE)
    except TypeError as e:
        parse_snapshot(msgspec.to_builtins(snap), where)  # names the value, when it can
        raise SnapshotError(f"{where}: cannot be written as JSON: {e}") from None


def reference_from(states: Sequence[ClusterState], origin: str) -> Reference:
    """The reference of a snapshot file (its last snapshot)."""
    if not states:
        raise UsageError(f"{origin}: no snapshot in the reference")
    return Reference.of(states[-1], origin)
