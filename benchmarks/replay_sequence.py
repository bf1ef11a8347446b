"""Replaying a long sequence: `lbctl recommend SEQ.jsonl` over 240 snapshots of 2,000 bundles.

    python benchmarks/replay_sequence.py [--snapshots 240] [--brokers 50] [--bundles 2000]
                                         [--gz] [--all-cycles] [--keep FILE]

Writes a deterministic ``.jsonl`` (one snapshot a minute of a quiet cluster: each broker rewrites
its report, traffic drifting a little, about every 15 minutes; the generator of
``simulate_large.py``), then measures:

* the whole process, ``lbctl recommend FILE -o json`` (``--all-cycles``: every cycle's plan),
  streamed (``lbctl.sources.snapshot_stream``) and as the baseline, the previous whole-file read
  (``LBCTL_NO_STREAM=1``): CPU seconds, CPU per cycle and peak RSS, with the ratios; and that
  both print the same bytes;
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


def write_sequence(path: Path, snapshots: int, brokers: int, bundles: int, gz: bool) -> None:
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
                if i == 0 or rng.random() >= 1 / 15:
                    continue
                rep["lastUpdate"] = snap["capturedAt"] - rng.randint(0, 60_000)
                drift = rng.uniform(0.98, 1.02)
                rep["cpu"]["usage"] = round(rep["cpu"]["usage"] * drift, 2)
                for st in rep["lastStats"].values():
                    st["msgRateIn"] = round(st["msgRateIn"] * drift, 3)
            f.write(orjson.dumps(snap) + b"\n")


def run_cli(path: Path, all_cycles: bool, baseline: bool) -> tuple[float, int, bytes]:
    """(CPU seconds, peak RSS in kB, stdout) of one `lbctl recommend` process."""
    env = dict(os.environ)
    if baseline:
        env["LBCTL_NO_STREAM"] = "1"
    cmd = [sys.executable, "-m", "lbctl", "recommend", str(path), "-o", "json"]
    if all_cycles:
        cmd.append("--all-cycles")
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        data = out.read()
    if proc.returncode:
        raise SystemExit(f"lbctl recommend exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, data


def in_process(path: Path) -> None:
    import gc

    from lbctl.loadmanager.select import Options, stream_plans
    from lbctl.model.cluster import ClusterState
    from lbctl.sources.snapshot_stream import StreamedSnapshots, open_sequence

    c = time.process_time()
    seq = open_sequence([path])
    validate = time.process_time() - c
    assert isinstance(seq, StreamedSnapshots), "not streamed (too small?)"
    n = len(seq)
    c = time.process_time()
    for _ in seq.states():
        pass
    decode = time.process_time() - c
    alive = [0]

    def counted():
        for st in seq.states():
            alive[0] = max(alive[0], sum(1 for o in gc.get_objects()
                                         if type(o) is ClusterState and o.brokers
                                         and len(next(iter(o.brokers.values())).lastStats)))
            yield st

    c = time.process_time()
    stream_plans(seq.headers, seq.states(), Options())
    replay = time.process_time() - c
    cycles = replay - decode
    print(f"in process, streamed: validation pass {validate:6.2f} s CPU; replay pass "
          f"{replay:6.2f} s CPU = decode {decode:6.2f} s + cycles {cycles:6.2f} s")
    print(f"  per cycle: {replay / n * 1000:6.2f} ms CPU with its decode, "
          f"{cycles / n * 1000:6.2f} ms CPU for the cycle alone (goal: quiet cycles <= 5 ms)")
    stream_plans(seq.headers, counted(), Options())
    print(f"  whole snapshots alive at once during the replay: at most {alive[0]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--snapshots", type=int, default=240)
    ap.add_argument("--brokers", type=int, default=50)
    ap.add_argument("--bundles", type=int, default=2000)
    ap.add_argument("--gz", action="store_true", help="write the sequence gzip-compressed")
    ap.add_argument("--all-cycles", action="store_true", help="recommend --all-cycles")
    ap.add_argument("--keep", type=Path, help="write the sequence here (and keep it)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / ("seq.jsonl.gz" if args.gz else "seq.jsonl")
        write_sequence(path, args.snapshots, args.brokers, args.bundles, args.gz)
        n = args.snapshots
        print(f"{n} snapshots x {args.bundles} bundles on {args.brokers} brokers: "
              f"{path.stat().st_size / 1e6:.1f} MB{' (gzip)' if args.gz else ''}; "
              f"recommend -o json{' --all-cycles' if args.all_cycles else ''}")
        cpu, rss, out = run_cli(path, args.all_cycles, baseline=False)
        b_cpu, b_rss, b_out = run_cli(path, args.all_cycles, baseline=True)
        print(f"streamed:                 {cpu:7.2f} s CPU, {cpu / n * 1000:6.1f} ms per cycle, "
              f"peak RSS {rss / 1024:7.1f} MB")
        print(f"baseline (LBCTL_NO_STREAM=1, whole file): {b_cpu:7.2f} s CPU, "
              f"{b_cpu / n * 1000:6.1f} ms per cycle, peak RSS {b_rss / 1024:7.1f} MB")
        print(f"ratio streamed/baseline: CPU {cpu / b_cpu:.2f}, RSS {rss / b_rss:.2f}; "
              f"same output: {out == b_out}")
        in_process(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
