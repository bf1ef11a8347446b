"""A history written by ``write_history`` has its lines written (and, for ``.jsonl.gz``,
compressed) on a writer thread of its own (``lbctl.sources.prometheus.output.LineWriter``), the
file made durable as it grows: the same bytes as the lines built, in order; a write's error is
the same one line as before and leaves no file; an interrupt leaves no file and no thread. On
the in-memory Prometheus of test_prometheus_output."""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lbctl.admin.prometheus import PrometheusClient
from lbctl.errors import SnapshotError
from lbctl.sources.prometheus import PrometheusHistory, write_history
from lbctl.sources.prometheus import output as out_mod
from lbctl.sources.prometheus.output import checked
from tests.sources.test_prometheus_output import REQ, fake


class Spy:
    """The atomic file, its writes recorded: (thread name, bytes) each."""

    def __init__(self, fh: Any, fail_at: int | None = None) -> None:
        self.fh = fh
        self.fd = fh.fileno()
        self.writes: list[tuple[str, bytes]] = []
        self.fail_at = fail_at
        self.delay = 0.0
        self.writing = threading.Event()  # set once a write has begun

    def write(self, data: bytes) -> int:
        if self.fail_at is not None and len(self.writes) == self.fail_at:
            self.fail_at = None  # once: a line after it would be written
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.writing.set()
        time.sleep(self.delay)
        self.writes.append((threading.current_thread().name, bytes(data)))
        return int(self.fh.write(data))

    def flush(self) -> None:
        self.fh.flush()

    def fileno(self) -> int:
        return int(self.fd)


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> list[Spy]:
    """Every atomic file ``write_history`` opens, wrapped in a :class:`Spy`."""
    made: list[Spy] = []
    real = getattr(out_mod, "atomic_file")  # noqa: B009  # imported there, not exported

    @contextlib.contextmanager
    def spying(*a: Any, **k: Any) -> Iterator[Spy]:
        with real(*a, **k) as fh:
            made.append(Spy(fh, getattr(spying, "fail_at", None)))
            made[-1].delay = getattr(spying, "delay", 0.0)
            yield made[-1]

    monkeypatch.setattr(out_mod, "atomic_file", spying)
    return made


def lines() -> list[bytes]:
    """The lines the building thread makes, in order."""
    with PrometheusClient("http://prom", transport=fake()) as c:
        return [line for _, line in checked(PrometheusHistory(c, REQ), write=True)]


def writers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "lbctl-writer"]


def test_the_lines_are_written_off_the_building_thread_in_order(
        spied: list[Spy], tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    with PrometheusClient("http://prom", transport=fake()) as c:
        write_history(c, REQ, str(path))
    want = lines()
    assert len(want) > 3
    (spy,) = spied
    assert [data for _, data in spy.writes] == want  # one write per line, in order
    assert {name for name, _ in spy.writes} == {"lbctl-writer"}
    assert path.read_bytes() == b"".join(want)
    assert writers() == []


def test_a_gz_history_is_compressed_on_the_writer_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each line goes through the compressor (``GzipFile.write``) on the writer thread."""
    compressed: list[tuple[str, bytes]] = []
    real = gzip.GzipFile.write

    def write(self: gzip.GzipFile, data: Any) -> int:
        compressed.append((threading.current_thread().name, bytes(data)))
        return real(self, data)

    monkeypatch.setattr(gzip.GzipFile, "write", write)
    path = tmp_path / "h.jsonl.gz"
    with PrometheusClient("http://prom", transport=fake()) as c:
        write_history(c, REQ, str(path))
    want = lines()
    assert compressed == [("lbctl-writer", line) for line in want]
    assert gzip.decompress(path.read_bytes()) == b"".join(want)


def test_the_file_is_made_durable_as_it_grows(spied: list[Spy], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Every SYNC_EVERY bytes, what was written is flushed to the file and fdatasync-ed."""
    synced: list[tuple[int, int]] = []  # (fd, the file's size then)
    monkeypatch.setattr(out_mod, "SYNC_EVERY", 1)
    monkeypatch.setattr(os, "fdatasync", lambda fd: synced.append((fd, os.fstat(fd).st_size)),
                        raising=False)
    with PrometheusClient("http://prom", transport=fake()) as c:
        write_history(c, REQ, str(tmp_path / "h.jsonl"))
    (spy,) = spied
    sizes = [sum(len(d) for _, d in spy.writes[:k]) for k in range(1, len(spy.writes) + 1)]
    assert [size for _, size in synced] == sizes
    assert len({fd for fd, _ in synced}) == 1  # the file's


def test_a_write_error_is_the_one_line_error_and_leaves_no_file(
        spied: list[Spy], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk at the third line: the same one line as when the building thread wrote, the
    temporary file removed, the writer gone; nothing after the failed line is written."""
    monkeypatch.setattr(getattr(out_mod, "atomic_file"), "fail_at", 2,  # noqa: B009
                        raising=False)
    path = tmp_path / "h.jsonl"
    with (PrometheusClient("http://prom", transport=fake()) as c,
          pytest.raises(SnapshotError) as e):
        write_history(c, REQ, str(path))
    assert str(e.value) == f"{path}: cannot write: No space left on device"
    assert list(tmp_path.iterdir()) == []
    assert len(spied[0].writes) == 2
    assert writers() == []


def test_an_interrupt_leaves_no_file_and_no_writer(
        spied: list[Spy], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Interrupted while the writer is slow: the writer is waited for (never left writing to
    a file that is being removed), and the lines still waiting are dropped."""
    real = out_mod.checked
    monkeypatch.setattr(getattr(out_mod, "atomic_file"), "delay", 0.2,  # noqa: B009
                        raising=False)

    def interrupted(*a: Any, **k: Any) -> Iterator[Any]:
        for k_, item in enumerate(real(*a, **k)):
            if k_ == 3:  # once the writer is in the first line's (slow) write
                assert spied[0].writing.wait(10)
                raise KeyboardInterrupt
            yield item

    monkeypatch.setattr(out_mod, "checked", interrupted)
    with (PrometheusClient("http://prom", transport=fake()) as c,
          pytest.raises(KeyboardInterrupt)):
        write_history(c, REQ, str(tmp_path / "h.jsonl"))
    assert writers() == []
    assert list(tmp_path.iterdir()) == []
    assert len(spied[0].writes) < 3
