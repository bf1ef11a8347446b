"""`lbctl fleet ingest`: snapshot files → tidy Parquet tables, partitioned by cluster and day.

The job:

1. The driver lists the inputs (regular files only; anything else is reported and skipped) and
   drops files the manifest says are already ingested (:mod:`lbctl.fleet.files`); with nothing
   new, Spark is not even started.
2. **Native path** (JSON, JSON lines, optionally gzipped): Spark reads the text and decodes it
   with ``from_json`` against an explicit schema; SQL predicates apply lbctl's validation rules
   (:mod:`lbctl.fleet.native`); the distinct ``config`` and ``namespaces`` sections are checked
   on the driver by lbctl's reader and joined back (:mod:`lbctl.fleet.sections`). The parsed
   lines are cached once and every table is derived from them (:mod:`lbctl.fleet.native_tables`).
   A *small run* (under ``spark.lbctl.fleet.smallInputBytes``, 16 MiB) skips this step: every
   file goes to lbctl's reader, run in the driver (:func:`small_input_bytes` says why).
3. **lbctl's reader** (:mod:`lbctl.fleet.rows`, in Spark tasks): YAML files (in a child process:
   :mod:`lbctl.fleet.isolate`), files whose names Spark cannot read, and every file the native
   path did not accept — so a malformed file is reported with exactly the one-line message of
   ``lbctl snapshot validate`` and skipped, a ``.jsonl`` with bad lines has its good lines
   ingested and each bad one reported so (the native path hands the whole file over), and a
   valid file the native checks were unsure of is ingested all the same. A file Spark cannot even read (bad gzip data) is moved to this path
   and the native job run again without it.
4. Snapshots are identified by (cluster, ``capturedAt``): those already stored (the published
   ``snapshots`` table) and repeats within the run (the first file by name wins, then the
   content) are dropped.
5. The rows are written to a staging directory and published as one unit, with the manifest
   (:mod:`lbctl.fleet.commit`): a crash at any point loses nothing and duplicates nothing.

Inputs and ``OUT`` must be readable at the same path by the driver and every executor (trivially
so in local mode; a shared file system on a cluster).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lbctl.fleet import _compat, commit
from lbctl.fleet.files import InputFile, changed, list_inputs, read_manifest
from lbctl.fleet.progress import Progress
from lbctl.fleet.rows import COLUMNS, KIND_OF_TABLE, TABLES, Batch, file_rows

PARTITIONS = ("cluster", "date")
#: characters Hadoop's path handling (globs, URIs) cannot take: such files go to lbctl's reader
_UNSAFE_PATH = re.compile(r"[\\:\[\]?*{}\x00-\x1f\x7f]")
_GZIP_MAGIC = b"\x1f\x8b"
_NATIVE = (".json", ".jsonl", ".ndjson")


@dataclass
class IngestResult:
    """What an ingest did: files found, read, skipped (with reasons) and rows written per table."""

    out: str
    files_found: int = 0
    files_unchanged: int = 0
    files_read: int = 0
    #: what was not ingested, in file and line order (:func:`skip_entry`); a file with only
    #: ``line`` entries was read (its good lines are ingested) but is not recorded in the
    #: manifest, so it is read again next time (its stored snapshots are not added twice)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    snapshots_read: int = 0
    snapshots_added: int = 0
    rows: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    native_files: int = 0
    reader_files: int = 0
    recovered: list[str] = field(default_factory=list)

    @property
    def snapshots_already_stored(self) -> int:
        return self.snapshots_read - self.snapshots_added


def union_schema() -> Any:
    T = _compat.types()
    kinds = {"string": T.StringType(), "long": T.LongType(), "double": T.DoubleType()}
    fields = [T.StructField(name, kinds[t], True) for name, t in COLUMNS]
    return T.StructType([*fields, T.StructField("seq", T.LongType(), True)])


def batch_frame(batch: Batch, seq: Sequence[int | None] | None = None) -> Any:
    """A :class:`Batch` as a pandas DataFrame with the union schema's dtypes."""
    import pandas as pd

    data: dict[str, Any] = {}
    for name, t in COLUMNS:
        values = batch.cols[name]
        if t == "double":
            data[name] = pd.array(values, dtype="Float64")
        elif t == "long":
            data[name] = pd.array(values, dtype="Int64")
        else:
            data[name] = pd.Series(values, dtype=object)
    data["seq"] = pd.array(list(seq) if seq is not None else [None] * len(batch), dtype="Int64")
    return pd.DataFrame(data)


