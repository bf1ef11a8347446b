"""Spark's native ingest agrees with lbctl's reader, file by file and row by row.

One ``lbctl fleet ingest`` reads a corpus of awkward files (``hostile.py``: every validation rule
bent one way at a time, Spark's JSON quirks, odd file names), the malformed and valid snapshot
test files and the bundled examples. The oracle is lbctl's reader: a file it rejects must be
skipped with exactly its one-line message; a file it accepts must give exactly the rows
``lbctl.fleet.rows`` computes from it (after dropping repeated snapshots: the first file by name
wins) — whether Spark's JSON reader took the file or handed it to lbctl's.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pandas as pd  # noqa: TID253 - Spark tests need pandas anyway
import pytest

from lbctl.errors import SnapshotError
from lbctl.fleet.files import list_inputs
from lbctl.fleet.rows import COLUMN_NAMES, TABLES, file_rows, table_schema
from lbctl.fleet.session import SMALL_INPUT_CONF
from lbctl.safe.files import link_message
from lbctl.sources.snapshot import (
    parse_snapshot,
    read_snapshot_file,
    read_snapshot_lines,
    snapshot_to_dict,
)
from tests.fleet.hostile import write_corpus
from tests.paths import DATA, EXAMPLES

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("native") / "in"
    write_corpus(root)
    for name in ("malformed", "valid"):
        shutil.copytree(DATA / name, root / name)
    shutil.copytree(EXAMPLES, root / "examples", ignore=shutil.ignore_patterns("*.md", "*.py"))
    return root


@pytest.fixture(scope="module")
def ingested_corpus(corpus, run_fleet, tmp_path_factory):
    out = tmp_path_factory.mktemp("native") / "out"
    result = run_fleet("ingest", str(corpus), "--out", str(out), "-o", "json", "-q")
    assert result.exit_code == 1, result.output  # the malformed files are skipped
    assert result.stderr.startswith("lbctl: error: skipped ")
    return out, json.loads(result.stdout)


@pytest.fixture(scope="module")
def ingested_small(corpus, run_fleet, spark, tmp_path_factory):
    """The same corpus as a small run (the default for inputs under ``SMALL_INPUT_BYTES``):
    every file read by lbctl's reader in the driver, no Spark JSON reader, no Python worker."""
    out = tmp_path_factory.mktemp("native") / "small"
    spark.conf.set(SMALL_INPUT_CONF, str(1 << 40))
    try:
        result = run_fleet("ingest", str(corpus), "--out", str(out), "-o", "json", "-q")
    finally:
        spark.conf.set(SMALL_INPUT_CONF, "0")
    assert result.exit_code == 1, result.output  # the malformed files are skipped
    return out, json.loads(result.stdout)


_CHILD_ORACLE = """
import sys
from lbctl.sources.snapshot import read_snapshot_file
try:
    read_snapshot_file(sys.argv[1])
except Exception as e:
    sys.stdout.write(str(e).splitlines()[0])
    sys.exit(3)
"""


def _verdict_in_a_child(path: str) -> str | None:
    """lbctl's reader on ``path`` in a child process (a deep YAML may crash it): None when it
    accepts the file, else the message the ingest must give."""
    p = subprocess.run([sys.executable, "-c", _CHILD_ORACLE, path], capture_output=True,
                       text=True, timeout=120)
    if p.returncode == 0:
        return None
    if p.returncode < 0:
        return (f"{path}: cannot read: the reader crashed ({signal.Signals(-p.returncode).name}); "
                "a YAML document nested too deeply does this")
    assert p.returncode == 3, p.stderr[-2000:]
    return p.stdout


def _oracle(files: list[str]) -> tuple[dict[str, str], list[str]]:
    """lbctl's reader on every file: file → message of the rejected ones (a ``.jsonl``'s first
    bad line's when only lines are: what ``lbctl snapshot validate`` says of the file), the
    files with snapshots to ingest (a ``.jsonl``'s good lines are, whatever its bad ones)."""
    rejected, accepted = {}, []
    for f in files:
        if "/special/" in f:  # deep.yaml may crash the process reading it
            message = _verdict_in_a_child(f)
            if message is None:
                accepted.append(f)
            else:
                rejected[f] = message
            continue
        try:
            states, bad = read_snapshot_lines(f)
        except Exception as e:
            rejected[f] = str(e).splitlines()[0]
            continue
        if bad:
            rejected[f] = str(bad[0]).splitlines()[0]
            with pytest.raises(SnapshotError, match=re.escape(rejected[f])):
                read_snapshot_file(f)  # the same first message as the whole file's reader
        if states:
            accepted.append(f)
    return rejected, accepted


