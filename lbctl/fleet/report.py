"""`lbctl fleet report`: imbalance, hot bundles and churn, per cluster and over time.

Row-level work runs in Spark over the ingested tables; the per-sample and per-cluster results are
small and are finished in pandas. Definitions (every figure the report prints):

* **a sample** is one snapshot of a cluster. Per sample, over its brokers: mean, population
  standard deviation (``std``), coefficient of variation (``cv`` = std / mean; empty when the mean
  is 0), ``range`` (max − min) and ``ratio`` (max / min; empty when min is 0) of the message rate
  (in + out, msg/s) and of the throughput (in + out, bytes/s), and the range of the weighted max
  resource usage.
* **overloaded**: weighted max resource usage ``>= loadBalancerBrokerOverloadedThresholdPercentage``
  (OverloadShedder's test, with the snapshot's settings). **idle**: a broker carrying no messages.
* **over split thresholds**: the bundle's figures in that sample exceed one of
  ``loadBalancerNamespaceBundleMaxTopics``, ``…MaxSessions`` (when > 0), ``…MaxMsgRate``,
  ``…MaxBandwidthMbytes`` (strict ``>``, as ``BundleSplitterTask``; Pulsar compares the long-term
  rate averages, the report the sampled figures). **oversized**: a bundle carrying more than
  ``--oversized-share`` of its owner's throughput while the owner has other bundles.
  **unsplittable**: over a split threshold or oversized with fewer than 2 topics — a hot topic no
  split can fix (``BundleSplitterTask`` never splits such a bundle).
* **moves**: a bundle's owner differs from its owner in the bundle's previous sample (an unload
  observed). **bounces**: a move to an owner the bundle had in one of its previous
  ``--bounce-window`` samples (it comes back). **churn**: moves / (bundle samples that have a
  previous one). "Previous" is in the order of ``capturedAt`` among the samples ingested.
* Per cluster: counts are summed over samples, spreads averaged (``*_cv_max`` is the worst
  sample). Clusters are ranked by imbalance (mean throughput cv, then mean rate cv) and by churn
  (churn, then bounces); rank 1 is the worst.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lbctl.errors import UsageError
from lbctl.fleet import _compat
from lbctl.fleet.progress import Progress

REPORT_FORMAT = "lbctl/fleet-report@1"
#: The per-sample flags of a bundle (:func:`_bundle_flags`), summed per sample and per bundle.
FLAGS = ("over_split", "oversized", "unsplittable")


@dataclass(frozen=True)
class ReportOptions:
    bounce_window: int = 10
    oversized_share: float = 0.5
    top: int = 10

    def __post_init__(self) -> None:
        if self.bounce_window < 2:
            raise UsageError("--bounce-window must be at least 2 samples")
        if not 0 < self.oversized_share <= 1:
            raise UsageError("--oversized-share must be in (0, 1]")


@dataclass
class FleetReport:
    """The report's tables (pandas DataFrames) and the files written."""

    clusters: Any  # one row per cluster
    samples: Any  # one row per cluster and sample
    hot_bundles: Any  # one row per bundle that was ever over a threshold, oversized or moved
    moves: Any  # one row per observed move
    options: ReportOptions
    files: list[str] = field(default_factory=list)
    plots_skipped: str | None = None  # why no PNG was drawn (--no-plot, no matplotlib)


def require_tables(data: Path, *names: str) -> None:
    for n in names:
        if not (data / n).is_dir():
            raise UsageError(f"{data}: no {n} table; run `lbctl fleet ingest … --out {data}` first")


