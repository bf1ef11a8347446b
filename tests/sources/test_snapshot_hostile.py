"""Issue 12: hostile snapshot files end in one clean error — never a hang, a crash, a traceback or
a silently dropped value (regular files only, size caps, YAML nesting and aliases, duplicate keys,
overlapping ranges, big integers, closed stdin, interrupted appends)."""

from __future__ import annotations

import errno
import gzip
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lbctl.errors import SnapshotError, SnapshotFormatError
from lbctl.safe.files import LIMITS
from lbctl.sources import append_snapshot, read_snapshot_file, read_snapshots, write_snapshot

VALID = Path(__file__).parent.parent / "data" / "valid"
MINIMAL = json.loads((VALID / "minimal.json").read_text())


@pytest.fixture
def small_limit():
    before = LIMITS.max_input_bytes
    LIMITS.max_input_bytes = 1 << 20
    yield LIMITS
    LIMITS.max_input_bytes = before


def _with_timeout(fn, seconds: float = 10.0):
    """Run ``fn`` in a thread; a hang fails the test instead of the run."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "hung"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "snap.json"
    os.mkfifo(fifo)
    with pytest.raises(SnapshotError, match="FIFO"):
        _with_timeout(lambda: read_snapshot_file(fifo))


def test_a_device_is_refused(tmp_path: Path) -> None:
    """A link named like a snapshot is refused as a link, before anything is read (hostile13:
    lbctl follows no link); the device itself, named directly, is refused as a device."""
    from lbctl.safe.files import read_regular

    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(SnapshotError, match="zero.json: is a symbolic link .*/dev/zero"):
        _with_timeout(lambda: read_snapshot_file(link))
    with pytest.raises(SnapshotError, match="/dev/zero: is a device"):
        _with_timeout(lambda: read_regular("/dev/zero", what="a snapshot file", error=SnapshotError))


def test_a_dangling_symlink_is_one_line(tmp_path: Path) -> None:
    link = tmp_path / "gone.json"
    link.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(SnapshotError, match="gone.json: is a symbolic link .*nowhere.json"):
        read_snapshot_file(link)


def test_a_gzip_bomb_stops_at_the_limit(tmp_path: Path, small_limit) -> None:
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (8 << 20)))  # 8 MiB of blanks, a few KB compressed
    with pytest.raises(SnapshotError, match="larger than 1 MiB.*--max-input-size"):
        read_snapshot_file(bomb)


def test_a_plain_file_over_the_limit(tmp_path: Path, small_limit) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (2 << 20))
    with pytest.raises(SnapshotError, match="larger than 1 MiB"):
        read_snapshot_file(big)


def test_deeply_nested_yaml_is_refused_before_it_is_built(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * 60000 + "]" * 60000 + "\n")  # libyaml's composer would crash
    with pytest.raises(SnapshotError, match="nested deeper than 64"):
        read_snapshot_file(deep)


def test_deep_block_yaml_too(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("".join(f"{' ' * i}k:\n" for i in range(200)) + " " * 200 + "x: 1\n")
    with pytest.raises(SnapshotError, match="nested deeper"):
        read_snapshot_file(deep)


def test_a_self_referencing_anchor_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "loop.yaml"
    f.write_text("format: lbctl/snapshot@1\ncluster: c\ncapturedAt: 0\nbrokers: &b\n  x: *b\n")
    with pytest.raises(SnapshotError, match="refers to a collection that contains it"):
        read_snapshot_file(f)


def test_alias_explosion_is_refused(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    f = tmp_path / "laughs.yaml"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(SnapshotError, match="expand to more than"):
        read_snapshot_file(f)


def test_yaml_integer_of_5000_digits(tmp_path: Path) -> None:
    f = tmp_path / "big.yaml"
    f.write_text("format: lbctl/snapshot@1\ncluster: c\ncapturedAt: " + "9" * 5000 + "\nbrokers: {}\n")
    with pytest.raises(SnapshotError, match="not a usable YAML value"):
        read_snapshot_file(f)


def test_duplicate_broker_ids_in_json_are_refused(tmp_path: Path) -> None:
    text = (VALID / "minimal.json").read_text()
    b1 = json.dumps(MINIMAL["brokers"]["broker-1:8080"])
    dup = text.replace('"brokers": {', '"brokers": {"broker-2:8080": ' + b1 + ",", 1)
    f = tmp_path / "dup.json"
    f.write_text(dup)
    with pytest.raises(SnapshotError, match=r'key "broker-2:8080" appears twice.*two reports'):
        read_snapshot_file(f)


def test_duplicate_keys_in_a_jsonl_line(tmp_path: Path) -> None:
    line = json.dumps(MINIMAL).replace('"cluster": "demo"', '"cluster": "demo", "cluster": "x"')
    f = tmp_path / "dup.jsonl"
    f.write_text(line + "\n")
    with pytest.raises(SnapshotError, match=r"dup.jsonl:1: the key \"cluster\" appears twice"):
        read_snapshot_file(f)


def test_duplicate_keys_in_yaml(tmp_path: Path) -> None:
    f = tmp_path / "dup.yaml"
    f.write_text("format: lbctl/snapshot@1\ncluster: c\ncapturedAt: 0\nbrokers:\n  b:1: {}\n"
                 "  b:1: {}\n")
    with pytest.raises(SnapshotError, match="'b:1' appears twice in one mapping .line 6"):
        read_snapshot_file(f)


def test_overlapping_ranges_without_a_namespaces_section(tmp_path: Path) -> None:
    snap = json.loads(json.dumps(MINIMAL))
    del snap["namespaces"]
    st = snap["brokers"]["broker-2:8080"]
    st["lastStats"]["public/default/0x20000000_0x90000000"] = {"msgRateIn": 1}
    st["bundles"].append("public/default/0x20000000_0x90000000")
    f = tmp_path / "overlap.json"
    f.write_text(json.dumps(snap))
    with pytest.raises(SnapshotFormatError, match="not to overlap"):
        read_snapshot_file(f)


def test_topics_of_2_pow_64_is_named_as_too_large(tmp_path: Path) -> None:
    snap = json.loads(json.dumps(MINIMAL))
    name = "public/default/0x00000000_0x40000000"
    snap["brokers"]["broker-1:8080"]["lastStats"][name]["topics"] = 2**64
    f = tmp_path / "t.json"
    f.write_text(json.dumps(snap))
    with pytest.raises(SnapshotFormatError, match="range of a Java long, got a number of 20 digits"):
        read_snapshot_file(f)


def test_a_sequence_mixing_load_managers_is_refused(tmp_path: Path) -> None:
    ext = json.loads((VALID / "extensible.json").read_text())
    ext["cluster"] = MINIMAL["cluster"]
    f = tmp_path / "mix.jsonl"
    f.write_text(json.dumps(MINIMAL) + "\n" + json.dumps(ext) + "\n")
    with pytest.raises(SnapshotError, match="a sequence must be of one load manager"):
        read_snapshot_file(f)


def test_closed_stdin_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(SnapshotError, match="standard input is closed"):
        read_snapshots(["-"])


# --------------------------------------------------------------------------------------------
# writing: no debris, private modes, crash-safe appends
# --------------------------------------------------------------------------------------------
def test_written_snapshots_are_private_and_leave_no_temporary_file(tmp_path: Path) -> None:
    (state,) = read_snapshot_file(VALID / "minimal.json")
    for name in ("a.json", "b.yaml", "c.jsonl.gz"):
        write_snapshot(state, tmp_path / name)
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o600
    append_snapshot(state, tmp_path / "h.jsonl")
    assert (tmp_path / "h.jsonl").stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == ["a.json", "b.yaml", "c.jsonl.gz", "h.jsonl"]


@pytest.mark.parametrize("name", ["h.jsonl", "h.jsonl.gz"])
def test_an_append_cut_short_is_repaired_by_the_next(tmp_path: Path, name: str) -> None:
    (state,) = read_snapshot_file(VALID / "minimal.json")
    path = tmp_path / name
    append_snapshot(state, path)
    whole = path.read_bytes()
    append_snapshot(state, path)
    data = path.read_bytes()
    path.write_bytes(data[: len(whole) + (len(data) - len(whole)) // 2])  # the crash
    cut = append_snapshot(state, path)
    assert cut > 0
    assert len(read_snapshot_file(path)) == 2  # first line, then the repaired one


@pytest.mark.parametrize("name", ["h.jsonl", "h.jsonl.gz"])
def test_a_whole_last_line_lacking_its_newline_is_kept(tmp_path: Path, name: str) -> None:
    """Issue 25 item 7: only an unparsable tail is an append cut short."""
    (state,) = read_snapshot_file(VALID / "minimal.json")
    path = tmp_path / name
    line = json.dumps(MINIMAL).encode()
    # written by another tool (or an editor): two whole records, the last without its newline
    text = line + b"\n" + line
    path.write_bytes(gzip.compress(line + b"\n") + gzip.compress(line) if name.endswith(".gz")
                     else text)
    assert append_snapshot(state, path) == 0
    assert len(read_snapshot_file(path)) == 3


@pytest.mark.parametrize("name", ["h.jsonl", "h.jsonl.gz"])
def test_an_append_of_another_cluster_is_refused_and_the_file_unchanged(tmp_path: Path,
                                                                        name: str) -> None:
    from lbctl.records import replace

    (state,) = read_snapshot_file(VALID / "minimal.json")
    path = tmp_path / name
    append_snapshot(state, path)
    before = path.read_bytes()
    other = replace(state, cluster="elsewhere")
    with pytest.raises(SnapshotError, match="nothing was appended") as e:
        append_snapshot(other, path)
    assert 'holds cluster "demo", this snapshot is of cluster "elsewhere"' in str(e.value)
    assert path.read_bytes() == before
    assert len(read_snapshot_file(path)) == 1  # still a sequence validate accepts


def test_another_clusters_append_leaves_even_a_cut_tail_in_place(tmp_path: Path) -> None:
    from lbctl.records import replace

    (state,) = read_snapshot_file(VALID / "minimal.json")
    path = tmp_path / "h.jsonl"
    append_snapshot(state, path)
    path.write_bytes(path.read_bytes() + b'{"cut')
    before = path.read_bytes()
    with pytest.raises(SnapshotError, match="nothing was appended"):
        append_snapshot(replace(state, cluster="elsewhere"), path)
    assert path.read_bytes() == before


def test_a_partial_last_line_is_reported_when_read(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Left out with a warning, the snapshot before it read (hostile14); an error when strict
    (snapshot validate)."""
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(MINIMAL) + "\n" + json.dumps(MINIMAL)[:50])
    assert len(read_snapshot_file(path)) == 1
    assert "h.jsonl:2: partial last line (an append was interrupted) left out" in \
        capsys.readouterr().err
    with pytest.raises(SnapshotError, match="h.jsonl:2: partial last line"):
        read_snapshot_file(path, strict=True)


