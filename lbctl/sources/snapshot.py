"""Reading and writing snapshot v1 files (the format is :mod:`lbctl.model.wire.snapshot`'s, read
and written by :mod:`lbctl.sources.snapshot_schema`).

Files:

* ``.json``, ``.yaml``/``.yml``: one snapshot. ``.jsonl`` (or ``.ndjson``): a sequence, one
  snapshot per line (blank lines are skipped; errors name ``file:LINE``).
* Any of them may be gzip-compressed: ``.gz`` on top of the extension, and gzip is also recognised
  by its magic bytes whatever the name. ``-`` reads one JSON snapshot (or gzip of it) from stdin.
* Several files read together form one sequence, ordered by ``capturedAt`` with a stable sort (so
  equal times keep the command-line/line order); a sequence must be of one cluster.

A file that cannot be read (missing, a directory, no permission, bad gzip, not UTF-8, not JSON/YAML,
empty) raises :class:`~lbctl.errors.SnapshotError`; one that decodes but breaks the contract raises
:class:`~lbctl.errors.SnapshotFormatError` (see :mod:`lbctl.sources.snapshot_schema`). Messages are
one line and start with the file name.

Reading is bounded (:mod:`lbctl.safe.files`): regular files only (a FIFO or a device is refused before
a byte is read), at most ``--max-input-size`` bytes after decompression, YAML nested at most
:data:`~lbctl.sources.snapshot_yaml.MAX_YAML_DEPTH` levels, with no alias to a collection that contains it and no alias
explosion; a key repeated in one object is an error (it would silently replace the first value).

Writing picks the format from the extension the same way; files are written atomically (an
anonymous temporary file in the same directory, then ``os.replace``; mode 0600), and
``append_snapshot`` adds one line to a ``.jsonl`` sequence (a new gzip member for ``.jsonl.gz``)
crash-safely.
"""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from lbctl.collector import collector_paused
from lbctl.errors import SnapshotError
from lbctl.model.cluster import ClusterState
from lbctl.safe.files import (
    append_record,
    atomic_write,
    gunzip_limited,
    is_json_line,
    line_too_long,
    max_line_bytes,
    read_regular,
    read_stream,
    warn,
)
from lbctl.sources.snapshot_schema import (
    FORMAT,
    decode_snapshot,
    key_path,
    parse_snapshot,
    snapshot_to_dict,
    state_from_wire,
)
from lbctl.sources.snapshot_text import DuplicateKey as _DuplicateKey
from lbctl.sources.snapshot_text import decode_error as _decode_error

__all__ = [
    "FORMAT",
    "append_snapshot",
    "parse_snapshot",
    "read_snapshot_file",
    "read_snapshots",
    "snapshot_to_dict",
    "summarize",
    "write_snapshot",
    "write_snapshots",
]

STDIN = "-"
_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
_KINDS = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".jsonl": "jsonl", ".ndjson": "jsonl"}


# --------------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------------
def read_snapshots(paths: Sequence[Path | str]) -> list[ClusterState]:
    """Read every file as one sequence of one cluster, ordered by ``capturedAt`` (stable)."""
    states: list[ClusterState] = []
    for path in paths:
        states.extend(read_snapshot_file(path))
    check_one_cluster(states)
    states.sort(key=lambda s: s.captured_at)  # list.sort is stable: ties keep input order
    return states


def check_one_cluster(states: Sequence[ClusterState]) -> None:
    """A sequence replays one cluster's cycles; snapshots of another cluster are an error."""
    if not states:
        return
    first = states[0]
    for s in states[1:]:
        if s.cluster != first.cluster:
            raise SnapshotError(
                f"{s.source}: cluster {_quote(s.cluster)} differs from cluster "
                f"{_quote(first.cluster)} of {first.source}; a sequence must be of one cluster"
            )
        if s.load_manager != first.load_manager:
            raise SnapshotError(
                f"{s.source}: loadManager {_quote(s.load_manager)} differs from "
                f"{_quote(first.load_manager)} of {first.source}; a sequence must be of one "
                "load manager"
            )