def compute(spark: Any, data: Path, opts: ReportOptions, progress: Progress) -> FleetReport:
    """Run the report's Spark jobs over the tables in ``data``.

    Two passes over the Parquet tables, all native Spark, neither sorting the bundle samples:
    per sample over ``brokers`` (spreads, overloaded, idle), and one aggregation of ``bundles``
    per bundle, stretch of samples and owner (:func:`per_bundle_table`: split thresholds,
    oversized, unsplittable — the owner's bundle count and throughput were stored at ingest —
    and which samples each owner had), from which pandas makes the bundles' totals, their moves
    and bounce-backs, and the per-sample counts of bundles. Two Spark jobs (each costs planning
    and code generation, most of a small report's time); their results are small.
    """
    require_tables(data, "snapshots", "brokers", "bundles")
    F = _compat.functions()
    spark.conf.set("spark.sql.ansi.enabled", "false")
    keys = ["cluster", "captured_at"]
    # listing the partitions and reading the Parquet footers is Spark's first wait: say it
    with progress.phase(f"reading the tables in {data}"):
        thresholds = F.broadcast(_stretched(read_table(spark, data, "snapshots").select(
            *keys, "overloaded_threshold", "split_max_topics", "split_max_sessions",
            "split_max_msg_rate", "split_max_bandwidth")))
        brokers = (read_table(spark, data, "brokers")
                   .select(*keys, "weighted_max_usage",
                           (F.col("msg_rate_in") + F.col("msg_rate_out")).alias("rate"),
                           (F.col("msg_throughput_in") + F.col("msg_throughput_out")).alias("tput"))
                   .join(thresholds, keys))
        overloaded = F.col("weighted_max_usage") >= F.col("overloaded_threshold") / 100.0
        aggs = []
        for c in ("rate", "tput"):
            aggs += [F.mean(c).alias(f"{c}_mean"), F.stddev_pop(c).alias(f"{c}_std"),
                     F.min(c).alias(f"{c}_min"), F.max(c).alias(f"{c}_max")]
        per_sample = brokers.groupBy(*keys, "stretch", "offset").agg(
            F.count(F.lit(1)).alias("brokers"), *aggs,
            (F.max("weighted_max_usage") - F.min("weighted_max_usage")).alias("usage_range"),
            F.sum(overloaded.cast("int")).alias("overloaded"),
            F.sum((F.col("rate") == 0).cast("int")).alias("idle"))

        bundles = _bundle_flags(read_table(spark, data, "bundles"), thresholds, opts)
    with progress.phase("aggregating brokers per sample"):
        samples = per_sample.toPandas()
    with progress.phase("finding moves, bounce-backs and hot bundles"):
        *tables, per_sample_b = per_bundle_table(bundles, thresholds, samples, opts)
    place = ["cluster", "stretch", "offset"]
    samples = samples.merge(per_sample_b, on=place, how="left").drop(columns=place[1:])
    hot, moves, firsts = _split_per_bundle(*tables)
    samples = _with_moves(samples, moves, firsts)
    hot = hot.sort_values(["cluster", "bundle"]).reset_index(drop=True)
    moves = moves.sort_values(["cluster", "captured_at", "bundle"]).reset_index(drop=True)
    return FleetReport(summarize(samples), finish_samples(samples), finish_hot(hot),
                       finish_moves(moves), opts)


def import_libraries(plots: bool) -> None:
    """The Python libraries the report uses once Spark has answered — pandas and pyarrow
    (``toPandas``, the tables' footers) and, when it draws plots, matplotlib: about a second of
    CPU, imported while the JVM starts (:func:`lbctl.fleet.session.start_while`)."""
    import pandas  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    if plots:
        from lbctl.fleet import plots as drawing

        drawing.preload()


#: samples of a cluster per stretch (:func:`per_bundle_table`): a bundle's owners are summed up
#: per stretch, and only a stretch in which an owner comes back is read row by row
STRETCH = 64


