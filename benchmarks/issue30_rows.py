"""Every row of issue 30 next to its baseline, and the growth exponent of each command per shape.

    python benchmarks/issue30_rows.py [--quick] [--rows a,b] [--no-growth] [--cap SECONDS]
                                      [--duckdb-python PYTHON]

Issue 30 ("Performance, round 3") lists nine figures that did not hold; each row here measures
one of them the way the issue did (whole-process CPU seconds and peak RSS of ``lbctl``
subprocesses, ``os.wait4``; on a shared machine CPU, not wall, is the figure to trust) next to
its baseline (``recommend`` on the same file, ``orjson.loads`` of it, the ``.jsonl`` read of the
same history, one HTTP request, DuckDB on the same question, the smallest size's RSS) and the
goal, and says met or not. Then, unless ``--no-growth``, the growth exponent ``k`` of
``cpu ≈ c · size^k`` per command and shape (``growth.py``'s shapes and fit: 1 linear, ~1.1
n log n, 2 quadratic; at ``--quick`` sizes start-up dominates, so ``k`` is far below 1 and only a
quadratic corner would show).

The rows measured here directly use the generators of ``growth.py``, ``recommend_large.py`` and
``explain_size.py`` (files cached under ``benchmarks/out/``); three rows run the benchmark that
owns them as a child and quote its figure: ``prometheus_history.py`` (needs Debian's
``prometheus``), ``monitor_brokers.py`` and ``fleet_bench.py`` (needs PySpark and a JVM; the 10M
row also ``--duckdb-python``, an interpreter with duckdb: DuckDB is no dependency of lbctl). A row
that cannot run says why, on its own line; it is never left out.

``--quick`` uses small sizes (about a minute on a quiet 2-core machine, longer under load; the
bundled fleet example alone is a JVM start plus ~5 s); the full sizes are the issue's and take
an hour or more. The machine's load average is printed before and after. Nothing here asserts a
time: it prints figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import growth  # noqa: E402  (generators, the subprocess meter, the fit)
import recommend_large  # noqa: E402

#: the rows, in the issue's order (``--rows`` picks some by these names)
ROWS = ("doctor", "propose", "explain", "replay", "exact", "prometheus", "recommend", "monitor",
        "fleet")
#: growth shapes and sizes (full: growth.py's; quick: smaller still, every shape in seconds)
QUICK_SIZES = {"namespaces": [500, 1_000, 2_000, 4_000],
               "one-namespace": [500, 1_000, 2_000, 4_000],
               "brokers": [60, 125, 250, 500],
               "deep-broker": [375, 750, 1_500, 3_000],
               "policies": [12, 25, 50, 100],
               "snapshots": [50, 100, 200, 400]}
GROWTH_COMMANDS = ("recommend", "explain", "doctor", "propose")
Fig = tuple[float, int, int, bool]  # growth.run: CPU s, peak RSS kB, stdout bytes, killed
#: set by ``--quick`` (each verdict then says so)
QUICK = [False]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def row(name: str, what: str, baseline: str, figure: str, goal: str, met: bool | None,
        issue: str) -> None:
    """One row: what was measured, its baseline, the figure, the goal, met or not, and what
    the issue found (``met`` None: not measured, ``figure`` says why)."""
    verdict = "not measured" if met is None else "met" if met else "NOT met"
    if met is not None and QUICK[0]:
        verdict += " (at --quick sizes: start-up weighs more than at the issue's)"
    print(f"[{name}] {what}\n    baseline: {baseline}\n    figure:   {figure}\n"
          f"    goal:     {goal} -> {verdict}   (issue 30 found: {issue}; load {load()})",
          flush=True)


def cells(f: Fig) -> str:
    return f"{'>' if f[3] else ''}{f[0]:.2f} s CPU, {f[1] / 1024:.0f} MB RSS"


def growth_k(grown: dict, k: float) -> str:
    return f"growth k={k:.2f}" if grown else "growth not run (--no-growth)"


def lbctl(args: list[str], path: Path, cap: float, ok: tuple[int, ...] = (0,)) -> Fig:
    return growth.run([*growth.LBCTL, *args, str(path)], cap, ok)


# --- growth ------------------------------------------------------------------------------------
def quick_file(shape: str, n: int) -> Path:
    """A quick-size file of ``shape`` (policies: 50 brokers × 2,000 bundles, ``n`` policies)."""
    if shape == "policies":
        path = growth.OUT / f"quick-policies-{n}.json"
        return path if path.exists() else growth.write_json(
            path, growth.with_policies(growth.cluster(50, 2_000, 50), n))
    return {s[0]: s[3] for s in growth.shapes()}[shape](n)


def growth_table(quick: bool, cap: float) -> dict[tuple[str, str], tuple[float, list[Fig]]]:
    """Each command on each shape at four sizes: (exponent, figures) by (shape, command)."""
    print(f"\n== growth: CPU s per size and the exponent k (whole process; load {load()})")
    out: dict[tuple[str, str], tuple[float, list[Fig]]] = {}
    for name, full, _quick, _make in growth.shapes():
        sizes = QUICK_SIZES[name] if quick else full
        files = [quick_file(name, n) if quick else growth.made(name, n) for n in sizes]
        for cmd in GROWTH_COMMANDS:
            figs = [lbctl(growth.COMMANDS[cmd], f, cap, growth.VERDICT_EXIT.get(cmd, (0,)))
                    for f in files]
            k = growth.exponent(sizes, [f[0] for f in figs])
            out[name, cmd] = (k, figs)
            flag = "  QUADRATIC?" if k > 1.5 else ""
            print(f"  {name:<14} {cmd:<9} sizes {'/'.join(f'{n:,}' for n in sizes):<28} "
                  f"{' '.join(f'{f[0]:.2f}' for f in figs):<28} k={k:4.2f}"
                  f"{' (killed: lower bound)' if any(f[3] for f in figs) else ''}{flag}",
                  flush=True)
    return out


# --- the rows measured here -------------------------------------------------------------------
def row_doctor(quick: bool, cap: float, grown: dict) -> None:
    sizes = QUICK_SIZES["namespaces"] if quick else [25_000, 50_000, 100_000, 200_000]
    path = quick_file("namespaces", sizes[-1]) if quick else growth.made("namespaces", sizes[-1])
    rec = lbctl(growth.COMMANDS["recommend"], path, cap)
    doc = lbctl(growth.COMMANDS["doctor"], path, cap, (0, 1, 2))
    k = grown.get(("namespaces", "doctor"), (float("nan"), []))[0]
    row("doctor", f"doctor -o json, {sizes[-1]:,} bundles, no `namespaces` section",
        f"recommend on the same file {cells(rec)}",
        f"{cells(doc)} = {doc[0] / rec[0]:.2f}x recommend; {growth_k(grown, k)}",
        "linear (k <= ~1.1), no killed run", not doc[3] and not k > 1.2,
        "200k: > 351 s CPU, killed; k 2.2")


def row_propose(quick: bool, cap: float, grown: dict) -> None:
    n = 1_500 if quick else 60_000
    path = quick_file("deep-broker", n) if quick else growth.made("deep-broker", n)
    rec = lbctl(growth.COMMANDS["recommend"], path, cap)
    pro = lbctl(["propose", "-o", "json"], path, cap)
    k = grown.get(("deep-broker", "propose"), (float("nan"), []))[0]
    row("propose", f"propose -o json (auto), one of 20 brokers owning 5/6 of {n:,} bundles",
        f"recommend on the same file {cells(rec)}",
        f"{cells(pro)} = {pro[0] / rec[0]:.1f}x recommend; greedy {growth_k(grown, k)}",
        "completes, linear (k <= ~1.1)", not pro[3] and not k > 1.2,
        "60k: > 600 s, killed; recommend 0.67 s")


def row_explain(quick: bool, cap: float) -> None:
    import explain_size

    n = 3_000 if quick else 200_000
    shapes = ("deep-broker", "brokers") if quick else explain_size.SHAPES
    parts, worst_mb, worst_cpu, rec_all = [], 0.0, 0.0, []
    for shape in shapes:  # quick: 3,000 bundles on 20 brokers; 500 brokers of 3 bundles
        path = quick_file(shape, 3_000 if shape == "deep-broker" else 500) if quick \
            else explain_size.made(shape, n)
        rec = lbctl(["recommend", "-o", "json"], path, cap)
        exp = lbctl(["explain", "-o", "json"], path, cap)
        worst_mb = max(worst_mb, exp[2] / 1e6)
        worst_cpu = max(worst_cpu, exp[0] / rec[0])
        rec_all.append(f"{shape} {rec[0]:.2f} s")
        parts.append(f"{shape} {exp[2] / 1e6:.2f} MB, {exp[0]:.2f} s = {exp[0] / rec[0]:.2f}x, "
                     f"RSS {exp[1] / rec[1]:.2f}x")
    row("explain", f"explain -o json at {n:,} bundles ({', '.join(shapes)}; default strategy: "
        "explain_size.py runs every variant)",
        "recommend -o json on the same file: " + "; ".join(rec_all),
        "; ".join(parts) + f"; largest {worst_mb:.2f} MB, worst CPU {worst_cpu:.2f}x",
        "<= 5 MB, CPU <= 1.5x recommend", worst_mb <= 5 and worst_cpu <= 1.5,
        "deep broker 65 MB, RSS 5x recommend's")


def row_replay(quick: bool, cap: float) -> None:
    sizes = [50, 150, 500] if quick else [1_000, 3_000, 10_000]
    last, every = [], []
    for n in sizes:
        path = growth.sequence(growth.OUT / f"replay-{n}.jsonl", n) \
            if not (growth.OUT / f"replay-{n}.jsonl").exists() else growth.OUT / f"replay-{n}.jsonl"
        last.append(lbctl(["recommend", "-o", "json"], path, cap))
        every.append(lbctl(["recommend", "-o", "json", "--all-cycles"], path, cap))
    grow = max(last[-1][1] / last[0][1], every[-1][1] / every[0][1])
    row("replay", f"recommend SEQ.jsonl -o json, {'/'.join(f'{n:,}' for n in sizes)} snapshots "
        "(10 brokers x 100 bundles)",
        f"the smallest sequence's peak RSS: {last[0][1] / 1024:.0f} MB "
        f"(--all-cycles {every[0][1] / 1024:.0f} MB)",
        "peak RSS " + " / ".join(f"{f[1] / 1024:.0f}" for f in last) + " MB; --all-cycles "
        + " / ".join(f"{f[1] / 1024:.0f}" for f in every) + " MB; CPU "
        + " / ".join(f"{f[0]:.2f}" for f in last) + f" s; largest / smallest RSS {grow:.2f}x",
        "flat (largest / smallest <= 1.25x)", grow <= 1.25,
        "68 -> 145 -> 417 MB at 1k / 3k / 10k (858 MB --all-cycles)")


def row_exact(quick: bool, cap: float) -> None:
    if quick:
        path, limit, what = quick_file("deep-broker", 750), 1.0, "deep broker, 750 bundles"
    else:
        path, limit = growth.made("exact-cap", 14_445), 10.0
        what = "100 brokers x 14,445 bundles (1.43 M pairs, under the 2 M pair cap)"
    rec = lbctl(["recommend", "-o", "json"], path, cap)
    fig = lbctl(["propose", "--solver", "exact", "--time-limit", f"{limit:g}", "-o", "json"],
                path, max(cap, 3 * limit))
    planner = {} if fig[3] else orjson.loads(growth.STDOUT.read_bytes())["explanation"]["planner"]
    row("exact", f"propose --solver exact --time-limit {limit:g}, {what}",
        f"recommend on the same file {cells(rec)}; the cap: 1 GB",
        f"{cells(fig)}; solver {planner.get('solver')} ({planner.get('status')}); notes: "
        + ("; ".join(planner.get("notes", [])) or "-"),
        "a plan, RSS <= 1 GB, within the time limit", not fig[3] and fig[1] <= 1024 ** 2
        and bool(planner), "1.43 M pairs: 3.9 GB RSS and no plan")


def best_parse(path: Path) -> float:
    """CPU seconds of ``orjson.loads`` of the file's bytes (reading them included), in a child
    of its own (its peak RSS must not count here)."""
    code = ("import orjson, sys, time\nt = time.process_time()\n"
            "orjson.loads(open(sys.argv[1], 'rb').read())\nprint(time.process_time() - t)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                         capture_output=True, text=True).stdout
    return float(out)


def row_recommend(quick: bool, cap: float, repeat: int) -> None:
    shapes = [(200, 20_000), (1_000, 20_000)] if quick else \
        [(2_000, 200_000), (10_000, 200_000), (10_000, 1_000_000)]
    parts, worst_200k, worst_1m = [], 0.0, 0.0
    for brokers, bundles in shapes:
        path = recommend_large.OUT / f"snapshot-v2-{brokers}x{bundles}.json"
        if not path.exists():
            recommend_large.generate(path, brokers, bundles)
        parse, rec = [], []
        for _ in range(repeat):  # interleaved: base and head see the same load
            parse.append(best_parse(path))
            rec.append(lbctl(["recommend", "-o", "json"], path, cap)[0])
        ratio = min(rec) / min(parse)
        if bundles >= 1_000_000:
            worst_1m = max(worst_1m, ratio)
        else:
            worst_200k = max(worst_200k, ratio)
        parts.append(f"{bundles:,}/{brokers:,}: orjson {min(parse):.2f} s, recommend "
                     f"{min(rec):.2f} s = {ratio:.2f}x")
    met = worst_200k <= 2.5 and worst_1m <= 2.0
    row("recommend", "recommend -o json, whole process, bundles / brokers, best of "
        f"{repeat} interleaved",
        "orjson.loads of the same file (its read included), CPU in a process of its own",
        "; ".join(parts), "<= 2x at 1M bundles / 10k brokers, <= 2.5x at 200k", met,
        "1M: 3.20-3.47x; 200k: 3.32-3.50x")


# --- the rows another benchmark owns ----------------------------------------------------------
def child(argv: list[str], timeout: float) -> tuple[str, str | None]:
    """The benchmark's stdout, or the reason it gave none."""
    try:
        p = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                           timeout=timeout, cwd=HERE.parent)
    except subprocess.TimeoutExpired:
        return "", f"did not finish in {timeout:.0f} s"
    if p.returncode:
        tail = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        return p.stdout, f"exited {p.returncode}: {tail[:200]}"
    return p.stdout, None


