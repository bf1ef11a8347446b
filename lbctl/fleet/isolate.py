"""lbctl's reader in a child process, for the files that could crash the process reading them.

libyaml's composer recurses in C: a YAML file nested tens of thousands of levels deep overflows
the stack and kills the process with a segmentation fault — in a Spark task, the Python worker,
and with it the whole job. So the ingest reads YAML files here: one child process per task
(``python -m lbctl.fleet.isolate``) reads the files one after the other and streams their rows
back; if it dies, the file it was reading is reported with one line, and a new child goes on
with the rest. JSON needs no such care (orjson bounds the nesting depth and says so).

Protocol on the pipes: the parent writes one JSON-encoded path per line; for each path the child
writes pickled frames ``("batch", columns)`` … then ``("done", None)``.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import subprocess
import sys
from collections.abc import Generator, Iterable, Iterator
from typing import IO, Any

import orjson

from lbctl.fleet.rows import Batch, error_batch, file_rows

_LEN = struct.Struct("<Q")


def needs_isolation(path: str) -> bool:
    lower = path.lower().removesuffix(".gz")
    return lower.endswith((".yaml", ".yml"))


def isolated_file_rows(paths: Iterable[str]) -> Iterator[Batch]:
    """The rows of each file, read by a child process (restarted after a crash)."""
    todo = list(paths)
    while todo:
        child = _start()
        try:
            while todo:
                path = todo[0]
                ok = yield from _one(child, path)
                todo.pop(0)
                if not ok:
                    yield error_batch(path, _crash_message(path, child))
                    break
        finally:
            _stop(child)


def _start() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "lbctl.fleet.isolate"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)


def _stop(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        assert child.stdin is not None
        child.stdin.close()
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    if child.stdout is not None:  # a crashed child leaves its pipe open otherwise
        child.stdout.close()


def _one(child: subprocess.Popen[bytes], path: str) -> Generator[Batch, None, bool]:
    """Ask the child for one file; yields its batches; returns False if the child died."""
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write(orjson.dumps(path) + b"\n")
        child.stdin.flush()
    except OSError:
        return False
    while True:
        frame = _read_frame(child.stdout)
        if frame is None:
            return False
        kind, payload = frame
        if kind == "done":
            return True
        b = Batch()
        b.cols, b.n = payload
        yield b


def _crash_message(path: str, child: subprocess.Popen[bytes]) -> str:
    try:
        code = child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        code = None
    how = ""
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            how = f" ({signal.Signals(-code).name})"
    return (f"{path}: cannot read: the reader crashed{how}; a YAML document nested too deeply "
            "does this")


def _read_frame(stream: IO[bytes]) -> tuple[str, Any] | None:
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    (n,) = _LEN.unpack(head)
    body = stream.read(n)
    if len(body) < n:
        return None
    frame: tuple[str, Any] = pickle.loads(body)
    return frame


def _write_frame(stream: IO[bytes], frame: tuple[str, Any]) -> None:
    body = pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LEN.pack(len(body)) + body)


def main() -> None:
    """The child: read paths from stdin, write frames to stdout."""
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        path = orjson.loads(line)
        for batch in file_rows(path):
            _write_frame(out, ("batch", (batch.cols, batch.n)))
        _write_frame(out, ("done", None))
        out.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
