"""The fleet report's question answered by DuckDB: the baseline of ``fleet_bench.py --duckdb-python``.

    /tmp/duckvenv/bin/python benchmarks/fleet_duckdb.py jsonl SRC_DIR
    /tmp/duckvenv/bin/python benchmarks/fleet_duckdb.py parquet TABLES_DIR

DuckDB is not a dependency of lbctl: this script runs under an interpreter of its own (a throwaway
virtual environment with ``pip install duckdb``, outside the project) and imports nothing of
lbctl. It answers the report's row-level question — per sample the brokers' spreads of message
rate and throughput (mean, population std, min, max), the usage range, overloaded and idle
brokers; per bundle in ``capturedAt`` order moves and bounce-backs (back to an owner of the
previous 10 samples); per cluster the totals — either

* ``jsonl``: straight from the JSON lines ``fleet_gen.py`` writes (the whole pipeline: decode +
  question; the usage is the max of the cpu and bandwidth percentages with Pulsar's default
  weights of 1.0, which is what the generated fleets' settings resolve to), or
* ``parquet``: from the tables ``lbctl fleet ingest`` wrote (the report alone, same input as
  ``lbctl fleet report``).

Prints one ``RESULT {json}`` line: wall seconds, process CPU seconds, clusters, moves, bounces.
"""

from __future__ import annotations

import json
import os
import sys
import time

_USAGE = "struct(usage DOUBLE, \"limit\" DOUBLE)"
_STATS = ("struct(msgRateIn DOUBLE, msgRateOut DOUBLE, msgThroughputIn DOUBLE, "
          "msgThroughputOut DOUBLE)")
_BROKER = (f"struct(cpu {_USAGE}, bandwidthIn {_USAGE}, bandwidthOut {_USAGE}, "
           "msgRateIn DOUBLE, msgRateOut DOUBLE, msgThroughputIn DOUBLE, msgThroughputOut DOUBLE, "
           f"lastStats MAP(VARCHAR, {_STATS}))")


def _pct(r: str) -> str:
    return f"(CASE WHEN {r}.\"limit\" > 0 THEN {r}.usage / {r}.\"limit\" * 100 ELSE 0 END)"


def jsonl_sources(src: str) -> str:
    cols = {"cluster": "VARCHAR", "capturedAt": "VARCHAR", "brokers": f"MAP(VARCHAR, {_BROKER})"}
    spec = ", ".join(f"{k}: '{v}'" for k, v in cols.items())
    glob = os.path.join(src, "**", "*.jsonl")
    return f"""
    snap AS (SELECT cluster, epoch_ms(capturedAt::TIMESTAMPTZ) AS ts, brokers
             FROM read_json('{glob}', format = 'newline_delimited', columns = {{{spec}}})),
    b0 AS (SELECT cluster, ts, unnest(map_entries(brokers)) AS e FROM snap),
    b1 AS (SELECT cluster, ts, e.key AS broker, e.value AS v FROM b0),
    brokers AS (SELECT cluster, ts, broker, v.lastStats AS ls,
                       v.msgRateIn + v.msgRateOut AS rate,
                       v.msgThroughputIn + v.msgThroughputOut AS tput,
                       greatest({_pct('v.cpu')}, {_pct('v.bandwidthIn')},
                                {_pct('v.bandwidthOut')}) / 100 AS usage,
                       85.0 AS threshold
                FROM b1),
    bundles AS (SELECT cluster, ts, broker, unnest(map_keys(ls)) AS bundle FROM brokers),"""


def parquet_sources(data: str) -> str:
    def t(name: str) -> str:
        return f"read_parquet('{os.path.join(data, name, '**', '*.parquet')}', hive_partitioning = true)"

    return f"""
    thr AS (SELECT cluster, captured_at AS ts, overloaded_threshold FROM {t('snapshots')}),
    brokers AS (SELECT b.cluster, b.captured_at AS ts, b.broker,
                       b.msg_rate_in + b.msg_rate_out AS rate,
                       b.msg_throughput_in + b.msg_throughput_out AS tput,
                       b.weighted_max_usage AS usage, thr.overloaded_threshold AS threshold
                FROM {t('brokers')} b JOIN thr ON b.cluster = thr.cluster AND b.captured_at = thr.ts),
    bundles AS (SELECT cluster, captured_at AS ts, broker, bundle FROM {t('bundles')}),"""


def query(sources: str) -> str:
    lags = ", ".join(f"lag(broker, {k}) OVER w AS l{k}" for k in range(1, 11))
    back = " OR ".join(f"coalesce(l{k} = broker, false)" for k in range(2, 11))
    return f"""
    WITH {sources}
    per_sample AS (
        SELECT cluster, ts, count(*) AS brokers,
               stddev_pop(rate) / nullif(avg(rate), 0) AS rate_cv,
               stddev_pop(tput) / nullif(avg(tput), 0) AS tput_cv,
               max(rate) - min(rate) AS rate_range, max(tput) - min(tput) AS tput_range,
               max(usage) - min(usage) AS usage_range,
               sum((usage >= threshold / 100)::INT) AS overloaded, sum((rate = 0)::INT) AS idle
        FROM brokers GROUP BY cluster, ts),
    lagged AS (SELECT cluster, bundle, ts, broker, {lags} FROM bundles
               WINDOW w AS (PARTITION BY cluster, bundle ORDER BY ts)),
    flagged AS (SELECT cluster, ts, (l1 IS NOT NULL AND l1 <> broker) AS moved,
                       ({back}) AS back, l1 IS NOT NULL AS has_prev FROM lagged),
    per_sample_b AS (SELECT cluster, ts, count(*) AS bundles, sum(moved::INT) AS moves,
                            sum((moved AND back)::INT) AS bounces, sum(has_prev::INT) AS has_prev
                     FROM flagged GROUP BY cluster, ts)
    SELECT s.cluster, count(*) AS samples, avg(rate_cv) AS rate_cv, avg(tput_cv) AS tput_cv,
           max(tput_cv) AS tput_cv_max, avg(usage_range) AS usage_range,
           sum(overloaded) AS overloaded, sum(idle) AS idle, sum(moves) AS moves,
           sum(bounces) AS bounces, sum(moves) / nullif(sum(has_prev), 0) AS churn
    FROM per_sample s LEFT JOIN per_sample_b b ON s.cluster = b.cluster AND s.ts = b.ts
    GROUP BY s.cluster ORDER BY s.cluster
    """


def main() -> None:
    import duckdb

    mode, path = sys.argv[1], sys.argv[2]
    t0, c0 = time.perf_counter(), time.process_time()
    con = duckdb.connect()
    sources = jsonl_sources(path) if mode == "jsonl" else parquet_sources(path)
    rows = con.execute(query(sources)).fetchall()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print("RESULT " + json.dumps({
        "wall": wall, "cpu": cpu, "clusters": len(rows), "moves": int(sum(r[8] for r in rows)),
        "bounces": int(sum(r[9] for r in rows)), "threads": con.execute(
            "SELECT current_setting('threads')").fetchone()[0]}), flush=True)


if __name__ == "__main__":
    main()
