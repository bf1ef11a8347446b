"""How each command's cost grows with the cluster: the fitted exponent per command and shape.

    python benchmarks/growth.py [--quick] [--shapes a,b] [--commands recommend,doctor]
                                [--cap SECONDS] [--no-propose] [--src DIR] [--rows | --rows-only]

Issue 30 asks for every command to be linear (or n log n) in bundles, brokers, namespaces,
policies and snapshots. For each *shape* below this script writes four snapshots (or sequences)
of growing size under ``benchmarks/out/growth/`` (deterministic), runs each command on them as a
subprocess, and prints its CPU seconds (user + system, ``os.wait4``: a busy machine inflates
them less than wall time), peak RSS and output bytes, then the **growth exponent** ``k`` of
``cpu ≈ c · size^k`` fitted by least squares on the logs — twice: on the whole process, and (when
every size's work is over 0.25 s, else ``nan``) on
the process less the same command's CPU on ``examples/hot-broker.json`` (start-up and imports),
which is what the work itself costs. 1.0 is
linear, 1.1 about ``n log n``, 2 quadratic. A run over ``--cap`` CPU seconds (its own and its
children's: the exact solver forks) is killed and shown
``>cap``; the exponent then uses the cap (a lower bound).

Shapes (size is what grows; full sizes, ``--quick`` uses smaller ones):

* ``namespaces``: many namespaces of 128 bundles, one broker per 100 bundles, *no
  ``namespaces`` section* (what ``recommend_large.generate`` writes): 25k … 200k bundles;
* ``one-namespace``: one namespace holding every bundle, 100 brokers: 12.5k … 100k bundles;
* ``brokers``: 3 bundles per broker: 1,250 … 10,000 brokers;
* ``deep-broker``: 20 brokers, one owning 5/6 of the bundles: 7.5k … 60k bundles;
* ``policies``: 200 brokers, 20k bundles over 400 namespaces, 12 … 100 isolation policies;
* ``snapshots``: a ``.jsonl`` of 10 brokers × 100 bundles (streamed: over 4 MB), 1,250 …
  10,000 snapshots.

Commands: ``recommend -o json``, ``explain -o json``, ``doctor -o json``, ``propose --solver
greedy -o json`` (``--no-propose`` skips it): ``auto`` adds the exact model only up to
``--exact-limit`` (20,000) pairs, a cost bounded by its work limit, ``--time-limit`` and memory
cap, measured by the rows below — what grows with the cluster is greedy. ``doctor`` exits 1/2
when it finds something: that is a result, not a failure. The machine's load average is printed
before and after.

``--rows`` (or ``--rows-only``) adds issue 30's planner rows, each next to the figure the issue
found: ``propose`` (``auto``, as the issue ran it) on the largest deep-broker snapshot (one of 20
brokers owning 5/6 of 60,000 bundles; ``--quick``: 6,000) beside ``recommend`` on it; and the
exact solver's cap — ``propose --solver exact`` on 100 brokers × 14,445 bundles (1.43 M pairs, over
the 1 GB memory cap: refused, greedy's plan) and on the deep broker of 15,000 bundles (285,000
pairs, under the cap: built and solved; peak RSS against the model's estimate).

Nothing here asserts a time: it prints figures.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from recommend_large import broker_doc, bundle_stats  # noqa: E402  # the same reports

OUT = HERE / "out" / "growth"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
LBCTL = [sys.executable, "-m", "lbctl"]
#: the source tree whose lbctl runs (``python -m lbctl`` from there): this one, or ``--src``
SRC = [ROOT]
COMMANDS: dict[str, list[str]] = {
    "recommend": ["recommend", "-o", "json"],
    "explain": ["explain", "-o", "json"],
    "doctor": ["doctor", "-o", "json"],
    "propose": ["propose", "--solver", "greedy", "-o", "json"],
}
#: commands whose non-zero exit is a verdict (doctor: 1 warning, 2 error)
VERDICT_EXIT = {"doctor": (0, 1, 2)}
#: where a run's output goes (one file per benchmark process: runs side by side do not mix)
STDOUT = OUT / f"stdout-{os.getpid()}"
#: CPU seconds of work (beyond the tiny run) below which no "less start-up" exponent is fitted
MEASURABLE = 0.25


# --- generators --------------------------------------------------------------------------------
def _bounds(n: int) -> list[str]:
    """``n`` equal hash ranges as bundle boundaries (the last ends at 0xffffffff)."""
    seg = (1 << 32) // n
    return [f"0x{k * seg:08x}" for k in range(n)] + ["0xffffffff"]


def cluster(brokers: int, bundles: int, per_ns: int, *, deep: float = 0.0,
            seed: int = 7) -> dict[str, object]:
    """A snapshot document in the shape of ``recommend_large.generate`` (no ``namespaces``
    section): ``per_ns`` bundles a namespace; ``deep``: the share of the bundles broker 0 owns
    (the rest round-robin over the others)."""
    rng = random.Random(seed)
    ids = [f"broker-{i:05d}.pulsar.svc.cluster.local:8080" for i in range(brokers)]
    stats: list[dict[str, dict[str, float | int]]] = [{} for _ in range(brokers)]
    per_ns = min(per_ns, bundles)
    bounds = _bounds(per_ns)
    deep_n = int(bundles * deep)
    for i in range(bundles):
        ns, k = divmod(i, per_ns)
        name = f"tenant-{ns % 50}/ns-{ns}/{bounds[k]}_{bounds[k + 1]}"
        owner = 0 if i < deep_n else (1 + (i - deep_n) % (brokers - 1) if deep else i % brokers)
        stats[owner][name] = bundle_stats(rng)
    docs: dict[str, object] = {}
    for i, b in enumerate(ids):
        st = stats[i]
        cpu = rng.uniform(88, 95) if i % 50 == 7 or (deep and i == 0) else \
            min(80.0, max(5.0, rng.gauss(45, 8)))
        docs[b] = broker_doc(st, cpu)
    return {"format": "lbctl/snapshot@1", "cluster": "growth",
            "capturedAt": "2026-11-21T22:00:00Z", "config": {}, "brokers": docs}


def with_policies(doc: dict[str, object], policies: int) -> dict[str, object]:
    """``policies`` isolation policies, each over a few namespaces' regex and a few brokers."""
    brokers = list(doc["brokers"])  # type: ignore[call-overload]
    nip = {}
    for p in range(policies):
        primary = brokers[(p * 2) % len(brokers)].split(":")[0].replace(".", "\\.")
        secondary = brokers[(p * 2 + 1) % len(brokers)].split(":")[0].replace(".", "\\.")
        nip[f"policy-{p}"] = {
            "namespaces": [f"tenant-{p % 50}/ns-{p}", f"tenant-{p % 50}/ns-{p}-.*"],
            "primary": [primary], "secondary": [secondary],
            "auto_failover_policy": {"policy_type": "min_available",
                                     "parameters": {"min_limit": "1", "usage_threshold": "80"}},
        }
    doc["policies"] = {"namespaceIsolationPolicies": nip}
    return doc


