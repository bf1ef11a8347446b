"""Reading and writing snapshot v1 files (the format is :mod:`lbctl.sources.snapshot_schema`'s).

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

Writing picks the format from the extension the same way; files are written atomically (a
temporary file in the same directory, then ``os.replace``), and ``append_snapshot`` adds one line
to a ``.jsonl`` sequence (a new gzip member for ``.jsonl.gz``).
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import os
import sys
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import yaml

from lbctl.errors import SnapshotError
from lbctl.model.cluster import ClusterState
from lbctl.sources.snapshot_schema import FORMAT, parse_snapshot, snapshot_to_dict

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
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


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


def read_snapshot_file(path: Path | str) -> list[ClusterState]:
    """The snapshots of one file: one for ``.json``/``.yaml``, the lines of a ``.jsonl``.

    The cyclic garbage collector is paused while the file is decoded and validated: a large
    snapshot allocates hundreds of thousands of acyclic containers, and the collector's repeated
    scans of them would cost a third of the load time for nothing.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return _read_snapshot_file(path)
    finally:
        if paused:
            gc.enable()


def _read_snapshot_file(path: Path | str) -> list[ClusterState]:
    if str(path) == STDIN:
        name = "<stdin>"
        data = _maybe_gunzip(name, sys.stdin.buffer.read(), expect_gzip=False)
        return [parse_snapshot(_load_json(name, data), name)]
    name = str(path)
    kind, gz = _kind(name)
    data = _maybe_gunzip(name, _read_bytes(name), expect_gzip=gz)
    if not data or data.isspace():  # isspace stops at the first other byte: no copy
        raise SnapshotError(f"{name}: empty file (expected a snapshot)")
    if kind == "jsonl":
        return _read_jsonl(name, data)
    obj = _load_json(name, data) if kind == "json" else _load_yaml(name, data)
    return [parse_snapshot(obj, name)]


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


def _read_bytes(name: str) -> bytes:
    try:
        with open(name, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise SnapshotError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise SnapshotError(f"{name}: is a directory (expected a snapshot file)") from None
    except PermissionError:
        raise SnapshotError(f"{name}: permission denied") from None
    except OSError as e:
        raise SnapshotError(f"{name}: cannot read: {e.strerror or e}") from None


def _maybe_gunzip(name: str, data: bytes, *, expect_gzip: bool) -> bytes:
    if not data.startswith(_GZIP_MAGIC):
        if expect_gzip:
            raise SnapshotError(f"{name}: not a gzip file (the name ends in .gz)")
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise SnapshotError(f"{name}: bad gzip data: {_one_line(str(e))}") from None


def _load_json(name: str, data: bytes) -> Any:
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise _decode_error(name, data, "JSON", _json_reason(data, e), e.lineno, e.colno) from None


def _json_reason(data: bytes, e: orjson.JSONDecodeError) -> str:
    """orjson's reason, with a hint when Python-style ``NaN``/``Infinity`` stand for numbers."""
    if data[e.pos : e.pos + 9].lstrip(b"-").startswith((b"NaN", b"Infinity")):
        return f"{e.msg}; NaN and Infinity are not JSON numbers (rates must be finite)"
    return e.msg


def _decode_error(
    name: str, data: bytes, what: str, msg: str, line: int, col: int
) -> SnapshotError:
    """A decoding error; text that is not UTF-8 is reported as such, with its position."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as u:
        head = data[: u.start]
        line = head.count(b"\n") + 1
        col = u.start - (head.rfind(b"\n") + 1) + 1
        return SnapshotError(f"{name}: not UTF-8 text (bad byte at line {line}, column {col})")
    if not data.strip():
        return SnapshotError(f"{name}: empty file (expected a snapshot)")
    return SnapshotError(f"{name}: not valid {what}: {_one_line(msg)} (line {line}, column {col})")


def _load_yaml(name: str, data: bytes) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _decode_error(name, data, "YAML", "", 0, 0) from None
    try:
        return yaml.load(text, Loader=_YAML_LOADER)  # a safe loader: plain data only
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = e.problem or e.context or "syntax error"
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise SnapshotError(f"{name}: not valid YAML: {_one_line(problem)}{where}") from None
    except yaml.YAMLError as e:
        raise SnapshotError(f"{name}: not valid YAML: {_one_line(str(e))}") from None


def _read_jsonl(name: str, data: bytes) -> list[ClusterState]:
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    states: list[ClusterState] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            raise _decode_error(
                where, line, "JSON", _json_reason(line, e), number, e.colno
            ) from None
        states.append(parse_snapshot(obj, where))
    check_one_cluster(states)
    return states


# --------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------
def write_snapshot(state: ClusterState, path: Path | str) -> None:
    """Write one snapshot, in the format the extension names (``.jsonl``: a one-line sequence)."""
    write_snapshots([state], path)


def write_snapshots(states: Sequence[ClusterState], path: Path | str) -> None:
    """Write a sequence to a ``.jsonl`` file, or a single snapshot to a ``.json``/``.yaml`` one."""
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
    _atomic_write(name, data)


def append_snapshot(state: ClusterState, path: Path | str) -> None:
    """Append one snapshot to a ``.jsonl`` sequence (created when missing).

    Appends are one ``write`` of a whole line; for ``.jsonl.gz`` the line is a new gzip member,
    which gzip readers concatenate.
    """
    name = str(path)
    kind, gz = _kind(name)
    if kind != "jsonl":
        raise SnapshotError(f"{name}: can only append to a .jsonl sequence")
    data = _jsonl_line(state)
    if gz:
        data = gzip.compress(data, compresslevel=6, mtime=0)
    try:
        with open(name, "ab") as f:
            f.write(data)
    except OSError as e:
        raise SnapshotError(f"{name}: cannot write: {e.strerror or e}") from None


def encode_snapshot(state: ClusterState, kind: str = "json") -> bytes:
    """A snapshot as ``json`` (indented) or ``yaml`` bytes."""
    obj = snapshot_to_dict(state)
    if kind == "yaml":
        text = yaml.dump(obj, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True)
        return text.encode("utf-8")
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def _jsonl_line(state: ClusterState) -> bytes:
    return orjson.dumps(snapshot_to_dict(state), option=orjson.OPT_APPEND_NEWLINE)


def _atomic_write(name: str, data: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(name))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(
            dir=directory, prefix=f".{os.path.basename(name)}.", suffix=".tmp"
        )
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, name)
        tmp = None
    except OSError as e:
        raise SnapshotError(f"{name}: cannot write: {e.strerror or e}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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


def _one_line(text: str) -> str:
    return " ".join(text.split())
