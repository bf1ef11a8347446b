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

Reading is bounded (:mod:`lbctl.safe.files`): regular files only (a FIFO or a device is refused before
a byte is read), at most ``--max-input-size`` bytes after decompression, YAML nested at most
:data:`MAX_YAML_DEPTH` levels, with no alias to a collection that contains it and no alias
explosion; a key repeated in one object is an error (it would silently replace the first value).

Writing picks the format from the extension the same way; files are written atomically (an
anonymous temporary file in the same directory, then ``os.replace``; mode 0600), and
``append_snapshot`` adds one line to a ``.jsonl`` sequence (a new gzip member for ``.jsonl.gz``)
crash-safely.
"""

from __future__ import annotations

import gc
import gzip
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import yaml

from lbctl.errors import SnapshotError
from lbctl.model.cluster import ClusterState
from lbctl.safe.files import append_record, atomic_write, gunzip_limited, read_regular, read_stream
from lbctl.sources.snapshot_fast import fast_load
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
        if s.load_manager != first.load_manager:
            raise SnapshotError(
                f"{s.source}: loadManager {_quote(s.load_manager)} differs from "
                f"{_quote(first.load_manager)} of {first.source}; a sequence must be of one "
                "load manager"
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
        raw = read_stream(getattr(sys.stdin, "buffer", None), name, error=SnapshotError)
        data = _maybe_gunzip(name, raw, expect_gzip=False)
        if not data or data.isspace():
            raise SnapshotError(f"{name}: empty input (expected a snapshot)")
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
    """A regular file's bytes (a FIFO or a device is refused before any read), bounded."""
    return read_regular(name, what="a snapshot file", error=SnapshotError)


def _maybe_gunzip(name: str, data: bytes, *, expect_gzip: bool) -> bytes:
    if not data.startswith(_GZIP_MAGIC):
        if expect_gzip:
            raise SnapshotError(f"{name}: not a gzip file (the name ends in .gz)")
        return data
    return gunzip_limited(data, name, error=SnapshotError)


def _load_json(name: str, data: bytes) -> Any:
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if len(data) > FAST_READ_BYTES:  # large, machine-written: the typed decode first
        fast = fast_load(data)
        if fast is not None:
            return fast
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise _decode_error(name, data, "JSON", _json_reason(data, e), e.lineno, e.colno) from None
    if len(data) <= DUPLICATE_CHECK_BYTES:
        _check_duplicate_keys(name, data)
    return obj


#: documents up to this size are also checked for repeated object keys (a JSON object with a key
#: twice decodes to its last value: a second report of the same broker id would silently replace
#: the first). The check re-decodes with the standard library (measured: +160 ms on a 5 MB,
#: 20,000-bundle snapshot that otherwise reads in 210 ms), so larger documents (machine-written
#: exports, where keys cannot repeat) skip it.
DUPLICATE_CHECK_BYTES = 4 << 20
#: documents larger than this are read by :func:`lbctl.sources.snapshot_fast.fast_load` first (a
#: typed msgspec decode, about twice as fast on a 200,000-bundle file); smaller ones, and any the
#: fast reader refuses, the ordinary way, whose checks name what is wrong
FAST_READ_BYTES = DUPLICATE_CHECK_BYTES


class _DuplicateKey(Exception):
    def __init__(self, key: str, path: str):
        super().__init__(key)
        self.key = key
        self.path = path


def _check_duplicate_keys(name: str, data: bytes) -> None:
    import json

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            seen: set[str] = set()
            for k, _ in items:
                if k in seen:
                    raise _DuplicateKey(k, _where(k, items))
                seen.add(k)
        return out

    try:
        json.loads(data, object_pairs_hook=pairs)
    except _DuplicateKey as e:
        from lbctl.sources.snapshot_schema import key_path

        raise SnapshotError(
            f"{name}: the key {key_path(e.key)[1:-1]} appears twice in one object{e.path} "
            "(a duplicate key would silently replace the first value)") from None
    except (ValueError, RecursionError):
        return  # orjson accepted it; the standard library's limits differ: nothing to report


def _where(key: str, items: list[tuple[str, Any]]) -> str:
    """A hint naming the object: the brokers map is recognised by its reports."""
    values = [v for _, v in items]
    if any(isinstance(v, dict) and ("lastStats" in v or "cpu" in v or "bundles" in v)
           for v in values):
        return " (brokers: two reports for one broker id)"
    return ""


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


#: nesting depth of a YAML document (a snapshot needs about 8): libyaml builds nodes recursively
#: and crashes the interpreter (a C stack overflow) on tens of thousands of levels
MAX_YAML_DEPTH = 64
#: nodes a YAML document may expand to through aliases (``*ref``): a few anchors referring to
#: each other can stand for billions of nodes ("billion laughs")
MAX_YAML_NODES = 10_000_000


