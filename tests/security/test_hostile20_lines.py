"""One giant line in a ``.jsonl`` sequence (hostile20): refused by its length, before it is held.

A sequence is read whole up to ``--max-input-size`` (1 GiB), so a file of one 200 MB line was
read, copied and decoded only to be refused as a snapshot (0.8 GB of memory for ``snapshot
validate``), and the streamed replay of ``recommend`` joined the line chunk by chunk into one
growing buffer (28 s). A line may now be at most :func:`lbctl.safe.files.max_line_bytes` (an eighth
of the input limit, at least 128 MiB): the whole-file read scans a file larger than that a chunk
at a time first, gzip data is checked as it inflates, and the streamed read counts lines in its
first pass. The message names the file and the line.

The tests lower the limit (``LINE_FLOOR`` and ``--max-input-size``) so that a few megabytes show
it; the slow test uses the real limit and a 200 MB line in a subprocess.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.errors import SnapshotError
from lbctl.safe import files
from lbctl.safe.files import LIMITS, MIB, LineCheck
from lbctl.sources.snapshot import read_snapshot_file
from lbctl.sources.snapshot_stream import STREAM_BYTES, StreamedSnapshots, open_sequence
from tests.paths import EXAMPLES, ROOT

HOT = orjson.dumps(json.loads((EXAMPLES / "hot-broker.json").read_text()))
CAP = 2 * MIB  # the line limit in these tests: --max-input-size 16M, LINE_FLOOR 1 MiB


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "LINE_FLOOR", MIB)
    monkeypatch.setattr(LIMITS, "max_input_bytes", 16 * MIB)
    assert files.max_line_bytes() == CAP


def _giant(size: int) -> bytes:
    """A line of ``size`` bytes that is a JSON object (a snapshot missing most keys)."""
    head = b'{"format":"lbctl/snapshot@1","cluster":"'
    return head + b"x" * (size - len(head) - 2) + b'"}'


def _sequence(path: Path, giant: int, *, gz: bool = False) -> Path:
    data = HOT + b"\n" + _giant(giant) + b"\n" + HOT + b"\n"
    path.write_bytes(gzip.compress(data, 1) if gz else data)
    return path


def _one_line(res: object, where: str) -> str:
    lines = res.stderr.splitlines()  # type: ignore[attr-defined]
    assert res.exit_code == 1, res.stderr  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("lbctl: error: "), lines
    assert f"{where}: a line longer than 2 MiB" in lines[0] and "--max-input-size" in lines[0]
    return lines[0]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("giant", [3 * MIB, STREAM_BYTES + MIB], ids=["whole", "streamed"])
@pytest.mark.parametrize("command", [["snapshot", "validate"], ["recommend"], ["explain"],
                                     ["simulate", "--cycles", "1"]], ids=lambda c: c[0])
def test_a_giant_line_is_one_line_naming_the_file_and_line(small_cap: None, tmp_path: Path,
                                                            gz: bool, giant: int,
                                                            command: list[str]) -> None:
    """Whole-file and streamed reads (recommend streams a sequence over 4 MiB), plain and gzip,
    give the same one line, naming line 2."""
    f = _sequence(tmp_path / ("s.jsonl.gz" if gz else "s.jsonl"), giant, gz=gz)
    res = CliRunner().invoke(app, ["--max-input-size", "16M", *command, str(f)])
    _one_line(res, f"{f}:2")
    assert res.stdout == ""


def test_a_line_at_the_limit_is_read_and_one_byte_more_is_not(small_cap: None,
                                                              tmp_path: Path) -> None:
    line = HOT + b" " * (CAP - len(HOT))  # whitespace after the object: still that snapshot
    assert len(line) == CAP
    f = tmp_path / "s.jsonl"
    f.write_bytes(HOT + b"\n" + line + b"\n")
    assert len(read_snapshot_file(f)) == 2
    f.write_bytes(HOT + b"\n" + line + b" \n")
    with pytest.raises(SnapshotError, match=r"s\.jsonl:2: a line longer than 2 MiB"):
        read_snapshot_file(f)


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("reader", ["whole", "streamed"])
def test_the_giant_line_is_never_held(small_cap: None, tmp_path: Path, gz: bool,
                                      reader: str) -> None:
    """A 12 MiB line under a 16 MiB input limit: the readers refuse it holding at most a few
    chunks (before: the whole file, then a copy of the line)."""
    f = _sequence(tmp_path / ("s.jsonl.gz" if gz else "s.jsonl"), 12 * MIB, gz=gz)
    tracemalloc.start()
    try:
        with pytest.raises(SnapshotError, match="a line longer than"):
            if reader == "whole":
                read_snapshot_file(f)
            else:
                got = open_sequence([f])
                assert isinstance(got, StreamedSnapshots)  # pragma: no cover - refused first
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * MIB + 2 * CAP, f"{peak / MIB:.1f} MiB held"


def test_the_replay_refuses_a_line_grown_after_validation(small_cap: None,
                                                          tmp_path: Path) -> None:
    """The streamed replay's own check (pass 1 saw a good file; the bytes changed since)."""
    f = tmp_path / "s.jsonl"
    f.write_bytes((HOT + b"\n") * (STREAM_BYTES // len(HOT) + 2))
    seq = open_sequence([f])
    assert isinstance(seq, StreamedSnapshots)
    with f.open("r+b") as out:  # same inode: the digests would say so, but the length first
        out.seek(0)
        out.write(b" " * (3 * MIB))
    with pytest.raises(SnapshotError, match=r"s\.jsonl:1: a line longer than 2 MiB"):
        list(seq.states())


@pytest.mark.parametrize("step", [1, 7, 4096, 3 * MIB])
def test_line_check_counts_lines_across_chunks(step: int) -> None:
    """Lines split across chunks, and chunks larger than the cap (the per-line walk)."""
    cap = 10
    data = b"0123456789\n\n0123\n" + b"x" * 11 + b"\nshort\n"
    check = LineCheck("f", cap, SnapshotError)
    with pytest.raises(SnapshotError, match=r"^f:4: a line longer than 10 bytes"):
        for i in range(0, len(data), step):
            check.feed(data[i:i + step])
    ok = LineCheck("f", cap, SnapshotError)
    for i in range(0, 17, step):
        ok.feed(data[i:min(i + step, 17)])
    assert ok.number == 4 and ok.run == 0


@pytest.mark.slow
def test_a_200_mb_line_is_refused_in_little_memory(tmp_path: Path) -> None:
    """The real limit (128 MiB) and a 200 MB line, in a subprocess: one line, exit 1, and the
    process's peak resident memory (VmHWM: ru_maxrss would count pytest's, inherited
    through exec) far below the file (before: 800 MB for validate, 28 s to replay)."""
    f = tmp_path / "giant.jsonl"
    with f.open("wb") as out:
        out.write(b'{"format":"lbctl/snapshot@1","cluster":"')
        for _ in range(200):
            out.write(b"x" * 1_000_000)
        out.write(b'"}\n')
    probe = ("import re, runpy, sys\n"
             "sys.argv = ['lbctl', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('lbctl', run_name='__main__')\n"
             "except SystemExit as e:\n    code = e.code\n"
             "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1]\n"
             "print('VmHWM', hwm, file=sys.stderr)\n"
             "sys.exit(code)\n")
    for command in (["snapshot", "validate"], ["recommend"]):
        r = subprocess.run([sys.executable, "-c", probe, *command, str(f)], capture_output=True,
                           text=True, timeout=120, cwd=ROOT)
        lines = r.stderr.splitlines()
        assert r.returncode == 1, r.stderr
        assert lines[0] == (f"lbctl: error: {f}:1: a line longer than 128 MiB (the limit for one "
                            "line of a sequence, an eighth of the input size limit; raise it "
                            "with --max-input-size)")
        kib = int(lines[-1].split()[1])
        assert kib < 150 * 1024, f"{command}: {kib // 1024} MiB"


@pytest.mark.parametrize("terminated", [True, False], ids=["last-line", "unterminated-tail"])
def test_an_append_after_a_giant_line_is_refused_and_changes_nothing(small_cap: None,
                                                                     tmp_path: Path,
                                                                     terminated: bool) -> None:
    """``snapshot export --append`` (and the journal, and watch's history) read the file's last
    line to check it, and an unterminated tail to keep or cut it: read whole before, whatever
    its length. Over the line limit, the append is refused and the file left as it was."""
    from lbctl.sources.snapshot import append_snapshot

    state = read_snapshot_file(EXAMPLES / "hot-broker.json")[0]
    f = tmp_path / "s.jsonl"
    body = HOT + b"\n" + _giant(3 * MIB) + (b"\n" if terminated else b"")
    f.write_bytes(body)
    tracemalloc.start()
    try:
        with pytest.raises(SnapshotError, match=r"longer than 2 MiB.*nothing was appended"):
            append_snapshot(state, f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f.read_bytes() == body
    assert peak < 2 * CAP, f"{peak / MIB:.1f} MiB held"
    f.write_bytes(HOT + b"\n")  # an ordinary sequence still takes it
    assert append_snapshot(state, f) == 0 and len(read_snapshot_file(f)) == 2
