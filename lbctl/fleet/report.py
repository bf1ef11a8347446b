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
  ``--bounce-window`` samples (it comes back). **churn**: moves / (bundle samples that have a previous one).
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


def require_tables(data: Path, *names: str) -> None:
    for n in names:
        if not (data / n).is_dir():
            raise UsageError(f"{data}: no {n} table; run `lbctl fleet ingest … --out {data}` first")


def compute(spark: Any, data: Path, opts: ReportOptions, progress: Progress) -> FleetReport:
    """Run the report's Spark jobs over the tables in ``data``."""
    require_tables(data, "snapshots", "brokers", "bundles")
    F = _compat.functions()
    W = _compat.window().Window
    keys = ["cluster", "captured_at"]
    thresholds = spark.read.parquet(str(data / "snapshots")).select(
        *keys, "overloaded_threshold", "split_max_topics", "split_max_sessions",
        "split_max_msg_rate", "split_max_bandwidth")
    brokers = (spark.read.parquet(str(data / "brokers"))
               .withColumn("rate", F.col("msg_rate_in") + F.col("msg_rate_out"))
               .withColumn("tput", F.col("msg_throughput_in") + F.col("msg_throughput_out"))
               .join(F.broadcast(thresholds), keys))
    brokers = (brokers
               .withColumn("overloaded", (F.col("weighted_max_usage")
                                          >= F.col("overloaded_threshold") / 100.0).cast("int"))
               .withColumn("idle", (F.col("rate") == 0).cast("int")))
    aggs = []
    for c in ("rate", "tput"):
        aggs += [F.mean(c).alias(f"{c}_mean"), F.stddev_pop(c).alias(f"{c}_std"),
                 F.min(c).alias(f"{c}_min"), F.max(c).alias(f"{c}_max")]
    per_sample = brokers.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("brokers"), *aggs,
        (F.max("weighted_max_usage") - F.min("weighted_max_usage")).alias("usage_range"),
        F.sum("overloaded").alias("overloaded"), F.sum("idle").alias("idle"))

    owner = (spark.read.parquet(str(data / "brokers"))
             .select(*keys, "broker",
                     (F.col("msg_throughput_in") + F.col("msg_throughput_out")).alias("owner_tput")))
    w_owner = W.partitionBy("cluster", "captured_at", "broker")
    w_bundle = W.partitionBy("cluster", "bundle").orderBy("captured_at")
    n = opts.bounce_window
    bundles = (spark.read.parquet(str(data / "bundles"))
               .withColumn("rate", F.col("msg_rate_in") + F.col("msg_rate_out"))
               .withColumn("tput", F.col("msg_throughput_in") + F.col("msg_throughput_out"))
               .join(F.broadcast(thresholds), keys)
               .join(owner, [*keys, "broker"], "left")
               .withColumn("owner_bundles", F.count(F.lit(1)).over(w_owner))
               .withColumn("share", F.when(F.col("owner_tput") > 0,
                                           F.col("tput") / F.col("owner_tput")))
               .withColumn("prev", F.lag("broker").over(w_bundle))
               .withColumn("recent", F.collect_list("broker").over(w_bundle.rowsBetween(-n, -1))))
    over = ((F.col("topics") > F.col("split_max_topics"))
            | ((F.col("split_max_sessions") > 0)
               & (F.col("consumers") + F.col("producers") > F.col("split_max_sessions")))
            | (F.col("rate") > F.col("split_max_msg_rate"))
            | (F.col("tput") > F.col("split_max_bandwidth")))
    oversized = (F.col("share") > opts.oversized_share) & (F.col("owner_bundles") >= 2)
    moved = F.col("prev").isNotNull() & (F.col("prev") != F.col("broker"))
    bundles = (bundles
               .withColumn("over_split", over.cast("int"))
               .withColumn("oversized", F.coalesce(oversized, F.lit(False)).cast("int"))
               .withColumn("unsplittable", (((F.col("over_split") + F.col("oversized")) > 0)
                                            & (F.col("topics") < 2)).cast("int"))
               .withColumn("moved", moved.cast("int"))
               .withColumn("bounced", (moved & F.array_contains("recent", F.col("broker")))
                           .cast("int"))
               .withColumn("has_prev", F.col("prev").isNotNull().cast("int")))
    # three jobs read the windowed bundle rows: compute them once
    bundles = bundles.drop("recent", "msg_rate_in", "msg_rate_out", "msg_throughput_in",
                           "msg_throughput_out").persist(
        _compat.storage_level().StorageLevel.MEMORY_AND_DISK)
    counts = [F.sum(c).alias(c) for c in ("over_split", "oversized", "unsplittable", "moved",
                                          "bounced", "has_prev")]
    with progress.phase("aggregating brokers and bundles per sample"):
        per_sample_b = bundles.groupBy(*keys).agg(F.count(F.lit(1)).alias("bundles"), *counts)
        samples = (per_sample.join(per_sample_b, keys, "left").orderBy(*keys).toPandas())
    with progress.phase("finding hot bundles and moves"):
        hot = (bundles.groupBy("cluster", "bundle")
               .agg(F.count(F.lit(1)).alias("samples"), *counts[:5],
                    F.max("share").alias("max_share"), F.max("rate").alias("max_rate"),
                    F.max("tput").alias("max_tput"), F.max("topics").alias("max_topics"))
               .filter("over_split > 0 OR oversized > 0 OR moved > 0")
               .orderBy("cluster", "bundle").toPandas())
        moves = (bundles.filter(moved)
                 .select("cluster", "bundle", "captured_at", F.col("prev").alias("from_broker"),
                         F.col("broker").alias("to_broker"), "bounced")
                 .orderBy("cluster", "captured_at", "bundle").toPandas())
    bundles.unpersist()
    return FleetReport(summarize(samples), finish_samples(samples), finish_hot(hot),
                       finish_moves(moves), opts)


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


def write_files(report: FleetReport, out: Path) -> list[str]:
    """CSV and Parquet tables and the PNG plots, in ``out``."""
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
    written += plots.write_plots(report, out)
    report.files = written
    return written