def grab(text: str, pattern: str) -> re.Match[str] | None:
    return re.search(pattern, text)


def row_prometheus(quick: bool) -> None:
    what = "snapshot from-prometheus, the whole range, vs reading the same history"
    issue = "24 h x 100 brokers x 500 bundles: 7.8x the .jsonl read"
    base = "read_snapshots of the same history's .jsonl"
    goal = "<= 2x the .jsonl read (wall)"
    if not (shutil.which("prometheus") and shutil.which("promtool")):
        row("prometheus", what, base, "needs Debian's prometheus (prometheus, promtool)", goal,
            None, issue)
        return
    args = ["--brokers", "10", "--bundles", "50", "--steps", "30", "--repeat", "1"] if quick \
        else ["--brokers", "100", "--bundles", "500", "--steps", "1440", "--repeat", "3"]
    text, why = child([str(HERE / "prometheus_history.py"), *args], 300 if quick else 7200)
    m = grab(text, r"ratio to the baseline: ([\d.]+)x wall, ([\d.]+)x CPU")
    b = grab(text, r"baseline: .*?: ([\d.]+) s wall, ([\d.]+) s CPU")
    if why or not m or not b:
        row("prometheus", what, base, why or "no ratio printed", goal, None, issue)
        return
    row("prometheus", f"{what} ({' '.join(args)})", f"{base}: {b[1]} s wall, {b[2]} s CPU",
        f"{m[1]}x wall, {m[2]}x CPU", goal, float(m[1]) <= 2.0, issue)


