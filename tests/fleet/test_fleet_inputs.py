"""Which path each input takes, without Spark: listing, the native/reader split, isolation."""

from __future__ import annotations

import gzip
import os
import shutil

import pytest

from lbctl.errors import UsageError
from lbctl.fleet.files import InputFile, list_inputs
from lbctl.fleet.ingest import _failed_file, file_uri, native_kind, reader_slices
from lbctl.fleet.isolate import isolated_file_rows, needs_isolation
from tests.fleet.independent import CORPUS


def _input(path) -> InputFile:
    st = os.stat(path)
    return InputFile(str(path), st.st_size, st.st_mtime_ns)


def test_only_regular_files_are_listed_and_the_rest_is_reported(tmp_path) -> None:
    shutil.copy(CORPUS / "west" / "snap-000.json", tmp_path / "a.json")
    os.symlink(tmp_path / "gone.json", tmp_path / "dangling.json")
    os.symlink(tmp_path / "a.json", tmp_path / "link.json")
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "dir.json").mkdir()
    (tmp_path / "real").mkdir()
    shutil.copy(CORPUS / "west" / "snap-000.json", tmp_path / "real" / "b.json")
    os.symlink(tmp_path / "real", tmp_path / "linked")  # os.walk skipped it without a word
    listing = list_inputs([tmp_path])
    assert [f.path for f in listing.files] == [str(tmp_path / "a.json"),
                                               str(tmp_path / "real" / "b.json")]

    def link(name: str, target: str) -> str:
        return (f"{tmp_path / name}: is a symbolic link (lbctl reads and writes no file through "
                f"a link; give the path it points to, {tmp_path / target}, if that is the one)")

    assert listing.skipped == {  # links are not followed (hostile13)
        str(tmp_path / "dangling.json"): link("dangling.json", "gone.json"),
        str(tmp_path / "link.json"): link("link.json", "a.json"),
        str(tmp_path / "linked"): link("linked", "real"),
        str(tmp_path / "pipe.jsonl"):
            f"{tmp_path / 'pipe.jsonl'}: not a regular file (a FIFO); only regular files are read",
    }
    # a FIFO named on the command line is skipped the same way (reading it would block)
    assert list_inputs([tmp_path / "pipe.jsonl"]).skipped
    # a link named on the command line is refused, file or directory
    for name in ("link.json", "linked"):
        with pytest.raises(UsageError, match="is a symbolic link"):
            list_inputs([tmp_path / name])


def test_spark_takes_json_it_can_name_and_lbctl_the_rest(tmp_path) -> None:
    cases = {
        "a.jsonl": (b'{"x": 1}\n', "lines"),
        "b.json": (b'{"x": 1}', "whole"),
        "c.jsonl.gz": (gzip.compress(b'{"x": 1}\n'), "lines"),
        "d.json.gz": (gzip.compress(b'{"x": 1}'), "whole"),
        "e.ndjson": (b'{"x": 1}\n', "lines"),
        "f.yaml": (b"x: 1\n", None),  # Spark has no YAML reader
        "g.json": (gzip.compress(b'{"x": 1}'), None),  # gzip without .gz: lbctl sniffs it
        "h.json.gz": (b'{"x": 1}', None),  # not gzip: lbctl says so
        "i:j.jsonl": (b'{"x": 1}\n', None),  # Hadoop cannot name it
        "k[1].jsonl": (b'{"x": 1}\n', None),  # a glob
        "empty.jsonl": (b"", None),  # lbctl's "empty file"
    }
    for name, (data, _) in cases.items():
        (tmp_path / name).write_bytes(data)
    got = {name: native_kind(_input(tmp_path / name)) for name in cases}
    assert got == {name: kind for name, (_, kind) in cases.items()}


def test_spark_file_uris_are_recognised_in_read_errors() -> None:
    paths = ["/d/a b.jsonl.gz", "/d/ü%#.jsonl"]
    uris = {file_uri(p): p for p in paths}
    assert file_uri(paths[0]) == "file:/d/a%20b.jsonl.gz"
    assert file_uri(paths[1]) == "file:/d/ü%25%23.jsonl"
    err = RuntimeError("[FAILED_READ_FILE.NO_HINT] Encountered error while reading file "
                       "file:///d/a%20b.jsonl.gz.  SQLSTATE: KD001")
    assert _failed_file(err, uris) == paths[0]
    assert _failed_file(RuntimeError("something else"), uris) is None


#: the isolation child with one change: reading a file named ``crash.yaml`` kills it with SIGSEGV
#: (what libyaml does on a document nested too deeply, whatever bounds the reader grows)
_CRASHING_CHILD = """
import os, signal
import lbctl.fleet.isolate as isolate
real = isolate.file_rows
def file_rows(path):
    if path.endswith("crash.yaml"):
        os.kill(os.getpid(), signal.SIGSEGV)
    return real(path)
isolate.file_rows = file_rows
isolate.main()
"""


