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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lbctl.errors import UsageError
from lbctl.fleet import _compat
from lbctl.fleet.progress import Progress

REPORT_FORMAT = "lbctl/fleet-report@1"


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

    Three passes over the Parquet tables, all native Spark: per sample over ``brokers`` (spreads,
    overloaded, idle); per sample over ``bundles`` (split thresholds, oversized, unsplittable —
    the owner's bundle count and throughput were stored at ingest, so no window is needed);
    per bundle over ``bundles`` in time order (one window, the owner of each of the last
    ``bounce_window`` samples as ``lag()`` columns: moves and bounce-backs). Two Spark jobs (each
    costs planning and code generation, most of a small report's time): the per-sample table, and
    the per-bundle table with each bundle's moves as a list — the hot bundles, the moves and the
    first samples are split from it in pandas. The results are small.
    """
    require_tables(data, "snapshots", "brokers", "bundles")
    F = _compat.functions()
    spark.conf.set("spark.sql.ansi.enabled", "false")
    keys = ["cluster", "captured_at"]
    # listing the partitions and reading the Parquet footers is Spark's first wait: say it
    with progress.phase(f"reading the tables in {data}"):
        thresholds = F.broadcast(read_table(spark, data, "snapshots").select(
            *keys, "overloaded_threshold", "split_max_topics", "split_max_sessions",
            "split_max_msg_rate", "split_max_bandwidth"))
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
        per_sample = brokers.groupBy(*keys).agg(
            F.count(F.lit(1)).alias("brokers"), *aggs,
            (F.max("weighted_max_usage") - F.min("weighted_max_usage")).alias("usage_range"),
            F.sum(overloaded.cast("int")).alias("overloaded"),
            F.sum((F.col("rate") == 0).cast("int")).alias("idle"))

        bundles = _bundle_flags(read_table(spark, data, "bundles"), thresholds, opts)
    counts = [F.sum(c).alias(c) for c in ("over_split", "oversized", "unsplittable")]
    with progress.phase("aggregating brokers and bundles per sample"):
        per_sample_b = bundles.groupBy(*keys).agg(F.count(F.lit(1)).alias("bundles"), *counts)
        samples = per_sample.join(per_sample_b, keys, "left").toPandas()
    with progress.phase("finding moves, bounce-backs and hot bundles"):
        per_bundle = per_bundle_table(bundles, counts, opts, F.xxhash64("cluster", "bundle"))
        if per_bundle is None:  # two bundles share a 64-bit hash: the exact (slower) window
            per_bundle = per_bundle_table(bundles, counts, opts, None)
    hot, moves, firsts = _split_per_bundle(per_bundle)
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


def per_bundle_table(bundles: Any, counts: list[Any], opts: ReportOptions, key: Any) -> Any:
    """One row per bundle (pandas): sample and flag counts, moves and bounce-backs, the list of
    its moves and its first sample — one Spark job.

    The window runs per bundle in time order, with the owner of each of the last
    ``bounce_window`` samples as ``lag()`` columns. ``key`` (a long column, e.g. a 64-bit hash of
    cluster and bundle) partitions it instead of the two strings: the sort then compares a long
    prefix instead of long bundle names with common prefixes (the sort 2.3× cheaper at 1M rows).
    Each group also carries the min and max of its cluster and bundle: if a key is ever shared by
    two bundles they differ, and None is returned (the caller runs the exact window, ``key``
    None)."""
    F = _compat.functions()
    W = _compat.window().Window
    n = opts.bounce_window
    hashed = key is not None
    if hashed:
        bundles = bundles.withColumn("_k", key)
        by = ["_k"]
    else:
        by = ["cluster", "bundle"]
    w = W.partitionBy(*by).orderBy("captured_at")
    lagged = bundles.select("*", *[F.lag("broker", k).over(w).alias(f"_lag{k}")
                                   for k in range(1, n + 1)])
    prev = F.col("_lag1")
    moved = prev.isNotNull() & (prev != F.col("broker"))
    back = F.lit(False)
    for k in range(2, n + 1):  # lag 1 is the owner it moved from
        back = back | F.coalesce(F.col(f"_lag{k}") == F.col("broker"), F.lit(False))
    move = F.struct(F.col("captured_at"), prev.alias("from_broker"),
                    F.col("broker").alias("to_broker"), back.alias("bounced"))
    names = ([F.min("cluster").alias("cluster"), F.max("cluster").alias("_c1"),
              F.min("bundle").alias("bundle"), F.max("bundle").alias("_b1")] if hashed else [])
    per_bundle = lagged.groupBy(*by).agg(
        *names,
        F.count(F.lit(1)).alias("samples"), *counts,
        F.sum(moved.cast("int")).alias("moved"),
        F.sum((moved & back).cast("int")).alias("bounced"),
        F.max("share").alias("max_share"), F.max("rate").alias("max_rate"),
        F.max("tput").alias("max_tput"), F.max("topics").alias("max_topics"),
        F.min("captured_at").alias("first_seen"),
        F.collect_list(F.when(moved, move)).alias("moves"))
    out = per_bundle.toPandas()
    if hashed:
        if ((out["cluster"] != out["_c1"]) | (out["bundle"] != out["_b1"])).any():
            return None
        out = out.drop(columns=["_k", "_c1", "_b1"])
    return out


#: the columns and dtypes of the moves table (as Spark's ``toPandas`` gave them when the moves
#: were exploded in Spark)
_MOVE_COLUMNS = {"cluster": "object", "bundle": "object", "captured_at": "int64",
                 "from_broker": "object", "to_broker": "object", "bounced": "bool"}


def _split_per_bundle(pb: Any) -> tuple[Any, Any, Any]:
    """The hot bundles, the moves (one row each) and the count of bundles first seen per sample,
    from the per-bundle table (pandas)."""
    import pandas as pd

    ints = ("samples", "over_split", "oversized", "unsplittable", "moved", "bounced", "max_topics")
    hot = pb[(pb["over_split"] > 0) | (pb["oversized"] > 0) | (pb["moved"] > 0)]
    hot = hot.drop(columns=["moves", "first_seen"]).reset_index(drop=True)
    for c in ints:  # as toPandas gives a long column: int64 unless it holds a null
        if c in hot and not hot[c].isna().any():
            hot[c] = hot[c].astype("int64")
    rows = [(c, b, m["captured_at"], m["from_broker"], m["to_broker"], m["bounced"])
            for c, b, ms in zip(pb["cluster"], pb["bundle"], pb["moves"], strict=True)
            for m in ms if m is not None]
    moves = pd.DataFrame(rows, columns=list(_MOVE_COLUMNS)).astype(_MOVE_COLUMNS)
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
    return b.select("cluster", "captured_at", "bundle", "broker", "rate", "tput", "topics",
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
    for c in ("bundles", "over_split", "oversized", "unsplittable", "moves", "bounces",
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
    in ``out``."""
    from lbctl.fleet import plots

    out.mkdir(parents=True, exist_ok=True)
    written = []
    samples = report.samples.assign(time=report.samples["time"].map(_iso))
    for name, df in (("clusters", report.clusters), ("samples", samples),
                     ("hot_bundles", report.hot_bundles), ("moves", report.moves)):
        df.to_csv(out / f"{name}.csv", index=False)
        written.append(str(out / f"{name}.csv"))
        if name in ("samples", "moves"):
            df.to_parquet(out / f"{name}.parquet", index=False)
            written.append(str(out / f"{name}.parquet"))
    if report.plots_skipped is None:
        written += plots.write_plots(report, out)
    report.files = written
    return written
