"""Whole sequences: in memory (``recommend --prometheus-url``) or streamed to a ``.jsonl``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from lbctl.collector import collector_paused
from lbctl.errors import SnapshotError, UsageError
from lbctl.model.cluster import iso_time
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
        states = [state for state, _ in lines(hist)]
    if not states:
        raise SnapshotError(f"no snapshot could be built from Prometheus between "
                            f"{iso_time(req.start_ms)} and {iso_time(req.end_ms)}")
    return states, hist.report


def write_history(client: PrometheusClient, req: HistoryRequest, path: str,
                  progress: Callable[[str, int, int], None] | None = None) -> Report:
    """The sequence as a ``.jsonl`` (optionally ``.gz``), streamed, each snapshot validated,
    written atomically (a temporary file renamed at the end: never half a file)."""
    import contextlib
    import gzip
    import os
    import tempfile

    lower = path.lower()
    gz = lower.endswith(".gz")
    if not lower.removesuffix(".gz").endswith((".jsonl", ".ndjson")):
        raise UsageError(f"{path}: a sequence is written as .jsonl (optionally .jsonl.gz)")
    hist = PrometheusHistory(client, req, progress)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                               suffix=".tmp")
    ok = False
    try:
        with os.fdopen(fd, "wb") as raw:
            out: Any = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if gz else raw
            with collector_paused(freeze=False):
                for _, line in lines(hist):
                    out.write(line)
            if gz:
                out.close()
            raw.flush()
            os.fsync(raw.fileno())
        if hist.report.snapshots == 0:
            raise SnapshotError(f"no snapshot could be built from Prometheus between "
                                f"{iso_time(req.start_ms)} and {iso_time(req.end_ms)}")
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
        ok = True
    except OSError as e:
        raise SnapshotError(f"{path}: cannot write: {e.strerror or e}") from None
    finally:
        if not ok:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return hist.report


def lines(hist: PrometheusHistory) -> Iterator[tuple[ClusterState, bytes]]:
    """Each snapshot as its ``.jsonl`` line, read back by the ``.jsonl`` reader's own path
    (:func:`lbctl.sources.snapshot.jsonl_snapshot`: decoded into the snapshot records and
    validated as a line of a file would be) — one path for a history from a file and from
    Prometheus, streamed: one snapshot in hand at a time."""
    import orjson

    from lbctl.sources.snapshot import jsonl_snapshot

    for number, snap in enumerate(hist.snapshots(), start=1):
        line = orjson.dumps(snap, option=orjson.OPT_APPEND_NEWLINE)
        yield jsonl_snapshot(f"prometheus:{snap['capturedAt']}", line, number, last=False,
                             check_keys=False), line


def reference_from(states: Sequence[ClusterState], origin: str) -> Reference:
    """The reference of a snapshot file (its last snapshot)."""
    if not states:
        raise UsageError(f"{origin}: no snapshot in the reference")
    return Reference.of(states[-1], origin)
