"""hostile21's sweep: the files hostile20's sweep (test_hostile20_sweep.py) did not reach —
a watch history directory (its captures, the watcher's records, the anomaly state, the plan
queue's records, plans and journal) and a journal given by kind (a FIFO, a link, a directory).

Each example copies a real state directory (made by lbctl's own writers), spoils one of its
files — hostile20's JSON mutations (numbers, strings, repeated keys, whole-file breakage,
hostile names) or a different kind of file at the name (a FIFO, a link to a valid copy kept
elsewhere, a dangling link, a directory, an empty file) — and runs every command that reads
the directory: ``watch --status``, ``plans list [--all]``, ``plans show [-o json|yaml]``,
``recommend`` on the hour's capture file. The oracle is hostile20's :func:`check` (no
exception, no ``internal error``, at most one error line and one whenever the exit is not 0,
no control, bidi or lone surrogate on stdout or stderr — data formats included now that they
escape them), an alarm for hangs, and: a FIFO or a link where lbctl reads must be refused
(never waited on, never followed). Draws are derandomized, so CI never meets a new one.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.paths import EXAMPLES
from tests.security.test_hostile20_sweep import (
    LONG,
    QUICK,
    RAW,
    Variant,
    check,
    json_variants,
    run,
)

HOT = EXAMPLES / "hot-broker.json"
HOUR = "20260312T14"
#: (relative path, what reads it, whether a link or FIFO there must be refused by that reader)
FILES = ["anomalies.json", f"lbctl-history-{HOUR}.jsonl.gz", f"lbctl-watch-{HOUR}.jsonl.gz",
         "plans/{pid}.meta.json", "plans/{pid}.json", "plans/journal.jsonl"]


def _make_state(root: Path) -> str:
    """A history directory as the watcher leaves it: one capture, a raised anomaly, a pending
    plan and an approved one. Returns the pending plan's id."""
    import msgspec

    from lbctl.sources.snapshot import read_snapshot_file
    from lbctl.watch.anomalies import ANOMALY_FILE, Anomaly, Tracker
    from lbctl.watch.history import History, Seen
    from lbctl.watch.plans import PlanQueue

    root.mkdir(mode=0o700)
    state = read_snapshot_file(HOT)[0]
    h = History(root)
    h.append(state)
    h.record(Seen(capturedAt=state.captured_at, ownership="admin", read=True,
                  owners={"acme/clickstream/0x00000000_0x10000000": None},
                  leader="broker-2.pulsar.svc:8080"), state)
    t = Tracker()
    t.open = {"a1": Anomaly("a1", "broker-down", "broker-1.pulsar.svc:8080", "critical",
                            "broker-1 \u202e stopped reporting", 1, 2, raised_at=2)}
    t.save(root / ANOMALY_FILE)
    res = run(["recommend", str(HOT), "-o", "json"])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    q = PlanQueue(root)
    meta = q.add(res.stdout.encode(), created_ms=state.captured_at, created="2026-03-12T14:05:00Z",
                 anomaly="a1", source="recommend", actions=len(doc["actions"]))
    other = q.add(msgspec.json.encode({**doc, "note": "second"}), created_ms=state.captured_at + 1,
                  created="2026-03-12T14:05:01Z", anomaly=None, source="propose",
                  actions=len(doc["actions"]))
    q.decide(other.id, "approved", when="2026-03-12T14:06:00Z")
    assert (root / f"lbctl-history-{HOUR}.jsonl.gz").is_file()
    return meta.id


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("h21state") / "history"
    return root, _make_state(root)


def _commands(d: Path, pid: str) -> list[list[str]]:
    return [["watch", "--status", "--history", str(d)],
            ["plans", "list", "--history", str(d)],
            ["plans", "list", "--all", "--history", str(d)],
            ["plans", "show", pid, "--history", str(d)],
            ["plans", "show", pid, "-o", "json", "--history", str(d)],
            ["plans", "show", pid, "-o", "yaml", "--history", str(d)],
            ["recommend", str(d / f"lbctl-history-{HOUR}.jsonl.gz"), "-o", "json"]]


def _reads(command: list[str], rel: str) -> bool:
    """Whether ``command`` must read ``rel`` (so a FIFO or link there must be refused)."""
    if command[0] == "recommend":
        return rel.startswith("lbctl-history-")
    if command[:2] == ["watch", "--status"]:
        return rel in ("anomalies.json", f"lbctl-history-{HOUR}.jsonl.gz")
    if command[1] == "show":
        return rel in ("plans/{pid}.meta.json", "plans/{pid}.json")
    return False  # plans list, and the status's plan count, skip a record they cannot read