def read_snapshot_file(path: Path | str, *, strict: bool = False) -> list[ClusterState]:
    """The snapshots of one file: one for ``.json``/``.yaml``, the lines of a ``.jsonl``.

    A sequence cut short at its end (a partial last line, gzip data cut off) is read up to the
    cut with a warning (:class:`PartialLastLine`); ``strict`` (``snapshot validate``, which
    checks the file) makes the cut an error.

    The cyclic garbage collector is paused while the file is decoded and validated: a large
    snapshot allocates hundreds of thousands of acyclic containers, and the collector's repeated
    scans of them would cost a third of the load time for nothing; they are then frozen
    (``gc.freeze``), out of the collector's reach (freed by reference counting as ever).
    """
    with collector_paused(freeze=True):
        return _read_snapshot_file(path, strict=strict)


def _read_snapshot_file(path: Path | str, *, strict: bool = False) -> list[ClusterState]:
    if str(path) == STDIN:
        name = "<stdin>"
        raw = read_stream(getattr(sys.stdin, "buffer", None), name, error=SnapshotError)
        data = _maybe_gunzip(name, raw, expect_gzip=False)
        if not data or data.isspace():
            raise SnapshotError(f"{name}: empty input (expected a snapshot)")
        return [json_snapshot(name, data)]
    name = str(path)
    kind, gz = _kind(name)
    lines = kind == "jsonl"
    data = _maybe_gunzip(name, _read_bytes(name, lines=lines), expect_gzip=gz,
                         cut_ok=lines and not strict, lines=lines)
    if not data or data.isspace():  # isspace stops at the first other byte: no copy
        raise SnapshotError(f"{name}: empty file (expected a snapshot)")
    if kind == "jsonl":
        return _read_jsonl(name, data, strict=strict)
    if kind == "json":
        return [json_snapshot(name, data)]
    from lbctl.sources.snapshot_yaml import load_yaml  # PyYAML is imported for YAML files only

    return [parse_snapshot(load_yaml(name, data), name)]


def _kind(name: str) -> tuple[str, bool]:
    lower = name.lower()
    gz = lower.endswith(".gz")
    if gz:
        lower = lower[:-3]
    kind = _KINDS.get(os.path.splitext(lower)[1])
    if kind is None:
        raise SnapshotError(
            f"{name}: unknown snapshot file type (expected .json, .yaml, .yml or .jsonl, "
            "optionally .gz)"
        )
    return kind, gz


def _read_bytes(name: str, *, lines: bool = False) -> bytes:
    """A regular file's bytes (a FIFO or a device is refused before any read), bounded;
    ``lines`` (a sequence): no line longer than :func:`~lbctl.safe.files.max_line_bytes`, refused
    before the file is held."""
    return read_regular(name, what="a snapshot file", error=SnapshotError,
                        max_line=max_line_bytes() if lines else None)


def _maybe_gunzip(name: str, data: bytes, *, expect_gzip: bool, cut_ok: bool = False,
                  lines: bool = False) -> bytes:
    if not data.startswith(_GZIP_MAGIC):
        if expect_gzip:
            raise SnapshotError(f"{name}: not a gzip file (the name ends in .gz)")
        return data
    return gunzip_limited(data, name, error=SnapshotError, cut_ok=cut_ok,
                          max_line=max_line_bytes() if lines else None)


