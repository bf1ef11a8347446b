"""How long a day of simulated cycles takes: `lbctl simulate` on 100 brokers × 10,000 bundles.

    python benchmarks/simulate_large.py [--brokers 100] [--bundles 10000] [--cycles 1440]
                                        [--strategy ThresholdShedder] [--profile]
                                        [--baseline-cycles N] [--no-baseline]

Generates a deterministic snapshot in memory (bundles of 10-2,000 msg/s, 128 per namespace; one
broker in ten owns twice as many; CPU = 5 % + traffic × host speed, about 45 % on average),
then runs the closed-loop simulation for --cycles cycles (1,440 = one day at Pulsar's default
1-minute shedding interval) with the given strategy and prints:

* the time to calibrate and run the whole simulation, and per cycle (wall and CPU seconds: the
  machine is shared, CPU is the figure to compare);
* the baseline: the same run on the Python path (``LBCTL_NO_NUMPY=1``: the implementation before
  the numpy columns of :mod:`lbctl.model.bundlecolumns`), over --baseline-cycles cycles (default:
  all), its CPU per cycle and the ratio; and whether both runs' records are identical (when the
  baseline ran every cycle);
* what happened (unloads, bounce-backs, spread before/after, reports written).

Targets: issue 7, under a minute; issue 14, ≤ 10 ms of CPU per cycle at 100 × 10k × 1,440.
Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import random
import sys
import time


def generate(brokers: int, bundles: int, seed: int = 11) -> dict:
    """A snapshot whose load follows its traffic: hosts differ in speed (±10 %), one broker in
    ten owns twice the bundles of the others, CPU = 5 % + traffic × speed, bandwidth on 10 Gbit/s."""
    rng = random.Random(seed)
    per_ns = 128
    ids = [f"broker-{i:03d}.pulsar.svc.cluster.local:8080" for i in range(brokers)]
    weights = [2.0 if i % 10 == 3 else 1.0 for i in range(brokers)]
    stats: list[dict[str, dict]] = [{} for _ in range(brokers)]
    namespaces: dict[str, dict] = {}
    for n in range(0, bundles, per_ns):
        ns = f"tenant-{(n // per_ns) % 10}/ns-{n // per_ns}"
        count = min(per_ns, bundles - n)
        step = (1 << 32) // count
        b = [f"0x{k * step:08x}" for k in range(count)] + ["0xffffffff"]
        namespaces[ns] = {"boundaries": b, "numBundles": count}
        owners = rng.choices(range(brokers), weights=weights, k=count)
        for k in range(count):
            rate = rng.uniform(10, 2000)
            tp = rate * rng.uniform(500, 4000)
            stats[owners[k]][f"{ns}/{b[k]}_{b[k + 1]}"] = {
                "msgRateIn": round(rate, 3), "msgRateOut": round(rate * 2, 3),
                "msgThroughputIn": round(tp, 1), "msgThroughputOut": round(tp * 2, 1),
                "consumerCount": rng.randint(0, 20), "producerCount": rng.randint(0, 20),
                "topics": rng.randint(1, 50), "cacheSize": 0,
            }
    rate_total = sum(s["msgRateIn"] + s["msgRateOut"] for st in stats for s in st.values())
    tp_total = sum(s["msgThroughputIn"] + s["msgThroughputOut"] for st in stats for s in st.values())
    reports = {}
    for i, b in enumerate(ids):
        st = stats[i]
        work = (0.5 * sum(s["msgRateIn"] + s["msgRateOut"] for s in st.values()) / rate_total
                + 0.5 * sum(s["msgThroughputIn"] + s["msgThroughputOut"] for s in st.values())
                / tp_total)
        cpu = 5.0 + 40.0 * brokers * work * rng.uniform(0.9, 1.1)
        tin = sum(s["msgThroughputIn"] for s in st.values())
        tout = sum(s["msgThroughputOut"] for s in st.values())
        reports[b] = {
            "cpu": {"usage": round(cpu * 16, 2), "limit": 1600.0},
            "memory": {"usage": 4096.0, "limit": 8192.0},
            "directMemory": {"usage": 1024.0, "limit": 4096.0},
            "bandwidthIn": {"usage": round(tin * 8 / 1000, 1), "limit": 10_000_000.0},
            "bandwidthOut": {"usage": round(tout * 8 / 1000, 1), "limit": 10_000_000.0},
            "lastStats": st,
            "lastUpdate": 1795000000000 - rng.randint(0, 14 * 60_000),
        }
    return {"format": "lbctl/snapshot@1", "cluster": "bench", "capturedAt": 1795000000000,
            "config": {}, "brokers": reports, "namespaces": namespaces}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", type=int, default=100)
    ap.add_argument("--bundles", type=int, default=10_000)
    ap.add_argument("--cycles", type=int, default=1440)
    ap.add_argument("--strategy", default="ThresholdShedder")
    ap.add_argument("--profile", action="store_true", help="print the top functions by time")
    ap.add_argument("--baseline-cycles", type=int, default=None,
                    help="cycles of the Python-path baseline (default: --cycles)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the Python-path baseline")
    args = ap.parse_args()
    import os

    from lbctl.loadmanager.select import Options
    from lbctl.simulate.engine import SimulationOptions, simulate
    from lbctl.sources.snapshot import parse_snapshot

    t = time.perf_counter()
    state = parse_snapshot(generate(args.brokers, args.bundles), "<generated>")
    t_gen = time.perf_counter() - t

    def run(cycles: int = args.cycles):
        return simulate([state], Options(strategy=args.strategy),
                        SimulationOptions(cycles=cycles))

    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        result = prof.runcall(run)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    t, c = time.perf_counter(), time.process_time()
    result = run()
    elapsed, cpu = time.perf_counter() - t, time.process_time() - c
    s = result.summary()
    print(f"brokers={args.brokers} bundles={args.bundles} cycles={args.cycles} "
          f"strategy={result.label}; snapshot built in {t_gen:.2f} s")
    print(f"simulate: {elapsed:8.2f} s wall, {cpu:8.2f} s CPU, "
          f"{cpu / args.cycles * 1000:7.2f} ms CPU per cycle")
    if not args.no_baseline:
        n = args.baseline_cycles or args.cycles
        os.environ["LBCTL_NO_NUMPY"] = "1"
        c = time.process_time()
        base = run(n)
        b_cpu = time.process_time() - c
        del os.environ["LBCTL_NO_NUMPY"]
        per, b_per = cpu / args.cycles, b_cpu / n
        print(f"baseline (Python path, LBCTL_NO_NUMPY=1, {n} cycles): {b_cpu:8.2f} s CPU, "
              f"{b_per * 1000:7.2f} ms CPU per cycle; ratio {per / b_per:.3f} "
              f"({b_per / per:.1f}x faster)")
        if n == args.cycles:
            same = (repr(base.cycles) == repr(result.cycles)
                    and repr(base.final_loads) == repr(result.final_loads))
            print(f"records identical to the baseline's: {same}")
    print(f"unloads {s['unloads']} in {s['cyclesWithUnloads']} cycles, bounce-backs "
          f"{s['bounceBacks']}, above-average placements {s['aboveAveragePlacements']}, "
          f"reports written {s['reportsWritten']}")
    print(f"load range {s['initial']['range']:.3f} -> {s['final']['range']:.3f}, std "
          f"{s['initial']['std']:.3f} -> {s['final']['std']:.3f}; settled at cycle "
          f"{s['settledAtCycle']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
