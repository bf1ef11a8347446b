"""Which files an ingest reads: inputs listed recursively, and the manifest of what is done.

Inputs are files or directories (walked recursively; entries starting with ``.`` or ``_`` are skipped, as Spark
skips them) of snapshot files:
``.json``, ``.yaml``/``.yml``, ``.jsonl``/``.ndjson``, each optionally ``.gz``. Other files in an
input directory are not snapshots and are left alone (a file named explicitly is always read, so a
wrong extension is reported by the reader).

The manifest (``_lbctl_fleet.json`` in the output directory) remembers every file read
successfully with its size and modification time; a re-run reads only files that are new or
changed. Which *snapshots* are already stored is decided from the data itself (``snapshots``
table, by cluster and ``capturedAt``), so a grown ``.jsonl`` adds only its new lines. Malformed
files are never recorded, so they are reported again on every run until fixed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson

from lbctl.errors import UsageError

MANIFEST = "_lbctl_fleet.json"
MANIFEST_FORMAT = "lbctl/fleet-manifest@1"
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


def list_inputs(paths: Iterable[Path | str]) -> list[InputFile]:
    """Every snapshot file under ``paths``, each once, in a stable (sorted) order."""
    seen: dict[str, InputFile] = {}
    for p in paths:
        root = Path(p)
        if not root.exists():
            raise UsageError(f"{p}: no such file or directory")
        if root.is_file():
            _add(seen, root)
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(_HIDDEN))
            for name in sorted(filenames):
                if not name.startswith(_HIDDEN) and is_snapshot_name(name):
                    _add(seen, Path(dirpath) / name)
    return sorted(seen.values(), key=lambda f: f.path)


def _add(seen: dict[str, InputFile], path: Path) -> None:
    full = str(path.resolve())
    st = path.stat()
    seen[full] = InputFile(full, st.st_size, st.st_mtime_ns)


def read_manifest(out: Path) -> dict[str, list[int]]:
    """File path → [size, mtime_ns] of the files already ingested into ``out``."""
    f = out / MANIFEST
    if not f.exists():
        return {}
    try:
        data = orjson.loads(f.read_bytes())
        files = data["files"]
        if data.get("format") != MANIFEST_FORMAT or not isinstance(files, dict):
            raise ValueError
    except (OSError, ValueError, KeyError, TypeError):
        raise UsageError(f"{f}: not an lbctl fleet manifest; is {out} an ingest output?") from None
    return {str(k): list(v) for k, v in files.items()}


def write_manifest(out: Path, files: Mapping[str, list[int]]) -> None:
    """Replace the manifest atomically (a reader never sees half a file)."""
    out.mkdir(parents=True, exist_ok=True)
    data = orjson.dumps({"format": MANIFEST_FORMAT, "files": dict(sorted(files.items()))},
                        option=orjson.OPT_INDENT_2)
    fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{MANIFEST}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, out / MANIFEST)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def changed(inputs: Iterable[InputFile], manifest: Mapping[str, list[int]]) -> list[InputFile]:
    """The inputs that are new or whose size or modification time differ from the manifest."""
    return [f for f in inputs if manifest.get(f.path) != f.stamp]
