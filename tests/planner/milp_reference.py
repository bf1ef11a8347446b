"""A verbatim copy of ``lbctl/planner/milp.py`` as of commit 4ed0f40, before the model was built with
numpy (issue 30: Python lists of every nonzero took 3.9 GB at 1.43 M pairs). Kept under tests/ only:
tests/planner/test_milp_build.py checks the new build gives HiGHS the very same model.

The original module docstring follows.

The exact plan: a mixed-integer model solved by HiGHS (``scipy.optimize.milp``), work-limited.

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

The slacks make every instance feasible, and their weights make capacity and band lexicographic
ahead of cost (a millionth of a point of band outweighs moving everything). HiGHS reports the
relative gap between the best plan found and its bound.

**Deterministic.** HiGHS stops after :data:`NODE_LIMIT` branch-and-bound nodes (a count of work,
the same on any machine) and returns the best plan of those nodes with its gap; the wall-clock
``time_limit`` is only a guard: a run it stops is discarded (``moves`` is ``None``, status
``"time limit"``) rather than used, since where a clock stops a search depends on the machine's
speed and load, and the caller keeps its deterministic greedy plan. ``LBCTL_MILP_DEBUG=1`` prints HiGHS's log. scipy is an optional extra (``pip install 'lbctl[propose]'``):
without it :func:`available` is false and the planner runs greedy only.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from lbctl.planner.constraints import Rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy import Caps
from lbctl.planner.load import LoadView

K_CAP = 1e5
K_BAND = 1e3
#: branch-and-bound nodes HiGHS may explore (``mip_max_nodes``): the exact solver's work limit
NODE_LIMIT = 100


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


def pairs_of(view: LoadView, rules: Rules) -> list[tuple[int, int]]:
    """Every (bundle, destination) the static constraints allow."""
    n = len(view.brokers)
    out = []
    for i, why in enumerate(rules.pinned):
        if why is not None:
            continue
        src = view.owner[i]
        t = view.topics[i]
        for j in range(n):
            if j == src or rules.static_refuses(i, j) is not None:
                continue
            if view.broker_topics[j] + t > rules.topics_limit:
                continue
            out.append((i, j))
    return out


@dataclass(frozen=True)
class Model:
    """The mixed-integer model as arrays: ``min c·x`` s.t. ``lb <= A x <= ub``, bounds, integrality."""

    c: Any
    a: Any
    lb: Any
    ub: Any
    lower: Any
    upper: Any
    integrality: Any
    pairs: list[tuple[int, int]]
    norm: float
    y_index: list[list[tuple[int, int]]]  # per broker: (term or -1 for the floor, variable)

    def vector(self, moves: Any, lo: float, hi: float, usages_terms: Any) -> Any:
        """The variable vector of a plan (for checks): ``usages_terms[j]`` is broker *j*'s
        weighted terms after it, to pick each ``y``."""
        import numpy as np

        x = np.zeros(len(self.c))
        index = {p: k for k, p in enumerate(self.pairs)}
        for m in moves:
            x[index[m]] = 1.0
        n = len(self.pairs)
        x[n], x[n + 1] = lo, hi
        for j, ys in enumerate(self.y_index):
            if len(ys) > 1:
                best = max(ys, key=lambda e: usages_terms[j][e[0]] if e[0] >= 0 else -1.0)
                x[best[1]] = 1.0
        return x


def solve_milp(view: LoadView, rules: Rules, costs: Costs, targets: Targets, width: float,
               caps: Caps, time_limit: float,
               pairs: list[tuple[int, int]] | None = None,
               slack_limits: tuple[float, float] | None = None,
               node_limit: int = NODE_LIMIT) -> MilpResult:
    """Solve the model within ``node_limit`` nodes; ``slack_limits`` (capacity, band) caps the
    slacks and leaves cost alone in the objective: the cheapest plan no further from the goals
    than that. A run stopped by ``time_limit`` (seconds) comes back without moves."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    m = build_model(view, rules, costs, targets, width, caps, pairs)
    if slack_limits is not None:
        n = len(m.pairs)
        m.upper[n + 2], m.upper[n + 3] = slack_limits
        m.c[n + 2] = m.c[n + 3] = 0.0
    nvar = len(m.c)
    debug = bool(os.environ.get("LBCTL_MILP_DEBUG"))
    with nullcontext() if debug else _quiet_stdout():
        res: Any = milp(m.c, constraints=LinearConstraint(m.a, m.lb, m.ub),
                        integrality=m.integrality, bounds=Bounds(m.lower, m.upper),
                        options={"time_limit": max(0.1, time_limit), "disp": debug,
                                 "mip_rel_gap": 1e-4, "node_limit": node_limit})
    status = _status(int(res.status), str(getattr(res, "message", "")))
    gap = getattr(res, "mip_gap", None)
    bound = getattr(res, "mip_dual_bound", None)
    if status == "time limit":  # where the clock stopped depends on the machine: not used
        return MilpResult(None, status, None, None, None, m.norm, nvar)
    if res.x is None:
        return MilpResult(None, status, None, _finite(bound), None, m.norm, nvar)
    x = res.x
    moves = tuple((i, j) for p, (i, j) in enumerate(m.pairs) if x[p] > 0.5)
    return MilpResult(moves, status, _finite(gap), _finite(bound), float(res.fun), m.norm, nvar)


def _status(code: int, message: str) -> str:
    """scipy's status in words; HiGHS's node limit (``kSolutionLimit``, which scipy passes on as
    an unrecognised status) is the work limit."""
    if code == 1:
        return "time limit" if "time" in message.lower() else "work limit"
    if code == 4 and "Status 16" in message:
        return "work limit"
    return {0: "optimal", 2: "infeasible", 3: "unbounded"}.get(code, "solver error")