def json_snapshot(name: str, data: bytes) -> ClusterState:
    """One JSON snapshot document: decoded straight into the snapshot records (types and ranges
    checked in C); a document that does not fit is decoded as JSON values instead, whose errors
    (not JSON, a key twice, a value of the wrong type …) name what is wrong."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    doc = decode_snapshot(data)
    if doc is None:
        return parse_snapshot(load_json(name, data), name)
    _check_duplicate_keys(name, data)
    return state_from_wire(doc, name)


def load_json(name: str, data: bytes) -> Any:
    """A JSON document as plain values, with lbctl's one-line messages for what is not JSON and
    for a key repeated in one object (:func:`_check_duplicate_keys`)."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise _decode_error(name, data, "JSON", _json_reason(data, e), e.lineno, e.colno) from None
    _check_duplicate_keys(name, data)
    return obj


#: a sequence larger than this is streamed (:data:`lbctl.sources.snapshot_stream.STREAM_BYTES`).
#: Until hostile21 it was also the size up to which a file was checked for repeated keys, per
#: file: every line of a 3 MiB ``.jsonl`` was checked, no line of a 5 MiB one (nor of any
#: streamed sequence, nor a line over 4 MiB), so whether a repeated broker id was refused
#: depended on the size of the lines around it. Every document is checked now, whatever its
#: size or its file's: :func:`_check_duplicate_keys`.
DUPLICATE_CHECK_BYTES = 4 << 20

#: what the check's hook returns for an object that looks like a broker's report (for the hint)
_REPORT = "report"


def _check_duplicate_keys(name: str, data: bytes) -> None:
    """The one rule for a key repeated in one object, applied to every JSON document a snapshot
    is read from (a ``.json`` file, each ``.jsonl`` line, whole-file read or streamed): refused
    in one line naming the key. orjson and msgspec keep the last value silently (a second
    report of one broker id would replace the first). The standard library's decoder hands each
    object's pairs to a hook; the hook keeps nothing of the object (it returns a marker, not a
    dict), so the check holds no copy of the document: measured on a 4.3 MB line of
    ``benchmarks/replay_sequence.py``'s sequence, 29 ms against 33 ms for the dict-building
    hook, and 6.5 MB of peak traced memory against 16 MB (the typed decode itself: 13 ms)."""
    import json

    def pairs(items: list[tuple[str, Any]]) -> str | None:
        keys = {k for k, _ in items}
        if len(keys) != len(items):
            seen: set[str] = set()
            for k, _ in items:
                if k in seen:
                    raise _DuplicateKey(k, _where(k, items))
                seen.add(k)
        return _REPORT if not keys.isdisjoint(("lastStats", "cpu", "bundles")) else None

    try:
        json.loads(data, object_pairs_hook=pairs)
    except _DuplicateKey as e:
        raise SnapshotError(
            f"{name}: the key {key_path(e.key)[1:-1]} appears twice in one object{e.path} "
            "(a duplicate key would silently replace the first value)") from None
    except (ValueError, RecursionError):
        return  # orjson accepted it; the standard library's limits differ: nothing to report


def _where(key: str, items: list[tuple[str, Any]]) -> str:
    """A hint naming the object: the brokers map is recognised by its reports."""
    if any(v is _REPORT for _, v in items):
        return " (brokers: two reports for one broker id)"
    return ""


def _json_reason(data: bytes, e: orjson.JSONDecodeError) -> str:
    """orjson's reason, with a hint when Python-style ``NaN``/``Infinity`` stand for numbers."""
    if data[e.pos : e.pos + 9].lstrip(b"-").startswith((b"NaN", b"Infinity")):
        return f"{e.msg}; NaN and Infinity are not JSON numbers (rates must be finite)"
    return e.msg


def _read_jsonl(name: str, data: bytes, *, strict: bool = False) -> list[ClusterState]:
    """The snapshots of a sequence, stopping at its first bad line; a partial last line (an
    append cut short) after good ones is left out with a warning, the snapshots before it read."""
    states: list[ClusterState] = []
    for _, decode in _jsonl_lines(name, data):
        try:
            states.append(decode())
        except PartialLastLine as e:
            if not states or strict:
                raise
            warn(e.left_out(len(states)))
    check_one_cluster(states)
    return states