def row_monitor(quick: bool) -> None:
    what = "monitor-brokers first refresh (new connections), brokers answering after 50 ms"
    issue = "200 brokers at 50 ms: 3.94-4.41x one request"
    args = ["--brokers", "40", "--no-httpx"] if quick else ["--no-httpx"]
    text, why = child([str(HERE / "monitor_brokers.py"), *args], 300 if quick else 1200)
    one = grab(text, r"one request \(GET load-report\), median of 20:\s+([\d.]+) ms")
    first = grab(text, r"first refresh \(new connections\), median of 5:\s+([\d.]+) ms wall "
                       r"\(\s*([\d.]+) ms CPU.*?=\s+([\d.]+) x one request")
    if why or not one or not first:
        row("monitor", what, "one request", why or "no figure printed", "<= 4x one request",
            None, issue)
        return
    n = grab(text, r"brokers: (\d+)")
    row("monitor", f"{what}: {n[1] if n else '?'} brokers",
        f"one request (GET load-report) {one[1]} ms",
        f"{first[1]} ms wall ({first[2]} ms CPU) = {first[3]}x one request",
        "<= 4x one request, under load too", float(first[3]) <= 4.0, issue)


def row_fleet(quick: bool, duckdb_python: str | None, spark: bool = True) -> None:
    what = "fleet ingest --report on the bundled example (Spark local mode)"
    issue = "example: ingest 33 s + report 15 s; 10M: Spark 169 s vs DuckDB 7-9 s (18-24x)"
    if not spark:
        for name, w in (("fleet", what), ("fleet-10M", "fleet report, 10M bundle-sample rows")):
            row(name, w, "a bare Spark start", "not run (--no-spark)", "<= 15 s wall"
                if name == "fleet" else "Spark <= 5x DuckDB (wall)", None, issue)
        return
    if importlib.util.find_spec("pyspark") is None:
        row("fleet", what, "a bare Spark start", "needs PySpark (the `fleet` extra)",
            "<= 15 s wall", None, issue)
        return
    if not shutil.which("java"):
        row("fleet", what, "a bare Spark start", "needs a JVM (java)", "<= 15 s wall", None,
            issue)
        return
    text, why = child([str(HERE / "fleet_bench.py"), "--sizes", "--example", "1"], 600)
    start = grab(text, r"a bare Spark start ([\d.]+) s wall, ([\d.]+) s CPU")
    run = grab(text, r"head: ingest --report ([\d.]+) s wall .*?CPU ([\d.]+) s")
    if why or not start or not run:
        row("fleet", what, "a bare Spark start", why or "no figure printed", "<= 15 s wall",
            None, issue)
    else:
        row("fleet", what, f"a bare Spark start {start[1]} s wall, {start[2]} s CPU",
            f"{run[1]} s wall, {run[2]} s CPU", "ingest + report <= 15 s wall",
            float(run[1]) <= 15, issue)
    what10 = "fleet report, 10M bundle-sample rows, Spark vs DuckDB on the same Parquet"
    goal10 = "Spark <= 5x DuckDB (wall)"
    if quick or not duckdb_python:
        row("fleet-10M", what10, "DuckDB on the same question",
            "not run " + ("at --quick (generating and ingesting 10M rows takes many minutes)"
                          if quick else "(needs --duckdb-python: an interpreter with duckdb)"),
            goal10, None, issue)
        return
    text, why = child([str(HERE / "fleet_bench.py"), "--sizes", "10", "--engines", "spark",
                       "--duckdb-python", duckdb_python], 7200)
    m = grab(text, r"spark / duckdb: report ([\d.]+)x")
    row("fleet-10M", what10, "DuckDB on the same Parquet", (why or "no ratio printed")
        if why or not m else f"Spark's report {m[1]}x DuckDB's", goal10,
        None if why or not m else float(m[1]) <= 5, issue)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    ap.add_argument("--rows", default=",".join(ROWS), help="comma-separated: " + ",".join(ROWS))
    ap.add_argument("--no-growth", action="store_true", help="skip the growth exponents")
    ap.add_argument("--cap", type=float, default=300.0, help="CPU seconds before a run is killed")
    ap.add_argument("--repeat", type=int, default=0, help="recommend row: interleaved pairs "
                    "(default 1 at --quick, 3 otherwise)")
    ap.add_argument("--no-spark", action="store_true", help="print the fleet rows as not run "
                    "(the suite's own run: one Spark session per test run)")
    ap.add_argument("--duckdb-python", metavar="PYTHON", help="an interpreter with duckdb")
    args = ap.parse_args()
    QUICK[0] = args.quick
    wanted = [r for r in args.rows.split(",") if r]
    unknown = sorted(set(wanted) - set(ROWS))
    if unknown:
        ap.error(f"unknown row(s) {', '.join(unknown)}; the rows: {', '.join(ROWS)}")
    t0 = time.perf_counter()
    print(f"issue 30 rows{' (--quick sizes)' if args.quick else ''}: load average {load()} "
          f"({os.cpu_count()} cores, shared: CPU seconds are the figures to trust); lbctl from "
          f"{growth.SRC[0]}")
    grown = {} if args.no_growth else growth_table(args.quick, args.cap)
    print("\n== the rows")
    steps: dict[str, Callable[[], None]] = {
        "doctor": lambda: row_doctor(args.quick, args.cap, grown),
        "propose": lambda: row_propose(args.quick, args.cap, grown),
        "explain": lambda: row_explain(args.quick, args.cap),
        "replay": lambda: row_replay(args.quick, args.cap),
        "exact": lambda: row_exact(args.quick, args.cap),
        "prometheus": lambda: row_prometheus(args.quick),
        "recommend": lambda: row_recommend(args.quick, args.cap,
                                           args.repeat or (1 if args.quick else 3)),
        "monitor": lambda: row_monitor(args.quick),
        "fleet": lambda: row_fleet(args.quick, args.duckdb_python, not args.no_spark),
    }
    for name in ROWS:
        if name in wanted:
            steps[name]()
    growth.STDOUT.unlink(missing_ok=True)
    print(f"\nload average after: {load()}; {time.perf_counter() - t0:.0f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
