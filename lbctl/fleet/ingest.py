"""`lbctl fleet ingest`: snapshot files → tidy Parquet tables, partitioned by cluster and day.

The job:

1. The driver lists the inputs and drops files the manifest says are already ingested
   (:mod:`lbctl.fleet.files`); with nothing new, Spark is not even started.
2. The file list is spread over tasks (largest files dealt round-robin) and each task parses its
   files with lbctl's reader through ``mapInPandas`` (:func:`lbctl.fleet.rows.file_rows`): one
   union-schema row set per file, or one ``error`` row with the reader's message.
3. Snapshots are identified by (cluster, ``capturedAt``): those already stored (the ``snapshots``
   table) and repeats within the run (the same snapshot in two files: the first file by name wins)
   are dropped; the rest is appended to ``snapshots``, ``brokers``, ``bundles`` and ``topics``
   under ``OUT/<table>/cluster=…/date=…/``.
4. The manifest records the files read successfully; malformed files are reported, skipped and
   not recorded.

Inputs and ``OUT`` must be readable at the same path by the driver and every executor (trivially
so in local mode; a shared file system on a cluster).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lbctl.fleet import _compat
from lbctl.fleet.files import InputFile, changed, list_inputs, read_manifest, write_manifest
from lbctl.fleet.progress import Progress
from lbctl.fleet.rows import COLUMNS, KIND_OF_TABLE, TABLES, Batch, file_rows

PARTITIONS = ("cluster", "date")


@dataclass
class IngestResult:
    """What an ingest did: files found, read, skipped (with reasons) and rows written per table."""

    out: str
    files_found: int = 0
    files_unchanged: int = 0
    files_read: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    snapshots_read: int = 0
    snapshots_added: int = 0
    rows: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))

    @property
    def snapshots_already_stored(self) -> int:
        return self.snapshots_read - self.snapshots_added


def union_schema() -> Any:
    T = _compat.types()
    kinds = {"string": T.StringType(), "long": T.LongType(), "double": T.DoubleType()}
    return T.StructType([T.StructField(name, kinds[t], True) for name, t in COLUMNS])


def batch_frame(batch: Batch) -> Any:
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
    return pd.DataFrame(data)


def parse_files(batches: Iterator[Any]) -> Iterator[Any]:
    """The ``mapInPandas`` task: paths in, union-schema rows out (runs on executors)."""
    for batch in batches:
        for path in batch["path"]:
            for rows in file_rows(str(path)):
                yield batch_frame(rows)


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
    inputs = list_inputs(paths)
    manifest = read_manifest(out)
    todo = changed(inputs, manifest)
    result = IngestResult(out=str(out), files_found=len(inputs),
                          files_unchanged=len(inputs) - len(todo), files_read=len(todo))
    progress.note(f"{len(inputs)} snapshot file(s) found, {len(todo)} new or changed")
    if not todo:
        return result
    spark = session()
    progress.spark = spark
    from lbctl.fleet.session import job_error

    try:
        _run(spark, todo, out, result, progress)
    except _compat.SparkUnavailable:
        raise
    except Exception as e:
        if type(e).__module__.startswith(("pyspark", "py4j")):
            raise job_error(e) from None
        raise
    bad = {s["file"] for s in result.skipped}
    for f in todo:
        if f.path not in bad:
            manifest[f.path] = f.stamp
    write_manifest(out, manifest)
    return result


def _deal(files: list[InputFile], slices: int) -> list[str]:
    """Largest files first, dealt round-robin so each contiguous slice gets a fair share."""
    ordered = sorted(files, key=lambda f: (-f.size, f.path))
    return [ordered[i].path for j in range(slices) for i in range(j, len(ordered), slices)]


def _run(spark: Any, todo: list[InputFile], out: Path, result: IngestResult,
         progress: Progress) -> None:
    F = _compat.functions()
    level = _compat.storage_level().StorageLevel.MEMORY_AND_DISK
    sc = spark.sparkContext
    slices = max(1, min(len(todo), sc.defaultParallelism * 4))
    paths = spark.createDataFrame(sc.parallelize([(p,) for p in _deal(todo, slices)], slices),
                                  "path string")
    parsed = paths.mapInPandas(parse_files, union_schema()).persist(level)
    try:
        with progress.phase(f"reading {len(todo)} file(s)"):
            errors = parsed.filter(F.col("kind") == "error").select("source", "message").collect()
        result.skipped = sorted(({"file": r["source"], "reason": r["message"]} for r in errors),
                                key=lambda d: d["file"])
        for s in result.skipped:
            progress.note(f"skipped: {s['reason']}")

        snaps = parsed.filter(F.col("kind") == "snapshot").select("cluster", "captured_at",
                                                                   "source")
        keep = snaps.groupBy("cluster", "captured_at").agg(F.min("source").alias("source"))
        stored = out / "snapshots"
        if stored.exists():
            have = spark.read.parquet(str(stored)).select("cluster", "captured_at")
            keep = keep.join(have, ["cluster", "captured_at"], "left_anti")
        keep = keep.persist(level)
        result.snapshots_read = snaps.count()
        good = parsed.join(F.broadcast(keep), ["cluster", "captured_at", "source"], "left_semi")
        with progress.phase("counting new rows"):
            counts = {r["kind"]: r["count"] for r in good.groupBy("kind").count().collect()}
        result.snapshots_added = counts.get("snapshot", 0)
        for table, cols in TABLES.items():
            n = counts.get(KIND_OF_TABLE[table], 0)
            result.rows[table] = n
            if not n:
                continue
            with progress.phase(f"writing {n:,} row(s) to {table}"):
                (good.filter(F.col("kind") == KIND_OF_TABLE[table])
                 .select(*[F.col(src).alias(dst) for src, dst in cols])
                 .write.mode("append").partitionBy(*PARTITIONS)
                 .option("compression", "zstd").parquet(str(out / table)))
        keep.unpersist()
    finally:
        parsed.unpersist()