def _load_yaml(name: str, data: bytes) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _decode_error(name, data, "YAML", "", 0, 0) from None
    try:
        _check_yaml_shape(name, text)
        return yaml.load(text, Loader=_StrictYamlLoader)  # a safe loader: plain data only
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = e.problem or e.context or "syntax error"
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise SnapshotError(f"{name}: not valid YAML: {_one_line(problem)}{where}") from None
    except yaml.YAMLError as e:
        raise SnapshotError(f"{name}: not valid YAML: {_one_line(str(e))}") from None
    except ValueError as e:  # e.g. an integer of more than 4,300 digits (int() refuses it)
        raise SnapshotError(f"{name}: not a usable YAML value: {_one_line(str(e))[:200]}") from None
    except RecursionError:
        raise SnapshotError(f"{name}: YAML nested too deeply") from None
    except _DuplicateKey as e:
        raise SnapshotError(f"{name}: the key {_one_line(e.key)[:80]!r} appears twice in one "
                            f"mapping{e.path}; a duplicate key would silently replace the first "
                            "value") from None


def _check_yaml_shape(name: str, text: str) -> None:
    """Walk the YAML events (libyaml's parser is iterative) before anything is built: refuse
    nesting deeper than :data:`MAX_YAML_DEPTH`, an alias to a collection it is inside of (a
    self-referencing structure), and aliases expanding past :data:`MAX_YAML_NODES` nodes."""
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    starts = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    stack: list[list[Any]] = []  # [anchor, nodes so far, mark]
    anchored: dict[str, int] = {}
    total = 0

    def where(event: Any) -> str:
        mark = event.start_mark
        return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""

    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, starts):
            if len(stack) >= MAX_YAML_DEPTH:
                raise SnapshotError(f"{name}: YAML nested deeper than {MAX_YAML_DEPTH} levels"
                                    f"{where(event)}")
            stack.append([event.anchor, 1])
        elif isinstance(event, ends):
            anchor, nodes = stack.pop()
            if anchor is not None:
                anchored[anchor] = nodes
            if stack:
                stack[-1][1] += nodes
        elif isinstance(event, yaml.AliasEvent):
            if any(frame[0] == event.anchor for frame in stack):
                raise SnapshotError(f"{name}: YAML alias *{_one_line(str(event.anchor))[:80]} "
                                    f"refers to a collection that contains it{where(event)}")
            nodes = anchored.get(event.anchor or "", 1)
            total += nodes
            if stack:
                stack[-1][1] += nodes
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                anchored[event.anchor] = 1
            total += 1
            if stack:
                stack[-1][1] += 1
        if total > MAX_YAML_NODES or (stack and stack[0][1] > MAX_YAML_NODES):
            raise SnapshotError(f"{name}: YAML aliases expand to more than {MAX_YAML_NODES:,} "
                                f"nodes{where(event)}")


class _StrictYamlLoader(_YAML_LOADER):  # type: ignore[misc]  # libyaml's or pure-Python
    """The safe loader, refusing a mapping with a key twice (the last value would win silently:
    two reports of one broker id, one of them lost)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key = key_node.value
                if key in seen:
                    mark = key_node.start_mark
                    raise _DuplicateKey(str(key), f" (line {mark.line + 1}, column "
                                                  f"{mark.column + 1})")
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _read_jsonl(name: str, data: bytes) -> list[ClusterState]:
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    states: list[ClusterState] = []
    lines = data.split(b"\n")
    check_keys = len(data) <= DUPLICATE_CHECK_BYTES
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            if number == len(lines):  # the last line, without its newline: an append cut short
                raise SnapshotError(
                    f"{where}: partial last line (an append was interrupted); the next "
                    "'lbctl snapshot export --append' to this file removes it") from None
            raise _decode_error(
                where, line, "JSON", _json_reason(line, e), number, e.colno
            ) from None
        if check_keys:
            _check_duplicate_keys(where, line)
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
    partial last line left by an earlier crash is cut off first, a full disk leaves the file as it
    was. For ``.jsonl.gz`` the line is a new gzip member, which gzip readers concatenate. Returns
    the number of bytes of a partial last line that was removed (0 normally).
    """
    name = str(path)
    kind, gz = _kind(name)
    if kind != "jsonl":
        raise SnapshotError(f"{name}: can only append to a .jsonl sequence")
    data = _jsonl_line(state)
    if gz:
        data = gzip.compress(data, compresslevel=6, mtime=0)
    return append_record(name, data, gz=gz, error=SnapshotError)


def encode_snapshot(state: ClusterState, kind: str = "json") -> bytes:
    """A snapshot as ``json`` (indented) or ``yaml`` bytes."""
    obj = snapshot_to_dict(state)
    if kind == "yaml":
        text = yaml.dump(obj, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True)
        return text.encode("utf-8")
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


def _one_line(text: str) -> str:
    return " ".join(text.split())
