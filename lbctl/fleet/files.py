"""Which files an ingest reads: inputs listed recursively, and the manifest of what is done.

Inputs are files or directories (walked recursively; entries starting with ``.`` or ``_`` are skipped, as Spark
skips them) of snapshot files:
``.json``, ``.yaml``/``.yml``, ``.jsonl``/``.ndjson``, each optionally ``.gz``. Other files in an
input directory are not snapshots and are left alone (a file named explicitly is always read, so a
wrong extension is reported by the reader). Only regular files are read: a symbolic link (to a file
or a directory, dangling or not: lbctl reads nothing through a link, :mod:`lbctl.safe.files`),
a FIFO, a socket or a device in an input directory is reported with one line and skipped (a FIFO
would block the reader forever), as is a directory that cannot be listed; an input named on the
command line that is a link is refused.

The manifest (``_lbctl_fleet.json`` in the output directory) remembers every file read
successfully with its size and modification time; a re-run reads only files that are new or
changed. Which *snapshots* are already stored is decided from the data itself (``snapshots``
table, by cluster and ``capturedAt``), so a grown ``.jsonl`` adds only its new lines. Malformed
files are never recorded, nor a ``.jsonl`` with a bad line (its good lines are ingested), so they
are reported again on every run until fixed — and a fixed line is then added, the lines already
stored are not added twice.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson

from lbctl.errors import LbctlError, UsageError
from lbctl.safe.files import atomic_write, link_message, open_dir, refuse_link

MANIFEST = "_lbctl_fleet.json"
MANIFEST_FORMAT = "lbctl/fleet-manifest@2"  # @2: bundles carry owner_bundles, owner_throughput
_HIDDEN = (".", "_")  # hidden, and Spark/Hadoop bookkeeping such as this manifest
_SUFFIXES = (".json", ".yaml", ".yml", ".jsonl", ".ndjson")


@dataclass(frozen=True, slots=True)
class InputFile:
    path: str  # absolute
    size: int
    mtime_ns: int

    @property
    def stamp(self) -> list[int]:
        return [self.size, self.mtime_ns]


def is_snapshot_name(name: str) -> bool:
    lower = name.lower()
    if lower.endswith(".gz"):
        lower = lower[:-3]
    return lower.endswith(_SUFFIXES)


@dataclass
class Listing:
    """The snapshot files found, and the entries that cannot be read (file → one-line reason)."""

    files: list[InputFile]
    skipped: dict[str, str]


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a directory"))


def list_inputs(paths: Iterable[Path | str]) -> Listing:
    """Every snapshot file under ``paths``, each once, in a stable (sorted) order."""
    seen: dict[str, InputFile] = {}
    skipped: dict[str, str] = {}
    for p in paths:
        root = Path(p)
        refuse_link(root, error=UsageError)
        if not root.exists():
            raise UsageError(f"{p}: no such file or directory")
        if not root.is_dir():
            _add(seen, skipped, root)
            continue

        for dirpath, dirnames, filenames in os.walk(root, onerror=_unlisted(skipped, root)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(_HIDDEN))
            for d in [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                dirnames.remove(d)  # os.walk would not enter it either, but without a word
                shown = os.path.abspath(os.path.join(dirpath, d))
                skipped[shown] = link_message(shown)
            for name in sorted(filenames):
                if not name.startswith(_HIDDEN) and is_snapshot_name(name):
                    _add(seen, skipped, Path(dirpath) / name)
    return Listing(sorted(seen.values(), key=lambda f: f.path), dict(sorted(skipped.items())))


def _unlisted(skipped: dict[str, str], root: Path) -> Callable[[OSError], None]:
    """os.walk's error handler: a directory that cannot be listed is reported, not fatal."""

    def record(e: OSError) -> None:
        name = os.path.abspath(e.filename or str(root))
        skipped[name] = f"{name}: cannot list the directory: {e.strerror or e}"

    return record


def _add(seen: dict[str, InputFile], skipped: dict[str, str], path: Path) -> None:
    """A regular file is recorded (by its real path); anything else is skipped with a reason."""
    shown = os.path.abspath(path)
    try:
        st = os.lstat(path)  # a link is not followed
    except FileNotFoundError:
        skipped[shown] = f"{shown}: no such file"
        return
    except OSError as e:
        skipped[shown] = f"{shown}: cannot read: {e.strerror or e}"
        return
    if stat.S_ISLNK(st.st_mode):
        skipped[shown] = link_message(shown)
        return
    if not stat.S_ISREG(st.st_mode):
        what = next((w for test, w in _KINDS if test(st.st_mode)), "not a regular file")
        skipped[shown] = f"{shown}: not a regular file ({what}); only regular files are read"
        return
    if not os.access(path, os.R_OK):
        skipped[shown] = f"{shown}: permission denied"
        return
    full = str(path.resolve())
    seen[full] = InputFile(full, st.st_size, st.st_mtime_ns)


def read_manifest(out: Path) -> dict[str, list[int]]:
    """File path → [size, mtime_ns] of the files already ingested into ``out``."""
    f = out / MANIFEST
    if not f.exists() and not f.is_symlink():
        return {}
    from lbctl.safe.files import open_regular

    # never through a link, and a FIFO there is refused, not waited on (hostile18): the open
    # does not block and the file must be regular; any size (a manifest grows with the inputs)
    fd = open_regular(str(f), what="an lbctl fleet manifest", error=UsageError)
    try:
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read()
        data = orjson.loads(raw)
        files = data["files"]
        fmt = data.get("format")
        if not isinstance(files, dict) or not isinstance(fmt, str):
            raise ValueError
    except (OSError, ValueError, KeyError, TypeError):
        raise UsageError(f"{f}: not an lbctl fleet manifest; is {out} an ingest output?") from None
    if fmt != MANIFEST_FORMAT:
        raise UsageError(f"{out}: written by another lbctl version ({fmt}, this one writes "
                         f"{MANIFEST_FORMAT}); ingest into a new directory")
    return {str(k): list(v) for k, v in files.items()}


def write_manifest(out: Path, files: Mapping[str, list[int]]) -> None:
    """Replace the manifest atomically (a reader never sees half a file), with
    :func:`lbctl.safe.files.atomic_write` relative to a descriptor of ``out`` (created, as
    ``mkdir -p`` would, each directory relative to its parent's descriptor): the one way lbctl
    writes a file, so a directory on the way swapped for a link cannot send it elsewhere."""
    data = orjson.dumps({"format": MANIFEST_FORMAT, "files": dict(sorted(files.items()))},
                        option=orjson.OPT_INDENT_2)
    with open_dir(out, error=LbctlError, make=0o777) as held:
        atomic_write(MANIFEST, data, error=LbctlError, at=held)


def changed(inputs: Iterable[InputFile], manifest: Mapping[str, list[int]]) -> list[InputFile]:
    """The inputs that are new or whose size or modification time differ from the manifest."""
    return [f for f in inputs if manifest.get(f.path) != f.stamp]


def tree_size(root: Path) -> int:
    """Bytes of the regular files under ``root`` (a hint for sizing Spark)."""
    total = 0
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(dirpath, name)).st_size
    return total
