"""The exact plan: a mixed-integer model solved by HiGHS (``scipy.optimize.milp``), work-limited.

Variables: ``x[i,j]`` = 1 when bundle *i* moves to broker *j* (every movable bundle, every broker
the constraints allow), the window ``lo``/``hi``, two slacks, and one binary per broker and term
saying which of its weighted terms holds it above ``lo``. With ``t[j,r]`` broker *j*'s weighted
resource *r* after the moves (linear in ``x``: its slope times the driver coming in minus the
driver going out)::

    minimise   1e5 · s_cap + 1e3 · s_band + Σ cost_i · x[i,j] / Σ cost
    such that  Σ_j x[i,j] <= 1                                  each bundle moves at most once
               t[j,r] <= hi,  t[j,r] <= max_usage + s_cap       every weighted term
               lo <= t[j,r] + M · (1 - y[j,r]),  Σ_r y[j,r] = 1  the weighted max is >= lo
               hi - lo <= width + s_band                         the band
               topics[j] <= loadBalancerBrokerMaxTopics, anti-affinity caps, --max-moves,
               --max-throughput

**Tight.** A broker's ``y`` binaries are only written for the terms that may be its max under
some plan: a term another term is never below, whatever moves are made (each bundle in or out
at most once: :class:`Reach`), holds nothing up and is left out, and each remaining ``lo`` row's
``M`` is ``lub`` less that term's lowest value under any plan rather than ``lub + 1``. Exact (the
same feasible plans, the same optimum), and it is what makes the LP relaxation worth anything:
on the CPU-bound 5- and 12-broker clusters of ``benchmarks/plans_on_hardware.py`` (seeds 1, 2)
the gap after 100 nodes went from 32–99 % to 1–3 %, with 1–2 binaries left of 15–48.

The slacks make every instance feasible, and their weights make capacity and band lexicographic
ahead of cost (a millionth of a point of band outweighs moving everything). HiGHS reports the
relative gap between the best plan found and its bound.

**Deterministic.** HiGHS (single-threaded branch and bound; deterministic for the same model and
options) stops after :data:`NODE_LIMIT` branch-and-bound nodes or at :data:`MIP_GAP`, counts of
work the same on any machine, and returns the best plan of that work with its gap. scipy's
``milp`` exposes no other work limit (``node_limit``, ``mip_rel_gap``, ``presolve``,
``time_limit`` are its public options; HiGHS's root cuts and sub-MIP heuristics, most of the
work on these models, have no public switch): measured CPU per exact run with
``benchmarks/plans_on_hardware.py`` models, 1.3–3.9 s at 240 pairs (5 brokers), 1.7–2.7 s at
680, 5.3 s at 1,590; the root alone (``node_limit`` 1) 1.2–2.6 s on the slowest 240-pair ones.
Evaluated and not taken, on 12 of those solves and 40 random clusters of 72–300 pairs:
``presolve`` off (faster on 31 of 40, yet 0.77–1.28 s on 7 of 8 at 240 pairs, and a different
plan on 31 of 40, costlier on 17; on the benchmark's: costlier on 7 of 12, never cheaper), a
lower ``node_limit`` (10 or 1: 3–35 % less time, the plan changed on 6 of 12) and a looser
``mip_rel_gap`` (1e-2, 5e-2: the plan changed on 6 and 7 of 12, the slowest runs still 2.9 s). None brings the exact run well inside
1 CPU s at 240 pairs, so ``--time-limit 1`` there is the documented fallback to greedy. ``time_limit`` is only a **safety net**, counted in CPU seconds (the build in
this process, then the solver in a child with ``RLIMIT_CPU``, :func:`_within`), so that other
processes' load never decides it; a run it stops is discarded (``moves`` is ``None``, status
``"time limit"``), the caller keeps its deterministic greedy plan and says so. The wall clock
only ends a child starved past :data:`WALL_FACTOR` times its allowance (status ``"wall limit"``,
so that the note names the clock that stopped it). ``LBCTL_MILP_DEBUG=1``
prints HiGHS's log. scipy is an optional extra (``pip install 'lbctl[propose]'``): without it
:func:`available` is false and the planner runs greedy only.

**Bounded.** The model's size is known before it is built (:func:`size_of`: its pairs and an upper
bound of its nonzeros, from per-broker counts), and one whose estimated peak memory is over
:data:`MEMORY_LIMIT` is refused (the caller keeps greedy's plan, with a note): a size, not a
clock, decides, so the plan stays a function of the input. The model is assembled with numpy
straight into sparse arrays (a few arrays per broker row, never a Python object per nonzero), and
its assembly counts against ``time_limit``: HiGHS gets what is left, and a build the safety net
stops is a ``"time limit"`` run like any other.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from lbctl.planner.constraints import Rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy import Caps
from lbctl.planner.load import BrokerTerms, LoadView

K_CAP = 1e5
K_BAND = 1e3
#: branch-and-bound nodes HiGHS may explore (``mip_max_nodes``): the exact solver's work limit
NODE_LIMIT = 100
#: the most memory the exact solver may take (bytes): a model that would need more is not built
MEMORY_LIMIT = 1 << 30
#: peak memory per nonzero of the model, and the process's footprint besides: measured peaks of
#: ``propose --solver exact`` (build + HiGHS) were 129 B per nonzero at 11.4 M nonzeros (1.46 GB)
#: and ~230 MB for small models; the estimate uses the nonzeros' upper bound, ~10 % above the
#: real count (``benchmarks/growth.py --rows`` prints the measured peak next to the estimate)
BYTES_PER_NONZERO = 120
BASE_BYTES = 200 << 20
#: HiGHS's relative gap at which a plan counts as optimal
MIP_GAP = 1e-4
#: the solver's child is killed after this many times its CPU allowance in wall-clock seconds
#: (plus :data:`GRACE`): the CPU limit decides; this only ends a starved or stuck child
WALL_FACTOR = 10.0
GRACE = 2.0


class WallClockStop(Exception):
    """The solver's child was killed by the wall clock (:data:`WALL_FACTOR`), not by its CPU
    allowance: a starved or stuck child, which the plan's note names apart from the safety net."""