def _numbered(path: str, batches: Iterator[Batch]) -> Iterator[Any]:
    """Frames of one file's rows, each row tagged with its snapshot's position in the file."""
    from lbctl.fleet.rows import error_batch

    n = -1
    for b in batches:
        seq = []
        for kind in b.cols["kind"]:
            n += kind == "snapshot"
            seq.append(n)
        try:
            yield batch_frame(b, seq)
        except (OverflowError, TypeError, ValueError) as e:  # e.g. a count past a Java long
            yield batch_frame(error_batch(path, f"{path}: cannot store: {e}".splitlines()[0]))
            return


def parse_files(batches: Iterator[Any]) -> Iterator[Any]:
    """The ``mapInPandas`` task of lbctl's reader: paths in, union-schema rows out."""
    from lbctl.fleet.isolate import isolated_file_rows, needs_isolation

    for batch in batches:
        paths = [str(p) for p in batch["path"]]
        for path in paths:
            if not needs_isolation(path):
                yield from _numbered(path, file_rows(path))
        risky = [p for p in paths if needs_isolation(p)]
        if risky:
            current: list[Batch] = []
            last = None
            for b in isolated_file_rows(risky):
                source = b.cols["source"][0] if b.n else None
                if current and source != last:
                    yield from _numbered(str(last), iter(current))
                    current = []
                current.append(b)
                last = source
            if current:
                yield from _numbered(str(last), iter(current))


def ingest(
    paths: Sequence[Path | str],
    out: Path,
    *,
    session: Any,
    progress: Progress | None = None,
) -> IngestResult:
    """Ingest ``paths`` into ``out``; ``session`` is a zero-argument callable giving the Spark
    session, called only when there is something to read."""
    progress = progress or Progress(enabled=False)
    out = Path(out)
    listing = list_inputs(paths)
    with commit.locked(out, write=True) as recovered:
        for note in recovered:
            progress.note(f"{out}: {note}")
        manifest = read_manifest(out)
        todo = changed(listing.files, manifest)
        found = len(listing.files) + len(listing.skipped)
        result = IngestResult(out=str(out), files_found=found,
                              files_unchanged=len(listing.files) - len(todo),
                              files_read=len(todo) + len(listing.skipped))
        result.skipped = [skip_entry(f, r) for f, r in listing.skipped.items()]
        result.recovered = list(recovered)
        progress.note(f"{found} snapshot file(s) found, {len(todo)} new or changed")
        for s in result.skipped:
            progress.note(f"skipped: {s['reason']}")
        if not todo:
            return result
        from lbctl.fleet.session import active_session, from_spark, job_error, start_while

        hints = {"input_bytes": sum(f.size for f in todo)}
        if active_session(if_imported=True) is not None:  # up already: its settings decide
            spark, preread = _start(session, **hints), None
        else:  # a small input is read by lbctl's reader in this process while the JVM starts
            spark, preread = start_while(lambda: _start(session, **hints),
                                         lambda: _read_small(todo))
        progress.spark = spark

        run = commit.new_run(out)
        try:
            bad = _run(spark, todo, run, out, result, progress, preread)
        except _compat.SparkUnavailable:
            commit.discard(run)
            raise
        except Exception as e:
            commit.discard(run)
            if from_spark(e):
                raise job_error(e, writing=out) from None
            raise
        with progress.phase("publishing the tables"):
            commit.publish(out, run, {f.path: f.stamp for f in todo if f.path not in bad})
    result.skipped.sort(key=skip_order)
    return result


def skip_entry(file: str, reason: str, line: int | None = None) -> dict[str, Any]:
    """An entry of :attr:`IngestResult.skipped`: the file, the reader's one-line reason, and
    ``line`` when only that line of a ``.jsonl`` was skipped (the file's other lines are
    ingested)."""
    return {"file": file, "reason": reason} | ({} if line is None else {"line": line})