def test_a_full_disk_leaves_the_history_as_it_was(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (state,) = read_snapshot_file(VALID / "minimal.json")
    path = tmp_path / "h.jsonl"
    append_snapshot(state, path)
    before = path.read_bytes()
    real_write = os.write
    calls = {"n": 0}

    def full(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data)[:100])  # part of the line fits
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(SnapshotError, match="No space left on device; nothing was appended"):
        append_snapshot(state, path)
    monkeypatch.setattr(os, "write", real_write)
    assert path.read_bytes() == before
    append_snapshot(state, path)
    assert len(read_snapshot_file(path)) == 2


@pytest.mark.slow
def test_kill_9_during_appends_never_corrupts_the_history(tmp_path: Path) -> None:
    """A writer killed at random points: every later append still yields a readable sequence."""
    path = tmp_path / "h.jsonl"
    big = json.loads(json.dumps(MINIMAL))
    big["config"]["padding"] = "x" * 2_000_000  # a write takes long enough to be interrupted
    src = tmp_path / "big.json"
    src.write_text(json.dumps(big))
    # At most 100 appends (200 MB) per writer: a fast disk must not grow the history past the
    # reader's input limit before the kill lands (the test is about a cut line, not size).
    code = ("import sys\nfrom lbctl.sources import append_snapshot, read_snapshot_file\n"
            f"(s,) = read_snapshot_file({str(src)!r})\n"
            "for _ in range(100):\n"
            f"    append_snapshot(s, {str(path)!r})\n")
    for delay in (0.3, 0.45, 0.6, 0.75):
        path.unlink(missing_ok=True)
        p = subprocess.Popen([sys.executable, "-c", code])
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        (state,) = read_snapshot_file(VALID / "minimal.json")
        append_snapshot(state, path)  # repairs whatever the kill left
        states = read_snapshot_file(path)
        assert states[-1].cluster == "demo"
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")] == []