def per_bundle_table(bundles: Any, thresholds: Any, samples: Any,
                     opts: ReportOptions) -> tuple[Any, Any, Any]:
    """(one row per bundle: sample and flag counts, moves, bounce-backs, maxima and first sample;
    one row per move; one row per sample: its bundles and flagged bundles) as pandas tables,
    from one Spark job that sorts nothing. ``samples``: the per-sample table (its ``cluster``,
    ``stretch``, ``offset`` and ``captured_at`` place each sample).

    The samples of a cluster are cut into stretches of :data:`STRETCH` in ``capturedAt`` order
    (:func:`_stretched`: ``stretch``, ``offset`` in it, ``bit`` = 1 << offset). One aggregation
    (partial on the map side, as a ``groupBy`` is) sums each bundle's samples per stretch and
    owner, a *segment*: count, first and last ``capturedAt``, the flags, maxima, and ``mask``,
    the OR of the samples' bits (which of the stretch's samples the bundle had on that owner;
    ``*_mask`` the same for its flagged samples). The per-sample counts of bundles and flagged
    bundles are the masks' bits summed per stretch and offset. Within a stretch the samples of
    one owner are a single run exactly when the owners' spans ``[first, last]`` do not overlap
    (each sample has one owner); where they overlap (an owner came back within the stretch,
    e.g. a bounce-back) the runs are read off the masks. The bundle's history is then that
    sequence of runs, its moves the starts of runs whose owner differs from the run before
    (``pos``, the sample's position in its bundle, from the counts), and the bounce-backs are
    found among the moves (:func:`bounced`): within a bundle the owner changes only at a move.

    At 10M bundle samples (1000 bundles × 10,000 samples) the window this replaces (every
    sample shuffled and sorted by bundle and time for ``lag``, ``row_number`` and whole-partition
    totals) cost 42.6 CPU-s, plus the bundles' per-sample aggregation; this job, which shuffles
    one row per segment and sorts nothing, costs a fraction of that (figures in the commit)."""
    F = _compat.functions()
    keys = ["cluster", "bundle", "stretch"]
    masks = [F.bit_or(F.when(F.col(c) > 0, F.col("bit"))).alias(f"{c}_mask") for c in FLAGS]
    segs = bundles.groupBy(*keys, "broker").agg(
        F.count(F.lit(1)).alias("n"), F.min("captured_at").alias("t0"),
        F.max("captured_at").alias("t1"), F.bit_or("bit").alias("mask"), *masks,
        *[F.sum(c).alias(c) for c in FLAGS],
        F.max("share").alias("max_share"), F.max("rate").alias("max_rate"),
        F.max("tput").alias("max_tput"), F.max("topics").alias("max_topics")).toPandas()

    def more_times(wanted: Any) -> Any:  # the snapshots' places of these (cluster, stretch)
        return (thresholds.select("cluster", "stretch", "offset", "captured_at")
                .join(F.broadcast(thresholds.sparkSession.createDataFrame(wanted)),
                      ["cluster", "stretch"], "left_semi").toPandas())

    return from_segments(segs, samples, opts, more_times)


def from_segments(segs: Any, samples: Any, opts: ReportOptions,
                  more_times: Callable[[Any], Any] | None = None) -> tuple[Any, Any, Any]:
    """:func:`per_bundle_table`'s tables from the segments (pandas, no Spark); ``more_times``:
    the places and times of the samples of some (cluster, stretch) pairs that ``samples`` lacks
    (a sample no broker row names)."""
    import pandas as pd

    names = ["cluster", "bundle"]
    keys = [*names, "stretch"]
    per_sample = _per_sample_bundles(segs)
    segs = segs.sort_values([*keys, "t0"], kind="stable").reset_index(drop=True)
    overlap = _same_as_previous(segs, keys) & (segs["t0"] <= segs["t1"].shift(1))
    bad = segs.loc[overlap, keys].drop_duplicates()
    in_bad = segs.set_index(keys).index.isin(bad.set_index(keys).index)
    runs = segs.loc[~in_bad, [*keys, "broker", "t0", "n"]]
    if len(bad):
        runs = pd.concat([runs, _runs_of(segs[in_bad], samples, more_times)], ignore_index=True)
    runs = runs.sort_values([*names, "t0"], kind="stable").reset_index(drop=True)
    start = runs.groupby(names, sort=False)["n"].cumsum() - runs["n"] + 1
    prev_owner = runs["broker"].shift(1)
    moved = _same_as_previous(runs, names) & (runs["broker"] != prev_owner)
    moves = pd.DataFrame({"cluster": runs["cluster"], "bundle": runs["bundle"],
                          "captured_at": runs["t0"], "from_broker": prev_owner,
                          "to_broker": runs["broker"], "pos": start})[moved]
    moves = moves.reset_index(drop=True)
    moves["bounced"] = bounced(moves, opts.bounce_window)
    per = segs.groupby(names, sort=True).agg(
        samples=("n", "sum"), **{c: (c, "sum") for c in FLAGS},
        max_share=("max_share", "max"), max_rate=("max_rate", "max"),
        max_tput=("max_tput", "max"), max_topics=("max_topics", "max"),
        first_seen=("t0", "min")).reset_index()
    return _bundle_totals(per, moves), moves[list(_MOVE_COLUMNS)], per_sample