#: bundles whose allowed destinations are worked out at a time (memory: this × brokers bytes)
_CHUNK = 4096


def available() -> bool:
    """Whether scipy (with HiGHS) can be imported."""
    try:
        from scipy.optimize import milp  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class MilpResult:
    moves: tuple[tuple[int, int], ...] | None  # None: no feasible plan found in time
    status: str  # "optimal", "time limit", …
    gap: float | None  # HiGHS's relative gap (objective vs bound)
    bound: float | None  # the dual bound, in objective units
    objective: float | None
    norm: float  # Σ cost of movable bundles (objective's cost unit)
    variables: int


class OutOfTime(Exception):
    """The model's build reached the time limit (the run is discarded, as any the clock stops)."""


@dataclass(frozen=True)
class Pairs:
    """Every (bundle, destination) the static constraints allow, in bundle then destination
    order: ``bundle[p]``, ``dest[p]`` (numpy int64 arrays)."""

    bundle: Any
    dest: Any

    def __len__(self) -> int:
        return len(self.bundle)

    def tolist(self) -> list[tuple[int, int]]:
        return list(zip(self.bundle.tolist(), self.dest.tolist(), strict=True))


def pairs_of(view: LoadView, rules: Rules, limit: int | None = None) -> Pairs | None:
    """Every (bundle, destination) the static constraints allow (``None`` as soon as there are
    more than ``limit``). Worked out a chunk of bundles at a time as a bundle × broker mask:
    memory ``_CHUNK × brokers`` bytes besides the pairs themselves."""
    import numpy as np

    n = len(view.brokers)
    movable = np.array([i for i, why in enumerate(rules.pinned) if why is None], dtype=np.int64)
    owner = np.asarray(view.owner, dtype=np.int64)
    topics = np.asarray(view.topics, dtype=np.int64)
    open_ = np.ones(n, dtype=bool)
    for j in rules.closed:
        open_[j] = False
    room = rules.topics_limit - np.asarray(view.broker_topics, dtype=np.int64)
    refused_by: dict[int, list[int]] = {}  # bundle -> brokers refusing its kind of topics
    for j, refused in rules.kind_refused.items():
        for i in refused:
            refused_by.setdefault(i, []).append(j)
    bundles, dests = [], []
    count = 0
    for start in range(0, len(movable), _CHUNK):
        rows = movable[start:start + _CHUNK]
        mask = np.broadcast_to(open_, (len(rows), n)).copy()
        mask[np.arange(len(rows)), owner[rows]] = False
        mask &= topics[rows][:, None] <= room[None, :]
        for k, i in enumerate(rows.tolist()):
            allowed = rules.allowed.get(i)
            if allowed is not None:
                keep = np.zeros(n, dtype=bool)
                keep[list(allowed)] = True
                mask[k] &= keep
            refusing = refused_by.get(i)
            if refusing:
                mask[k, refusing] = False
        at, to = np.nonzero(mask)
        count += len(at)
        if limit is not None and count > limit:
            return None
        bundles.append(rows[at])
        dests.append(to.astype(np.int64))
    if not bundles:
        return Pairs(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    return Pairs(np.concatenate(bundles), np.concatenate(dests))


@dataclass(frozen=True)
class Size:
    """How big the model of a problem is, before it is built."""

    pairs: Pairs | None  # None: more than the memory limit allows, not all listed
    nonzeros: int  # an upper bound (coefficients that are 0 are left out of the model)

    @property
    def memory(self) -> int:
        """Estimated peak bytes of building and solving it."""
        return BASE_BYTES + self.nonzeros * BYTES_PER_NONZERO

    @property
    def fits(self) -> bool:
        return self.pairs is not None and self.memory <= MEMORY_LIMIT


def _y_choices(t: Any) -> list[int]:
    """The weighted terms (resource, or -1 for the floor) that may hold a broker above ``lo``."""
    opts = [r for r in range(3) if t.now[r] != -math.inf]
    return opts + ([-1] if t.floor != -math.inf and (not opts or t.floor > 0) else [])


@dataclass(frozen=True)
class Reach:
    """How far one broker's weighted terms can go under any plan of the model: the bundles that
    may come in (one pair each at most) and those that may leave it (``d_in``, ``d_out``: their
    drivers, each bundle once). Each bundle moves at most once, so a term's lowest value is its
    value now plus every contribution that lowers it, and a term ``r`` is never below a term
    ``s`` when ``now_r - now_s`` plus every bundle's contribution to the difference that lowers
    it is still >= 0 — for every plan, not only the ones HiGHS looks at."""

    term: BrokerTerms
    d_in: Any
    d_out: Any

    def _diff_low(self, r: int, s: int) -> float:
        """The least ``t_r - t_s`` over every plan (``-1``: the floor, a constant)."""
        import numpy as np

        t = self.term
        kr = np.zeros(3)
        ks = np.zeros(3)
        base = 0.0
        if r >= 0:
            kr[r] = t.per_unit[r]
            base += t.now[r]
        else:
            base += t.floor
        if s >= 0:
            ks[s] = t.per_unit[s]
            base -= t.now[s]
        else:
            base -= t.floor
        g_in = self.d_in @ (kr - ks)
        g_out = -(self.d_out @ (kr - ks))
        return float(base + np.minimum(g_in, 0.0).sum() + np.minimum(g_out, 0.0).sum())

    def holding(self, choices: list[int]) -> list[int]:
        """``choices`` (the terms that may hold the broker above ``lo``) less those another kept
        term is never below: "one of them is >= lo" is then the same constraint with fewer
        binaries (exact, not a heuristic). Kept in ``choices``' order."""
        t = self.term
        kept: list[int] = []
        for r in sorted(choices, key=lambda r: (-(t.now[r] if r >= 0 else t.floor), r)):
            if not any(self._diff_low(k, r) >= 0.0 for k in kept):
                kept.append(r)
        return [r for r in choices if r in kept]

    def big_m(self, r: int, lub: float) -> float:
        """A big-M for ``lo <= t_r + M·(1 - y)``: ``lo`` is at most ``lub`` and ``t_r`` at least
        its lowest value under any plan (plus a thousandth for the solver's tolerances)."""
        import numpy as np

        t = self.term
        if r == -1:
            low = t.floor
        else:
            k = t.per_unit[r]
            low = t.now[r] + float(np.minimum(k * self.d_in[:, r], 0.0).sum()
                                   + np.minimum(-k * self.d_out[:, r], 0.0).sum())
        return max(0.0, lub - low) + 1e-3


def size_of(view: LoadView, rules: Rules, caps: Caps, pairs: Pairs | None = None) -> Size:
    """The model's pairs and an upper bound of its nonzeros: per broker, each of its terms' rows
    holds every pair into and out of it. Listing the pairs stops once even one nonzero per pair
    would be over :data:`MEMORY_LIMIT`; ``pairs`` already listed (:func:`pairs_of`) are not
    listed again."""
    import numpy as np

    most_pairs = max(0, (MEMORY_LIMIT - BASE_BYTES) // BYTES_PER_NONZERO)
    if pairs is None:
        pairs = pairs_of(view, rules, limit=most_pairs)
    elif len(pairs) > most_pairs:
        pairs = None
    if pairs is None:
        return Size(None, most_pairs + 1)
    n = len(view.brokers)
    owner = np.asarray(view.owner, dtype=np.int64)
    flow = (np.bincount(pairs.dest, minlength=n)
            + np.bincount(owner[pairs.bundle], minlength=n)).tolist()
    nnz = 3 * len(pairs) + 3  # at most once, --max-moves, --max-throughput; the band row
    for j, t in enumerate(view.terms):
        finite = sum(1 for r in range(3) if t.now[r] != -math.inf)
        ys = _y_choices(t)
        nnz += finite * 2 * (flow[j] + 1)  # hi and cap rows
        nnz += len(ys) + sum(2 + (flow[j] if r >= 0 else 0) for r in ys)  # the lo rows
        nnz += flow[j]  # topics
    nnz += len(rules.group_cap) and 2 * len(pairs)  # anti-affinity rows: a pair in two at most
    return Size(pairs, nnz)


@dataclass(frozen=True)
class Model:
    """The mixed-integer model as arrays: ``min c·x`` s.t. ``lb <= A x <= ub``, bounds, integrality."""

    c: Any
    a: Any  # scipy.sparse.csc_array
    lb: Any
    ub: Any
    lower: Any
    upper: Any
    integrality: Any
    pairs_: Pairs
    norm: float
    y_index: list[list[tuple[int, int]]]  # per broker: (term or -1 for the floor, variable)

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """The (bundle, destination) of each pair variable, in variable order."""
        return self.pairs_.tolist()

    def vector(self, moves: Any, lo: float, hi: float, usages_terms: Any) -> Any:
        """The variable vector of a plan (for checks): ``usages_terms[j]`` is broker *j*'s
        weighted terms after it, to pick each ``y``."""
        import numpy as np

        x = np.zeros(len(self.c))
        pairs = self.pairs
        index = {p: k for k, p in enumerate(pairs)}
        for m in moves:
            x[index[m]] = 1.0
        n = len(pairs)
        x[n], x[n + 1] = lo, hi
        for j, ys in enumerate(self.y_index):
            if len(ys) > 1:
                best = max(ys, key=lambda e: usages_terms[j][e[0]] if e[0] >= 0 else -1.0)
                x[best[1]] = 1.0
        return x


def solve_milp(view: LoadView, rules: Rules, costs: Costs, targets: Targets, width: float,
               caps: Caps, time_limit: float,
               pairs: Pairs | None = None,
               slack_limits: tuple[float, float] | None = None,
               node_limit: int = NODE_LIMIT) -> MilpResult:
    """Solve the model within ``node_limit`` nodes; ``slack_limits`` (capacity, band) caps the
    slacks and leaves cost alone in the objective: the cheapest plan no further from the goals
    than that. ``time_limit`` is the safety net, in CPU seconds of this process's build and the
    solver's child (see :func:`_within`): a run it stops comes back without moves."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    deadline = time.process_time() + max(0.1, time_limit)
    try:
        m = build_model(view, rules, costs, targets, width, caps, pairs, deadline=deadline)
    except OutOfTime:
        return MilpResult(None, "time limit", None, None, None, 1.0, 0)
    left = deadline - time.process_time()
    if left <= 0:
        return MilpResult(None, "time limit", None, None, None, m.norm, len(m.c))
    n = len(m.pairs_)
    if slack_limits is not None:
        m.upper[n + 2], m.upper[n + 3] = slack_limits
        m.c[n + 2] = m.c[n + 3] = 0.0
    nvar = len(m.c)
    debug = bool(os.environ.get("LBCTL_MILP_DEBUG"))
    options: dict[str, Any] = {"disp": debug, "mip_rel_gap": MIP_GAP, "node_limit": node_limit}

    def run() -> Any:
        return milp(m.c, constraints=LinearConstraint(m.a, m.lb, m.ub),
                    integrality=m.integrality, bounds=Bounds(m.lower, m.upper),
                    options=options)

    with nullcontext() if debug else quiet_stdout():
        if can_fork():
            try:
                res: Any = _within(run, left, WALL_FACTOR * left + GRACE)
            except WallClockStop:
                return MilpResult(None, "wall limit", None, None, None, m.norm, nvar)
        else:  # no child to limit: HiGHS's own (wall-clock) limit is the safety net
            options["time_limit"] = max(0.1, left)
            res = run()
    if res is None:  # the safety net stopped the solver
        return MilpResult(None, "time limit", None, None, None, m.norm, nvar)
    status = _status(int(res.status), str(getattr(res, "message", "")))
    gap = getattr(res, "mip_gap", None)
    bound = getattr(res, "mip_dual_bound", None)
    if status == "time limit":  # where a clock stopped a search depends on the machine: not used
        return MilpResult(None, status, None, None, None, m.norm, nvar)
    if res.x is None:
        return MilpResult(None, status, None, _finite(bound), None, m.norm, nvar)
    chosen = res.x[:n] > 0.5
    moves = tuple(zip(m.pairs_.bundle[chosen].tolist(), m.pairs_.dest[chosen].tolist(),
                      strict=True))
    return MilpResult(moves, status, _finite(gap), _finite(bound), float(res.fun), m.norm, nvar)


def can_fork() -> bool:
    """Whether the solver can run in a child process the safety net can stop (not on Windows)."""
    return hasattr(os, "fork")


def _within(run: Callable[[], Any], cpu_seconds: float, wall_seconds: float) -> Any:
    """``run()`` in a forked child that may use ``cpu_seconds`` of CPU (``RLIMIT_CPU`` in whole
    seconds, rounded up, stops it with ``SIGXCPU``; a result that took more than ``cpu_seconds``
    is not sent back: ``None`` then) and is killed after ``wall_seconds`` in any case
    (:class:`WallClockStop` then). CPU time,
    not the wall clock, so that other processes' load never decides whether the exact plan is
    used; the wall limit only keeps a starved or stuck child from hanging the command. HiGHS's
    own ``time_limit`` is not given: it counts wall-clock time and is checked between phases only
    (on a 142,000-pair model its presolve ran minutes past a 20 s limit). The child shares the
    model's memory (``os.fork``, not ``multiprocessing``, whose daemonic pool workers may not have
    children); the result comes back pickled through a pipe."""
    import pickle
    import select
    import signal

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        status = 0
        try:
            os.close(read_end)
            import resource

            _, hard = resource.getrlimit(resource.RLIMIT_CPU)
            soft = max(1, math.ceil(cpu_seconds))
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(
                resource.RLIMIT_CORE)[1]))  # no core file when SIGXCPU stops it
            try:
                value = run()
                # ended within the rounded-up kernel limit but past the allowance: not used
                message = (("ok", value) if time.process_time() <= cpu_seconds
                           else ("over", None))
            except BaseException as e:  # reported to the parent, which re-raises it
                message = ("error", e)
            try:
                payload = pickle.dumps(message)
            except Exception as e:  # an exception that does not pickle
                payload = pickle.dumps(("error", RuntimeError(repr(e))))
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + max(0.0, wall_seconds)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise WallClockStop(f"stopped after {wall_seconds:g} s of wall-clock time")
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    if not chunks:  # the child died (CPU limit, out of memory, a signal): no plan from it
        return None
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "error":
        raise value
    return value if kind == "ok" else None


def _status(code: int, message: str) -> str:
    """scipy's status in words; HiGHS's node limit (``kSolutionLimit``, which scipy passes on as
    an unrecognised status) is the work limit."""
    if code == 1:
        return "time limit" if "time" in message.lower() else "work limit"
    if code == 4 and "Status 16" in message:
        return "work limit"
    return {0: "optimal", 2: "infeasible", 3: "unbounded"}.get(code, "solver error")


class _Rows:
    """Constraint rows collected as numpy pieces (columns, values) and bounds, in order."""

    def __init__(self) -> None:
        self.cols: list[Any] = []
        self.vals: list[Any] = []
        self.lens: list[int] = []
        self.lb: list[float] = []
        self.ub: list[float] = []

    def add(self, cols: Any, vals: Any, lo: float, hi: float) -> None:
        self.cols.append(cols)
        self.vals.append(vals)
        self.lens.append(len(cols))
        self.lb.append(lo)
        self.ub.append(hi)


def build_model(view: LoadView, rules: Rules, costs: Costs, targets: Targets, width: float,
                caps: Caps, pairs: Pairs | None = None, deadline: float | None = None,
                prune: bool = True) -> Model:
    """The model of the module docstring, as sparse arrays (the rows in the order HiGHS has
    always been given them: a bundle's "at most once", then per broker its terms' rows, the
    band, the caps, topics, anti-affinity). ``deadline`` (``time.process_time()``): past it the
    build stops with :class:`OutOfTime`. ``prune`` (the default) leaves out the binaries of terms
    another term is never below and gives each remaining one its own big-M (:class:`Reach`); without
    it, the model is the one the tuple build gave (``tests/planner/milp_reference.py``)."""
    import numpy as np
    from scipy.sparse import csr_array

    def check_clock() -> None:
        if deadline is not None and time.process_time() > deadline:
            raise OutOfTime

    pairs = pairs if pairs is not None else pairs_of(view, rules)
    assert pairs is not None
    n = len(view.brokers)
    terms = view.terms
    pb, pd = pairs.bundle, pairs.dest
    npairs = len(pb)
    movable = np.unique(pb).tolist()
    norm = sum(costs.cost[i] for i in movable) or 1.0
    usages = view.usages()
    umax = targets.max_usage

    # per broker, the pairs coming in and going out (pair order within each)
    owner = np.asarray(view.owner, dtype=np.int64)
    src = owner[pb]
    all_drivers = np.asarray(view.drivers, dtype=np.float64).reshape(-1, 3)
    drivers = all_drivers[pb]
    in_order = np.argsort(pd, kind="stable")
    in_at = np.searchsorted(pd[in_order], np.arange(n + 1))
    out_order = np.argsort(src, kind="stable")
    out_at = np.searchsorted(src[out_order], np.arange(n + 1))

    # variable layout
    v_lo, v_hi, v_cap, v_band = npairs, npairs + 1, npairs + 2, npairs + 3
    nvar = npairs + 4
    y_index: list[list[tuple[int, int]]] = []  # per broker: (r or -1 for floor, var)
    reach: list[Reach] = []
    for j, t in enumerate(terms):
        # a bundle comes in by one pair at most; one leaving may have many: each counted once
        r_j = Reach(t, all_drivers[pb[in_order[in_at[j]:in_at[j + 1]]]],
                       all_drivers[np.unique(pb[out_order[out_at[j]:out_at[j + 1]]])])
        reach.append(r_j)
        choices = r_j.holding(_y_choices(t)) if prune else _y_choices(t)
        ys: list[tuple[int, int]] = []
        if len(choices) > 1:
            for r in choices:
                ys.append((r, nvar))
                nvar += 1
        elif choices:
            ys.append((choices[0], -1))
        y_index.append(ys)
    index_type = np.int32 if nvar < 2**31 - 1 else np.int64
    check_clock()

    # each bundle moves at most once: one row per bundle over its (consecutive) pairs
    starts = np.flatnonzero(np.r_[True, pb[1:] != pb[:-1]]) if npairs else np.zeros(0, int)
    first_ptr = np.r_[starts, npairs].astype(np.int64)
    nb = len(starts)
    rows = _Rows()
    one = np.ones(1)

    lub = max(usages) if usages else 1.0
    hi_floor = max((t.floor for t in terms if t.floor != -math.inf), default=0.0)
    for j, t in enumerate(terms):
        check_clock()
        p_in = in_order[in_at[j]:in_at[j + 1]]
        p_out = out_order[out_at[j]:out_at[j + 1]]
        cols_e = np.concatenate([p_in, p_out])
        expr: dict[int, Any] = {}
        for r in range(3):
            if t.now[r] == -math.inf:
                continue
            k = t.per_unit[r]
            e = expr[r] = np.concatenate([k * drivers[p_in, r], -k * drivers[p_out, r]])
            rows.add(np.r_[cols_e, v_hi], np.r_[e, -1.0], -math.inf, -t.now[r])
            rows.add(np.r_[cols_e, v_cap], np.r_[e, -1.0], -math.inf, umax - t.now[r])
        ys = y_index[j]
        if len(ys) == 1:
            r, _ = ys[0]
            if r == -1:
                rows.add(np.array([v_lo]), one, -math.inf, t.floor)
            else:
                rows.add(np.r_[v_lo, cols_e], np.r_[1.0, -expr[r]], -math.inf, t.now[r])
        elif ys:
            rows.add(np.array([var for _, var in ys]), np.ones(len(ys)), 1.0, 1.0)
            for r, var in ys:
                big_m = reach[j].big_m(r, lub) if prune else lub + 1.0
                if r == -1:
                    rows.add(np.array([v_lo, var]), np.array([1.0, big_m]), -math.inf,
                             big_m + t.floor)
                else:
                    rows.add(np.r_[v_lo, var, cols_e], np.r_[1.0, big_m, -expr[r]],
                             -math.inf, big_m + t.now[r])
    rows.add(np.array([v_hi, v_lo, v_band]), np.array([1.0, -1.0, -1.0]), -math.inf, width)

    if caps.max_moves is not None:
        rows.add(np.arange(npairs), np.ones(npairs), -math.inf, float(caps.max_moves))
    if caps.max_throughput is not None:
        tp = np.asarray(view.throughput, dtype=np.float64)[pb]
        rows.add(np.arange(npairs), tp, -math.inf, float(caps.max_throughput))
    topics = np.asarray(view.topics, dtype=np.int64)[pb]
    for j in range(n):
        p_in = in_order[in_at[j]:in_at[j + 1]]
        incoming = int(topics[p_in].sum())
        if incoming and view.broker_topics[j] + incoming > rules.topics_limit:
            p_out = out_order[out_at[j]:out_at[j + 1]]
            rows.add(np.concatenate([p_in, p_out]),
                     np.concatenate([topics[p_in], -topics[p_out]]).astype(np.float64),
                     -math.inf, float(rules.topics_limit - view.broker_topics[j]))
    if rules.group:
        group_of = {g: k for k, g in enumerate(rules.group_cap)}
        gid = np.full(len(view.owner), -1, dtype=np.int64)
        owned = np.zeros((len(group_of), n), dtype=np.int64)  # group members per broker now
        for i, g in rules.group.items():
            if g in group_of:
                gid[i] = group_of[g]
                owned[group_of[g], view.owner[i]] += 1
        pg = gid[pb]
        for g, capv in rules.group_cap.items():
            check_clock()
            k = group_of[g]
            for j in range(n):
                p_in = in_order[in_at[j]:in_at[j + 1]]
                ins = p_in[pg[p_in] == k]
                if not len(ins):
                    continue
                p_out = out_order[out_at[j]:out_at[j + 1]]
                outs = p_out[pg[p_out] == k]
                rows.add(np.concatenate([ins, outs]),
                         np.r_[np.ones(len(ins)), -np.ones(len(outs))], -math.inf,
                         float(capv[j] - int(owned[k, j])))
    check_clock()

    c = np.zeros(nvar)
    c[:npairs] = np.asarray(costs.cost, dtype=np.float64)[pb] / norm
    c[v_cap] = K_CAP
    c[v_band] = K_BAND
    integrality = np.ones(nvar)
    integrality[v_lo] = integrality[v_hi] = integrality[v_cap] = integrality[v_band] = 0
    lower = np.zeros(nvar)
    upper = np.ones(nvar)
    lower[v_lo], upper[v_lo] = 0.0, lub
    lower[v_hi], upper[v_hi] = hi_floor, np.inf
    lower[v_cap], upper[v_cap] = max(0.0, hi_floor - umax), np.inf
    lower[v_band], upper[v_band] = 0.0, np.inf

    indptr = np.concatenate([first_ptr, npairs + np.cumsum(np.asarray(rows.lens, np.int64))])
    indices = np.concatenate([np.arange(npairs), *rows.cols]).astype(index_type)
    data = np.concatenate([np.ones(npairs), *rows.vals]).astype(np.float64)
    del rows.cols, rows.vals
    a = csr_array((data, indices, indptr.astype(index_type)), shape=(nb + len(rows.lb), nvar))
    a.eliminate_zeros()  # a bundle without traffic, a slope of 0: as if never written
    lb = np.r_[np.full(nb, -math.inf), rows.lb]
    ub = np.r_[np.ones(nb), rows.ub]
    return Model(c, a.tocsc(), lb, ub, lower, upper, integrality, pairs, norm, y_index)


@contextmanager
def quiet_stdout() -> Iterator[None]:
    """HiGHS writes a few lines to the process's standard output (file descriptor 1) even with
    ``disp`` off; they would land in the middle of ``-o json``. Descriptor 1 points at /dev/null
    while the solver runs (``LBCTL_MILP_DEBUG=1`` shows the solver's log instead)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no descriptor 1 (embedded use): nothing to protect
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _finite(x: Any) -> float | None:
    if x is None:
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None