def skip_order(entry: dict[str, Any]) -> tuple[str, int]:
    """Files by name, the lines of one file in order (a whole-file reason first)."""
    return entry["file"], entry.get("line", 0)


def _start(session: Any, **hints: Any) -> Any:
    """Call the session factory, with sizing hints when it takes them."""
    import inspect

    try:
        params = inspect.signature(session).parameters
    except (TypeError, ValueError):
        return session()
    if all(k in params for k in hints) or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return session(**hints)
    return session()


# ------------------------------------------------------------------------------------------
# which path a file takes
# ------------------------------------------------------------------------------------------
def native_kind(f: InputFile) -> str | None:
    """``lines`` or ``whole`` when Spark's text reader can take the file as it is, else None."""
    lower = f.path.lower()
    gz = lower.endswith(".gz")
    stem = lower[:-3] if gz else lower
    if not stem.endswith(_NATIVE) or _UNSAFE_PATH.search(f.path) or f.size == 0:
        return None
    import os

    from lbctl.errors import LbctlError
    from lbctl.safe.files import open_regular

    try:  # gzip is told by its magic bytes whatever the name (lbctl's reader does the same);
        # opened as every input is (a file swapped for a FIFO or a link since it was listed is
        # not waited on nor followed: lbctl's reader then says what it is)
        fd = open_regular(f.path, what="a snapshot file", error=LbctlError)
    except LbctlError:
        return None
    try:
        head = os.read(fd, 2)
    except OSError:
        return None
    finally:
        os.close(fd)
    if (head == _GZIP_MAGIC) != gz:
        return None
    return "whole" if stem.endswith(".json") else "lines"


def file_uri(path: str) -> str:
    """The ``_metadata.file_path`` Spark reports for a local path (Hadoop's ``Path.toUri``)."""
    out = []
    for ch in path:
        if ch.isascii() and not (ch.isalnum() or ch in "/_-!.~'()*,;:$&+=@"):
            out.append("".join(f"%{b:02X}" for b in ch.encode()))
        else:
            out.append(ch)
    return "file:" + "".join(out)


def _failed_file(e: BaseException, uris: dict[str, str]) -> str | None:
    """The input file a failed Spark read names, if any (``FAILED_READ_FILE``)."""
    m = re.search(r"reading file (\S+?)\.?(?:\s|$)", str(e))
    if m is None:
        return None
    uri = m.group(1)
    for key in (uri, uri.replace("file:///", "file:/", 1)):
        if key in uris:
            return uris[key]
    local = unquote(uri.split(":", 1)[1]).replace("///", "/", 1).lstrip("/")
    return next((p for p in uris.values() if p.lstrip("/") == local), None)


# ------------------------------------------------------------------------------------------
# the run
# ------------------------------------------------------------------------------------------
def _read_small(todo: list[InputFile]) -> Any:
    """A small run's rows by lbctl's reader (:func:`_read_in_driver`), read before
    the session is known: under lbctl's default :data:`lbctl.fleet.session.SMALL_INPUT_BYTES`
    (a ``--conf`` that says otherwise is seen once Spark is up, and the frame is then not
    used); None for a larger input."""
    from lbctl.fleet.session import SMALL_INPUT_BYTES

    if sum(_unpacked_size(f) for f in todo) >= SMALL_INPUT_BYTES:
        return None
    import pyarrow  # noqa: F401  (createDataFrame's Arrow path: imported while the JVM starts)

    return _read_in_driver([f.path for f in todo])


def _read_in_driver(paths: list[str]) -> tuple[list[str], Any]:
    """(the paths, sorted; their rows by lbctl's reader in this process as one pandas frame)."""
    import pandas as pd

    ordered = sorted(paths)
    frames = list(parse_files(iter([pd.DataFrame({"path": ordered})])))
    return ordered, pd.concat(frames, ignore_index=True)


