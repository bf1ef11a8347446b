"""`lbctl fleet ingest` + `report` on Spark (local mode) next to one pandas process doing the same.

    python benchmarks/fleet_bench.py                 # 1M and 10M bundle-sample rows
    python benchmarks/fleet_bench.py --sizes 1       # only 1M (sizes in millions of rows)
    python benchmarks/fleet_bench.py --sizes 1 --engines spark
    python benchmarks/fleet_bench.py --sizes --example 3   # the README's command, 3 rounds
    python benchmarks/fleet_bench.py --sizes --example 3 --against /tmp/base  # and a baseline's
    python benchmarks/fleet_bench.py --sizes 1 --duckdb-python /tmp/duckvenv/bin/python
    python benchmarks/fleet_bench.py --sizes --report /tmp/lbctl-fleet-bench/spark/tables \
        --duckdb-python /tmp/duckvenv/bin/python   # the report alone, on tables ingested before

For each size a synthetic fleet is generated once under ``--work`` (benchmarks/fleet_gen.py:
4 clusters × 10 brokers × 250 bundles × N one-minute samples, ``.jsonl`` files of 100 snapshots).
Each engine runs in a child process of its own:

* **spark**: exactly what the CLI runs — a session with lbctl's local-mode defaults, then
  ``lbctl.fleet.ingest.ingest`` (the native path: Spark's JSON reader, SQL checks, Parquet) and
  ``lbctl.fleet.report.compute``;
* **pandas** (the baseline): one Python process reads every file with lbctl's reader
  (``lbctl.fleet.rows.file_rows``: the same validation), keeps the broker and bundle columns the
  report needs, and computes the same per-sample spreads, moves and bounce-backs with pandas, and
  the same per-cluster summary (``lbctl.fleet.report.summarize``).

* **duckdb** (``--duckdb-python``, optional): ``fleet_duckdb.py`` under an interpreter that has
  duckdb (a throwaway virtual environment outside the project: DuckDB is no dependency of
  lbctl) answers the same question twice — from the JSON lines, and from the Parquet tables
  the Spark run wrote (the report's own input) — and must find the same moves and bounce-backs.

``--example N`` times the README's command on the bundled example N times (``lbctl fleet
ingest … --report``: ingest and report in one process and one Spark session; a checkout whose
ingest lacks ``--report``, ``lbctl fleet ingest`` then ``lbctl fleet report``, each a process of
its own as a user ran them) next to a bare Spark start with the same defaults: the goal is ingest + report <= 15 s wall. With
``--against DIR`` (a second checkout, e.g. ``git worktree add /tmp/base <commit>``) each round
also runs that checkout's lbctl right after this one's, so base and head see the same load
(each line says it): on a shared machine the pairs, not single figures, are what to compare.

Printed per engine: wall seconds, CPU seconds (the process and everything it started: the JVM,
Python workers), peak RSS (for Spark: the Python driver, and separately the JVM); then the
ratios spark/pandas, and the 1-minute load average before and after (the machine is shared:
CPU seconds are the figure to trust when it is busy; wall seconds only on a quiet machine).
Both engines must find the same moves (checked).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLUSTERS, BROKERS, BUNDLES = 4, 10, 250


def tree_cpu_seconds(pid: int | None = None) -> float:
    """User + system CPU of a process and its live descendants (from /proc)."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            kids.setdefault(int(fields[1]), []).append(int(d))
    total, todo = 0, [pid or os.getpid()]
    while todo:
        p = todo.pop()
        todo += kids.get(p, [])
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def descendants_peak_mb() -> float:
    """Sum of peak RSS (VmHWM) of this process's descendants: the JVM and its Python workers."""
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
    from lbctl.fleet.files import list_inputs
    from lbctl.fleet.ingest import ingest
    from lbctl.fleet.progress import Progress
    from lbctl.fleet.report import ReportOptions, compute
    from lbctl.fleet.session import spark_session

    size = sum(f.size for f in list_inputs([src]).files)
    t0 = time.perf_counter()
    spark = spark_session(None, {}, input_bytes=size)
    t1 = time.perf_counter()
    out = Path(work) / "tables"
    res = ingest([src], out, session=lambda: spark)
    t2 = time.perf_counter()
    rep = compute(spark, out, ReportOptions(), Progress(enabled=False))
    t3 = time.perf_counter()
    cpu = tree_cpu_seconds()
    jvm = descendants_peak_mb()
    spark.stop()
    return {"cpu": cpu, "jvm_rss_mb": jvm, "start": t1 - t0, "ingest": t2 - t1,
            "report": t3 - t2, "clusters": len(rep.clusters), "files": res.files_found,
            "native_files": res.native_files, "moves": int(rep.clusters["moves"].sum()),
            "bounces": int(rep.clusters["bounces"].sum())}