@pytest.fixture(scope="module")
def oracle(corpus) -> tuple[dict[str, str], list[str]]:
    return _oracle([f.path for f in list_inputs([corpus]).files])


def test_every_rejected_file_is_skipped_with_the_readers_message(corpus, ingested_corpus,
                                                                 oracle) -> None:
    _, summary = ingested_corpus
    rejected, accepted = oracle
    files = {f.path for f in list_inputs([corpus]).files}
    skipped: dict[str, str] = {}
    for s in summary["skipped"]:  # a file's first reason (its first bad line's)
        if s["file"] in files:
            skipped.setdefault(s["file"], s["reason"])
    assert skipped == rejected
    assert len(rejected) > 100 and len(accepted) > 80
    # Spark's own reader did the bulk of the work: every valid JSON file except those it
    # cannot decide (nulls, surrogates, BOMs, odd names, gzip with a .json name, …)
    assert summary["readers"]["spark"] >= 100


def test_the_inputs_that_used_to_stop_a_run_are_skipped_with_one_line(corpus, ingested_corpus,
                                                                      oracle):
    _, summary = ingested_corpus
    rejected, _ = oracle
    special = {Path(s["file"]).name: s["reason"] for s in summary["skipped"]
               if "/special/" in s["file"]}
    where = corpus / "special"
    assert special.pop("dangling.json") == link_message(str(where / "dangling.json"))
    assert special.pop("fifo.json") == (f"{where / 'fifo.json'}: not a regular file (a FIFO); "
                                        "only regular files are read")
    assert stat.S_ISFIFO((where / "fifo.json").lstat().st_mode)  # left alone
    # the YAML ones: exactly what lbctl's reader says of each (or that it crashed)
    assert special == {Path(f).name: m for f, m in rejected.items() if "/special/" in f}
    assert {"deep.yaml", "selfref_config.yaml"} <= special.keys()
    assert all("\n" not in m for m in special.values())


def test_a_lone_cr_gets_one_verdict_from_spark_and_the_reader(corpus, ingested_corpus,
                                                                oracle) -> None:
    """Issue 25 item 9: Hadoop's line reader ended a line at a lone CR, so records separated by
    one were ingested while lbctl's reader (JSON Lines: lines end at LF) refuses the file."""
    _, summary = ingested_corpus
    rejected, accepted = oracle
    skipped: dict[str, str] = {}
    for s in summary["skipped"]:
        skipped.setdefault(s["file"], s["reason"])
    text = corpus / "text"
    for name in ("t_lone_cr_between_records.jsonl", "t_lone_cr_only.jsonl",
                 "t_lone_cr_between_records_gz.jsonl.gz"):
        f = str(text / name)
        assert f in rejected and skipped.get(f) == rejected[f]
    whitespace = str(text / "t_lone_cr_as_whitespace.jsonl")
    assert whitespace in accepted and whitespace not in skipped


def _expected_rows(accepted: list[str]) -> dict[str, list[tuple]]:
    """What the tables must hold: lbctl's rows of every accepted file, each snapshot once."""
    snaps: dict[tuple, dict[str, list[dict]]] = {}
    order: dict[tuple, tuple] = {}
    for f in sorted(accepted):
        seq = -1
        for batch in file_rows(f):
            for values in zip(*batch.cols.values(), strict=True):
                row = dict(zip(COLUMN_NAMES, values, strict=True))
                seq += row["kind"] == "snapshot"
                snaps.setdefault((f, seq), {}).setdefault(row["kind"], []).append(row)
                if row["kind"] == "snapshot":
                    key = (row["cluster"], row["captured_at"])
                    order.setdefault(key, (f, seq))
    out: dict[str, list[tuple]] = {t: [] for t in TABLES}
    kinds = {"snapshots": "snapshot", "brokers": "broker", "bundles": "bundle", "topics": "topic"}
    for chosen in order.values():
        for table, cols in TABLES.items():
            for row in snaps[chosen].get(kinds[table], []):
                out[table].append(tuple(_plain(row[src]) for src, _ in cols))
    return out