def _run(spark: Any, todo: list[InputFile], run: Path, out: Path, result: IngestResult,
         progress: Progress, preread: Any = None) -> set[str]:
    """Stage every table of this run; returns the files that were skipped (malformed).
    ``preread``: the rows of every file of ``todo`` by lbctl's reader, when already read."""
    from lbctl.fleet import native

    for key, value in native.SQL_SETTINGS.items():
        spark.conf.set(key, value)
    kinds = {f.path: native_kind(f) for f in todo}
    sizes = {f.path: f.size for f in todo}
    small = sum(_unpacked_size(f) for f in todo) < small_input_bytes(spark)
    # a small run: lbctl's reader in this process costs less than the native plan's start
    native_files = [] if small else [f.path for f in todo if kinds[f.path] is not None]
    taken = set(native_files)
    reader_files = [f.path for f in todo if f.path not in taken]
    staged = _Native(spark, kinds, sizes, progress)
    try:
        rejected = staged.run(native_files)
        reader_files = sorted({*reader_files, *rejected})
        result.native_files = len(native_files) - len(rejected)
        result.reader_files = len(reader_files)
        fallback = _Reader(spark, reader_files, progress, in_driver=small,
                           preread=preread if small else None)
        try:
            result.skipped += fallback.errors
            bad = {s["file"] for s in fallback.errors}
            _write(spark, staged, fallback, run, out, result, progress)
        finally:
            fallback.close()
    finally:
        staged.close()
    return bad


#: a run with less input than this reads every file with lbctl's reader in this process (the
#: driver) instead of Spark's JSON reader and Python workers: the native parse has a fixed cost
#: of ~20 s of CPU (analysing, planning and compiling a plan of thousands of expressions) and
#: Python workers ~3 s (pyspark, pandas, pyarrow and lbctl imported in each), while lbctl's
#: reader costs ~0.4 s per MB — 0.2 s for the bundled example (33 files, 90 snapshots). The
#: rows are the same either way (a test compares the tables). ``--conf
#: spark.lbctl.fleet.smallInputBytes=0`` always takes the Spark readers (the tests do).
def small_input_bytes(spark: Any) -> int:
    """The session's ``spark.lbctl.fleet.smallInputBytes`` (lbctl's default:
    :data:`lbctl.fleet.session.SMALL_INPUT_BYTES`)."""
    from lbctl.errors import UsageError
    from lbctl.fleet.session import SMALL_INPUT_BYTES, SMALL_INPUT_CONF

    text = spark.conf.get(SMALL_INPUT_CONF, str(SMALL_INPUT_BYTES))
    try:
        return max(0, int(text))
    except ValueError:
        raise UsageError(f"--conf {SMALL_INPUT_CONF}={text}: expected a number of bytes") \
            from None


def _unpacked_size(f: InputFile) -> int:
    """A file's size with gzip's usual ratio on JSON (about 10:1) counted: what a small run
    holds in the driver's memory."""
    return f.size * 10 if f.path.lower().endswith(".gz") else f.size


