"""The history directory: hourly .jsonl.gz files, retention by age and size, read back by the
commands as they are."""

from __future__ import annotations

import gzip
from pathlib import Path

from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.records import replace
from lbctl.sources.files import snapshot_files
from lbctl.watch.history import History, Retention

EXAMPLE = Path(__file__).parents[2] / "lbctl" / "examples" / "hot-broker.json"
HOUR = 3_600_000


def _state(at: int):  # type: ignore[no-untyped-def]
    st = snapshot_files([EXAMPLE]).read().states[-1]
    return replace(st, captured_at=at)


def test_captures_go_to_hourly_gzip_files_that_recommend_replays(tmp_path: Path) -> None:
    h = History(tmp_path / "h", Retention(max_age_s=None))
    t0 = 1_767_225_600_000  # 2026-01-01T00:00Z
    for k in range(4):
        h.append(_state(t0 + k * 20 * 60_000))  # 00:00, 00:20, 00:40, 01:00
    names = [f.name for f in h.files()]
    assert names == ["lbctl-history-20260101T00.jsonl.gz", "lbctl-history-20260101T01.jsonl.gz"]
    assert gzip.decompress(h.files()[0].read_bytes()).count(b"\n") == 3
    assert [s.captured_at for s in h.recent(10)] == [t0 + k * 20 * 60_000 for k in range(4)]
    assert [s.captured_at for s in h.recent(2)] == [t0 + 40 * 60_000, t0 + 60 * 60_000]
    r = CliRunner().invoke(app, ["recommend", str(tmp_path / "h"), "--all-cycles", "-o", "json"])  # the directory
    assert r.exit_code == 0, r.stderr
    assert r.stdout.count('"capturedAt"') >= 4
    assert (tmp_path / "h").stat().st_mode & 0o777 == 0o700


def test_retention_by_age_keeps_the_file_being_written(tmp_path: Path) -> None:
    h = History(tmp_path, Retention(max_age_s=2 * 3600))
    t0 = 1_767_225_600_000
    for k in range(6):
        h.append(_state(t0 + k * HOUR))
    # the file of hour k ended at t0 + (k+1)h; at t0 + 5h those older than 2 h are gone
    assert [f.name[-14:-9] for f in h.files()] == ["01T02", "01T03", "01T04", "01T05"]


def test_retention_by_size_drops_the_oldest_first(tmp_path: Path) -> None:
    h = History(tmp_path, Retention(max_age_s=None, max_bytes=1))
    t0 = 1_767_225_600_000
    for k in range(3):
        h.append(_state(t0 + k * HOUR))
    assert [f.name[-14:-9] for f in h.files()] == ["01T02"]  # only the current file is kept


def test_a_symlinked_history_directory_is_refused(tmp_path: Path) -> None:
    import pytest

    from lbctl.errors import UsageError

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(UsageError, match="symbolic link"):
        History(tmp_path / "link")


def test_records_beside_the_history_go_with_their_hour_and_stay_out_of_its_readers(
        tmp_path: Path) -> None:
    """Each capture's record (the watcher's ownership and verdicts) is written beside its hour's
    file, read back by capture time, removed with that file by the retention, and never read by
    the commands that read the history directory."""
    from lbctl.watch.history import seen_of

    h = History(tmp_path / "h", Retention(max_age_s=2 * 3600))
    t0 = 1_767_225_600_000
    states = []
    for k in range(5):
        st = _state(t0 + k * HOUR)
        h.append(st)
        owners = dict(st.owners())
        moved = sorted(owners)[0]
        owners[moved] = "elsewhere:8080"
        del owners[sorted(owners)[1]]
        h.record(seen_of(st, "admin", owners, leader="l:8080", unloads=k), st)
        states.append(st)
    assert sorted(f.name[-14:-9] for f in (tmp_path / "h").glob("lbctl-watch-*")) == \
        ["01T01", "01T02", "01T03", "01T04"]  # hour 00's went with its history file
    got = h.seen(states)
    assert sorted(got) == [s.captured_at for s in states[1:]]
    rec = got[states[-1].captured_at]
    assert rec.leaderUnloads == 4 and rec.read
    assert rec.ownership_of(states[-1]) == {**{b: o for b, o in states[-1].owners().items()
                                               if b != sorted(states[-1].owners())[1]},
                                            sorted(states[-1].owners())[0]: "elsewhere:8080"}
    r = CliRunner().invoke(app, ["recommend", str(tmp_path / "h"), "--all-cycles", "-o", "json"])
    assert r.exit_code == 0, r.stderr