def _jsonl_lines(name: str, data: bytes) -> Iterator[tuple[int, Callable[[], ClusterState]]]:
    """For each non-blank line of a ``.jsonl`` sequence, its number and a call that decodes and validates it
    (raising its ``file:N`` error): the one loop of :func:`_read_jsonl` (stops at the first bad
    line) and :func:`read_snapshot_lines` (goes on)."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    lines = data.split(b"\n")
    cap = max_line_bytes()
    for number, line in enumerate(lines, start=1):
        if len(line) > cap:  # the readers refuse it first; bytes from elsewhere are checked here
            raise SnapshotError(line_too_long(name, number, cap))
        if not line.strip():
            continue
        where = f"{name}:{number}"
        yield number, partial(jsonl_snapshot, where, line, number, last=number == len(lines),
                              check_keys=True)


class PartialLastLine(SnapshotError):
    """The last line of a sequence, without its newline, that does not decode: an append cut
    short by a crash (``kill -9``, a full disk). An error when nothing precedes it; else the
    readers leave it out with :meth:`left_out`'s warning and keep the snapshots before it — a
    history interrupted mid-write loses only the record being written (hostile14)."""

    def __init__(self, where: str) -> None:
        self.where = where
        super().__init__(f"{where}: partial last line (an append was interrupted); {_REPAIR}")

    def left_out(self, kept: int) -> str:
        return (f"{self.where}: partial last line (an append was interrupted) left out; the "
                f"{kept} snapshot(s) before it are read; {_REPAIR}")


_REPAIR = "the next 'lbctl snapshot export --append' to this file removes it"


class LineError(SnapshotError):
    """One line of a ``.jsonl`` sequence refused: the message is the one ``lbctl snapshot
    validate`` prints for it; ``line`` is its number (1-based)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def read_snapshot_lines(path: Path | str) -> tuple[list[ClusterState], list[LineError]]:
    """The snapshots of one file, and for a ``.jsonl`` sequence the lines refused, each with its
    own error — every good line is kept (``lbctl fleet ingest``: one bad line must not lose a
    file's other snapshots). Each line gets exactly the verdict and message
    :func:`read_snapshot_file` gives it (that reader stops at the first bad line). Errors of
    the file as a whole (unreadable, bad gzip data, empty, snapshots of two clusters among the
    good lines, not a ``.jsonl``'s) are raised as :func:`read_snapshot_file` raises them."""
    with collector_paused(freeze=True):
        name = str(path)
        if name == STDIN or _kind(name)[0] != "jsonl":
            return _read_snapshot_file(path), []
        gz = _kind(name)[1]
        data = _maybe_gunzip(name, _read_bytes(name, lines=True), expect_gzip=gz, lines=True)
        if not data or data.isspace():
            raise SnapshotError(f"{name}: empty file (expected a snapshot)")
        states: list[ClusterState] = []
        errors: list[LineError] = []
        for number, decode in _jsonl_lines(name, data):
            try:
                states.append(decode())
            except SnapshotError as e:
                errors.append(LineError(str(e), number))
        check_one_cluster(states)
        return states, errors


def jsonl_snapshot(where: str, line: bytes, number: int, *, last: bool,
                   check_keys: bool) -> ClusterState:
    """Line ``number`` of a ``.jsonl`` sequence, read as :func:`json_snapshot` reads a document,
    with the sequence's messages: a broken last line without its newline is an append cut short;
    duplicate keys are checked when ``check_keys``."""
    doc = decode_snapshot(line)
    if doc is None:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            if last:  # the last line, without its newline: an append cut short
                raise PartialLastLine(where) from None
            raise _decode_error(
                where, line, "JSON", _json_reason(line, e), number, e.colno
            ) from None
        if check_keys:
            _check_duplicate_keys(where, line)
        return parse_snapshot(obj, where)
    if check_keys:
        _check_duplicate_keys(where, line)
    return state_from_wire(doc, where)