class _Native:
    """The native parse: cached parsed lines, the driver-side section tables, per-file verdicts."""

    def __init__(self, spark: Any, kinds: dict[str, str | None], sizes: dict[str, int],
                 progress: Progress) -> None:
        self.spark = spark
        self.kinds = kinds
        self.sizes = sizes
        self.progress = progress
        self.cached: Any = None
        self.good: Any = None  # validated lines of the files the native path accepts
        self.keys: Any = None

    def close(self) -> None:
        if self.cached is not None:
            self.cached.unpersist()

    def run(self, paths: list[str]) -> list[str]:
        """Parse ``paths``; returns the files handed on to lbctl's reader."""
        rejected: list[str] = []
        todo = list(paths)
        while todo:
            try:
                with self.progress.phase(f"reading {len(todo)} JSON file(s) with Spark"):
                    rejected += self._attempt(todo)
                return rejected
            except Exception as e:
                uris = {file_uri(p): p for p in todo}
                failed = _failed_file(e, uris)
                if failed is None or not type(e).__module__.startswith(("pyspark", "py4j")):
                    raise
                self.close()
                self.progress.note(f"Spark cannot read {failed}; lbctl's reader will")
                todo.remove(failed)
                rejected.append(failed)
        return rejected

    def _attempt(self, paths: list[str]) -> list[str]:
        from lbctl.fleet import native, sections

        spark, F = self.spark, _compat.functions()
        level = _compat.storage_level().StorageLevel.MEMORY_AND_DISK
        lines = native.read_text(spark, [p for p in paths if self.kinds[p] == "lines"],
                                 [p for p in paths if self.kinds[p] == "whole"])
        uri_map = spark.createDataFrame(
            [(file_uri(p), p, native.check_keys(self.sizes[p])) for p in paths],
            "uri string, source string, check_keys boolean")
        lines = lines.join(F.broadcast(uri_map), "uri").drop("uri")
        # 1. the full parse and every check that needs no driver-side table, materialized once
        #    (a local checkpoint: later jobs see a small plan instead of re-planning the checks)
        #    and the tables are derived from it
        sentinel = native.new_sentinel()
        parsed = native.line_checks(native.parse(lines, sentinel), sentinel)
        self.cached = parsed.localCheckpoint(eager=True, storageLevel=level)
        # 2. the distinct config and namespaces sections, checked on the driver by lbctl
        shaped = self.cached.filter("guard")
        pairs = (shaped.select(F.lit("c").alias("kind"), F.col("config_key").alias("key"),
                               F.col("config_json").alias("json"))
                 .unionByName(shaped.select(F.lit("n").alias("kind"),
                                            F.col("namespaces_key").alias("key"),
                                            F.col("namespaces_json").alias("json")))
                 .distinct().collect())
        cfg = sections.config_table(spark, [(r["key"], r["json"]) for r in pairs
                                            if r["kind"] == "c"])
        nss = sections.namespaces_table(spark, [(r["key"], r["json"]) for r in pairs
                                                if r["kind"] == "n"])
        checked = (self.cached.join(F.broadcast(cfg), "config_key", "left")
                   .join(F.broadcast(nss), "namespaces_key", "left"))
        ok = (F.col("ok") & F.coalesce(F.col("config_ok"), F.lit(False))
              & F.coalesce(F.col("namespaces_ok"), F.lit(False))
              & native.overlap_ok(F.col("owned"), F.col("ns_names"), F.col("ns_listed")))
        checked = checked.withColumn("ok", F.coalesce(ok, F.lit(False)))
        # 3. per file: every line valid, one cluster, at least one snapshot
        per_file = checked.groupBy("source").agg(
            F.count(F.lit(1)).alias("lines"),
            F.sum(F.when(F.col("ok"), 0).otherwise(1)).alias("bad"),
            F.min("cluster").alias("c0"), F.max("cluster").alias("c1"))
        files = spark.createDataFrame([(p,) for p in paths], "source string")
        verdict = files.join(per_file, "source", "left").filter(
            F.col("lines").isNull() | (F.col("bad") > 0) | (F.col("c0") != F.col("c1")))
        rejected = [r["source"] for r in verdict.select("source").collect()]
        bad_files = spark.createDataFrame([(p,) for p in rejected], "source string")
        self.good = checked.join(F.broadcast(bad_files), "source", "left_anti")
        s = F.col("s")
        self.keys = self.good.select(
            "cluster", "captured_at", "source", "h", "uid",
            F.size(s["brokers"]).cast("long").alias("n_brokers"),
            F.size("owned").cast("long").alias("n_bundles"),
            F.when(s["topics"].isNull(), 0).otherwise(F.size(s["topics"])).cast("long")
            .alias("n_topics"))
        return rejected


class _Reader:
    """lbctl's reader over the files the native path does not take (a Spark job of its own, or
    this process for a small run)."""

    def __init__(self, spark: Any, paths: list[str], progress: Progress, *,
                 in_driver: bool = False, preread: Any = None) -> None:
        F = _compat.functions()
        self.rows: Any = None
        self.frame: Any = None  # the rows as a pandas frame, when read in this process
        self.errors: list[dict[str, str]] = []
        self.keys: Any = None
        if not paths:
            return
        level = _compat.storage_level().StorageLevel.MEMORY_AND_DISK
        with progress.phase(f"reading {len(paths)} file(s) with lbctl's reader"):
            rows, found, self.frame = _reader_rows(spark, paths, in_driver, preread)
            self.rows = rows.withColumn("uid", F.xxhash64("source", "seq")) \
                .withColumn("h", F.xxhash64("raw")).persist(level)
            if found is None:  # read in Spark tasks: the errors are in the rows
                found = [(r["source"], r["message"], r["line"]) for r in self.rows.filter(
                    F.col("kind") == "error").select("source", "message", "line").collect()]
        self.errors = sorted((skip_entry(f, m, n) for f, m, n in found), key=skip_order)
        for s in self.errors:
            progress.note(f"skipped: {s['reason']}")
        self.keys = self.rows.filter(F.col("kind") == "snapshot").select(
            "cluster", "captured_at", "source", "h", "uid",
            F.col("num_brokers").alias("n_brokers"), F.col("num_bundles").alias("n_bundles"),
            F.col("num_topics").alias("n_topics"))

    def close(self) -> None:
        if self.rows is not None:
            self.rows.unpersist()