def build_model(view: LoadView, rules: Rules, costs: Costs, targets: Targets, width: float,
                caps: Caps, pairs: list[tuple[int, int]] | None = None) -> Model:
    import numpy as np
    from scipy.sparse import coo_array

    pairs = pairs if pairs is not None else pairs_of(view, rules)
    n = len(view.brokers)
    terms = view.terms
    movable = sorted({i for i, _ in pairs})
    norm = sum(costs.cost[i] for i in movable) or 1.0
    usages = view.usages()
    umax = targets.max_usage

    # variable layout
    npairs = len(pairs)
    v_lo, v_hi, v_cap, v_band = npairs, npairs + 1, npairs + 2, npairs + 3
    nvar = npairs + 4
    y_index: list[list[tuple[int, int]]] = []  # per broker: (r or -1 for floor, var)
    for t in terms:
        opts = [r for r in range(3) if t.now[r] != -math.inf]
        choices = opts + ([-1] if t.floor != -math.inf and (not opts or t.floor > 0) else [])
        ys: list[tuple[int, int]] = []
        if len(choices) > 1:
            for r in choices:
                ys.append((r, nvar))
                nvar += 1
        elif choices:
            ys.append((choices[0], -1))
        y_index.append(ys)

    # per broker, per resource: the linear expression (coefficients over pair variables)
    inflow: list[list[tuple[int, int]]] = [[] for _ in range(n)]  # (pair var, bundle)
    outflow: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for p, (i, j) in enumerate(pairs):
        inflow[j].append((p, i))
        outflow[view.owner[i]].append((p, i))

    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lb: list[float] = []
    ub: list[float] = []

    def add_row(coefs: list[tuple[int, float]], lo: float, hi: float) -> None:
        row = len(lb)
        for c, v in coefs:
            if v != 0.0:
                rows.append(row)
                cols.append(c)
                vals.append(v)
        lb.append(lo)
        ub.append(hi)

    def expr(j: int, r: int) -> list[tuple[int, float]]:
        k = terms[j].per_unit[r]
        out = [(p, k * view.drivers[i][r]) for p, i in inflow[j]]
        out += [(p, -k * view.drivers[i][r]) for p, i in outflow[j]]
        return out

    # each bundle moves at most once
    by_bundle: dict[int, list[int]] = {}
    for p, (i, _) in enumerate(pairs):
        by_bundle.setdefault(i, []).append(p)
    for ps in by_bundle.values():
        add_row([(p, 1.0) for p in ps], -math.inf, 1.0)

    lub = max(usages) if usages else 1.0
    big_m = lub + 1.0
    hi_floor = max((t.floor for t in terms if t.floor != -math.inf), default=0.0)
    for j, t in enumerate(terms):
        for r in range(3):
            if t.now[r] == -math.inf:
                continue
            e = expr(j, r)
            add_row(e + [(v_hi, -1.0)], -math.inf, -t.now[r])
            add_row(e + [(v_cap, -1.0)], -math.inf, umax - t.now[r])
        ys = y_index[j]
        if len(ys) == 1:
            r, _ = ys[0]
            if r == -1:
                add_row([(v_lo, 1.0)], -math.inf, t.floor)
            else:
                add_row([(v_lo, 1.0)] + [(c, -v) for c, v in expr(j, r)], -math.inf, t.now[r])
        elif ys:
            add_row([(var, 1.0) for _, var in ys], 1.0, 1.0)
            for r, var in ys:
                if r == -1:
                    add_row([(v_lo, 1.0), (var, big_m)], -math.inf, big_m + t.floor)
                else:
                    add_row([(v_lo, 1.0), (var, big_m)] + [(c, -v) for c, v in expr(j, r)],
                            -math.inf, big_m + t.now[r])
    add_row([(v_hi, 1.0), (v_lo, -1.0), (v_band, -1.0)], -math.inf, width)

    if caps.max_moves is not None:
        add_row([(p, 1.0) for p in range(npairs)], -math.inf, float(caps.max_moves))
    if caps.max_throughput is not None:
        add_row([(p, view.throughput[i]) for p, (i, _) in enumerate(pairs)], -math.inf,
                float(caps.max_throughput))
    for j in range(n):
        incoming = sum(view.topics[i] for _, i in inflow[j])
        if incoming and view.broker_topics[j] + incoming > rules.topics_limit:
            coefs = [(p, float(view.topics[i])) for p, i in inflow[j]]
            coefs += [(p, -float(view.topics[i])) for p, i in outflow[j]]
            add_row(coefs, -math.inf, float(rules.topics_limit - view.broker_topics[j]))
    if rules.group:
        for g, capv in rules.group_cap.items():
            for j in range(n):
                ins = [(p, 1.0) for p, i in inflow[j] if rules.group.get(i) == g]
                if not ins:
                    continue
                outs = [(p, -1.0) for p, i in outflow[j] if rules.group.get(i) == g]
                now = sum(1 for i, gi in rules.group.items() if gi == g and view.owner[i] == j)
                add_row(ins + outs, -math.inf, float(capv[j] - now))

    c = np.zeros(nvar)
    for p, (i, _) in enumerate(pairs):
        c[p] = costs.cost[i] / norm
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

    a = coo_array((vals, (rows, cols)), shape=(len(lb), nvar)).tocsr()
    return Model(c, a, np.array(lb), np.array(ub), lower, upper, integrality, pairs, norm,
                 y_index)


@contextmanager
def _quiet_stdout() -> Iterator[None]:
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