def _bits(masks: Any) -> Any:
    """The bits of 64-bit masks (pandas, null = none) as a (rows × STRETCH) 0/1 matrix (one
    byte a bit: a segment per 64 samples makes this 1 byte per bundle sample)."""
    import numpy as np

    m = masks.fillna(0).to_numpy(dtype=np.int64).view(np.uint64)
    return ((m[:, None] >> np.arange(STRETCH, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)


def _per_sample_bundles(segs: Any) -> Any:
    """Per sample (cluster, stretch, offset): bundle samples and flagged ones, from the masks."""
    import numpy as np
    import pandas as pd

    place = ["cluster", "stretch"]
    segs = segs.sort_values(place, kind="stable").reset_index(drop=True)
    first = np.flatnonzero(~_same_as_previous(segs, place).to_numpy())
    out = segs.loc[first, place].reset_index(drop=True)
    cols = {"bundles": "mask", **{c: f"{c}_mask" for c in FLAGS}}
    sums = {c: np.add.reduceat(_bits(segs[m]), first, axis=0, dtype=np.int64) if len(segs) else
            np.zeros((0, STRETCH), dtype=np.int64) for c, m in cols.items()}
    group, offset = np.nonzero(sums["bundles"])
    table = out.iloc[group].reset_index(drop=True)
    table["offset"] = offset.astype(np.int32)
    for c in cols:
        table[c] = sums[c][group, offset]
    return pd.DataFrame(table)


def _runs_of(segs: Any, samples: Any, more_times: Callable[[Any], Any] | None) -> Any:
    """The runs of one owner (bundle, stretch, owner, first ``capturedAt``, samples) of the
    segments ``segs`` (pandas; their owners' spans overlap) from their masks; the time of a
    stretch's sample from ``samples`` (or, for one no broker row names, the snapshots)."""
    import numpy as np
    import pandas as pd

    keys = ["cluster", "bundle", "stretch"]
    row, offset = np.nonzero(_bits(segs["mask"]))
    one = segs[[*keys, "broker"]].iloc[row].reset_index(drop=True)
    one["offset"] = offset.astype(np.int32)
    one = one.sort_values([*keys, "offset"], kind="stable").reset_index(drop=True)
    same = _same_as_previous(one, keys).to_numpy()
    starts = ~(same & one["broker"].eq(one["broker"].shift(1)).to_numpy())
    place = np.arange(len(one))
    first = place[starts]
    group_end = np.append(place[~same][1:], len(one))
    ends = group_end[np.searchsorted(group_end, first, side="right")]
    runs = one[starts].reset_index(drop=True)
    runs["n"] = np.minimum(np.append(first[1:], len(one)), ends) - first
    at = ["cluster", "stretch", "offset"]
    times = samples[[*at, "captured_at"]]
    runs = runs.merge(times, on=at, how="left")
    if runs["captured_at"].isna().any() and more_times is not None:
        wanted = runs.loc[runs["captured_at"].isna(), ["cluster", "stretch"]].drop_duplicates()
        more = more_times(wanted.reset_index(drop=True))
        runs = runs.drop(columns=["captured_at"]).merge(
            pd.concat([times, more]).drop_duplicates(at), on=at, how="left")
    runs["t0"] = runs["captured_at"].astype("int64")
    return pd.DataFrame(runs[[*keys, "broker", "t0", "n"]])


def _stretched(snapshots: Any) -> Any:
    """The snapshots with ``stretch``: their position in their cluster's ``capturedAt`` order
    divided by :data:`STRETCH` (a window over the small snapshots table)."""
    F = _compat.functions()
    W = _compat.window().Window
    rn = F.row_number().over(W.partitionBy("cluster").orderBy("captured_at"))
    return snapshots.withColumn("_rn", rn - 1).select(
        "*", F.floor(F.col("_rn") / STRETCH).cast("long").alias("stretch"),
        (F.col("_rn") % STRETCH).cast("int").alias("offset"),
        F.expr(f"shiftleft(1L, int(_rn % {STRETCH}))").alias("bit")).drop("_rn")


def _same_as_previous(df: Any, keys: list[str]) -> Any:
    """Whether each row has the same ``keys`` as the row before it."""
    same = df[keys[0]].eq(df[keys[0]].shift(1))
    for k in keys[1:]:
        same &= df[k].eq(df[k].shift(1))
    return same


def bounced(moves: Any, window: int) -> Any:
    """Whether each move goes back to an owner of the bundle's previous ``window`` samples other
    than the one just before it (the ``lag`` 2 … ``window`` owners), from the moves alone
    (pandas, sorted by cluster, bundle and ``pos``, the sample's position in its bundle, 1 = the
    first). The owner at position ``q`` is the new owner of the bundle's last move at or before
    ``q``, or, before its first move, the first move's old owner."""
    import numpy as np

    n = len(moves)
    if n == 0:
        return np.zeros(0, dtype=bool)
    new_bundle = np.ones(n, dtype=bool)
    new_bundle[1:] = ((moves["cluster"].to_numpy()[1:] != moves["cluster"].to_numpy()[:-1])
                      | (moves["bundle"].to_numpy()[1:] != moves["bundle"].to_numpy()[:-1]))
    group = np.cumsum(new_bundle) - 1  # 0, 1, … per bundle, ascending
    first = np.flatnonzero(new_bundle)[group]  # index of the bundle's first move
    pos = moves["pos"].to_numpy(dtype=np.int64)
    span = int(pos.max()) + 1
    order_key = group.astype(np.int64) * span + pos  # ascending: sorted by bundle, then pos
    to = moves["to_broker"].to_numpy(dtype=object)
    before = moves["from_broker"].to_numpy(dtype=object)[first]
    out = np.zeros(n, dtype=bool)
    for k in range(2, window + 1):
        q = pos - k
        last = np.searchsorted(order_key, group * span + q, side="right") - 1
        here = (q >= 1) & (last >= first)  # a move of this bundle at or before q
        owner = np.where(here, to[np.maximum(last, 0)], before)
        out |= (q >= 1) & (owner == to)
    return out


def _bundle_totals(firsts: Any, moves: Any) -> Any:
    """The per-bundle table: the totals of each bundle's first row, its moves and bounce-backs."""
    import pandas as pd

    keys = ["cluster", "bundle"]
    per = moves.groupby(keys).agg(moved=("bounced", "size"), bounced=("bounced", "sum"))
    pb = firsts.merge(per.reset_index(), on=keys, how="left")
    for c in ("moved", "bounced"):
        pb[c] = pb[c].fillna(0).astype("int64")
    cols = ["cluster", "bundle", "samples", *FLAGS, "moved",
            "bounced", "max_share", "max_rate", "max_tput", "max_topics", "first_seen"]
    return pd.DataFrame(pb[cols]).reset_index(drop=True)


#: the columns and dtypes of the moves table (as Spark's ``toPandas`` gave them when the moves
#: were exploded in Spark)
_MOVE_COLUMNS = {"cluster": "object", "bundle": "object", "captured_at": "int64",
                 "from_broker": "object", "to_broker": "object", "bounced": "bool"}


def _split_per_bundle(pb: Any, moves: Any) -> tuple[Any, Any, Any]:
    """The hot bundles, the moves (one row each) and the count of bundles first seen per sample,
    from the per-bundle and move tables (pandas)."""
    ints = ("samples", *FLAGS, "moved", "bounced", "max_topics")
    hot = pb[(pb["over_split"] > 0) | (pb["oversized"] > 0) | (pb["moved"] > 0)]
    hot = hot.drop(columns=["first_seen"]).reset_index(drop=True)
    for c in ints:  # as toPandas gives a long column: int64 unless it holds a null
        if c in hot and not hot[c].isna().any():
            hot[c] = hot[c].astype("int64")
    moves = moves.astype(_MOVE_COLUMNS)
    firsts = (pb.groupby(["cluster", "first_seen"]).size().rename("first").reset_index()
              .rename(columns={"first_seen": "captured_at"}))
    firsts["first"] = firsts["first"].astype("int64")
    return hot, moves, firsts


def read_table(spark: Any, data: Path, table: str) -> Any:
    """A table read with its declared schema (:func:`lbctl.fleet.rows.table_schema`) when the
    footer of its first file agrees: Spark's schema inference is a job of its own per table
    (footers read by tasks), a third of the report's Spark time on the bundled example. A table
    whose footer does not agree is read with inference, as before (its errors are Spark's)."""
    from lbctl.fleet.rows import table_schema

    T = _compat.types()
    declared = table_schema(table)
    path = data / table
    if not _footer_agrees(path, declared):
        return spark.read.parquet(str(path))
    kinds = {"string": T.StringType(), "long": T.LongType(), "double": T.DoubleType()}
    schema = T.StructType([T.StructField(name, kinds[t], True) for name, t in declared])
    return spark.read.schema(schema).parquet(str(path))


_ARROW_KINDS = {"string": ("string", "large_string"), "long": ("int64",), "double": ("double",)}


def _footer_agrees(path: Path, declared: list[tuple[str, str]]) -> bool:
    """Whether the first data file under ``path`` holds every declared column (the partition
    columns ``cluster`` and ``date`` are directory names) with the declared type."""
    import os

    import pyarrow.parquet as pq

    for root, dirs, files in os.walk(path):
        dirs.sort()
        data_files = sorted(f for f in files if f.endswith(".parquet") and not f.startswith((".", "_")))
        if not data_files:
            continue
        try:
            schema = pq.read_schema(os.path.join(root, data_files[0]))
        except (OSError, ValueError):
            return False
        types = {f.name: str(f.type) for f in schema}
        return all(name in ("cluster", "date") or types.get(name) in _ARROW_KINDS[t]
                   for name, t in declared)
    return False


def _bundle_flags(bundles: Any, thresholds: Any, opts: ReportOptions) -> Any:
    """Bundle samples with rate, throughput, share of the owner and the three flags."""
    F = _compat.functions()
    b = (bundles.select("cluster", "captured_at", "bundle", "broker", "topics", "consumers",
                        "producers", "owner_bundles", "owner_throughput",
                        (F.col("msg_rate_in") + F.col("msg_rate_out")).alias("rate"),
                        (F.col("msg_throughput_in") + F.col("msg_throughput_out")).alias("tput"))
         .join(thresholds, ["cluster", "captured_at"]))
    share = F.when(F.col("owner_throughput") > 0, F.col("tput") / F.col("owner_throughput"))
    over = ((F.col("topics") > F.col("split_max_topics"))
            | ((F.col("split_max_sessions") > 0)
               & (F.col("consumers") + F.col("producers") > F.col("split_max_sessions")))
            | (F.col("rate") > F.col("split_max_msg_rate"))
            | (F.col("tput") > F.col("split_max_bandwidth")))
    oversized = F.coalesce((share > opts.oversized_share) & (F.col("owner_bundles") >= 2),
                           F.lit(False))
    unsplittable = (over | oversized) & (F.col("topics") < 2)
    return b.select("cluster", "captured_at", "stretch", "bit", "bundle", "broker", "rate", "tput", "topics",
                    share.alias("share"), over.cast("int").alias("over_split"),
                    oversized.cast("int").alias("oversized"),
                    unsplittable.cast("int").alias("unsplittable"))


def _with_moves(samples: Any, moves: Any, firsts: Any) -> Any:
    """Per-sample moves, bounces and bundle samples with a previous one, from the small tables."""
    import pandas as pd

    keys = ["cluster", "captured_at"]
    if len(moves):
        per = moves.groupby(keys).agg(moved=("bounced", "size"), bounced=("bounced", "sum"))
    else:
        per = pd.DataFrame(columns=["moved", "bounced"],
                           index=pd.MultiIndex.from_tuples([], names=keys))
    s = samples.merge(per.reset_index(), on=keys, how="left")
    s = s.merge(firsts, on=keys, how="left")
    s["has_prev"] = s["bundles"].fillna(0) - s["first"].fillna(0)
    return s.drop(columns=["first"]).sort_values(keys).reset_index(drop=True)


def finish_samples(s: Any) -> Any:
    """Derived per-sample columns (pandas): cv, range, ratio; ISO times."""
    import numpy as np
    import pandas as pd

    s = s.copy()
    for c in ("rate", "tput"):
        mean, lo, hi = s[f"{c}_mean"], s[f"{c}_min"], s[f"{c}_max"]
        s[f"{c}_cv"] = (s[f"{c}_std"] / mean).where(mean > 0)
        s[f"{c}_range"] = hi - lo
        s[f"{c}_ratio"] = (hi / lo).where(lo > 0)
    s = s.rename(columns={"moved": "moves", "bounced": "bounces"})
    for c in ("bundles", *FLAGS, "moves", "bounces",
              "has_prev", "overloaded", "idle", "brokers"):
        s[c] = s[c].fillna(0).astype("int64")
    s["time"] = pd.to_datetime(s["captured_at"], unit="ms", utc=True)
    s = s.replace([np.inf, -np.inf], np.nan)
    return s


def summarize(samples: Any) -> Any:
    """One row per cluster from the per-sample table, with the two rankings."""
    import pandas as pd

    s = finish_samples(samples)
    g = s.groupby("cluster", sort=True)
    out = pd.DataFrame({
        "samples": g.size(),
        "first": g["time"].min().map(_iso),
        "last": g["time"].max().map(_iso),
        "brokers": g["brokers"].max(),
        "bundles": g["bundles"].max(),
        "rate_std": g["rate_std"].mean(),
        "rate_cv": g["rate_cv"].mean(),
        "rate_cv_max": g["rate_cv"].max(),
        "rate_range": g["rate_range"].mean(),
        "rate_ratio": g["rate_ratio"].mean(),
        "tput_std": g["tput_std"].mean(),
        "tput_cv": g["tput_cv"].mean(),
        "tput_cv_max": g["tput_cv"].max(),
        "tput_range": g["tput_range"].mean(),
        "tput_ratio": g["tput_ratio"].mean(),
        "usage_range": g["usage_range"].mean(),
        "overloaded": g["overloaded"].sum(),
        "idle": g["idle"].sum(),
        "over_split": g["over_split"].sum(),
        "oversized": g["oversized"].sum(),
        "unsplittable": g["unsplittable"].sum(),
        "moves": g["moves"].sum(),
        "bounces": g["bounces"].sum(),
    })
    transitions = g["has_prev"].sum()
    out["churn"] = (out["moves"] / transitions).where(transitions > 0, 0.0)
    out = out.reset_index()
    out["imbalance_rank"] = _rank(out, ["tput_cv", "rate_cv"])
    out["churn_rank"] = _rank(out, ["churn", "bounces"])
    return out.sort_values(["imbalance_rank", "cluster"]).reset_index(drop=True)


def _rank(df: Any, by: list[str]) -> Any:
    """1 = worst (largest), ties broken by the next column, then by cluster name."""
    order = df.assign(**{f"_{c}": df[c].fillna(-1.0) for c in by}).sort_values(
        [f"_{c}" for c in by] + ["cluster"], ascending=[False] * len(by) + [True])
    ranks = {idx: i + 1 for i, idx in enumerate(order.index)}
    return df.index.map(ranks).astype("int64")


def finish_hot(h: Any) -> Any:
    h = h.rename(columns={"moved": "moves", "bounced": "bounces"})
    return h.sort_values(["unsplittable", "over_split", "oversized", "moves", "cluster", "bundle"],
                         ascending=[False, False, False, False, True, True]).reset_index(drop=True)


def finish_moves(m: Any) -> Any:
    import pandas as pd

    m = m.copy()
    m["time"] = pd.to_datetime(m["captured_at"], unit="ms", utc=True).map(_iso)
    m["bounced"] = m["bounced"].astype(bool)
    return m


def _iso(ts: Any) -> str:
    return str(ts.strftime("%Y-%m-%dT%H:%M:%SZ"))


def plots_skipped(no_plot: bool) -> str | None:
    """Why the report draws no plot: ``--no-plot``, or no matplotlib (the ``fleet`` extra alone);
    None when it draws them."""
    from lbctl.fleet import plots

    if no_plot:
        return "--no-plot"
    if not plots.available():
        return f"matplotlib is not installed: {plots.PLOT_HINT}"
    return None


def write_files(report: FleetReport, out: Path) -> list[str]:
    """CSV and Parquet tables and, unless ``report.plots_skipped`` says why not, the PNG plots,
    in ``out``.

    Each file is made whole and then renamed into place (:func:`lbctl.safe.files.atomic_write`):
    a full disk or SIGTERM leaves the file as it was, never half written, and no temporary file.
    A name that is a link, a directory or a FIFO is refused before anything is written (a FIFO
    opened by name, as pandas did, waited forever for a reader), and so is an ``out`` that is not
    a directory (hostile18)."""
    import os

    from lbctl.errors import LbctlError
    from lbctl.fleet import plots
    from lbctl.safe.files import atomic_write, refuse_link, refuse_unwritable

    refuse_link(out, error=LbctlError)
    if out.exists() and not out.is_dir():
        raise LbctlError(f"{out}: not a directory (the report's tables and plots are written in it)")
    try:  # the disk's refusal in ingest's words (walk21): ``cannot write OUT: <the reason>``
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise LbctlError(f"cannot write {out}: {e.strerror or e}") from None
    names = [f"{n}.csv" for n in ("clusters", "samples", "hot_bundles", "moves")]
    names += ["samples.parquet", "moves.parquet", "spread.png", "churn.png"]
    for name in names:
        refuse_unwritable(out / name, what="a file of the report to write", error=LbctlError)
    mask = os.umask(0o022)
    os.umask(mask)
    mode = 0o666 & ~mask  # as a file opened by name would be made

    def refused(message: str) -> LbctlError:
        """``NAME: cannot write: REASON`` said as ingest says a refused write (walk21)."""
        name, said, reason = message.partition(": cannot write: ")
        return LbctlError(f"cannot write {name}: {reason}" if said else message)

    def write(path: Path, data: bytes) -> str:
        atomic_write(str(path), data, error=refused, mode=mode)
        return str(path)

    written = []
    samples = report.samples.assign(time=report.samples["time"].map(_iso))
    for name, df in (("clusters", report.clusters), ("samples", samples),
                     ("hot_bundles", report.hot_bundles), ("moves", report.moves)):
        written.append(write(out / f"{name}.csv", df.to_csv(index=False).encode("utf-8")))
        if name in ("samples", "moves"):
            written.append(write(out / f"{name}.parquet", df.to_parquet(None, index=False)))
    if report.plots_skipped is None:
        written += plots.write_plots(report, out, write)
    report.files = written
    return written