def _reader_rows(spark: Any, paths: list[str], in_driver: bool,
                 preread: Any = None
                ) -> tuple[Any, list[tuple[str, str, int | None]] | None, Any]:
    """The union-schema rows of ``paths`` by lbctl's reader, and the files it rejected when they
    are known without a Spark job: in this process (the frames handed to Spark through Arrow;
    the errors read off the frame, no job to collect them; ``preread``: those frames, read while
    Spark started), or in Spark tasks (``mapInPandas``; None: the caller collects them from the
    rows); and the frame read in this process (else None)."""
    if in_driver:
        import pandas as pd

        if preread is None or preread[0] != sorted(paths):
            preread = _read_in_driver(paths)
        frame = preread[1]
        bad = frame[frame["kind"] == "error"]
        errors = [(f, m, None if pd.isna(n) else int(n))
                  for f, m, n in zip(bad["source"], bad["message"], bad["line"], strict=True)]
        return spark.createDataFrame(frame, union_schema()), errors, frame
    import os

    sc = spark.sparkContext
    total = sum(os.path.getsize(p) if os.path.exists(p) else 0 for p in paths)
    slices = reader_slices(total, len(paths), sc.defaultParallelism)
    listing = spark.createDataFrame(sc.parallelize([(p,) for p in _deal(paths, slices)],
                                                   slices), "path string")
    return listing.mapInPandas(parse_files, union_schema()), None, None


#: input per reader task worth a task of its own: each task starts a Python worker (pandas,
#: pyarrow, lbctl imported) and, for YAML, a child process: ~0.5 s of CPU before its first row
READER_TASK_BYTES = 4 << 20


