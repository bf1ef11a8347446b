"""``explain -o json`` against ``recommend -o json`` on every shape, load manager and strategy.

    python benchmarks/explain_size.py [--size 200000] [--shapes a,b] [--variants a,b] [--src DIR]

Issue 30 asks for ``explain -o json`` of at most 5 MB on any shape at 200,000 bundles, at no more
than 1.5× the CPU of ``recommend`` on the same file. For each shape (``growth.py``'s generators at
one size: many namespaces, one namespace, 10k brokers of 20 bundles, one deep broker of 5/6 of
the bundles over 20 brokers, 100 isolation policies) and each variant (the modular load manager
with each shedding strategy and two placements, the extensible load manager, the simple one) it
runs both commands as subprocesses and prints their CPU seconds (user + system), peak RSS, output
bytes, and explain's CPU and RSS as ratios of recommend's. Files are generated in a child process
under ``benchmarks/out/explain/`` (kept: a second run reuses them). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import growth  # noqa: E402  (the generators and the subprocess meter of the growth benchmark)

OUT = HERE / "out" / "explain"
SIMPLE = "loadManagerClassName=org.apache.pulsar.broker.loadbalance.impl.SimpleLoadManagerImpl"
VARIANTS: dict[str, list[str]] = {
    "default": [],
    "overload": ["--strategy", "OverloadShedder"],
    "threshold": ["--strategy", "ThresholdShedder"],
    "uniform": ["--strategy", "UniformLoadShedder"],
    "avg": ["--strategy", "AvgShedder", "--placement", "AvgShedder"],
    "lru": ["--placement", "LeastResourceUsageWithWeight"],
    "extensible": ["--strategy", "TransferShedder"],
    "simple": ["--set", SIMPLE],
}


def make(shape: str, n: int) -> Path:
    """The snapshot of ``shape`` with ``n`` bundles (written once)."""
    path = OUT / f"{shape}-{n}.json"
    if path.exists():
        return path
    doc = {
        "namespaces": lambda: growth.cluster(max(2, n // 100), n, 128),
        "one-namespace": lambda: growth.cluster(100, n, n),
        "brokers": lambda: growth.cluster(max(2, n // 20), n, 16),
        "deep-broker": lambda: growth.cluster(20, n, 128, deep=5 / 6),
        "policies": lambda: growth.with_policies(growth.cluster(200, n, 50), 100),
    }[shape]()
    return growth.write_json(path, doc)


def made(shape: str, n: int) -> Path:
    """:func:`make` in a child process (the commands' peak RSS must not include it)."""
    out = subprocess.run([sys.executable, __file__, "--make", shape, str(n)], check=True,
                         capture_output=True, text=True).stdout
    return Path(out.strip())


SHAPES = ("namespaces", "one-namespace", "brokers", "deep-broker", "policies")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=200_000)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--cap", type=float, default=300.0, help="CPU seconds before a run is killed")
    ap.add_argument("--src", type=Path, help="run the lbctl of another source tree (a baseline)")
    ap.add_argument("--make", nargs=2, metavar=("SHAPE", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make:
        print(make(args.make[0], int(args.make[1])))
        return 0
    if args.src:
        growth.SRC[0] = args.src.resolve()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores); lbctl from {growth.SRC[0]}; {args.size:,} bundles")
    print(f"{'shape':<14} {'variant':<11} {'recommend cpu/RSS/out':>24}   "
          f"{'explain cpu/RSS/out':>24}   cpu×  RSS×")
    worst = 0.0
    for shape in args.shapes.split(","):
        path = made(shape, args.size)
        for variant in args.variants.split(","):
            extra = VARIANTS[variant]
            rec = growth.run([*growth.LBCTL, "recommend", "-o", "json", *extra, str(path)],
                             args.cap)
            exp = growth.run([*growth.LBCTL, "explain", "-o", "json", *extra, str(path)],
                             args.cap)
            worst = max(worst, exp[2])
            print(f"{shape:<14} {variant:<11} {rec[0]:6.2f}s {rec[1] / 1024:5.0f}MB "
                  f"{rec[2] / 1e6:6.2f}MB   {'>' if exp[3] else ''}{exp[0]:6.2f}s "
                  f"{exp[1] / 1024:5.0f}MB {exp[2] / 1e6:6.2f}MB   "
                  f"{exp[0] / rec[0]:4.2f} {exp[1] / rec[1]:4.2f}", flush=True)
    print(f"largest explain -o json: {worst / 1e6:.2f} MB")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
