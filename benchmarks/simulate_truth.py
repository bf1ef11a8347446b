"""How far lbctl's predicted usage after lands from a truth that is not its model (issue 29, item 2).

    python benchmarks/simulate_truth.py                 # 5 seeds, 10 cycles, greedy solver
    python benchmarks/simulate_truth.py --seeds 20 --cycles 30 --solver auto

For every bundled example snapshot (``lbctl/examples``, the modular ones), ``simulate --strategy
lbctl`` on two truths: the hosts inferred from the snapshot (``--hosts inferred``, the default —
which agrees with lbctl's proportional model on the snapshot, so the error is ~0 by construction)
and mixed 8/16/32-core hosts (``--hosts mixed --host-seed S``, 2 % noise), as the CLI builds them
(:func:`lbctl.simulate.hosts.chosen_hosts`, :func:`~lbctl.simulate.hosts.reported_by`). Printed
per example and truth: plans made, broker figures compared, and the absolute error of the
predicted usage after against the truth once the moves are made (p50 / p95 / max, points, pooled
over seeds), with ThresholdShedder's final range on the same hosts for scale.

Figures only; nothing asserts.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from lbctl.loadmanager.select import Options
from lbctl.planner.propose import ProposeOptions
from lbctl.simulate.engine import SimulationOptions, simulate
from lbctl.simulate.hosts import chosen_hosts, reported_by
from lbctl.simulate.metrics import PredictionError
from lbctl.sources.snapshot import read_snapshots

EXAMPLES = Path(__file__).resolve().parents[1] / "lbctl" / "examples"


def pooled(errors: list[PredictionError]) -> PredictionError:
    return PredictionError(sum(e.plans for e in errors),
                           tuple(x for e in errors for x in e.errors))


def points(x: float | None) -> str:
    return "   -" if x is None else f"{x * 100:5.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--solver", default="greedy", help="lbctl's solver (auto may spend its "
                    "time limit each plan)")
    args = ap.parse_args()
    planner = ProposeOptions(solver=args.solver, target_range=10.0)
    print(f"{'example':<26} {'truth':<9} {'plans':>5} {'figs':>5} {'p50':>5} {'p95':>5} "
          f"{'max':>5}  {'Threshold range':>15}")
    files = sorted(p for p in EXAMPLES.iterdir()
                   if p.suffix in (".json", ".jsonl", ".yaml"))
    for f in files:
        states = read_snapshots([f])
        if len(states[0].brokers) < 2:
            continue
        for truth in ("inferred", "mixed"):
            errs: list[PredictionError] = []
            ranges: list[float] = []
            for seed in range(args.seeds if truth == "mixed" else 1):
                hosts = chosen_hosts(states, truth, seed)
                run = list(states) if hosts is None else [
                    reported_by(st, hosts, random.Random(seed)) for st in states]
                sim = SimulationOptions(cycles=args.cycles, hosts=hosts, seed=seed, truth=truth,
                                        planner=planner)
                r = simulate(run, Options(strategy="lbctl"), sim)
                p = r.prediction()
                if p is not None:
                    errs.append(p)
                pulsar = Options(strategy="ThresholdShedder", placement="LeastLongTermMessageRate")
                ranges.append(simulate(run, pulsar, sim).final.range)
            e = pooled(errs)
            worst = e.worst()
            print(f"{f.name:<26} {truth:<9} {e.plans:>5} {len(e.errors):>5} "
                  f"{points(e.percentile(0.5))} {points(e.percentile(0.95))} "
                  f"{points(None if worst is None else abs(worst[2]))}  "
                  f"{max(ranges) * 100:14.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