# issue 25 item 12: the path for documents over 4 MiB (no duplicate-key re-parse; a .jsonl
# streamed by a replay) gives the small path's one-line message for what it decodes differently
_BIG_CASES = {
    "bad byte in a key": lambda x: x.replace(b'"cpu"', b'"c\xffpu"', 1),
    "bad byte in a broker id": lambda x: x.replace(b'"broker-1:8080"', b'"broker-1\xff:8080"', 1),
    "bad byte deep in an ignored field": lambda x: x[:-1] + b', "ignored": '
                                                   + b"[" * 40 + b'{"k\xff": 1}' + b"]" * 40 + b"}",
    "overlong encoding in an ignored value": lambda x: x[:-1] + b', "ignored": "\xc0\xaf"}',
    "lone surrogate escape deep in an ignored field": lambda x: x[:-1] + b', "ignored": '
                                                                + b'[[[{"\\ud800x": 1}]]]}',
    "ignored field nested past the depth limit": lambda x: x[:-1] + b', "ignored": '
                                                           + b"[" * 1100 + b"]" * 1100 + b"}",
}


@pytest.mark.parametrize("case", list(_BIG_CASES))
def test_large_documents_give_the_small_paths_message(tmp_path: Path, case: str) -> None:
    from lbctl.sources.snapshot import DUPLICATE_CHECK_BYTES
    from lbctl.sources.snapshot_stream import STREAM_BYTES, open_sequence

    line = json.dumps(MINIMAL).encode()
    assert b'"broker-1:8080"' in line and b'"cpu"' in line
    hostile = _BIG_CASES[case](line)
    # the padding goes last: the bad byte keeps its column in both sizes
    big = hostile[:-1] + b', "padding": "' + b"x" * max(DUPLICATE_CHECK_BYTES, STREAM_BYTES) + b'"}'

    def message(name: str, data: bytes, stream: bool = False) -> str:
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(SnapshotError) as e:
            if stream:
                seq = open_sequence([p])
                list(getattr(seq, "states", lambda: seq)())
            else:
                read_snapshot_file(p)
        text = str(e.value)
        assert "\n" not in text and text.startswith(str(p))
        return text[len(str(p)):]

    small = message("small.json", hostile)
    assert message("big.json", big) == small
    assert message("small.jsonl", hostile + b"\n") == ":1" + small
    assert message("big.jsonl", big + b"\n") == ":1" + small
    assert message("big-streamed.jsonl", big + b"\n", stream=True) == ":1" + small