def reader_slices(total_bytes: int, files: int, parallelism: int) -> int:
    """Tasks for lbctl's reader: up to four per core for balance, but no more than the input's
    size pays for (every core still gets one)."""
    return max(1, min(files, parallelism * 4, max(parallelism, total_bytes // READER_TASK_BYTES)))


def _deal(paths: list[str], slices: int) -> list[str]:
    """Largest files first, dealt round-robin so each contiguous slice gets a fair share."""
    import os

    ordered = sorted(paths, key=lambda p: (-os.path.getsize(p) if os.path.exists(p) else 0, p))
    return [ordered[i] for j in range(slices) for i in range(j, len(ordered), slices)]


def _write(spark: Any, native: _Native, reader: _Reader, run: Path, out: Path,
           result: IngestResult, progress: Progress) -> None:
    keys = [k for k in (native.keys, reader.keys) if k is not None]
    if not keys:
        return
    counted = (_counted_in_driver(reader.frame)
               if native.keys is None and reader.frame is not None
               and not (out / "snapshots").is_dir() else None)
    if counted is not None:  # nothing stored, no repeat: every snapshot read is new
        result.snapshots_read = result.snapshots_added = counted["snapshots"]
        result.rows = counted
        F = _compat.functions()
        _write_rows(None, reader.rows.filter(F.col("kind") != "error"), run, result, progress)
        return
    _write_new(spark, native, reader, keys, run, out, result, progress)


def _counted_in_driver(frame: Any) -> dict[str, int] | None:
    """A small run's rows per table, read off the driver's frame (no Spark job), when no two of
    its snapshots share (cluster, ``capturedAt``) — then there is nothing to choose between,
    and the Spark job that picks one snapshot of each (:func:`_write_new`) would keep them all;
    None when some do."""
    snaps = frame[frame["kind"] == "snapshot"]
    if snaps.duplicated(["cluster", "captured_at"]).any():
        return None
    return {"snapshots": len(snaps), "brokers": int(snaps["num_brokers"].sum()),
            "bundles": int(snaps["num_bundles"].sum()), "topics": int(snaps["num_topics"].sum())}


def _write_new(spark: Any, native: _Native, reader: _Reader, keys: list[Any], run: Path,
               out: Path, result: IngestResult, progress: Progress) -> None:
    """One snapshot per (cluster, ``capturedAt``), not stored yet, chosen by a Spark job; then
    its rows written."""
    F = _compat.functions()
    level = _compat.storage_level().StorageLevel.MEMORY_AND_DISK
    allkeys = keys[0]
    for k in keys[1:]:
        allkeys = allkeys.unionByName(k)
    best = F.min(F.struct("source", "h", "uid", "n_brokers", "n_bundles", "n_topics"))
    grouped = allkeys.groupBy("cluster", "captured_at").agg(best.alias("w"),
                                                            F.count(F.lit(1)).alias("copies"))
    stored = out / "snapshots"
    if stored.is_dir():
        have = (spark.read.parquet(str(stored)).select("cluster", "captured_at")
                .dropDuplicates().withColumn("stored", F.lit(True)))
        grouped = grouped.join(have, ["cluster", "captured_at"], "left")
    else:
        grouped = grouped.withColumn("stored", F.lit(None).cast("boolean"))
    grouped = grouped.select("cluster", "captured_at", "copies", "stored", "w.*").persist(level)
    winners = grouped.filter(F.col("stored").isNull())
    try:
        with progress.phase("finding the snapshots not stored yet"):
            fresh = F.col("stored").isNull()  # one job: what was read, what is new

            def of_new(c: Any) -> Any:
                return F.sum(F.when(fresh, c))

            totals = grouped.agg(F.sum("copies"), of_new(F.lit(1)), of_new(F.col("n_brokers")),
                                 of_new(F.col("n_bundles")), of_new(F.col("n_topics"))
                                 ).collect()[0]
        result.snapshots_read = int(totals[0] or 0)
        added, n_brokers, n_bundles, n_topics = (int(x or 0) for x in totals[1:])
        result.snapshots_added = added
        result.rows = {"snapshots": added, "brokers": n_brokers, "bundles": n_bundles,
                       "topics": n_topics}
        chosen = F.broadcast(winners.select("source", "uid"))
        good_native = (native.good.join(chosen, ["source", "uid"], "left_semi")
                       if native.good is not None else None)
        good_reader = (reader.rows.filter(F.col("kind") != "error")
                       .join(chosen, ["source", "uid"], "left_semi")
                       if reader.rows is not None else None)
        _write_rows(good_native, good_reader, run, result, progress)
    finally:
        grouped.unpersist()


def _write_rows(good_native: Any, good_reader: Any, run: Path, result: IngestResult,
                progress: Progress) -> None:
    """Every table's rows from the chosen lines of the native path and rows of lbctl's
    reader (either None), under ``run``."""
    from lbctl.fleet import native_tables

    F = _compat.functions()
    builders = {"snapshots": native_tables.snapshots, "brokers": native_tables.brokers,
                "bundles": native_tables.bundles, "topics": native_tables.topics}
    jobs: list[tuple[str, int, Any]] = []
    for table, cols in TABLES.items():
        n = result.rows[table]
        if not n:
            continue
        parts = []
        if good_native is not None:
            parts.append(builders[table](good_native))
        if good_reader is not None:
            parts.append(native_tables.select_table(
                good_reader.filter(F.col("kind") == KIND_OF_TABLE[table])
                .select(*[F.col(src).alias(dst) for src, dst in cols]), table))
        df = parts[0]
        for p in parts[1:]:
            df = df.unionByName(p)
        jobs.append((table, n, df))
    _write_tables(jobs, run, progress)


def _write_tables(jobs: list[tuple[str, int, Any]], run: Path, progress: Progress) -> None:
    """Write each (table, rows, frame) under ``run``, one job per table. (Submitted together
    from threads they cost more CPU and no less time on two cores: jobs compiling the same
    code at once.)"""
    for table, n, df in jobs:
        with progress.phase(f"writing {n:,} row(s) to {table}"):
            (df.write.mode("overwrite").partitionBy(*PARTITIONS)
             .option("compression", "zstd").parquet(str(run / table)))
