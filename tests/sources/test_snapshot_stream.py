"""A large ``.jsonl`` sequence is replayed a snapshot at a time, with the whole-file read's results
and messages (``lbctl.sources.snapshot_stream``; ``STREAM_BYTES`` lowered so small files stream)."""

from __future__ import annotations

import gc
import gzip
import types
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.errors import SnapshotError
from lbctl.loadmanager.select import Options, plans, stream_last_plan, stream_plans
from lbctl.model.cluster import ClusterState
from lbctl.model.load import LocalBrokerData
from lbctl.plan import Plan
from lbctl.render.views import RecommendView
from lbctl.sources import snapshot, snapshot_stream
from lbctl.sources.snapshot import read_snapshots
from lbctl.sources.snapshot_stream import StreamedSnapshots, open_sequence
from tests.paths import EXAMPLES

SEQUENCES = [EXAMPLES / "two-brokers-90-10.jsonl", EXAMPLES / "avg-shedder.jsonl",
             EXAMPLES / "extensible" / "pip220-12-2-1-1.jsonl"]


@pytest.fixture(autouse=True, params=["keys-checked", "typed-decode"])
def _stream_everything(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Every file streams; ``typed-decode``: as a file over the duplicate-key check's size (no
    check, lines decoded by msgspec first) — for the whole-file read too."""
    monkeypatch.setattr(snapshot_stream, "STREAM_BYTES", 0)
    monkeypatch.delenv("LBCTL_NO_STREAM", raising=False)
    if request.param == "typed-decode":
        monkeypatch.setattr(snapshot_stream, "DUPLICATE_CHECK_BYTES", 0)
        monkeypatch.setattr(snapshot, "DUPLICATE_CHECK_BYTES", 0)


def _streamed(path: Path) -> StreamedSnapshots:
    seq = open_sequence([path])
    assert isinstance(seq, StreamedSnapshots)
    return seq


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("path", SEQUENCES, ids=lambda p: p.name)
def test_same_states_and_plans_as_the_whole_file(tmp_path: Path, path: Path, gz: bool) -> None:
    if gz:
        copy = tmp_path / (path.name + ".gz")
        copy.write_bytes(gzip.compress(path.read_bytes()))
        path = copy
    seq = _streamed(path)
    whole = read_snapshots([path])
    gc.unfreeze()  # the whole-file read freezes what it read, out of gc.get_objects()' sight
    assert list(seq.states()) == whole
    assert len(seq) == len(whole)
    streamed = [p.to_dict() for p in stream_plans(seq.headers, seq.states(), Options())]
    assert streamed == [p.to_dict() for p in plans(whole, Options())]


@pytest.mark.parametrize("path", SEQUENCES, ids=lambda p: p.name)
def test_the_last_plan_alone_prints_what_every_plan_prints(path: Path) -> None:
    """Without --all-cycles, recommend keeps only the last plan (issue 30: every plan kept grew
    RSS to 417 MB at 10k snapshots); the view says the same in every format."""
    seq = _streamed(path)
    every = stream_plans(seq.headers, seq.states(), Options())
    count, last = stream_last_plan(seq.headers, seq.states(), Options())
    assert count == len(every) > 1
    assert last is not None and last.to_dict() == every[-1].to_dict()
    full, kept = RecommendView(every), RecommendView([last], cycles=count)
    assert kept.to_text() == full.to_text()
    assert "Cycle " + f"{count}/{count}" in kept.to_text()
    assert kept.to_data() == full.to_data()
    assert kept.to_rows() == full.to_rows()


def test_the_last_plan_replay_holds_one_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    seq = _streamed(EXAMPLES / "two-brokers-90-10.jsonl")
    alive = []

    def watched() -> Iterator[ClusterState]:
        for st in seq.states():
            gc.collect()
            alive.append(sum(1 for o in gc.get_objects() if type(o) is Plan))
            yield st

    before = sum(1 for o in gc.get_objects() if type(o) is Plan)
    count, _ = stream_last_plan(seq.headers, watched(), Options())
    assert count == len(alive) > 2
    assert max(alive) - before <= 1  # the previous cycle's plan, dropped when the next is made


def test_headers_carry_no_bundles() -> None:
    seq = _streamed(EXAMPLES / "two-brokers-90-10.jsonl")
    assert all(not r.lastStats for h in seq.headers for r in h.brokers.values())
    # nor do they keep a report with bundles alive by any other field (the reader's name index
    # held each snapshot's whole reports: +57 kB a snapshot, 628 MB at 10,000 snapshots)
    assert not _reports_with_bundles(seq.headers)
    assert [h.captured_at for h in seq.headers] == [
        s.captured_at for s in read_snapshots([EXAMPLES / "two-brokers-90-10.jsonl"])]


def _reports_with_bundles(root: object) -> int:
    """Broker reports with ``lastStats`` reachable from ``root`` (classes and modules not
    followed: they reach everything)."""
    seen: set[int] = set()
    todo, found = [root], 0
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType)):
            continue
        seen.add(id(obj))
        if isinstance(obj, LocalBrokerData) and obj.lastStats:
            found += 1
        todo.extend(gc.get_referents(obj))
    return found


def _with_stats(objs: list[object], path: Path) -> int:
    """Whole snapshots of ``path`` alive (other tests' states may be alive too: not counted)."""
    return sum(1 for o in objs if type(o) is ClusterState and o.source.startswith(str(path))
               and any(r.lastStats for r in o.brokers.values()))


@pytest.mark.slow  # ~40 s: a sequence large enough to tell bounded memory from growth
def test_the_replay_holds_a_bounded_number_of_snapshots(tmp_path: Path) -> None:
    line = (EXAMPLES / "two-brokers-90-10.jsonl").read_text().splitlines()[0]
    snap = orjson.loads(line)
    path = tmp_path / "long.jsonl"
    with path.open("wb") as f:
        for i in range(40):
            snap["capturedAt"] = 1_795_000_000_000 + i * 60_000
            f.write(orjson.dumps(snap) + b"\n")
    seq = _streamed(path)
    most = [0]

    def watched() -> Iterator[ClusterState]:
        for st in seq.states():
            gc.collect()
            most[0] = max(most[0], _with_stats(gc.get_objects(), path))
            yield st

    out = stream_plans(seq.headers, watched(), Options())
    assert len(out) == 40
    assert 1 <= most[0] <= 3  # this one, the one before (the leader's clock), a plan's own
    # the whole-file read, by contrast, holds them all
    whole = read_snapshots([path])
    gc.unfreeze()  # the whole-file read freezes what it read, out of gc.get_objects()' sight
    assert _with_stats(gc.get_objects(), path) >= 40
    del whole


def test_states_are_decoded_lazily(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seq = _streamed(EXAMPLES / "two-brokers-90-10.jsonl")
    calls = []
    real = snapshot_stream.jsonl_snapshot

    def counting(where: str, line: bytes, number: int, **kw: bool) -> ClusterState:
        calls.append(where)
        return real(where, line, number, **kw)

    monkeypatch.setattr(snapshot_stream, "jsonl_snapshot", counting)
    it = seq.states()
    assert calls == []
    next(it)
    assert len(calls) == 1


def _message(fn: object, path: Path) -> str:
    with pytest.raises(SnapshotError) as e:
        fn([path])  # type: ignore[operator]
    return str(e.value)


def _hostile(tmp_path: Path) -> dict[str, bytes]:
    good = (EXAMPLES / "two-brokers-90-10.jsonl").read_bytes()
    lines = good.splitlines(keepends=True)
    other = lines[2].replace(b'"cluster":', b'"cluster": "other", "x":', 1)
    return {
        "bad-json.jsonl": lines[0] + b"{not json\n" + lines[1],
        "partial.jsonl": good + lines[0][:40],
        "schema.jsonl": lines[0] + b'{"format": "lbctl/snapshot@1"}\n',
        "empty.jsonl": b"  \n\n",
        "bom.jsonl": b"\xef\xbb\xbf" + good,
        "nan.jsonl": lines[0] + b'{"a": NaN}\n',
        "dup.jsonl": lines[0] + b'{"a": 1, "a": 2}\n',
        "mixed.jsonl": lines[0] + other,
        "bad.jsonl.gz": b"\x1f\x8b" + b"garbage" * 10,
        "truncated.jsonl.gz": gzip.compress(good)[:-30],
        "trailing.jsonl.gz": gzip.compress(good) + b"xyz",
        "padded.jsonl.gz": gzip.compress(good) + b"\x00" * 8,
        "members.jsonl.gz": gzip.compress(lines[0]) + gzip.compress(b"".join(lines[1:])),
        "notgz.jsonl.gz": good,
    }


def test_errors_are_the_whole_file_reads(tmp_path: Path) -> None:
    for name, data in _hostile(tmp_path).items():
        path = tmp_path / name
        path.write_bytes(data)
        try:
            expected = [s.captured_at for s in read_snapshots([path])]
        except SnapshotError as e:
            assert _message(open_sequence, path) == str(e), name
        else:
            seq = open_sequence([path])
            got = seq.states() if isinstance(seq, StreamedSnapshots) else seq
            assert [s.captured_at for s in got] == expected, name


def test_too_large_is_refused_before_reading(tmp_path: Path) -> None:
    from lbctl.safe.files import LIMITS

    path = tmp_path / "big.jsonl"
    path.write_bytes((EXAMPLES / "two-brokers-90-10.jsonl").read_bytes())
    old = LIMITS.max_input_bytes
    LIMITS.max_input_bytes = 100
    try:
        assert _message(open_sequence, path) == _message(read_snapshots, path)
        gz = tmp_path / "big.jsonl.gz"
        gz.write_bytes(gzip.compress(path.read_bytes()))
        LIMITS.max_input_bytes = len(gz.read_bytes()) + 10
        assert "(decompressed)" in _message(open_sequence, gz)
        assert _message(open_sequence, gz) == _message(read_snapshots, gz)
    finally:
        LIMITS.max_input_bytes = old


def test_a_file_changed_between_the_passes_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "seq.jsonl"
    data = (EXAMPLES / "two-brokers-90-10.jsonl").read_bytes()
    path.write_bytes(data)
    seq = _streamed(path)
    path.write_bytes(data.splitlines(keepends=True)[0])
    with pytest.raises(SnapshotError, match="changed while it was replayed"):
        list(seq.states())
    path.write_bytes(data + data.splitlines(keepends=True)[-1])  # appended: not replayed
    assert len(list(seq.states())) == len(seq)


def _same_headers_other_figures(data: bytes) -> bytes:
    """Every line with the same cluster and capturedAt, but other figures: the old check (only
    those two compared) replayed such a file as a silent mix."""
    out = []
    for line in data.splitlines(keepends=True):
        doc = orjson.loads(line)
        for report in doc["brokers"].values():
            report["msgRateIn"] = report.get("msgRateIn", 0.0) + 12345.0
        out.append(orjson.dumps(doc) + b"\n")
    return b"".join(out)


def test_a_file_replaced_between_the_passes_is_an_error(tmp_path: Path) -> None:
    """Issue 25 item 8: another file renamed over the name after validation."""
    import os

    path = tmp_path / "seq.jsonl"
    data = (EXAMPLES / "two-brokers-90-10.jsonl").read_bytes()
    path.write_bytes(data)
    seq = _streamed(path)
    other = tmp_path / "other.jsonl"
    other.write_bytes(_same_headers_other_figures(data))
    os.replace(other, path)
    with pytest.raises(SnapshotError, match="another file was put in its place"):
        next(iter(seq.states()))


def test_a_line_rewritten_in_place_between_the_passes_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "seq.jsonl"
    data = (EXAMPLES / "two-brokers-90-10.jsonl").read_bytes()
    path.write_bytes(data)
    seq = _streamed(path)
    lines = data.splitlines(keepends=True)
    changed = _same_headers_other_figures(lines[1]).splitlines(keepends=True)
    with open(path, "r+b") as f:  # the same file (inode), its second line rewritten
        f.truncate(0)
        f.write(lines[0] + changed[0] + b"".join(lines[2:]))
    states = seq.states()
    assert next(states).captured_at == seq.headers[0].captured_at  # the unchanged first line
    with pytest.raises(SnapshotError, match=r"seq.jsonl:2: the file changed while it was "
                                            r"replayed \(this line is not the one validated\)"):
        next(states)


def test_out_of_order_sequences_are_read_whole(tmp_path: Path) -> None:
    lines = (EXAMPLES / "two-brokers-90-10.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "rev.jsonl"
    path.write_bytes(b"".join(reversed(lines)))
    seq = open_sequence([path])
    assert isinstance(seq, list)
    assert seq == read_snapshots([path])


@pytest.mark.parametrize("extra", [[], ["--all-cycles"], ["--all-cycles", "-o", "json"]])
def test_recommend_prints_the_same(monkeypatch: pytest.MonkeyPatch, extra: list[str]) -> None:
    args = ["recommend", str(EXAMPLES / "two-brokers-90-10.jsonl"), *extra]
    env = {"COLUMNS": "120", "LBCTL_TRACEBACK": ""}
    streamed = CliRunner().invoke(app, args, env=env)
    whole = CliRunner().invoke(app, args, env={**env, "LBCTL_NO_STREAM": "1"})
    assert streamed.exit_code == whole.exit_code == 0
    assert streamed.output == whole.output


def test_lines_are_decoded_with_the_typed_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    from lbctl.sources import snapshot

    monkeypatch.setattr(snapshot_stream, "DUPLICATE_CHECK_BYTES", 0)
    used = []
    real = snapshot.decode_snapshot

    def counting(data: bytes) -> object:
        out = real(data)
        used.append(out is not None)
        return out

    monkeypatch.setattr(snapshot, "decode_snapshot", counting)
    seq = _streamed(EXAMPLES / "two-brokers-90-10.jsonl")
    assert list(seq.states()) == read_snapshots([EXAMPLES / "two-brokers-90-10.jsonl"])
    assert used and all(used)


def test_headers_share_what_the_previous_one_has() -> None:
    """Issue 30: a copy of the brokers' versions, the configuration and the cluster's name per
    snapshot grew a 10k-snapshot replay by kilobytes a snapshot; equal parts are one object."""
    seq = _streamed(EXAMPLES / "two-brokers-90-10.jsonl")
    first, *rest = seq.headers
    assert rest
    for h in rest:
        assert h.brokers is first.brokers and h.config is first.config
        assert h.cluster is first.cluster and not h.recently_unloaded
    assert len(seq.digests) == 16 * len(seq.headers)  # one bytes object, 16 bytes a line


def test_each_cycle_gets_its_own_settings_made_when_it_runs() -> None:
    """The streamed replay resolves snapshot i's settings when cycle i runs (none held for the
    whole replay), each as resolve_settings resolves it; the last is the one the load manager
    was chosen with (what the choice read shows in the last plan's settings)."""
    from lbctl.config import SETTINGS
    from lbctl.loadmanager.select import manager, stream_manager

    seq = _streamed(EXAMPLES / "avg-shedder.jsonl")
    lm, settings = stream_manager(seq.headers, Options())
    whole_lm, whole = manager(seq.headers, Options())
    assert type(lm) is type(whole_lm)
    made = [settings(i) for i in range(len(seq.headers))]
    assert [[s.peek(k.name) for k in SETTINGS] for s in made] == [
        [s.peek(k.name) for k in SETTINGS] for s in whole]
    assert made[0] is not settings(0)  # made afresh, not kept
    assert made[-1] is settings(len(seq.headers) - 1)


def test_the_percentage_memo_stays_small_over_a_replay() -> None:
    from lbctl.model.load import _percent_usage, trim_percent_memo

    _percent_usage.cache_clear()
    for k in range(5000):
        _percent_usage(float(k), 100.0)
    trim_percent_memo(keep=4096)
    assert _percent_usage.cache_info().currsize == 0
    _percent_usage(1.0, 100.0)
    trim_percent_memo(keep=4096)
    assert _percent_usage.cache_info().currsize == 1  # a small memo is kept between cycles


@pytest.mark.parametrize("fmt", ["json", "csv", "jsonl", "table", "yaml"])
@pytest.mark.parametrize("path", SEQUENCES, ids=lambda p: p.name)
def test_all_cycles_written_as_made_prints_the_same_bytes(path: Path, fmt: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """--all-cycles over a streamed sequence writes each plan as its cycle ends (issue 30: every
    plan kept took 858 MB at 10k snapshots), byte for byte what the whole-file read prints."""
    args = ["recommend", str(path), "--all-cycles", "-o", fmt]
    streamed = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    assert streamed.exit_code == 0, streamed.output
    monkeypatch.setenv("LBCTL_NO_STREAM", "1")
    whole = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    assert whole.exit_code == 0, whole.output
    assert streamed.stdout == whole.stdout
    assert streamed.stdout.count("Cycle ") > 1 if fmt == "table" else streamed.stdout


def test_all_cycles_json_names_non_finite_figures_after_the_array(tmp_path: Path) -> None:
    """An infinite usage and an empty replay: the same bytes as the view's."""
    from lbctl.render import to_json
    from lbctl.render.plan_stream import write_cycles

    seq = _streamed(EXAMPLES / "two-brokers-90-10.jsonl")
    every = stream_plans(seq.headers, seq.states(), Options())
    import io

    from lbctl.records import replace

    broken = [every[0], replace(every[1], brokers=tuple(
        replace(b, usage=float("inf")) for b in every[1].brokers))]
    out = io.StringIO()
    write_cycles(broken, len(broken), "json", out)
    assert out.getvalue() == to_json(RecommendView(broken, all_cycles=True).to_data()) + "\n"
    empty = io.StringIO()
    write_cycles([], 0, "json", empty)
    assert empty.getvalue() == to_json({"cycles": []}) + "\n"