def write_json(path: Path, doc: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(doc))
    return path


def sequence(path: Path, snapshots: int, brokers: int = 10, bundles: int = 100) -> Path:
    """One snapshot a minute; every broker's CPU drifts a little each time."""
    doc = cluster(brokers, bundles, 16)
    rng = random.Random(3)
    t0 = 1795000000000
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        for i in range(snapshots):
            doc["capturedAt"] = t0 + i * 60_000
            for rep in doc["brokers"].values():  # type: ignore[attr-defined]
                rep["lastUpdate"] = t0 + i * 60_000 - 1000
                rep["cpu"]["usage"] = round(min(1600.0, max(80.0, rep["cpu"]["usage"]
                                                            * rng.uniform(0.97, 1.03))), 2)
            f.write(orjson.dumps(doc) + b"\n")
    return path


Shape = tuple[str, list[int], list[int], Callable[[int], Path]]


def shapes() -> list[Shape]:
    """(name, full sizes, quick sizes, size → file)."""
    def cached(name: str, make: Callable[[Path], Path], suffix: str = ".json") -> Path:
        path = OUT / (name + suffix)
        return path if path.exists() else make(path)

    return [
        ("namespaces", [25_000, 50_000, 100_000, 200_000], [2_000, 4_000, 8_000, 16_000],
         lambda n: cached(f"namespaces-{n}", lambda p: write_json(
             p, cluster(max(2, n // 100), n, 128)))),
        ("one-namespace", [12_500, 25_000, 50_000, 100_000], [1_000, 2_000, 4_000, 8_000],
         lambda n: cached(f"one-namespace-{n}", lambda p: write_json(p, cluster(100, n, n)))),
        ("brokers", [1_250, 2_500, 5_000, 10_000], [125, 250, 500, 1_000],
         lambda n: cached(f"brokers-{n}", lambda p: write_json(p, cluster(n, 3 * n, 16)))),
        ("deep-broker", [7_500, 15_000, 30_000, 60_000], [750, 1_500, 3_000, 6_000],
         lambda n: cached(f"deep-broker-{n}", lambda p: write_json(
             p, cluster(20, n, 128, deep=5 / 6)))),
        ("policies", [12, 25, 50, 100], [12, 25, 50, 100],
         lambda n: cached(f"policies-{n}", lambda p: write_json(
             p, with_policies(cluster(200, 20_000, 50), n)))),
        ("snapshots", [1_250, 2_500, 5_000, 10_000], [250, 500, 1_000, 2_000],
         lambda n: cached(f"snapshots-{n}", lambda p: sequence(p, n), ".jsonl")),
    ]


def extra_files() -> dict[str, Callable[[int], Path]]:
    """Files of the ``--rows`` only (not growth shapes): 100 brokers, ``n`` bundles."""
    return {"exact-cap": lambda n: _cached(f"exact-cap-{n}", lambda p: write_json(
        p, cluster(100, n, 128)))}


def _cached(name: str, make: Callable[[Path], Path]) -> Path:
    path = OUT / (name + ".json")
    return path if path.exists() else make(path)


# --- measuring ---------------------------------------------------------------------------------
def run(argv: list[str], cap: float, ok: tuple[int, ...] = (0,)) -> tuple[float, int, int, bool]:
    """CPU seconds, peak RSS (kB), stdout bytes, and whether it was killed at ``cap`` CPU s."""
    out = STDOUT
    OUT.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.DEVNULL, env=ENV, cwd=SRC[0],
                                start_new_session=True)
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:  # reaped here: Popen is told, or it warns that the process still runs
                proc.returncode = os.waitstatus_to_exitcode(status)
                break
            cpu = _cpu_of(proc.pid)
            if cpu is not None and cpu > cap:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
            time.sleep(0.05)
    cpu = usage.ru_utime + usage.ru_stime
    if not killed and os.waitstatus_to_exitcode(status) not in ok:
        raise SystemExit(f"failed ({os.waitstatus_to_exitcode(status)}): {' '.join(argv)}")
    return (max(cpu, cap) if killed else cpu), usage.ru_maxrss, out.stat().st_size, killed


def _cpu_of(pid: int) -> float | None:
    """CPU seconds of a running command and of every process it started (Linux ``/proc``), to
    kill it at the cap: the exact solver runs in forked children (``propose --solver exact``),
    whose CPU the command's own ``utime``/``stime`` do not hold while they run. The command is
    started in a session of its own (``start_new_session``), so its processes are those of
    session ``pid``: each one's own CPU plus its waited-for children's (``cutime``/``cstime``;
    a child once waited for is gone from ``/proc``, so nothing is counted twice). None when the
    command itself is not (or no longer) there."""
    total, found = 0, False
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[3]) != pid:  # its session
            continue
        found = found or int(entry.name) == pid
        total += sum(int(f) for f in fields[11:15])
    return total / os.sysconf("SC_CLK_TCK") if found else None


def exponent(sizes: list[int], cpus: list[float]) -> float:
    """The least-squares slope of log(cpu) on log(size)."""
    pts = [(math.log(s), math.log(max(c, 1e-3))) for s, c in zip(sizes, cpus, strict=True)]
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den


def made(shape: str, size: int) -> Path:
    """The file of ``shape`` at ``size``, generated in a child process: the commands' peak RSS
    (``ru_maxrss`` survives ``exec``) must not include a forked copy of a generated document."""
    out = subprocess.run([sys.executable, __file__, "--make", shape, str(size)], check=True,
                         capture_output=True, text=True).stdout
    return Path(out.strip())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a minute or two)")
    ap.add_argument("--shapes", default="", help="comma-separated shape names (default: all)")
    ap.add_argument("--commands", default="recommend,explain,doctor,propose")
    ap.add_argument("--no-propose", action="store_true")
    ap.add_argument("--cap", type=float, default=120.0, help="CPU seconds before a run is killed")
    ap.add_argument("--src", type=Path, help="run the lbctl of another source tree (a baseline, "
                    "e.g. git archive of the previous commit unpacked)")
    ap.add_argument("--rows", action="store_true", help="also issue 30's planner rows")
    ap.add_argument("--rows-only", action="store_true", help="only issue 30's planner rows")
    ap.add_argument("--make", nargs=2, metavar=("SHAPE", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make:  # the child of made(): write one file, print its path
        print(({s[0]: s[3] for s in shapes()} | extra_files())[args.make[0]](int(args.make[1])))
        return 0
    if args.src:
        SRC[0] = args.src.resolve()
    wanted = set(filter(None, args.shapes.split(",")))
    commands = [c for c in args.commands.split(",") if not (args.no_propose and c == "propose")]

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores)")
    start, _, _, _ = min((run([*LBCTL, "--help"], 30) for _ in range(3)), key=lambda r: r[0])
    tiny = ROOT / "examples" / "hot-broker.json"
    print(f"lbctl from {SRC[0]}")
    base = {cmd: min(run([*LBCTL, *COMMANDS[cmd], str(tiny)], 30, VERDICT_EXIT.get(cmd, (0,)))[0]
                     for _ in range(2)) for cmd in commands}
    print(f"start-up (lbctl --help): {start:.2f} s CPU; on {tiny.name}: "
          + ", ".join(f"{cmd} {cpu:.2f} s" for cmd, cpu in base.items()) + "\n")
    rows: list[tuple[str, str, float, float, bool]] = []
    for name, full, quick, _make in shapes():
        if (wanted and name not in wanted) or args.rows_only:
            continue
        sizes = quick if args.quick else full
        files = [made(name, n) for n in sizes]
        print(f"== {name}: sizes {', '.join(f'{n:,}' for n in sizes)}")
        for cmd in commands:
            figures = [run([*LBCTL, *COMMANDS[cmd], str(f)], args.cap,
                           VERDICT_EXIT.get(cmd, (0,))) for f in files]
            cpus = [f[0] for f in figures]
            killed = any(f[3] for f in figures)
            k = exponent(sizes, cpus)
            work = [c - base[cmd] for c in cpus]
            # less start-up, only where the work itself is measurable (else noise near zero)
            k_work = exponent(sizes, work) if min(work) >= MEASURABLE else math.nan
            cells = "  ".join(f"{'>' if f[3] else ''}{f[0]:7.2f}s {f[1] / 1024:6.0f}MB "
                              f"{f[2] / 1e6:7.2f}MB" for f in figures)
            print(f"  {cmd:<9} {cells}   k={k:4.2f} work k={k_work:4.2f}"
                  + ("  (killed at cap: lower bound)" if killed else ""), flush=True)
            rows.append((name, cmd, k, k_work, killed))
    if rows:
        print("\nexponents (whole process / less start-up; cpu s · RSS · output per size above)")
    for name, cmd, k, kw, killed in rows:
        flag = "  QUADRATIC?" if max(k, 0 if math.isnan(kw) else kw) > 1.5 else ""
        print(f"  {name:<14} {cmd:<9} {k:5.2f} {kw:5.2f}{' ≥' if killed else ''}{flag}")
    if args.rows or args.rows_only:
        planner_rows(args.quick, args.cap)
    STDOUT.unlink(missing_ok=True)
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def planner_rows(quick: bool, cap: float) -> None:
    """Issue 30's rows for the planner, each beside the figure the issue measured."""
    print("\nissue 30 rows (CPU s · peak RSS; the issue's figure in brackets)")
    deep = made("deep-broker", 6_000 if quick else 60_000)
    rec = run([*LBCTL, *COMMANDS["recommend"], str(deep)], cap)
    pro = run([*LBCTL, "propose", "-o", "json", str(deep)], cap)
    print(f"  propose, deep broker ({deep.stem}): {_cells(pro)}, recommend {_cells(rec)} "
          f"= {pro[0] / rec[0]:.1f}x  [60k: > 600 s, killed; recommend 0.67 s]")
    for label, path, limit, before in (
            ("exact, over the cap", made("exact-cap", 14_445), 10.0,
             "1.43 M pairs: 3.9 GB RSS and no plan"),
            ("exact, under the cap", deep if quick else made("deep-broker", 15_000), 60.0,
             "not measured")):
        argv = [*LBCTL, "propose", "--solver", "exact", "--time-limit", f"{limit:g}",
                "-o", "json", str(path)]
        fig = run(argv, max(cap, 3 * limit))
        planner = orjson.loads(STDOUT.read_bytes())["explanation"]["planner"] \
            if not fig[3] else {}
        notes = "; ".join(planner.get("notes", [])) or "-"
        print(f"  propose --solver exact --time-limit {limit:g}, {label} ({path.stem}): "
              f"{_cells(fig)}, solver {planner.get('solver')} ({planner.get('status')}); "
              f"notes: {notes}  [{before}]")


def _cells(fig: tuple[float, int, int, bool]) -> str:
    return f"{'>' if fig[3] else ''}{fig[0]:.2f} s {fig[1] / 1024:.0f} MB"


if __name__ == "__main__":
    sys.exit(main())