@st.composite
def _spoilt(draw: st.DrawFn, base: bytes, gz: bool) -> Variant:
    kind = draw(st.sampled_from(["content", "content", "fifo", "link", "dangling", "directory",
                                 "empty"]))
    if kind != "content":
        return Variant(b"", kind in ("fifo", "link", "dangling", "directory"), kind)
    plain = gzip.decompress(base) if gz else base
    v = draw(json_variants(plain, lines=gz or base.count(b"\n") > 1))
    return Variant(gzip.compress(v.data, mtime=0) if gz else v.data, False, v.how)


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


def _case(data: st.DataObject, state: tuple[Path, str], where: Path) -> None:
    src, pid = state
    d = where / "h"
    if d.exists():
        shutil.rmtree(d)
    shutil.copytree(src, d, symlinks=True)
    rel = data.draw(st.sampled_from(FILES), label="file").format(pid=pid)
    target = d / rel
    base = target.read_bytes()
    v = data.draw(_spoilt(base, rel.endswith(".gz")), label="variant")
    target.unlink()
    if v.how == "fifo":
        os.mkfifo(target)
    elif v.how == "link":
        keep = where / "kept"
        keep.write_bytes(base)  # a valid copy: following the link would read good data
        target.symlink_to(keep)
    elif v.how == "dangling":
        target.symlink_to(where / "nowhere")
    elif v.how == "directory":
        target.mkdir()
    else:
        target.write_bytes(v.data)
    generic = rel.replace(pid, "{pid}")
    for command in _commands(d, pid):
        res = run(command)
        must = v.refuse and v.how in ("fifo", "link") and _reads(command, generic)
        # YAML folds a string holding a newline over two lines (still that string): its stdout
        # is checked for raw characters only, as hostile20's check does for data formats
        yaml_out = "yaml" in command
        check(res, refuse=must, names=str(target) if must else None, table=not yaml_out)
        if yaml_out:
            assert RAW.search(res.stdout) is None, f"{command}: raw character in YAML output"
        if v.how == "link" and generic == "plans/{pid}.meta.json" and res.exit_code == 0:
            assert pid not in res.stdout, f"{command}: the link was followed\n{res.stdout}"


@QUICK
@given(data=st.data())
def test_history_directory_sweep(state: tuple[Path, str], scratch: Path,
                                 data: st.DataObject) -> None:
    _case(data, state, scratch)


@pytest.mark.slow
@LONG
@given(data=st.data())
def test_history_directory_sweep_long(state: tuple[Path, str], scratch: Path,
                                      data: st.DataObject) -> None:
    _case(data, state, scratch)


@pytest.mark.parametrize("kind", ["fifo", "link", "directory"])
@pytest.mark.parametrize("args", [["journal", "--journal"], ["apply", "--dry-run", "--admin-url",
                                                             "http://127.0.0.1:9", "--resume"]])
def test_a_journal_of_the_wrong_kind_is_one_line(tmp_path: Path, kind: str,
                                                 args: list[str]) -> None:
    """hostile20 swept a journal's lines; here the file itself: never waited on nor followed."""
    f = tmp_path / "journal.jsonl"
    if kind == "fifo":
        os.mkfifo(f)
    elif kind == "link":
        (tmp_path / "real.jsonl").write_text("")
        f.symlink_to(tmp_path / "real.jsonl")
    else:
        f.mkdir()
    res = run([*args, str(f)])
    check(res, refuse=True, names=str(f))


@settings(QUICK, max_examples=3)
@given(kind=st.sampled_from(["fifo", "link", "dangling"]))
def test_fleet_input_kind_is_probed_safely(tmp_path_factory: pytest.TempPathFactory,
                                           kind: str) -> None:
    """fleet ingest's native path opened each listed file with ``open`` to read its first two
    bytes: a file swapped for a FIFO after the listing hung the driver; a link was followed."""
    from lbctl.fleet.files import InputFile
    from lbctl.fleet.ingest import native_kind

    where = tmp_path_factory.mktemp("fleet")
    f = where / "s.jsonl"
    if kind == "fifo":
        os.mkfifo(f)
    elif kind == "link":
        (where / "real.jsonl").write_bytes(HOT.read_bytes().replace(b"\n", b"") + b"\n")
        f.symlink_to(where / "real.jsonl")
    else:
        f.symlink_to(where / "nowhere")
    assert native_kind(InputFile(str(f), 10, 0)) is None
