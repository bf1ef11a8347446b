"""`lbctl fleet whatif`: every cluster's history through other strategies, on Spark.

The ingested ``snapshots`` table holds each snapshot whole (compact snapshot v1 JSON). The job
groups it by cluster (``groupBy("cluster").applyInPandas``): one task sees one cluster's
snapshots, sorts them by time, parses them with lbctl's reader and replays them once per
requested strategy through :func:`lbctl.fleet.replay.replay_history` — the pure strategies and
load-manager cycle that ``lbctl recommend`` runs, not a Spark re-implementation. A cluster that
cannot be replayed (an extensible load manager, a bad setting) gets a row with its error instead of
failing the job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lbctl.errors import LbctlError
from lbctl.fleet import _compat
from lbctl.fleet.progress import Progress
from lbctl.fleet.report import require_tables
from lbctl.loadmanager.select import Options

RESULT_COLUMNS = (("cluster", "string"), ("strategy", "string"), ("placement", "string"),
                  ("cycles", "long"), ("unloads", "long"), ("moved_soon_after", "long"),
                  ("repeats", "long"), ("error", "string"))


@dataclass(frozen=True)
class WhatIfOptions:
    strategies: tuple[str | None, ...] = (None,)  # None: each snapshot's configured strategy
    placement: str | None = None
    overrides: tuple[tuple[str, str], ...] = ()
    seed: int | None = None
    window: int = 10
    clusters: tuple[str, ...] = ()

    def analysis_options(self, strategy: str | None) -> Options:
        return Options(strategy, self.placement, dict(self.overrides), None, self.seed)


def validate(opts: WhatIfOptions) -> None:
    """Unknown strategy or setting names are usage errors on the driver, before Spark starts."""
    from lbctl.config import resolve
    from lbctl.strategies.builtin import PLACEMENT, SHEDDING

    for s in opts.strategies:
        if s is not None:
            SHEDDING.short_name(s)
    if opts.placement is not None:
        PLACEMENT.short_name(opts.placement)
    resolve({}, {}, dict(opts.overrides))


def cluster_replayer(opts: WhatIfOptions) -> Callable[[Any], Any]:
    """The ``applyInPandas`` function: one cluster's snapshots in, one row per strategy out."""

    def replay(pdf: Any) -> Any:
        import orjson
        import pandas as pd

        from lbctl.fleet.replay import replay_history
        from lbctl.sources.snapshot import parse_snapshot

        pdf = pdf.sort_values(["captured_at", "source"], kind="stable")
        cluster = str(pdf["cluster"].iloc[0])
        rows: list[tuple[str, str, str, int, int, int, int, str | None]] = []
        try:
            states = [parse_snapshot(orjson.loads(raw), str(src))
                      for raw, src in zip(pdf["raw"], pdf["source"], strict=True)]
        except LbctlError as e:
            states, err = [], str(e).splitlines()[0]
        for strategy in opts.strategies:
            if not states:
                rows.append((cluster, strategy or "", opts.placement or "", 0, 0, 0, 0, err))
                continue
            try:
                c = replay_history(states, opts.analysis_options(strategy), opts.window)
                rows.append((cluster, c.strategy, c.placement, c.cycles, c.unloads,
                             c.moved_soon_after, c.repeats, None))
            except LbctlError as e:
                rows.append((cluster, strategy or "", opts.placement or "", 0, 0, 0, 0,
                             str(e).splitlines()[0]))
        return pd.DataFrame(rows, columns=[n for n, _ in RESULT_COLUMNS])

    return replay


def compute(spark: Any, data: Path, opts: WhatIfOptions, progress: Progress) -> Any:
    """Per cluster and strategy, the replay counts (a pandas DataFrame)."""
    require_tables(data, "snapshots")
    F = _compat.functions()
    snaps = spark.read.parquet(str(data / "snapshots")).select(
        "cluster", "captured_at", "source", "raw")
    if opts.clusters:
        snaps = snaps.filter(F.col("cluster").isin(list(opts.clusters)))
    schema = ", ".join(f"{n} {t}" for n, t in RESULT_COLUMNS)
    n = len(opts.strategies)
    with progress.phase(f"replaying every cluster's history through {n} strateg"
                        f"{'y' if n == 1 else 'ies'}"):
        out = (snaps.groupBy("cluster").applyInPandas(cluster_replayer(opts), schema)
               .toPandas())
    return out.sort_values(["cluster", "strategy"], kind="stable").reset_index(drop=True)


def strategies_arg(names: Sequence[str] | None) -> tuple[str | None, ...]:
    return tuple(names) if names else (None,)