def pandas_run(src: str, work: str) -> dict:
    import numpy as np
    import pandas as pd

    from lbctl.fleet.files import list_inputs
    from lbctl.fleet.report import finish_samples, summarize
    from lbctl.fleet.rows import file_rows

    t0 = time.perf_counter()
    brokers, bundles, snaps = [], [], []
    for f in list_inputs([src]).files:
        for batch in file_rows(f.path):
            cols = batch.cols
            kind = np.array(cols["kind"], dtype=object)

            def pick(k: str, names: list[str], kind: np.ndarray = kind,
                     cols: dict = cols) -> pd.DataFrame:
                m = kind == k
                return pd.DataFrame({n: np.array(cols[n], dtype=object)[m] for n in names})

            snaps.append(pick("snapshot", ["cluster", "captured_at", "overloaded_threshold"]))
            brokers.append(pick("broker", ["cluster", "captured_at", "weighted_max_usage",
                                           "msg_rate_in", "msg_rate_out", "msg_throughput_in",
                                           "msg_throughput_out"]))
            bundles.append(pick("bundle", ["cluster", "captured_at", "bundle", "broker"]))
    snap = pd.concat(snaps, ignore_index=True)
    br = pd.concat(brokers, ignore_index=True)
    bu = pd.concat(bundles, ignore_index=True)
    for df in (snap, br, bu):
        df["cluster"] = df["cluster"].astype("category")
        df["captured_at"] = df["captured_at"].astype("int64")
    for c in ("bundle", "broker"):
        bu[c] = bu[c].astype("category")
    t1 = time.perf_counter()
    keys = ["cluster", "captured_at"]
    for c in ("weighted_max_usage", "msg_rate_in", "msg_rate_out", "msg_throughput_in",
              "msg_throughput_out"):
        br[c] = br[c].astype("float64")
    br["rate"] = br["msg_rate_in"] + br["msg_rate_out"]
    br["tput"] = br["msg_throughput_in"] + br["msg_throughput_out"]
    snap["overloaded_threshold"] = snap["overloaded_threshold"].astype("float64")
    br = br.merge(snap, on=keys)
    br["overloaded"] = (br["weighted_max_usage"] >= br["overloaded_threshold"] / 100).astype(int)
    br["idle"] = (br["rate"] == 0).astype(int)
    g = br.groupby(keys, observed=True)
    per = pd.DataFrame({"brokers": g.size(), "usage_range": g["weighted_max_usage"].max()
                        - g["weighted_max_usage"].min(), "overloaded": g["overloaded"].sum(),
                        "idle": g["idle"].sum()})
    for c in ("rate", "tput"):
        per[f"{c}_mean"], per[f"{c}_std"] = g[c].mean(), g[c].std(ddof=0)
        per[f"{c}_min"], per[f"{c}_max"] = g[c].min(), g[c].max()
    bu = bu.sort_values(["cluster", "bundle", "captured_at"], kind="stable")
    same = (bu["cluster"] == bu["cluster"].shift()) & (bu["bundle"] == bu["bundle"].shift())
    owner = bu["broker"].astype(str)
    bu["has_prev"] = same.astype(int)
    bu["moved"] = (same & (owner != owner.shift())).astype(int)
    bounced = pd.Series(False, index=bu.index)
    for k in range(2, 11):
        ok = (bu["cluster"] == bu["cluster"].shift(k)) & (bu["bundle"] == bu["bundle"].shift(k))
        bounced |= ok & (owner == owner.shift(k))
    bu["bounced"] = (bounced & (bu["moved"] == 1)).astype(int)
    gb = bu.groupby(keys, observed=True)
    per["bundles"] = gb.size()
    for c in ("moved", "bounced", "has_prev"):
        per[c] = gb[c].sum()
    for c in ("over_split", "oversized", "unsplittable"):
        per[c] = 0  # the synthetic fleet has none; kept for the same summary code
    per = per.reset_index()
    per["cluster"] = per["cluster"].astype(str)
    summary = summarize(per)
    finish_samples(per)
    t2 = time.perf_counter()
    return {"cpu": tree_cpu_seconds(), "parse": t1 - t0, "report": t2 - t1,
            "clusters": len(summary), "moves": int(summary["moves"].sum()),
            "bounces": int(summary["bounces"].sum())}


