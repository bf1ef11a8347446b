"""Replaying a long sequence: `lbctl recommend SEQ.jsonl` over 240 snapshots of 2,000 bundles.

    python benchmarks/replay_sequence.py [--snapshots 240] [--brokers 50] [--bundles 2000]
                                         [--gz] [--all-cycles] [--keep FILE] [--rewrite-minutes 15]
                                         [--baseline-src DIR] [--in-process-only]
    python benchmarks/replay_sequence.py --series 1000,3000,10000 [--baseline-src DIR]

Writes a deterministic ``.jsonl`` (one snapshot a minute of a quiet cluster: each broker rewrites
its report, traffic drifting a little, about every 15 minutes; the generator of
``simulate_large.py``), then measures:

* the whole process, ``lbctl recommend FILE -o json`` (``--all-cycles``: every cycle's plan),
  streamed (``lbctl.sources.snapshot_stream``) and as the baseline, the whole-file read on the
  pure-Python path (``LBCTL_NO_STREAM=1 LBCTL_NO_NUMPY=1``; ``--baseline-src DIR`` also runs
  another source tree, e.g. the previous implementation): CPU seconds, CPU per cycle and peak
  RSS, with the ratios; and that they print the same bytes;
* in process, the streamed replay split into its parts: the validation pass, the decode of each
  snapshot on the replay pass, and the cycles themselves (CPU per cycle, the figure issue 14's
  "quiet cycles ≤ 5 ms" is about), and the most snapshots alive at once.

CPU seconds (the machine is shared). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).parent))
from simulate_large import generate


def write_sequence(path: Path, snapshots: int, brokers: int, bundles: int, gz: bool,
                   rewrite_minutes: float = 15.0) -> None:
    """One snapshot a minute of a quiet cluster: a broker rewrites its report (its traffic
    drifting by up to ±2 %) about every 15 minutes, as ``loadBalancerReportUpdateMaxIntervalMinutes``
    has it when nothing changes much; the other reports stay as last written."""
    snap = generate(brokers, bundles)
    rng = random.Random(5)
    t0 = snap["capturedAt"]
    opener = gzip.open if gz else open
    with opener(path, "wb") as f:
        for i in range(snapshots):
            snap["capturedAt"] = t0 + i * 60_000
            for rep in snap["brokers"].values():
                if i == 0 or rng.random() >= 1 / rewrite_minutes:
                    continue
                rep["lastUpdate"] = snap["capturedAt"] - rng.randint(0, 60_000)
                drift = rng.uniform(0.98, 1.02)
                rep["cpu"]["usage"] = round(rep["cpu"]["usage"] * drift, 2)
                for st in rep["lastStats"].values():
                    st["msgRateIn"] = round(st["msgRateIn"] * drift, 3)
            f.write(orjson.dumps(snap) + b"\n")


def run_cli(path: Path, all_cycles: bool, baseline: bool,
            src: Path | None = None) -> tuple[float, int, bytes]:
    """(CPU seconds, peak RSS in kB, stdout) of one `lbctl recommend` process; ``src``: run the
    lbctl of that source tree instead (e.g. ``git archive main`` unpacked)."""
    env = dict(os.environ)
    if baseline:
        env["LBCTL_NO_STREAM"] = "1"
        env["LBCTL_NO_NUMPY"] = "1"
    if src is not None:
        env["PYTHONPATH"] = str(src)
    cmd = [sys.executable, "-m", "lbctl", "recommend", str(path), "-o", "json"]
    if all_cycles:
        cmd.append("--all-cycles")
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env,
                                cwd=src or None)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        data = out.read()
    if proc.returncode:
        raise SystemExit(f"lbctl recommend exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, data


def in_process(path: Path) -> None:
    import gc

    from lbctl.loadmanager.clock import Follower, reports_written
    from lbctl.loadmanager.select import (
        Options,
        modular_load_manager,
        resolve_settings,
        stream_plans,
    )
    from lbctl.model.cluster import ClusterState
    from lbctl.sources.snapshot_stream import StreamedSnapshots, open_sequence

    c = time.process_time()
    seq = open_sequence([path])
    validate = time.process_time() - c
    assert isinstance(seq, StreamedSnapshots), "not streamed (too small?)"
    n = len(seq)
    opts = Options()
    settings = resolve_settings(list(seq.headers), opts)
    follower = Follower(modular_load_manager(settings[-1], opts))
    quiet: list[float] = []
    busy: list[float] = []
    decode = 0.0
    prev = None
    states = seq.states()
    for conf in settings:
        c = time.process_time()
        st = next(states)
        decode += time.process_time() - c
        c = time.process_time()
        follower.step(st, conf).plan()
        took = time.process_time() - c
        if prev is not None:  # the first cycle (numpy's import, the first sight) apart
            (quiet if reports_written(prev, st) == 0 else busy).append(took * 1000)
        prev = st
    cycles = sum(quiet) + sum(busy)

    def median(xs: list[float]) -> str:
        return f"{sorted(xs)[len(xs) // 2]:6.2f}" if xs else "   n/a"

    print(f"in process, streamed: validation pass {validate:6.2f} s CPU; replay pass: decode "
          f"{decode:6.2f} s + cycles {cycles / 1000:6.2f} s CPU")
    print(f"  per cycle (CPU, the cycle and its plan, without the decode): mean "
          f"{cycles / max(1, n - 1):6.2f} ms; median of quiet cycles (no report written since "
          f"the previous snapshot: the leader's data unchanged; {len(quiet)} of them) "
          f"{median(quiet)} ms, of the others ({len(busy)}) {median(busy)} ms; "
          f"goal: quiet cycles <= 5 ms")
    alive = [0]

    def counted():
        for st in seq.states():
            alive[0] = max(alive[0], sum(1 for o in gc.get_objects()
                                         if type(o) is ClusterState
                                         and any(r.lastStats for r in o.brokers.values())))
            yield st

    stream_plans(seq.headers, counted(), Options())
    print(f"  whole snapshots alive at once during the replay: at most {alive[0]}")


def series(sizes: list[int], src: Path | None) -> None:
    """Issue 30's row: peak RSS of ``recommend SEQ.jsonl -o json`` with and without
    ``--all-cycles`` at each size of ``growth.py``'s snapshots shape (10 brokers × 100 bundles a
    snapshot, every broker's CPU drifting each minute), streamed; flat is the goal."""
    import growth

    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = growth.sequence(Path(tmp) / f"seq-{n}.jsonl", n)
            cells = []
            for all_cycles in (False, True):
                cpu, rss, out = run_cli(path, all_cycles, baseline=False, src=src)
                cells.append(f"{'--all-cycles' if all_cycles else 'last plan':>12}: "
                             f"{cpu:7.2f} s CPU, peak RSS {rss / 1024:6.1f} MB, "
                             f"{len(out) / 1e6:6.1f} MB out")
            print(f"{n:>6} snapshots  " + "   ".join(cells), flush=True)
            path.unlink()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", default="",
                    help="comma-separated snapshot counts, e.g. 1000,3000,10000: peak RSS of "
                         "growth.py's snapshots shape at each, with and without --all-cycles")
    ap.add_argument("--snapshots", type=int, default=240)
    ap.add_argument("--brokers", type=int, default=50)
    ap.add_argument("--bundles", type=int, default=2000)
    ap.add_argument("--gz", action="store_true", help="write the sequence gzip-compressed")
    ap.add_argument("--rewrite-minutes", type=float, default=15.0,
                    help="a broker rewrites its report about every this many minutes")
    ap.add_argument("--all-cycles", action="store_true", help="recommend --all-cycles")
    ap.add_argument("--keep", type=Path, help="write the sequence here (and keep it)")
    ap.add_argument("--in-process-only", action="store_true", help="skip the lbctl processes")
    ap.add_argument("--baseline-src", type=Path,
                    help="also run the lbctl of this source tree (the previous implementation, "
                         "e.g. `git archive main | tar -x -C DIR`)")
    args = ap.parse_args()
    if args.series:
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        series([int(x) for x in args.series.split(",")], args.baseline_src)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / ("seq.jsonl.gz" if args.gz else "seq.jsonl")
        write_sequence(path, args.snapshots, args.brokers, args.bundles, args.gz,
                       args.rewrite_minutes)
        n = args.snapshots
        print(f"{n} snapshots x {args.bundles} bundles on {args.brokers} brokers: "
              f"{path.stat().st_size / 1e6:.1f} MB{' (gzip)' if args.gz else ''}; "
              f"recommend -o json{' --all-cycles' if args.all_cycles else ''}")
        if args.in_process_only:
            in_process(path)
            return 0
        cpu, rss, out = run_cli(path, args.all_cycles, baseline=False)
        b_cpu, b_rss, b_out = run_cli(path, args.all_cycles, baseline=True)
        print(f"streamed:                 {cpu:7.2f} s CPU, {cpu / n * 1000:6.1f} ms per cycle, "
              f"peak RSS {rss / 1024:7.1f} MB")
        print(f"baseline (LBCTL_NO_STREAM=1 LBCTL_NO_NUMPY=1: whole file, Python path): "
              f"{b_cpu:7.2f} s CPU, "
              f"{b_cpu / n * 1000:6.1f} ms per cycle, peak RSS {b_rss / 1024:7.1f} MB")
        print(f"ratio streamed/baseline: CPU {cpu / b_cpu:.2f}, RSS {rss / b_rss:.2f}; "
              f"same output: {out == b_out}")
        if args.baseline_src:
            o_cpu, o_rss, o_out = run_cli(path, args.all_cycles, baseline=False,
                                          src=args.baseline_src)
            print(f"previous implementation ({args.baseline_src}): {o_cpu:7.2f} s CPU, "
                  f"{o_cpu / n * 1000:6.1f} ms per cycle, peak RSS {o_rss / 1024:7.1f} MB; "
                  f"ratio streamed/previous: CPU {cpu / o_cpu:.2f}, RSS {rss / o_rss:.2f}; "
                  f"same output: {out == o_out}")
        in_process(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
