"""Time `fleet ingest` + `fleet report` on Spark local mode next to a single-process pandas run.

    python benchmarks/fleet_bench.py                 # 1M and 10M bundle-sample rows
    python benchmarks/fleet_bench.py --sizes 1       # only 1M (sizes in millions of rows)

For each size a synthetic fleet is generated once (benchmarks/fleet_gen.py: 4 clusters × 10
brokers × 250 bundles × N samples) under --work. Each engine runs in its own child process, so
peak memory is that process's alone: for Spark the driver (Python) and, separately, the JVM it
starts; for pandas the one process. Both parse with lbctl's reader (lbctl.fleet.rows) and compute
the report's per-sample spreads, moves and bounce-backs and the per-cluster summary; Spark also
writes the Parquet tables (ingest), pandas keeps everything in memory.
Prints wall time, bundle-sample rows/s and peak RSS per engine, and the ratios.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def descendants_peak_mb() -> float:
    """Sum of peak RSS (VmHWM) of this process's descendants: the JVM and its Python workers."""
    import os

    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    total, todo = 0.0, list(kids.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            pass
    return total


def spark_run(src: str, work: str) -> dict:
    from lbctl.fleet.ingest import ingest
    from lbctl.fleet.report import ReportOptions, compute
    from lbctl.fleet.session import spark_session

    t0 = time.perf_counter()
    spark = spark_session("local[*]", {"spark.driver.memory": "2g"})
    t1 = time.perf_counter()
    out = Path(work) / "tables"
    ingest([src], out, session=lambda: spark)
    t2 = time.perf_counter()
    from lbctl.fleet.progress import Progress

    rep = compute(spark, out, ReportOptions(), Progress(enabled=False))
    t3 = time.perf_counter()
    jvm = descendants_peak_mb()
    spark.stop()
    return {"jvm_rss_mb": jvm, "start": t1 - t0, "ingest": t2 - t1, "report": t3 - t2, "clusters": len(rep.clusters),
            "moves": int(rep.clusters["moves"].sum())}


def pandas_run(src: str, work: str) -> dict:
    import pandas as pd

    from lbctl.fleet.files import list_inputs
    from lbctl.fleet.ingest import batch_frame
    from lbctl.fleet.report import finish_samples, summarize
    from lbctl.fleet.rows import file_rows

    t0 = time.perf_counter()
    frames = [batch_frame(b) for f in list_inputs([src]) for b in file_rows(f.path)]
    rows = pd.concat(frames, ignore_index=True)
    del frames
    t1 = time.perf_counter()
    keys = ["cluster", "captured_at"]
    br = rows[rows["kind"] == "broker"].assign(
        rate=lambda d: d["msg_rate_in"] + d["msg_rate_out"],
        tput=lambda d: d["msg_throughput_in"] + d["msg_throughput_out"])
    snaps = rows.loc[rows["kind"] == "snapshot", [*keys, "overloaded_threshold"]]
    br = br.drop(columns=["overloaded_threshold"]).merge(snaps, on=keys)
    br["overloaded"] = (br["weighted_max_usage"] >= br["overloaded_threshold"] / 100).astype(int)
    br["idle"] = (br["rate"] == 0).astype(int)
    g = br.groupby(keys)
    per = pd.DataFrame({"brokers": g.size(), "usage_range": g["weighted_max_usage"].max()
                        - g["weighted_max_usage"].min(), "overloaded": g["overloaded"].sum(),
                        "idle": g["idle"].sum()})
    for c in ("rate", "tput"):
        per[f"{c}_mean"], per[f"{c}_std"] = g[c].mean(), g[c].std(ddof=0)
        per[f"{c}_min"], per[f"{c}_max"] = g[c].min(), g[c].max()
    bu = rows.loc[rows["kind"] == "bundle", [*keys, "bundle", "broker"]].sort_values(
        ["cluster", "bundle", "captured_at"])
    same = (bu["cluster"] == bu["cluster"].shift()) & (bu["bundle"] == bu["bundle"].shift())
    bu["has_prev"] = same.astype(int)
    bu["moved"] = (same & (bu["broker"] != bu["broker"].shift())).astype(int)
    bounced = pd.Series(False, index=bu.index)
    for k in range(1, 11):
        ok = (bu["cluster"] == bu["cluster"].shift(k)) & (bu["bundle"] == bu["bundle"].shift(k))
        bounced |= ok & (bu["broker"] == bu["broker"].shift(k))
    bu["bounced"] = (bounced & (bu["moved"] == 1)).astype(int)
    gb = bu.groupby(keys)
    per["bundles"] = gb.size()
    for c in ("moved", "bounced", "has_prev"):
        per[c] = gb[c].sum()
    for c in ("over_split", "oversized", "unsplittable"):
        per[c] = 0  # the synthetic fleet has none; kept for the same summary code
    per = per.reset_index()
    summary = summarize(per)
    finish_samples(per)
    t2 = time.perf_counter()
    return {"parse": t1 - t0, "report": t2 - t1, "clusters": len(summary),
            "moves": int(summary["moves"].sum())}


def child(engine: str, src: str, work: str) -> None:
    from lbctl.fleet.session import quiet_warnings

    quiet_warnings()
    t = time.perf_counter()
    res = spark_run(src, work) if engine == "spark" else pandas_run(src, work)
    res["wall"] = time.perf_counter() - t
    res["self_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    res["children_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print("RESULT " + json.dumps(res))


def run(engine: str, src: Path, work: Path) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run(["rm", "-rf", str(work / "tables")], check=True)
    p = subprocess.run([sys.executable, __file__, "--child", engine, str(src), str(work)],
                       capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise SystemExit(f"{engine} run failed:\n{p.stderr[-3000:]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=float, nargs="*", default=[1, 10], help="millions of rows")
    ap.add_argument("--work", type=Path, default=Path("/tmp/lbctl-fleet-bench"))
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return
    sys.path.insert(0, str(HERE))
    from fleet_gen import generate

    for size in a.sizes:
        samples = int(size * 1_000_000 / (4 * 250))
        src = a.work / f"fleet-{size:g}M"
        if not src.exists():
            t = time.perf_counter()
            rows = generate(src, 4, 10, 250, samples)
            print(f"generated {rows:,} rows in {time.perf_counter() - t:.1f} s")
        rows = 4 * 250 * samples
        sp = run("spark", src, a.work / "spark")
        pd_ = run("pandas", src, a.work / "pandas")
        print(f"\n{rows:,} bundle-sample rows ({4 * 10 * samples:,} broker rows)")
        print(f"  spark local[*]: {sp['wall']:.1f} s (start {sp['start']:.1f}, ingest "
              f"{sp['ingest']:.1f}, report {sp['report']:.1f}), {rows / sp['wall']:,.0f} rows/s, "
              f"driver peak {sp['self_rss_mb']:.0f} MB, JVM+workers peak {sp['jvm_rss_mb']:.0f} MB")
        print(f"  pandas:         {pd_['wall']:.1f} s (parse {pd_['parse']:.1f}, report "
              f"{pd_['report']:.1f}), {rows / pd_['wall']:,.0f} rows/s, peak {pd_['self_rss_mb']:.0f} MB")
        print(f"  spark / pandas time: {sp['wall'] / pd_['wall']:.2f}x; moves found "
              f"{sp['moves']} vs {pd_['moves']}")


if __name__ == "__main__":
    main()
