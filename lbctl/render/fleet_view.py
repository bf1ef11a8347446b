"""What the fleet commands print: each result as data (json), rows (csv) or text (table)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.render import table
from lbctl.render.schema import Schema, col
from lbctl.units import number

INGEST_SCHEMA = Schema("fleet ingest", "counter of the run", (
    col("item", "string", "files_found, files_unchanged, files_read, files_skipped, "
        "lines_skipped, read_by_spark, read_by_lbctl, snapshots_read, snapshots_added, snapshots_alreadyStored, rows_<table>"),
    col("count", "integer", "its value"),
))

REPORT_SCHEMA = Schema("fleet report", "cluster (clusters.csv has the same columns)", (
    col("cluster", "string", "the cluster"),
    col("samples", "integer", "snapshots of it"),
    col("first", "time", "the first sample"),
    col("last", "time", "the last sample"),
    col("brokers", "integer", "most brokers in a sample"),
    col("bundles", "integer", "most bundles in a sample"),
    col("rate_std", "number", "std of the brokers' message rate (in + out), msg/s, mean over samples"),
    col("rate_cv", "number", "its coefficient of variation, mean over samples"),
    col("rate_cv_max", "number", "the worst sample's cv of message rate"),
    col("rate_range", "number", "max - min message rate, msg/s, mean over samples"),
    col("rate_ratio", "number", "max / min message rate, mean over samples"),
    col("tput_std", "number", "std of the brokers' throughput, bytes/s, mean over samples"),
    col("tput_cv", "number", "its coefficient of variation, mean over samples"),
    col("tput_cv_max", "number", "the worst sample's cv of throughput"),
    col("tput_range", "number", "max - min throughput, bytes/s, mean over samples"),
    col("tput_ratio", "number", "max / min throughput, mean over samples"),
    col("usage_range", "number", "max - min weighted max usage, fraction, mean over samples"),
    col("overloaded", "integer", "overloaded broker-samples"),
    col("idle", "integer", "idle broker-samples (no messages)"),
    col("over_split", "integer", "bundle-samples over a split threshold"),
    col("oversized", "integer", "oversized bundle-samples"),
    col("unsplittable", "integer", "unsplittable bundle-samples"),
    col("moves", "integer", "observed moves"),
    col("bounces", "integer", "observed bounce-backs"),
    col("churn", "number", "moves per bundle-sample that has a previous one"),
    col("imbalance_rank", "integer", "rank by imbalance, 1 = worst"),
    col("churn_rank", "integer", "rank by churn, 1 = worst"),
))

WHATIF_SCHEMA = Schema("fleet whatif", "cluster and strategy", (
    col("cluster", "string", "the cluster"),
    col("strategy", "string", "the shedding strategy replayed"),
    col("placement", "string", "its placement strategy"),
    col("cycles", "integer", "cycles replayed"),
    col("unloads", "integer", "unloads the strategy made"),
    col("moved_soon_after", "integer", "unloads of bundles the history shows moving within --window"),
    col("repeats", "integer", "the same bundle unloaded again within --window cycles"),
    col("error", "string", "why the replay failed (empty when it did not)"),
))


def records(df: Any, columns: list[str] | None = None) -> list[dict[str, Any]]:
    """DataFrame rows as plain dicts: NaN → None, numpy scalars → Python numbers."""
    cols = columns or list(df.columns)
    out = []
    for row in df[cols].itertuples(index=False, name=None):
        rec = {}
        for k, v in zip(cols, row, strict=True):
            if hasattr(v, "item"):
                v = v.item()
            if isinstance(v, float) and math.isnan(v):
                v = None
            rec[k] = v
        out.append(rec)
    return out


@dataclass
class IngestView:
    result: Any  # lbctl.fleet.ingest.IngestResult
    schema: ClassVar[Schema] = INGEST_SCHEMA

    def to_data(self) -> Any:
        r = self.result
        whole = sum("line" not in s for s in r.skipped)
        return {
            "out": r.out,
            "files": {"found": r.files_found, "unchanged": r.files_unchanged,
                      "read": r.files_read - whole, "skipped": whole},
            # lines of .jsonl files skipped: those files' other lines are ingested (and counted
            # as read); each is read again by the next run until it is fixed
            "linesSkipped": len(r.skipped) - whole,
            "skipped": r.skipped,
            # which reader took the files read: Spark's JSON reader or lbctl's (YAML, the rest)
            "readers": {"spark": r.native_files, "lbctl": r.reader_files},
            "snapshots": {"read": r.snapshots_read, "added": r.snapshots_added,
                          "alreadyStored": r.snapshots_already_stored},
            "rows": dict(r.rows),
        }

    def to_rows(self) -> list[dict[str, Any]]:
        d = self.to_data()
        rows = [{"item": f"files_{k}", "count": v} for k, v in d["files"].items()]
        rows += [{"item": "lines_skipped", "count": d["linesSkipped"]}]
        rows += [{"item": f"read_by_{k}", "count": v} for k, v in d["readers"].items()]
        rows += [{"item": f"snapshots_{k}", "count": v} for k, v in d["snapshots"].items()]
        rows += [{"item": f"rows_{k}", "count": v} for k, v in d["rows"].items()]
        return rows

    def to_text(self) -> str:
        d = self.to_data()
        f, s, rows = d["files"], d["snapshots"], d["rows"]
        lines = [
            f"Ingested into {d['out']}",
            f"files: {f['found']} found, {f['unchanged']} unchanged since the last run, "
            f"{f['read']} read, {f['skipped']} skipped (malformed)"
            + (f", {d['linesSkipped']} malformed line(s) skipped (their files' other lines "
               "were read)" if d["linesSkipped"] else ""),
            f"read by Spark's JSON reader: {d['readers']['spark']} file(s), by lbctl's reader: "
            f"{d['readers']['lbctl']}",
            f"snapshots: {s['read']} read, {s['added']} added, {s['alreadyStored']} already stored",
            "rows written: " + ", ".join(f"{k} {v:,}" for k, v in rows.items()),
        ]
        lines += [f"skipped: {x['reason']}" for x in d["skipped"]]
        return "\n".join(lines)


#: the report's two tables (each fits 80 columns): imbalance, then churn and bundles
CLUSTER_TEXT = [("imbalance_rank", "imb#"), ("cluster", "cluster"), ("samples", "samples"),
                ("brokers", "brokers"), ("bundles", "bundles"), ("tput_cv", "tput cv"),
                ("rate_cv", "rate cv"), ("tput_ratio", "tput max/min"),
                ("overloaded", "overload"), ("idle", "idle")]
CHURN_TEXT = [("churn_rank", "churn#"), ("cluster", "cluster"), ("moves", "moves"),
              ("bounces", "bounces"), ("churn", "churn"), ("over_split", "over split"),
              ("oversized", "oversized"), ("unsplittable", "unsplit")]

#: what gives way, in order, when a cluster or bundle name would not fit whole (tables.py)
CLUSTER_OPTIONAL = ("idle", "overload", "samples", "tput max/min", "brokers")
CHURN_OPTIONAL = ("unsplit", "oversized", "over split", "bounces")
HOT_OPTIONAL = ("bounces", "max share", "oversized", "samples", "unsplittable", "over split")


def _cells(rec: dict[str, Any], columns: list[tuple[str, str]]) -> dict[str, str]:
    return {label: (number(rec.get(k), 3) if isinstance(rec.get(k), float) or rec.get(k) is None
                    else str(rec[k])) for k, label in columns}


@dataclass
class ReportView:
    report: Any  # lbctl.fleet.report.FleetReport
    schema: ClassVar[Schema] = REPORT_SCHEMA

    def to_data(self) -> Any:
        from lbctl.fleet.report import REPORT_FORMAT

        r = self.report
        return {
            "format": REPORT_FORMAT,
            "options": {"bounceWindow": r.options.bounce_window,
                        "oversizedShare": r.options.oversized_share},
            "clusters": records(r.clusters),
            "hotBundles": records(r.hot_bundles.head(r.options.top)),
            "files": list(r.files),
            "plotsSkipped": r.plots_skipped,
        }

    def to_rows(self) -> list[dict[str, Any]]:
        cols = [c.name for c in REPORT_SCHEMA.columns]
        return [{k: v for k, v in rec.items() if k in cols}
                for rec in records(self.report.clusters)]

    def to_text(self) -> str:
        r = self.report
        recs = records(r.clusters)
        by_churn = sorted(recs, key=lambda x: (x["churn_rank"], x["cluster"]))
        parts = ["Clusters by imbalance (rank 1 = most imbalanced):",
                 table([_cells(x, CLUSTER_TEXT) for x in recs], optional=CLUSTER_OPTIONAL), "",
                 "Clusters by churn (rank 1 = most churn; bundle counts are samples):",
                 table([_cells(x, CHURN_TEXT) for x in by_churn], optional=CHURN_OPTIONAL)]
        hot = records(r.hot_bundles.head(r.options.top))
        if hot:
            parts += ["", f"Hot bundles (top {r.options.top}; counts are samples):", table([
                {"cluster": h["cluster"], "bundle": h["bundle"], "samples": str(h["samples"]),
                 "over split": str(h["over_split"]), "oversized": str(h["oversized"]),
                 "unsplittable": str(h["unsplittable"]), "moves": str(h["moves"]),
                 "bounces": str(h["bounces"]), "max share": number(h["max_share"], 2),
                 "max MB/s": number((h["max_tput"] or 0) / 1048576, 1)} for h in hot],
                optional=HOT_OPTIONAL)]
        if r.files:
            parts += ["", "Written: " + ", ".join(r.files)]
        if r.plots_skipped:
            parts += [f"Plots skipped: {r.plots_skipped}."]
        return "\n".join(parts)


#: the whatif table's column that gives way at 80 columns (said once under it when every row has
#: the same placement, as a replay of the modular strategies does; else named as left out):
#: with it, the seven columns took 95 and the table cut its headers ("clust" / "er",
#: "moved_" / "soon_" / "after")
WHATIF_OPTIONAL = ("placement",)


@dataclass
class WhatIfView:
    counts: Any  # pandas DataFrame, lbctl.fleet.whatif.RESULT_COLUMNS
    window: int
    schema: ClassVar[Schema] = WHATIF_SCHEMA

    def to_data(self) -> Any:
        return {"window": self.window, "results": records(self.counts)}

    def to_rows(self) -> list[dict[str, Any]]:
        return records(self.counts)

    def to_text(self) -> str:
        rows = [{k: ("" if v is None else str(v)) for k, v in rec.items()}
                for rec in records(self.counts)]
        return (f"Replayed cluster histories (moved_soon_after / repeats: within {self.window}\n"
                f"samples after the unload):\n" + table(rows, optional=WHATIF_OPTIONAL))