# --------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------
def write_snapshot(state: ClusterState, path: Path | str) -> None:
    """Write one snapshot, in the format the extension names (``.jsonl``: a one-line sequence)."""
    write_snapshots([state], path)


def write_snapshots(states: Sequence[ClusterState], path: Path | str) -> None:
    """Write a sequence to a ``.jsonl`` file, or a single snapshot to a ``.json``/``.yaml`` one.

    Atomically, mode 0600 (a snapshot describes the cluster's layout and settings)."""
    name = str(path)
    kind, gz = _kind(name)
    if kind != "jsonl" and len(states) != 1:
        raise SnapshotError(f"{name}: a {kind} file holds one snapshot; use .jsonl for a sequence")
    if kind == "jsonl":
        data = b"".join(_jsonl_line(s) for s in states)
    else:
        data = encode_snapshot(states[0], kind)
    if gz:
        data = gzip.compress(data, compresslevel=6, mtime=0)
    atomic_write(name, data, error=SnapshotError)


def append_snapshot(state: ClusterState, path: Path | str) -> int:
    """Append one snapshot to a ``.jsonl`` sequence (created when missing, mode 0600).

    Crash-safe (:func:`lbctl.safe.files.append_record`): a line is written whole or not at all — a
    partial last line left by an earlier crash is cut off first (a whole last line that only
    lacks its newline is kept), a full disk leaves the file as it was, and a snapshot of another
    cluster (or load manager) than the sequence's is refused with the file unchanged. For ``.jsonl.gz`` the line is a new gzip member, which gzip readers concatenate. Returns
    the number of bytes of a partial last line that was removed (0 normally).
    """
    name = str(path)
    kind, gz = _kind(name)
    if kind != "jsonl":
        raise SnapshotError(f"{name}: can only append to a .jsonl sequence")
    data = _jsonl_line(state)
    if gz:
        data = gzip.compress(data, compresslevel=6, mtime=0)

    def same_sequence(last: bytes | None) -> None:
        """A sequence is one cluster's, under one load manager (:func:`check_one_cluster`):
        appending another's would leave a file ``validate`` refuses — refused, file unchanged."""
        if last is None or not last.strip():
            return
        try:
            prev = jsonl_snapshot(f"{name}: its last line", last, 0, last=False,
                                  check_keys=False)
        except SnapshotError:
            return  # not ours to judge here: validate says what is wrong with it
        for what, mine, theirs in (("cluster", state.cluster, prev.cluster),
                                   ("load manager", state.load_manager, prev.load_manager)):
            if mine != theirs:
                raise SnapshotError(
                    f"{name}: holds {what} {_quote(theirs)}, this snapshot is of {what} "
                    f"{_quote(mine)}; a sequence must be of one {what}: nothing was appended "
                    "(export to another file)")

    return append_record(name, data, gz=gz, error=SnapshotError, complete=is_json_line,
                         accept=same_sequence)


def encode_snapshot(state: ClusterState, kind: str = "json") -> bytes:
    """A snapshot as ``json`` (indented) or ``yaml`` bytes."""
    obj = snapshot_to_dict(state)
    if kind == "yaml":
        from lbctl.sources.snapshot_yaml import dump_yaml

        return dump_yaml(obj)
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def _jsonl_line(state: ClusterState) -> bytes:
    return orjson.dumps(snapshot_to_dict(state), option=orjson.OPT_APPEND_NEWLINE)


# --------------------------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------------------------
def summarize(state: ClusterState) -> dict[str, Any]:
    """What ``lbctl snapshot validate`` prints for a valid snapshot."""
    return {
        "cluster": state.cluster,
        "capturedAt": state.captured_at_iso,
        "brokers": len(state.brokers),
        "bundles": state.bundle_count(),
        "loadManager": state.load_manager,
    }


def _quote(text: str) -> str:
    return orjson.dumps(text).decode()
