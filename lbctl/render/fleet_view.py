"""What the fleet commands print: each result as data (json), rows (csv) or text (table)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from lbctl.render import table
from lbctl.units import number


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

    def to_data(self) -> Any:
        r = self.result
        return {
            "out": r.out,
            "files": {"found": r.files_found, "unchanged": r.files_unchanged,
                      "read": r.files_read - len(r.skipped), "skipped": len(r.skipped)},
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
            f"{f['read']} read, {f['skipped']} skipped (malformed)",
            f"read by Spark's JSON reader: {d['readers']['spark']} file(s), by lbctl's reader: "
            f"{d['readers']['lbctl']}",
            f"snapshots: {s['read']} read, {s['added']} added, {s['alreadyStored']} already stored",
            "rows written: " + ", ".join(f"{k} {v:,}" for k, v in rows.items()),
        ]
        lines += [f"skipped: {x['reason']}" for x in d["skipped"]]
        return "\n".join(lines)


CLUSTER_TEXT = [("imbalance_rank", "imb#"), ("churn_rank", "churn#"), ("cluster", "cluster"),
                ("samples", "samples"), ("brokers", "brokers"), ("bundles", "bundles"),
                ("tput_cv", "tput cv"), ("rate_cv", "rate cv"), ("tput_ratio", "tput max/min"),
                ("overloaded", "overloaded"), ("idle", "idle"), ("over_split", "over split"),
                ("unsplittable", "unsplittable"), ("moves", "moves"), ("bounces", "bounces"),
                ("churn", "churn")]


@dataclass
class ReportView:
    report: Any  # lbctl.fleet.report.FleetReport

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
        }

    def to_rows(self) -> list[dict[str, Any]]:
        return records(self.report.clusters)

    def to_text(self) -> str:
        r = self.report
        rows = []
        for rec in records(r.clusters):
            rows.append({label: (number(rec[k], 3) if isinstance(rec[k], float) or rec[k] is None
                                 else str(rec[k])) for k, label in CLUSTER_TEXT})
        parts = ["Clusters (rank 1 = most imbalanced / most churn):", table(rows)]
        hot = records(r.hot_bundles.head(r.options.top))
        if hot:
            parts += ["", f"Hot bundles (top {r.options.top}; counts are samples):", table([
                {"cluster": h["cluster"], "bundle": h["bundle"], "samples": str(h["samples"]),
                 "over split": str(h["over_split"]), "oversized": str(h["oversized"]),
                 "unsplittable": str(h["unsplittable"]), "moves": str(h["moves"]),
                 "bounces": str(h["bounces"]), "max share": number(h["max_share"], 2),
                 "max MB/s": number((h["max_tput"] or 0) / 1048576, 1)} for h in hot])]
        if r.files:
            parts += ["", "Written: " + ", ".join(r.files)]
        return "\n".join(parts)


@dataclass
class WhatIfView:
    counts: Any  # pandas DataFrame, lbctl.fleet.whatif.RESULT_COLUMNS
    window: int

    def to_data(self) -> Any:
        return {"window": self.window, "results": records(self.counts)}

    def to_rows(self) -> list[dict[str, Any]]:
        return records(self.counts)

    def to_text(self) -> str:
        rows = [{k: ("" if v is None else str(v)) for k, v in rec.items()}
                for rec in records(self.counts)]
        return (f"Replayed cluster histories (moved_soon_after / repeats: within {self.window} "
                f"samples after the unload):\n" + table(rows))
