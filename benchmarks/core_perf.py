"""The core rows of the performance issue, each a figure next to its baseline with the ratio.

    python benchmarks/core_perf.py [--sizes 2000,20000,200000] [--repeat 3] [--skip-explain]

Figures are CPU seconds (user + system, best of --repeat), so that a busy machine inflates them
less than wall time; commands run as subprocesses, measured alone with ``os.wait4``. Snapshots
are generated under benchmarks/out/ by :func:`recommend_large.generate` (one broker per 100
bundles: 2k bundles → 20 brokers, 200k → 2,000, 1M → 10,000).

Rows:

1. ``lbctl recommend -o json`` on each size, whole process, against ``orjson.loads`` of the file
   (in-process); the per-bundle CPU shows whether growth is linear. Goals (issue 30, item 5):
   ≤ 2.5× at 200k, ≤ 2× at 1M bundles / 10k brokers (start-up weighs less there).
2. snapshot read + validation (``read_snapshots``, in-process) against ``orjson.loads``.
   Goal: ≤ 1.3×.
3. ``lbctl recommend examples/hot-broker.json`` against ``lbctl --help``. Goal: ≤ 1.5×. Both
   start from compiled bytecode (``compileall`` first, PYTHONDONTWRITEBYTECODE unset), as an
   installed lbctl does.
4. ``lbctl explain`` (text and ``-o json``) on the largest size: bytes written (goal ≤ 5 MB)
   and peak RSS against ``recommend``'s (goal ≤ 1.5×).

Nothing here asserts a time: it prints figures.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

from recommend_large import generate  # noqa: E402  # the benchmarks' own generator

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
LBCTL = [sys.executable, "-m", "lbctl"]


def run(argv: list[str], out: str | None = None) -> tuple[float, int, int]:
    """CPU seconds, peak RSS (kB) and bytes written to stdout of one command, measured alone."""
    with open(out or os.devnull, "wb") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.DEVNULL, env=ENV, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(argv)}")
    size = os.path.getsize(out) if out else 0
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, size


def best_cpu(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def snapshot(bundles: int) -> Path:
    brokers = max(2, bundles // 100)
    path = OUT / f"snapshot-v2-{brokers}x{bundles}.json"
    if not path.exists():
        generate(path, brokers, bundles)
    return path


def goal_for(bundles: int) -> float | None:
    """The ratio goal of ``recommend -o json`` to ``orjson.loads`` at this size (None: none set)."""
    if bundles >= 1_000_000:
        return 2.0
    if bundles >= 200_000:
        return 2.5
    return None


def parse_cpu(path: Path, repeat: int) -> float:
    import orjson

    data = path.read_bytes()
    return best_cpu(lambda: orjson.loads(data), repeat)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,20000,200000",
                    help="bundle counts, comma-separated (add 1000000 for the 1M row)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-explain", action="store_true")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "lbctl")], env=ENV,
                   check=True, stdout=subprocess.DEVNULL)

    example = str(ROOT / "examples" / "hot-broker.json")
    helps = min(run([*LBCTL, "--help"])[0] for _ in range(args.repeat + 2))
    rec = min(run([*LBCTL, "recommend", example])[0] for _ in range(args.repeat + 2))
    print("3. start-up (printed first: row 1 subtracts it) (CPU s, compiled bytecode)")
    print(f"   lbctl --help {helps:.3f}   lbctl recommend examples/hot-broker.json {rec:.3f}   "
          f"ratio {rec / helps:.2f}x")

    print("\n1. recommend -o json, whole process (CPU s), against orjson.loads of the file")
    print(f"   {'bundles':>9} {'brokers':>7} {'orjson':>8} {'recommend':>10} {'ratio':>6} "
          f"{'goal':>5} {'µs/bundle beyond start-up':>26}")
    for n in sizes:
        path = snapshot(n)
        base = parse_cpu(path, args.repeat)
        cpu = min(run([*LBCTL, "recommend", "-o", "json", str(path)])[0]
                  for _ in range(args.repeat))
        goal = goal_for(n)
        print(f"   {n:>9,} {max(2, n // 100):>7,} {base:8.3f} {cpu:10.3f} {cpu / base:5.2f}x "
              f"{'-' if goal is None else f'{goal}x':>5} {(cpu - rec) / n * 1e6:26.2f}")

    from lbctl.sources.snapshot import read_snapshots

    largest = snapshot(max(sizes))
    base = parse_cpu(largest, args.repeat)
    read = best_cpu(lambda: read_snapshots([largest]), args.repeat)
    print(f"\n2. snapshot read + validation, in-process, {max(sizes):,} bundles (CPU s)")
    print(f"   orjson.loads {base:.3f}   read_snapshots {read:.3f}   ratio {read / base:.2f}x")

    if not args.skip_explain:
        text = str(OUT / "explain.txt")
        rec_cpu, rec_rss, _ = run([*LBCTL, "recommend", "-o", "json", str(largest)])
        print(f"\n4. explain, {max(sizes):,} bundles (goals: ≤ 5 MB, peak RSS ≤ 1.5x recommend's)")
        print(f"   recommend -o json: peak RSS {rec_rss / 1024:.0f} MB, CPU {rec_cpu:.2f} s")
        for fmt in ("text", "json"):
            argv = [*LBCTL, "explain", str(largest)] + (["-o", fmt] if fmt != "text" else [])
            ex_cpu, ex_rss, size = run(argv, out=text)
            print(f"   explain {'-o json' if fmt == 'json' else '(text)':<9} {size / 1e6:6.2f} MB, "
                  f"peak RSS {ex_rss / 1024:.0f} MB = {ex_rss / rec_rss:.2f}x, CPU {ex_cpu:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
