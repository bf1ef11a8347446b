"""Snapshot files as tidy rows (no Spark): what each ingest task produces."""

from __future__ import annotations

import json

import pytest

from lbctl.errors import SnapshotError
from lbctl.fleet.files import changed, is_snapshot_name, list_inputs, read_manifest, write_manifest
from lbctl.fleet.rows import COLUMN_NAMES, TABLES, file_rows
from lbctl.sources.snapshot import read_snapshot_file
from tests.fleet.independent import CORPUS, brokers_frame, epoch_ms, load_snapshots
from tests.paths import DATA


def _rows(path) -> list[dict]:
    out = []
    for batch in file_rows(str(path)):
        out += [dict(zip(COLUMN_NAMES, vals, strict=True)) for vals in zip(*batch.cols.values(), strict=True)]
    return out


def test_malformed_file_gives_one_error_row_with_the_readers_message() -> None:
    bad = CORPUS / "lab" / "broken.json"
    with pytest.raises(SnapshotError) as e:
        read_snapshot_file(bad)
    rows = _rows(bad)
    assert [r["kind"] for r in rows] == ["error"]
    assert rows[0]["message"] == str(e.value)
    assert "msgRateIn: expected a number >= 0" in rows[0]["message"]


def test_a_bad_line_of_a_jsonl_is_one_error_row_and_the_good_lines_are_kept() -> None:
    """One bad line must not lose the file's other snapshots (the hostile sweep's finding): the
    good lines give their rows, the bad one an error row with ``lbctl snapshot validate``'s
    message, as lbctl's reader gives it for that line."""
    path = DATA / "malformed" / "bad_line.jsonl"  # 3 snapshots, the middle one broken
    with pytest.raises(SnapshotError) as e:
        read_snapshot_file(path)
    rows = _rows(path)
    errors = [r for r in rows if r["kind"] == "error"]
    assert [(r["line"], r["message"]) for r in errors] == [(2, str(e.value))]
    assert str(e.value).startswith(f"{path}:2 at ")
    snaps = [r for r in rows if r["kind"] == "snapshot"]
    assert [r["captured_at"] for r in snaps] == [epoch_ms("2026-11-21T22:00:00Z"),
                                                epoch_ms("2026-11-21T22:02:00Z")]
    good = [json.loads(line) for i, line in enumerate(path.read_text().splitlines()) if i != 1]
    assert sum(r["kind"] == "broker" for r in rows) == sum(len(s["brokers"]) for s in good)


def test_a_jsonl_file_gives_rows_of_every_kind_matching_the_file() -> None:
    path = CORPUS / "east" / "2026-03-14a.jsonl"
    rows = _rows(path)
    snaps = load_snapshots(path.parent, skip=("2026-03-14b.jsonl.gz",))
    kinds = [r["kind"] for r in rows]
    assert kinds.count("snapshot") == len(snaps) == 4
    assert kinds.count("broker") == sum(len(s["brokers"]) for s in snaps)
    assert kinds.count("bundle") == sum(len(b["lastStats"]) for s in snaps for b in s["brokers"].values())
    assert kinds.count("topic") == sum(len(s["topics"]) for s in snaps)
    expected = brokers_frame(snaps).set_index(["captured_at", "broker"])
    for r in (r for r in rows if r["kind"] == "broker"):
        e = expected.loc[(r["captured_at"], r["broker"])]
        assert r["cpu"] == pytest.approx(e["cpu"], rel=1e-6)
        assert r["weighted_max_usage"] == pytest.approx(e["usage"], rel=1e-6)
        assert r["msg_rate_in"] == e["msg_rate_in"]
        assert r["date"] == "2026-03-14" and r["cluster"] == "east"
    # topics are located in their namespace's bundle by CRC-32
    topic = next(r for r in rows if r["kind"] == "topic")
    assert topic["bundle"].startswith(topic["namespace"] + "/0x")


def test_table_columns_come_from_the_union_schema() -> None:
    for cols in TABLES.values():
        assert {src for src, _ in cols} <= set(COLUMN_NAMES)
        assert {"cluster", "date", "captured_at"} <= {dst for _, dst in cols}


def test_inputs_are_listed_recursively_and_the_manifest_finds_changes(tmp_path) -> None:
    (tmp_path / "a" / ".hidden").mkdir(parents=True)
    for name in ("a/x.json", "a/y.jsonl.gz", "a/z.yaml", "a/notes.txt", "a/.hidden/h.json", "b.ndjson"):
        (tmp_path / name).write_text("{}")
    found = [f.path for f in list_inputs([tmp_path / "a", tmp_path / "b.ndjson"]).files]
    assert [p.rsplit("/", 1)[1] for p in found] == ["x.json", "y.jsonl.gz", "z.yaml", "b.ndjson"]
    assert not is_snapshot_name("notes.txt") and is_snapshot_name("S.JSON.GZ")
    inputs = list_inputs([tmp_path]).files
    write_manifest(tmp_path / "out", {f.path: f.stamp for f in inputs})
    assert changed(inputs, read_manifest(tmp_path / "out")) == []
    (tmp_path / "a" / "x.json").write_text('{"grown": true}')
    assert [f.path for f in changed(list_inputs([tmp_path]).files, read_manifest(tmp_path / "out"))] == [found[0]]


def test_a_snapshots_dynamic_config_is_the_threshold_its_rows_use() -> None:
    """A snapshot with ``dynamicConfig`` (lbctl's reader reads it, ``READER_SECTIONS``) resolves
    its thresholds and weights with the stored values over its ``config``, as every other
    command does (``lbctl.config.resolve``'s dynamic layer): 80 stored over 85 reported."""
    (snap,) = [r for r in _rows(DATA / "doctor" / "dynamic-stored.json") if r["kind"] == "snapshot"]
    assert snap["overloaded_threshold"] == 80.0
    (base,) = [r for r in _rows(DATA / "doctor" / "base.json") if r["kind"] == "snapshot"]
    assert base["overloaded_threshold"] == 85.0