def report_only(tables: str) -> dict:
    """``lbctl fleet report``'s work on tables already ingested, in a session sized as the CLI
    sizes it (by the tables' size): the JVM's start and the report, separately."""
    from lbctl.fleet.files import tree_size
    from lbctl.fleet.progress import Progress
    from lbctl.fleet.report import ReportOptions, compute
    from lbctl.fleet.session import spark_session

    t0 = time.perf_counter()
    spark = spark_session(None, {}, input_bytes=tree_size(Path(tables)))
    t1 = time.perf_counter()
    cpu0 = tree_cpu_seconds()
    rep = compute(spark, Path(tables), ReportOptions(), Progress(enabled=False))
    t2 = time.perf_counter()
    cpu = tree_cpu_seconds()
    spark.stop()
    return {"start": t1 - t0, "report": t2 - t1, "cpu": cpu, "report_cpu": cpu - cpu0,
            "moves": int(rep.clusters["moves"].sum()),
            "bounces": int(rep.clusters["bounces"].sum())}


def start_only() -> dict:
    """A session with lbctl's defaults for a small input, started and stopped: the JVM's share."""
    from lbctl.fleet.session import spark_session

    t = time.perf_counter()
    spark = spark_session(None, {}, input_bytes=1 << 20, dump_classes=False)
    spark.sparkContext.parallelize([1]).count()
    wall = time.perf_counter() - t
    cpu = tree_cpu_seconds()
    spark.stop()
    return {"start": wall, "cpu": cpu}