def _plain(v):
    if v is None or (isinstance(v, float) and v != v):
        return None
    return v.item() if hasattr(v, "item") else v


def _table(out: Path, table: str) -> list[tuple]:
    df = pd.read_parquet(out / table)
    cols = [name for name, _ in table_schema(table)]
    for c in ("cluster", "date"):
        df[c] = df[c].astype(str)
    return [tuple(_plain(v) for v in row) for row in df[cols].astype(object).itertuples(index=False)]


def _canonical_raw(rows: list[tuple], index: int) -> list[tuple]:
    """The ``raw`` snapshot compared by what it parses to (Spark keeps the file's own text)."""
    out = []
    for r in rows:
        d = snapshot_to_dict(parse_snapshot(orjson.loads(r[index]), "x"))
        out.append((*r[:index], orjson.dumps(d, option=orjson.OPT_SORT_KEYS), *r[index + 1:]))
    return out


def test_a_small_run_reads_every_file_with_lbctls_reader_and_skips_the_same(
        ingested_corpus, ingested_small) -> None:
    _, native = ingested_corpus
    _, small = ingested_small
    assert small["readers"] == {"spark": 0, "lbctl": sum(native["readers"].values())}
    assert small["skipped"] == native["skipped"]
    assert small["rows"] == native["rows"] and small["snapshots"] == native["snapshots"]


@pytest.mark.parametrize("small", [False, True], ids=["spark-readers", "small-run"])
@pytest.mark.parametrize("table", list(TABLES))
def test_tables_hold_exactly_the_readers_rows(ingested_corpus, ingested_small, oracle, table,
                                              small) -> None:
    out, summary = ingested_small if small else ingested_corpus
    _, accepted = oracle
    assert any(f.endswith("/special/ok.yaml") for f in accepted)
    expected = _expected_rows(accepted)[table]
    got = _table(out, table)
    if table == "snapshots":
        raw = [name for name, _ in table_schema(table)].index("raw")
        expected, got = _canonical_raw(expected, raw), _canonical_raw(got, raw)
    key = lambda r: tuple((x is None, str(type(x)), x if x is not None else 0) for x in r)  # noqa: E731
    assert sorted(got, key=key) == sorted(expected, key=key)
    assert summary["rows"][table] == len(expected)


@pytest.fixture(scope="module")
def ingested_small_unique(run_fleet, spark, tmp_path_factory):
    """The bundled example as a small run into a new directory: no two snapshots share
    (cluster, capturedAt), so the rows are counted off the driver's frame and written without
    the Spark job that picks one snapshot of each."""
    root = tmp_path_factory.mktemp("unique")
    src = root / "in"
    shutil.copytree(EXAMPLES / "fleet", src, ignore=shutil.ignore_patterns("*.md", "*.py"))
    out = root / "out"
    spark.conf.set(SMALL_INPUT_CONF, str(1 << 40))
    try:
        result = run_fleet("ingest", str(src), "--out", str(out), "-o", "json")
    finally:
        spark.conf.set(SMALL_INPUT_CONF, "0")
    assert result.exit_code == 0, result.output
    return src, out, result


def test_a_small_run_without_repeats_writes_the_readers_rows_without_choosing(
        ingested_small_unique) -> None:
    src, out, result = ingested_small_unique
    assert "finding the snapshots not stored yet" not in result.stderr  # no Spark job to choose
    assert "writing 90 row(s) to snapshots" in result.stderr
    summary = json.loads(result.stdout)
    files = [f.path for f in list_inputs([src]).files]
    expected = _expected_rows(files)
    assert summary["snapshots"]["read"] == summary["snapshots"]["added"] == 90
    for table in TABLES:
        got = _table(out, table)
        want = expected[table]
        if table == "snapshots":
            raw = [name for name, _ in table_schema(table)].index("raw")
            want, got = _canonical_raw(want, raw), _canonical_raw(got, raw)
        key = lambda r: tuple((x is None, str(type(x)), x if x is not None else 0) for x in r)  # noqa: E731
        assert sorted(got, key=key) == sorted(want, key=key), table
        assert summary["rows"][table] == len(want)
