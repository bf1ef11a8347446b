"""Where `recommend -o json` spends its CPU on one large snapshot, next to the ratio goal's budget.

    python benchmarks/recommend_budget.py [--bundles 200000] [--repeat 3] [--against DIR]

The performance goal for `recommend -o json` is a ratio to ``orjson.loads`` of the file (issue 30,
item 5: ≤ 2.5× at 200k bundles, ≤ 2× at 1M / 10k brokers, where start-up weighs less). This script prints that budget in CPU seconds and what the whole
process spends, phase by phase: start-up (the same command on the bundled example), the read
and validation, each part of the modular cycle, the plan and its JSON, and what the
process spends outside them (its start and exit; a large command's result is not freed). Beside them it prints the
cost of the least Python work a cycle over every bundle has to do (one pass reading a field,
the one ``bundleData`` map of every bundle, every bundle's namespace) and of importing numpy,
so that what is left of the budget can be compared with what any pure-Python cycle needs.

Phases are timed in a child process by wrapping lbctl's functions (a renamed one prints
``n/a``); phases nest (the cycle holds its parts). CPU seconds, best of --repeat. Nothing here
asserts a time.

``--against DIR`` (another checkout of lbctl, the baseline) first runs the whole command with
that tree and with this one on ``PYTHONPATH``, alternately (so that a busy machine weighs on both
alike), --repeat times each: median and least CPU, the ratios to ``orjson.loads``, peak RSS, the
load average, and whether both printed the same bytes.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import io
import json
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from core_perf import ENV, LBCTL, best_cpu, goal_for, parse_cpu, run, snapshot  # noqa: E402

#: (label, module, attribute, modules that imported it by name) — the phases, in order
PHASES = [
    ("read: msgspec decode into the wire records", "lbctl.sources.snapshot_schema",
     "decode_snapshot", ("lbctl.sources.snapshot",)),
    ("read: the rules, the cluster state", "lbctl.sources.snapshot_schema", "state_from_wire",
     ("lbctl.sources.snapshot",)),
    ("cycle (all of it)", "lbctl.loadmanager.modular", "ModularLoadManager.run_cycle", ()),
    ("  leader maps (a first fill takes the reader's table, a later one merges the reports)",
     "lbctl.loadmanager.loaddata", "leader_maps_and_reports", ("lbctl.loadmanager.modular",)),
    ("  bundleData (over the merged reports)", "lbctl.loadmanager.loaddata",
     "update_bundle_data", ("lbctl.loadmanager.modular",)),
    ("  LoadData (time averages per broker)", "lbctl.loadmanager.loaddata", "build_load_data",
     ("lbctl.loadmanager.modular",)),
    ("  bundle split check", "lbctl.loadmanager.modular", "auto_splits", ()),
    ("  shedding strategy", "lbctl.strategies.shedding.threshold", "ThresholdShedder.shed", ()),
    ("  placement filters (candidates)", "lbctl.loadmanager.modular",
     "ModularLoadManager._candidates", ()),
    ("    of which the namespace index", "lbctl.strategies.placement.filters",
     "_namespace_bundle_counts", ()),
    ("  placement strategy (selectBroker)", "lbctl.loadmanager.modular",
     "ModularLoadManager.select_broker", ()),
    ("plan (broker rows, actions)", "lbctl.loadmanager.modular", "build_plan", ()),
    ("plan as JSON data", "lbctl.plan", "Plan.to_dict", ()),
    ("JSON text", "lbctl.render", "to_json", ()),
]


def child(path: str) -> None:
    """One in-process `recommend -o json`, timed by phase; prints a JSON object of CPU seconds."""
    start = time.process_time()
    spent: dict[str, float] = {}
    # the command's own lazy imports follow, inside app(); app, not main: main may end a large
    # command with os._exit (lbctl.cli.exiting), before the phases are printed
    from lbctl.cli.app import app

    def wrap(label: str, modname: str, attr: str, others: tuple[str, ...]) -> None:
        try:
            owner: Any = importlib.import_module(modname)
            *outer, name = attr.split(".")
            for part in outer:
                owner = getattr(owner, part)
            fn = getattr(owner, name)
        except (ImportError, AttributeError):
            return

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - t

        setattr(owner, name, timed)
        for other in others:
            mod = importlib.import_module(other)
            if getattr(mod, name, None) is fn:
                setattr(mod, name, timed)

    for label, modname, attr, others in PHASES:
        wrap(label, modname, attr, others)
    ready = time.process_time()
    sys.argv = ["lbctl", "recommend", "-o", "json", path]
    try:
        with redirect_stdout(io.StringIO()):
            app(prog_name="lbctl")
    except SystemExit as e:
        if e.code not in (0, None):
            raise
    done = time.process_time()
    print(json.dumps({"imports": ready - start, "command": done - ready, "phases": spent}))


def floors(path: Path, repeat: int) -> list[tuple[str, float]]:
    """The least work a cycle over every bundle does in Python, on this snapshot."""
    from lbctl.sources.snapshot import read_snapshots

    state = read_snapshots([path])[0]
    maps = [r.lastStats for r in state.brokers.values()]

    def one_pass() -> None:
        for m in maps:
            for s in m.values():
                if s.topics < 0:
                    raise AssertionError

    def bundle_map() -> None:
        d: dict[str, Any] = {}
        for m in maps:
            d.update(m)

    def namespaces() -> None:
        for m in maps:
            for name in m:
                name.rpartition("/")

    out = [("one pass over every bundle reading one field", best_cpu(one_pass, repeat)),
           ("one map of every bundle (bundleData)", best_cpu(bundle_map, repeat)),
           ("every bundle's namespace", best_cpu(namespaces, repeat))]
    bare = min(run([sys.executable, "-c", "pass"])[0] for _ in range(repeat))
    with_numpy = min(run([sys.executable, "-c", "import numpy"])[0] for _ in range(repeat))
    out.append(("importing numpy (a columnar cycle's first cost)", with_numpy - bare))
    return out


def against(path: Path, base_tree: Path, repeat: int) -> Callable[[float], None]:
    """The whole command with the baseline tree and with this one, interleaved; returns what
    prints the figures given ``orjson.loads``'s CPU. Run while this process is still small: a
    child's peak RSS counts the pages it shares with its parent until it executes Python."""
    import os
    import statistics

    def once(tree: Path) -> tuple[float, int, bytes]:
        env = {**ENV, "PYTHONPATH": str(tree)}
        proc = subprocess.Popen([*LBCTL, "recommend", "-o", "json", str(path)], env=env, cwd=tree,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out = proc.stdout.read() if proc.stdout is not None else b""
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"recommend failed with {tree}")
        return usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, out

    trees = {"baseline": base_tree.resolve(), "this tree": ROOT}
    cpu: dict[str, list[float]] = {k: [] for k in trees}
    rss: dict[str, int] = {}
    outputs: dict[str, bytes] = {}
    for i in range(repeat):
        for name in (list(trees) if i % 2 == 0 else list(trees)[::-1]):
            t, r, out = once(trees[name])
            cpu[name].append(t)
            rss[name] = max(rss.get(name, 0), r)
            outputs[name] = out
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    same = outputs["baseline"] == outputs["this tree"]

    def show(parse: float) -> None:
        print(f"  whole command, interleaved with {trees['baseline']} ({repeat} runs each; "
              f"load average {load})")
        for name, xs in cpu.items():
            med = statistics.median(xs)
            print(f"    {name:<10} median {med:.3f} = {med / parse:.2f}x, least {min(xs):.3f}, "
                  f"peak RSS {rss[name]} MB")
        print(f"    outputs {'byte-identical' if same else 'DIFFER'}")
    return show


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundles", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--against", type=Path, metavar="DIR",
                    help="a baseline checkout of lbctl to run interleaved with this one")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return 0

    path = snapshot(args.bundles)
    goal = goal_for(args.bundles) or 2.5
    compared = None if args.against is None else against(path, args.against, args.repeat)
    base = parse_cpu(path, args.repeat)
    if compared is not None:
        print(f"recommend -o json, {args.bundles:,} bundles: orjson.loads {base:.3f} s CPU, "
              f"goal {goal}x")
        compared(base)
    whole = min(run([*LBCTL, "recommend", "-o", "json", str(path)])[0] for _ in range(args.repeat))
    example = str(ROOT / "examples" / "hot-broker.json")
    startup = min(run([*LBCTL, "recommend", example])[0] for _ in range(args.repeat + 2))
    runs: list[dict[str, Any]] = []
    for _ in range(args.repeat):
        out = subprocess.run([sys.executable, __file__, "--child", str(path)], env=ENV, cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out))
    best = min(runs, key=lambda r: r["imports"] + r["command"])

    n = args.bundles
    budget = goal * base
    print(f"recommend -o json, {n:,} bundles (CPU s; best of {args.repeat})")
    print(f"  budget: {goal}x orjson.loads {base:.3f} = {budget:.3f}; whole process {whole:.3f} "
          f"= {whole / base:.2f}x")
    print(f"  start-up (recommend on examples/hot-broker.json, whole process) {startup:.3f} "
          f"= {startup / base:.2f}x")
    phases: dict[str, float] = best["phases"]
    read = sum(v for k, v in phases.items() if k.startswith("read:"))
    print(f"  read and validation {read:.3f} = {read / base:.2f}x")
    left = budget - startup - read
    print(f"  left of the budget for the cycle, the plan and the output: {left:.3f} "
          f"({left / n * 1e6:.2f} µs per bundle)")
    inside = best["imports"] + best["command"]
    # what no phase timer sees: the interpreter's own start and its exit. The in-process run
    # frees the command's result before it returns; the whole process ends a large command
    # without freeing it (lbctl.cli.exiting), which this line does not separate out
    print(f"  interpreter start and exit (whole process - in-process total {inside:.3f}) "
          f"{whole - inside:.3f}")
    print("  phases (in process; nested ones indented):")
    for label, *_ in PHASES:
        v = phases.get(label)
        print(f"    {label:<64} {'n/a' if v is None else f'{v:.3f}':>7}")
    print("  the least a pure-Python cycle over every bundle does (in process):")
    for label, v in floors(path, args.repeat):
        print(f"    {label:<50} {v:.3f}")
    return 0


if __name__ == "__main__":
    gc.collect()
    sys.exit(main())