def child(engine: str, src: str, work: str) -> None:
    from lbctl.fleet.session import quiet_warnings

    quiet_warnings()
    t = time.perf_counter()
    if engine == "start":
        res = start_only()
    elif engine == "report":
        res = report_only(src)
    else:
        res = spark_run(src, work) if engine == "spark" else pandas_run(src, work)
    res["wall"] = time.perf_counter() - t
    res["self_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps(res), flush=True)


def run(engine: str, src: Path, work: Path, timeout: float | None) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run(["rm", "-rf", str(work / "tables")], check=True)
    p = subprocess.run([sys.executable, __file__, "--child", engine, str(src), str(work)],
                       capture_output=True, text=True, timeout=timeout)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return dict(json.loads(line[7:]))
    raise SystemExit(f"{engine} run failed:\n{p.stderr[-3000:]}")


def load() -> float:
    return os.getloadavg()[0]


def duckdb_run(python: str, mode: str, path: Path, timeout: float | None) -> dict:
    """``fleet_duckdb.py`` under its own interpreter (DuckDB is no dependency of lbctl)."""
    p = subprocess.run([python, str(HERE / "fleet_duckdb.py"), mode, str(path)],
                       capture_output=True, text=True, timeout=timeout)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return dict(json.loads(line[7:]))
    raise SystemExit(f"duckdb {mode} run failed:\n{p.stderr[-3000:]}")


def report_alone(tables: Path, duckdb_python: str | None, timeout: float | None) -> None:
    """The report on ``tables`` in a fresh Spark session, next to DuckDB's on the same Parquet."""
    before = load()
    p = subprocess.run([sys.executable, __file__, "--child", "report", str(tables), "-"],
                       capture_output=True, text=True, timeout=timeout)
    res = next((dict(json.loads(x[7:])) for x in p.stdout.splitlines()
                if x.startswith("RESULT ")), None)
    if res is None:
        raise SystemExit(f"report on {tables} failed:\n{p.stderr[-3000:]}")
    print(f"\nreport on {tables}: JVM start {res['start']:.1f} s, report {res['report']:.1f} s "
          f"wall ({res['report_cpu']:.1f} s CPU; whole process {res['cpu']:.1f} s CPU) "
          f"[load {before:.1f} -> {load():.1f}]")
    if duckdb_python:
        before = load()
        d = duckdb_run(duckdb_python, "parquet", tables, timeout)
        print(f"  duckdb on the same Parquet: {d['wall']:.1f} s wall ({d['cpu']:.1f} s CPU) "
              f"[load {before:.1f} -> {load():.1f}]; spark / duckdb {res['report'] / d['wall']:.1f}x "
              f"(goal <= 5x); moves {res['moves']} vs {d['moves']}, bounce-backs "
              f"{res['bounces']} vs {d['bounces']}")
        if (res["moves"], res["bounces"]) != (d["moves"], d["bounces"]):
            raise SystemExit("spark and duckdb disagree")


def cli_child(args: list[str]) -> None:
    """``lbctl ARGS`` in this process (the CLI's own code path), then its wall and the CPU of
    this process and everything it started (the JVM is still up: its CPU is counted)."""
    from lbctl.cli.app import app

    t = time.perf_counter()
    try:
        app(args, prog_name="lbctl", standalone_mode=False)
    finally:
        print("RESULT " + json.dumps({"wall": time.perf_counter() - t,
                                      "cpu": tree_cpu_seconds()}), flush=True)


def timed_cli(args: list[str], root: Path | None = None) -> tuple[float, float, float]:
    """Wall seconds (from the interpreter's start) and CPU seconds of ``lbctl ARGS`` in a process
    of its own, and the 1-minute load when it ended; ``root``: the checkout whose lbctl runs
    (else the one on this process's path)."""
    env = None
    if root is not None:
        env = {**os.environ, "PYTHONPATH": str(root)}
    t = time.perf_counter()
    p = subprocess.run([sys.executable, __file__, "--cli", *args], capture_output=True, text=True,
                       env=env)
    wall = time.perf_counter() - t
    for line in p.stdout.splitlines():
        if line.startswith("RESULT ") and p.returncode == 0:
            return wall, float(json.loads(line[7:])["cpu"]), load()
    raise SystemExit(f"lbctl {' '.join(args)} failed:\n{p.stderr[-3000:]}")


def one_session(root: Path) -> bool:
    """Whether the checkout's ``fleet ingest`` takes ``--report`` (ingest and report in one
    Spark session, the README's command since then)."""
    return '"--report"' in (root / "lbctl" / "cli" / "fleet.py").read_text()


def example(work: Path, rounds: int, against: Path | None = None) -> None:
    """The README's command on the bundled example (``lbctl fleet ingest examples/fleet/ --out
    DIR --report``: one process, one Spark session; a checkout without ``--report``: ``lbctl
    fleet ingest … && lbctl fleet report DIR``, two processes), next to a bare Spark start with
    the same defaults; with ``against``, that checkout's lbctl right after, on the same example
    (this checkout's)."""
    src = HERE.parent / "lbctl" / "examples" / "fleet"
    print(f"\nbundled example ({src}), {rounds} round(s), the README's command:")
    sides: list[tuple[str, Path | None]] = [("head", None)]
    if against is not None:
        sides.append((f"base {against}", against.resolve()))
    for _ in range(rounds):
        before = load()
        bare = run("start", src, work / "start", None)
        start, start_cpu = bare["start"], bare["cpu"]
        print(f"  a bare Spark start {start:.1f} s wall, {start_cpu:.1f} s CPU "
              f"[load {before:.1f} -> {load():.1f}]")
        for name, root in sides:
            before = load()
            out = work / "example"
            subprocess.run(["rm", "-rf", str(out)], check=True)
            if one_session(root or HERE.parent):
                wall, cpu, after = timed_cli(["fleet", "ingest", str(src), "--out", str(out),
                                              "--report", "-q", "-o", "json"], root)
                print(f"    {name}: ingest --report {wall:.1f} s wall (goal <= 15 s), CPU "
                      f"{cpu:.1f} s; beyond a bare start {wall - start:.1f} s wall, "
                      f"{cpu - start_cpu:.1f} s CPU [load {before:.1f} -> {after:.1f}]")
                continue
            ingest, ingest_cpu, _ = timed_cli(["fleet", "ingest", str(src), "--out", str(out),
                                               "-q"], root)
            report, report_cpu, after = timed_cli(["fleet", "report", str(out), "-q", "-o",
                                                   "json"], root)
            print(f"    {name}: ingest {ingest:.1f} s + report {report:.1f} s = "
                  f"{ingest + report:.1f} s wall (goal <= 15 s), CPU {ingest_cpu:.1f} + "
                  f"{report_cpu:.1f} s; beyond two bare starts {ingest + report - 2 * start:.1f} s "
                  f"wall, {ingest_cpu + report_cpu - 2 * start_cpu:.1f} s CPU "
                  f"[load {before:.1f} -> {after:.1f}]")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=float, nargs="*", default=[1, 10], help="millions of rows")
    ap.add_argument("--engines", nargs="*", default=["spark", "pandas"])
    ap.add_argument("--work", type=Path, default=Path("/tmp/lbctl-fleet-bench"))
    ap.add_argument("--timeout", type=float, default=None, help="seconds per engine run")
    ap.add_argument("--duckdb-python", metavar="PYTHON",
                    help="an interpreter with duckdb installed (a throwaway venv outside the "
                         "project): adds DuckDB's answer to the same question as a baseline")
    ap.add_argument("--example", type=int, default=0, metavar="ROUNDS",
                    help="also time the README's command on the bundled example")
    ap.add_argument("--against", type=Path, metavar="DIR",
                    help="with --example: also run the lbctl of this checkout (e.g. a `git "
                         "worktree` of the baseline commit) in each round, right after this one's")
    ap.add_argument("--report", type=Path, metavar="TABLES", nargs="*", default=[],
                    help="time `fleet report`'s work alone on tables already ingested (e.g. "
                         "WORK/spark/tables of an earlier size), in a fresh session")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    if sys.argv[1:2] == ["--cli"]:
        cli_child(sys.argv[2:])
        return
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return
    if a.example:
        example(a.work, a.example, a.against)
    for tables in a.report:
        report_alone(tables, a.duckdb_python, a.timeout)
    sys.path.insert(0, str(HERE))
    from fleet_gen import generate

    if a.sizes:
        print(f"machine: {os.cpu_count()} cores; CPU seconds count the process and all it "
              "started (JVM, Python workers); wall seconds are only comparable on a quiet machine")
    driver_rss: dict[float, float] = {}
    for size in a.sizes:
        samples = int(size * 1_000_000 / (CLUSTERS * BUNDLES))
        rows = CLUSTERS * BUNDLES * samples
        src = a.work / f"fleet-{size:g}M"
        if not src.exists():
            t = time.perf_counter()
            generate(src, CLUSTERS, BROKERS, BUNDLES, samples)
            print(f"generated {rows:,} rows in {time.perf_counter() - t:.1f} s")
        mb = sum(f.stat().st_size for f in src.rglob("*") if f.is_file()) / 1e6
        print(f"\n{rows:,} bundle-sample rows ({CLUSTERS * BROKERS * samples:,} broker rows, "
              f"{mb:,.0f} MB of JSON lines)")
        res = {}
        for engine in a.engines:
            before = load()
            res[engine] = r = run(engine, src, a.work / engine, a.timeout)
            r["load"] = (before, load())
            if engine == "spark":
                driver_rss[size] = r["self_rss_mb"]
                print(f"  spark local[*]: wall {r['wall']:.1f} s (start {r['start']:.1f}, "
                      f"ingest {r['ingest']:.1f}, report {r['report']:.1f}), CPU {r['cpu']:.1f} s, "
                      f"{rows / r['wall']:,.0f} rows/s; driver peak RSS {r['self_rss_mb']:.0f} MB, "
                      f"JVM + workers peak {r['jvm_rss_mb']:.0f} MB; {r['native_files']} of "
                      f"{r['files']} files read by Spark's JSON reader "
                      f"[load {r['load'][0]:.1f} → {r['load'][1]:.1f}]")
            else:
                print(f"  pandas (1 process): wall {r['wall']:.1f} s (parse {r['parse']:.1f}, "
                      f"report {r['report']:.1f}), CPU {r['cpu']:.1f} s, "
                      f"{rows / r['wall']:,.0f} rows/s; peak RSS {r['self_rss_mb']:.0f} MB "
                      f"[load {r['load'][0]:.1f} → {r['load'][1]:.1f}]")
        if a.duckdb_python and "spark" in res:
            sp = res["spark"]
            before = load()
            dj = duckdb_run(a.duckdb_python, "jsonl", src, a.timeout)
            dp = duckdb_run(a.duckdb_python, "parquet", a.work / "spark" / "tables", a.timeout)
            print(f"  duckdb ({dj['threads']} threads): JSON lines -> answer wall {dj['wall']:.1f} s "
                  f"(CPU {dj['cpu']:.1f} s); the ingested Parquet -> answer wall {dp['wall']:.1f} s "
                  f"(CPU {dp['cpu']:.1f} s) [load {before:.1f} -> {load():.1f}]")
            print(f"  spark / duckdb: report {sp['report'] / dp['wall']:.1f}x (same Parquet; goal "
                  f"<= 5x), ingest + report {(sp['ingest'] + sp['report']) / dj['wall']:.1f}x, "
                  f"whole run with the JVM's start {sp['wall'] / dj['wall']:.1f}x; moves "
                  f"{sp['moves']} vs {dj['moves']} / {dp['moves']}, bounce-backs {sp['bounces']} vs "
                  f"{dj['bounces']} / {dp['bounces']}")
            if not (sp["moves"] == dj["moves"] == dp["moves"]
                    and sp["bounces"] == dj["bounces"] == dp["bounces"]):
                raise SystemExit("spark and duckdb disagree")
        if "spark" in res and "pandas" in res:
            sp, pd_ = res["spark"], res["pandas"]
            print(f"  spark / pandas: wall {sp['wall'] / pd_['wall']:.2f}x, CPU "
                  f"{sp['cpu'] / pd_['cpu']:.2f}x (goal at 10M: <= 3x); moves found "
                  f"{sp['moves']} vs {pd_['moves']}, bounce-backs {sp['bounces']} vs "
                  f"{pd_['bounces']}")
            if (sp["moves"], sp["bounces"]) != (pd_["moves"], pd_["bounces"]):
                raise SystemExit("the engines disagree")
        if "spark" in res and size == 1:
            print(f"  spark at 1M: wall {res['spark']['wall']:.1f} s against the 60 s goal "
                  f"(quiet machine)")
    if len(driver_rss) > 1:
        lo, hi = min(driver_rss), max(driver_rss)
        print(f"\nSpark driver peak RSS: {driver_rss[hi]:.0f} MB at {hi:g}M vs "
              f"{driver_rss[lo]:.0f} MB at {lo:g}M: {driver_rss[hi] / driver_rss[lo]:.2f}x "
              f"(goal <= 1.5x)")


if __name__ == "__main__":
    main()