def test_a_reader_that_crashes_costs_one_line_and_a_new_child_reads_on(tmp_path,
                                                                       monkeypatch) -> None:
    import subprocess
    import sys

    from lbctl.fleet import isolate

    good = tmp_path / "good.yaml"
    good.write_text((CORPUS / "west" / "snap-002.yaml").read_text())
    crash = tmp_path / "crash.yaml"
    crash.write_text(good.read_text())
    started = []

    def start() -> subprocess.Popen[bytes]:
        started.append(1)
        return subprocess.Popen([sys.executable, "-c", _CRASHING_CHILD], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    monkeypatch.setattr(isolate, "_start", start)
    batches = list(isolated_file_rows([str(good), str(crash), str(good)]))
    kinds = [(b.cols["source"][0], b.cols["kind"][0]) for b in batches]
    assert kinds == [(str(good), "snapshot"), (str(crash), "error"), (str(good), "snapshot")]
    assert batches[1].cols["message"][0] == (
        f"{crash}: cannot read: the reader crashed (SIGSEGV); a YAML document nested too "
        "deeply does this")
    assert len(started) == 2  # the crash cost one child; the next file got a new one


def test_a_yaml_nested_too_deeply_costs_one_line(tmp_path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text((CORPUS / "west" / "snap-002.yaml").read_text())
    deep = tmp_path / "deep.yaml"
    deep.write_text("format: lbctl/snapshot@1\ncluster: c\ncapturedAt: 2026-01-01T00:00:00Z\n"
                    "brokers: " + "[" * 60000 + "]" * 60000 + "\n")
    assert needs_isolation(str(deep)) and needs_isolation("x.YML.gz")
    assert not needs_isolation("x.json")
    batches = list(isolated_file_rows([str(good), str(deep), str(good)]))
    kinds = [(b.cols["source"][0], b.cols["kind"][0]) for b in batches]
    assert kinds == [(str(good), "snapshot"), (str(deep), "error"), (str(good), "snapshot")]
    # libyaml's stack overflow (a crash) or a reader that bounds the nesting: one line either way
    message = batches[1].cols["message"][0]
    assert message.startswith(f"{deep}: ") and "\n" not in message


def test_every_file_the_reader_checks_for_repeated_keys_is_checked_natively() -> None:
    from lbctl.fleet.native import DUPLICATE_CHECK_BYTES, check_keys

    assert check_keys(0) and check_keys(DUPLICATE_CHECK_BYTES)
    # incompressible content at the reader's limit: the gzip file is a little larger than it
    gz = gzip.compress(os.urandom(DUPLICATE_CHECK_BYTES), compresslevel=9)
    assert len(gz) > DUPLICATE_CHECK_BYTES and check_keys(len(gz))
    assert check_keys(2 * DUPLICATE_CHECK_BYTES)  # the reader checks every document (hostile21)


def test_reader_tasks_follow_the_input_size() -> None:
    """A task of lbctl's reader starts a Python worker: a tiny input gets one per core, a large
    one up to four per core, never more tasks than files."""
    assert reader_slices(300_000, 33, 2) == 2
    assert reader_slices(12 << 20, 500, 2) == 3
    assert reader_slices(1 << 30, 500, 2) == 8
    assert reader_slices(1 << 30, 1, 2) == 1


def test_a_small_input_is_read_ahead_and_its_repeats_are_seen_without_spark(tmp_path) -> None:
    """What a small run reads while the JVM starts (every file, by lbctl's reader) and the
    counts it takes off that frame when no two snapshots share (cluster, capturedAt)."""
    import pandas as pd

    from lbctl.fleet.ingest import _counted_in_driver, _read_small
    from lbctl.fleet.session import SMALL_INPUT_BYTES

    files = list_inputs([CORPUS]).files
    assert sum(f.size for f in files) < SMALL_INPUT_BYTES
    read = _read_small(files)
    assert read is not None
    paths, frame = read
    assert paths == sorted(f.path for f in files) and set(frame["source"]) <= set(paths)
    snaps = frame[frame["kind"] == "snapshot"]
    counted = _counted_in_driver(frame)
    assert counted == {"snapshots": len(snaps), "brokers": int(snaps["num_brokers"].sum()),
                       "bundles": int(snaps["num_bundles"].sum()),
                       "topics": int(snaps["num_topics"].sum())}
    assert counted["snapshots"] > 0 and counted["brokers"] > counted["snapshots"]
    repeated = pd.concat([frame, snaps.iloc[:1]], ignore_index=True)
    assert _counted_in_driver(repeated) is None  # a repeat: the Spark job chooses
    big = [InputFile(f.path, SMALL_INPUT_BYTES, f.mtime_ns) for f in files[:1]]
    assert _read_small(big) is None  # not small: Spark's readers, nothing read ahead
