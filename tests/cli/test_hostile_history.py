"""A history cut short at its end (hostile14): ``kill -9`` or a full disk during an append leaves
a partial last line (or, in a ``.jsonl.gz``, a gzip member cut off). Every command reading the
history used to refuse the whole file ("partial last line"); now the snapshots before the cut are
read and a warning says what was left out. ``snapshot validate`` still calls it an error (it
checks the file), a cut with nothing before it is still an error, and a bad line that is not the
last is still an error (only a crash's tail is forgiven)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.errors import SnapshotError

DATA = Path(__file__).resolve().parents[1] / "data" / "hostile"
EXAMPLES = Path(__file__).resolve().parents[2] / "lbctl" / "examples"
WHOLE = EXAMPLES / "two-brokers-90-10.jsonl"  # 6 snapshots; the cut files hold 5 and a half
CUT = DATA / "cut-history.jsonl"
CUT_GZ = DATA / "cut-history.jsonl.gz"


@pytest.mark.parametrize("path", [CUT, CUT_GZ], ids=["jsonl", "jsonl.gz"])
@pytest.mark.parametrize("command", [["recommend"], ["explain"], ["propose"],
                                     ["simulate", "--cycles", "1"], ["doctor"]])
def test_the_snapshots_before_a_cut_are_read_and_the_cut_is_said(
        runner: CliRunner, path: Path, command: list[str]) -> None:
    res = runner.invoke(app, [command[0], str(path), *command[1:]])
    assert res.exit_code in ((0, 1) if command[0] == "doctor" else (0,)), res.output
    assert "Traceback" not in res.output
    warnings = [line for line in res.stderr.splitlines() if line.startswith("lbctl: warning:")]
    assert "lbctl: error" not in res.stderr
    assert any(f"{path}:6: partial last line (an append was interrupted) left out; the 5 "
               "snapshot(s) before it are read" in w for w in warnings), res.stderr
    if path.suffix == ".gz":
        assert any("the compressed data is cut short at the end" in w for w in warnings)


@pytest.mark.parametrize("path", [CUT, CUT_GZ], ids=["jsonl", "jsonl.gz"])
def test_the_reader_keeps_exactly_the_whole_records(path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from lbctl.sources.snapshot import read_snapshot_file

    whole = read_snapshot_file(WHOLE)
    cut = read_snapshot_file(path)
    assert [s.captured_at for s in cut] == [s.captured_at for s in whole[:5]]
    assert "left out" in capsys.readouterr().err


@pytest.mark.parametrize("path", [CUT, CUT_GZ], ids=["jsonl", "jsonl.gz"])
def test_snapshot_validate_still_calls_the_cut_an_error(runner: CliRunner, path: Path) -> None:
    res = runner.invoke(app, ["snapshot", "validate", str(path)])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1, res.output
    assert res.stderr.startswith("lbctl: error: ")
    assert ("partial last line" in res.stderr
            or "the compressed data is truncated" in res.stderr), res.stderr


def test_a_cut_with_nothing_before_it_is_an_error(runner: CliRunner, tmp_path: Path) -> None:
    one = tmp_path / "h.jsonl"
    one.write_bytes(WHOLE.read_bytes()[:200])
    res = runner.invoke(app, ["recommend", str(one)])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1, res.output
    assert "h.jsonl:1: partial last line" in res.stderr
    gz = tmp_path / "h.jsonl.gz"
    gz.write_bytes(gzip.compress(WHOLE.read_bytes()[:200] + b"x" * 50, mtime=0)[:60])
    res = runner.invoke(app, ["recommend", str(gz)])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1, res.output


def test_a_bad_line_before_the_last_is_still_an_error(runner: CliRunner, tmp_path: Path) -> None:
    lines = WHOLE.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "h.jsonl"
    bad.write_bytes(b"".join(lines[:2]) + lines[2][:100] + b"\n" + b"".join(lines[3:]))
    res = runner.invoke(app, ["recommend", str(bad)])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1, res.output
    assert "h.jsonl:3:" in res.stderr


def test_a_whole_gzip_member_missing_only_its_trailer_keeps_its_line(tmp_path: Path) -> None:
    """The text of the last member was whole (its newline came out) but its CRC and size did
    not: the line is read (it still has to be a valid snapshot), the cut is said."""
    from lbctl.sources.snapshot import read_snapshot_file

    lines = WHOLE.read_bytes().splitlines(keepends=True)
    data = b"".join(gzip.compress(line, mtime=0) for line in lines)
    path = tmp_path / "h.jsonl.gz"
    path.write_bytes(data[:-8])  # the last member's CRC-32 and size
    assert len(read_snapshot_file(path)) == 6


@pytest.mark.parametrize("name", ["cut-history.jsonl", "cut-history.jsonl.gz"])
def test_a_streamed_sequence_reads_up_to_the_cut_and_says_it_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        name: str) -> None:
    """Sequences past STREAM_BYTES are read in passes: the cut is said once (by the validating
    pass) and the replay yields the same five snapshots."""
    import lbctl.sources.snapshot_stream as stream

    path = tmp_path / name
    shutil.copy(DATA / name, path)
    monkeypatch.setattr(stream, "STREAM_BYTES", 1000)
    seq = stream.open_sequence([path])
    assert isinstance(seq, stream.StreamedSnapshots)
    states = list(seq.states())
    assert len(states) == 5
    err = capsys.readouterr().err
    assert err.count("partial last line") == 1, err
    assert err.count("cut short") == (1 if name.endswith(".gz") else 0), err


def test_the_reader_raises_in_strict_mode() -> None:
    from lbctl.sources.snapshot import read_snapshot_file

    with pytest.raises(SnapshotError, match="partial last line"):
        read_snapshot_file(CUT, strict=True)
