"""A lower bound on the cost of any plan that meets capacity and the band: the greedy plan's gap.

For a window ``[lo, lo + width]`` every broker above it must send away enough driver to bring each
weighted term down to ``hi`` (at best its cheapest bundles per unit of that driver, taken
fractionally), and every broker below it must receive enough to lift one term to ``lo`` (at best
at the cluster's cheapest cost per unit of driver). A bundle leaves one broker and reaches one, so
the larger of the two sums bounds that window's plans from below. The bound over all windows
is the least of those; windows are scanned on a grid, pairing each interval's smallest shedding
(at its top) with its smallest receiving (at its bottom), which keeps the bound valid between grid
points. Pinned bundles never count as movable. ``None`` when no window can be reached.

**Tighter, up to :data:`LP_PAIRS` pairs: the exact model's LP relaxation.** The fractional bound
prices each broker alone, so a bundle that both relieves a donor and fills a receiver is counted
once on the larger side only, and every receiver is filled at the cluster's cheapest price. The
LP relaxation of :mod:`lbctl.planner.milp`'s model with both slacks fixed at 0 sees all of it at
once. Proof that it is a lower bound: every plan meeting capacity and a band of ``width`` is a
point of that model — its moves as ``x`` (every move is a pair the static rules allow, each
bundle moves once), ``hi`` its max and ``lo`` its min usage (``lo <= lub``, the largest usage
now: a plan's min is at most the usage of a broker that gave a bundle away, which fell, or with
no moves the min now), each ``y`` on a term that is the broker's max (the binaries
:class:`~lbctl.planner.milp.Reach` leaves out are of terms never above a kept one, and its big-Ms
are no smaller than ``lub`` less the term's lowest value under any plan), slacks 0, the
counted rules (topics, anti-affinity) holding — at objective ``cost / norm``. Relaxing
integrality only adds points, so the LP's optimum is at most any such plan's cost (less a
millionth for the solver's tolerances). ``lo`` is left unbounded below here. Checked against
every plan of tiny clusters: ``tests/planner/test_planner_bounds.py``. Measured on
``benchmarks/plans_on_hardware.py``'s oracle views (n=5/12, seeds 1-2, 10-point band): 2.2-2.4x
the fractional bound (142 -> 341, 309 -> 449, 206 -> 320, 699 -> 1,150 MB/s).

**Any size: the same LP with destinations aggregated** (:func:`aggregated_bound`, used when the
exact LP is out of reach). The exact LP has a variable per (bundle, destination): 1.08 M pairs on
``plans_on_hardware``'s 300-broker clusters, over the model's memory limit, so those fell back to
the fractional bound. Here each movable bundle *i* has one variable ``y_i`` (the part of it that
leaves its owner), and each broker *j* one ``z[j,k,r]`` per mix class *k* and resource *r*: the
driver of class *k* it receives, in shares of the resource's total. The bundles are put in classes
by their mix (each resource's share of the bundle's scaled drivers, in :data:`AGG_BINS` bins).
The rows are:
- conservation: ``Σ_j z[j,k,r] = Σ_{i in k} y_i d_ir``;
- the class's mix: each share of ``z[j,k,·]`` within the least and the most share of its bundles;
- ``z[j,k,r]`` at most the class's driver that ``j`` does not own, and 0 into a closed broker;
- the terms, cap, band and ``lo`` rows of the exact model, with ``Σ_k z`` as the driver coming in.
  :class:`~lbctl.planner.milp.Reach` is given every bundle ``j`` does not own as "may come in",
  a superset of any plan's, so its pruned terms and big-Ms hold for every plan.

Proof that it is a lower bound: it is a relaxation of the exact LP above. Take any point ``x`` of
that LP and set ``y_i = Σ_j x[i,j]`` and ``z[j,k,r] = Σ_{i in k} x[i,j] d_ir``. Then:
- conservation holds, since every part of a bundle that leaves lands somewhere;
- the mix rows hold, since a nonnegative sum of vectors whose shares lie in an interval has its
  shares in that interval;
- the upper bounds hold, since no pair goes to its owner or to a closed broker;
- every term is the same linear expression, so the rows on them hold, with the same ``u`` as the
  LP's ``y``. The big-Ms are no smaller, and the terms kept are no fewer.
- The cost ``Σ c_i y_i`` equals the LP's.
The rules on pairs (topics, anti-affinity, which brokers a bundle may go to) are dropped, which
only adds points. So this optimum is at most the exact LP's, which is at most any plan's cost.
Its size is bundles + 3 x brokers x classes, not bundles x brokers.

Measured on ``plans_on_hardware``'s oracle views, 10-point band, CPU seconds:
- n=12 (seeds 1-3) and n=60 (seeds 1, 4): equal to the exact LP to 0.1 MB/s, at 0.0 s against
  0.0-1.1 s. Those clusters' terms bind on one resource, so even one class is as tight.
- n=300 (seed 1): 15,157 MB/s against the fractional bound's 9,848, in 0.2-0.4 s.
Checked against the exact LP and against every plan of tiny clusters:
``tests/planner/test_planner_bounds.py``.
"""

from __future__ import annotations

import math
from typing import Any

from lbctl.planner.constraints import Rules
from lbctl.planner.cost import Costs
from lbctl.planner.load import LoadView

_STEPS = 100
#: (bundle, destination) pairs up to which the LP relaxation tightens the bound (a size, not a
#: clock, decides, so the bound is a function of the input). Only callers that do not pass
#: ``lp_pairs`` use it (``solve`` passes ``--exact-limit``): ``benchmarks/plans_on_hardware.py``.
#: The exact model's memory limit (:data:`lbctl.planner.milp.MEMORY_LIMIT`, ~22 nonzeros a pair
#: there: about 330,000 pairs) is the real bound on size; this count only stops the listing early
#: beyond it. Its 120-broker clusters had 171,360 pairs until they were split as Pulsar would
#: split them (``presplit``), then ~207,000 (seed 1: 206,941): over the 200,000
#: this used to be, so their bytes were set against the fractional bound alone, 1.6-1.7x below
#: the LP's: the same plans of seeds 1-20 read bytes/bound median 2.87, p90 3.37 against the
#: fractional bound (median 5,210 MB/s) and 1.79, 2.00 against the LP's (8,553 MB/s), where the
#: 60-broker ones read 1.94, 2.54. The LP costs 7-9 CPU s and ~730 MB there
LP_PAIRS = 400_000
#: share bins per resource of the aggregated relaxation's mix classes
AGG_BINS = 4


def lower_bound(view: LoadView, rules: Rules, costs: Costs, width: float,
                umax: float, lp_pairs: int = LP_PAIRS, aggregate: bool = True) -> float | None:
    """No plan meeting capacity (``umax``) and a band of ``width`` costs less. It is the larger of
    the fractional bound and one LP bound, with scipy installed. Up to ``lp_pairs`` pairs that is
    the exact LP (~1.7 CPU s at 38,000 pairs). Beyond, or past the memory limit, it is the
    aggregated LP when ``aggregate`` is set (0.2-0.4 s at 300 brokers). The fractional bound
    alone takes milliseconds."""
    frac = fractional_bound(view, rules, costs, width, umax)
    if frac is None:
        return None
    lp = relaxation_bound(view, rules, costs, width, umax, lp_pairs)
    if lp is None and aggregate:
        lp = aggregated_bound(view, rules, costs, width, umax)
    return frac if lp is None else max(frac, lp)


def relaxation_bound(view: LoadView, rules: Rules, costs: Costs, width: float,
                     umax: float, lp_pairs: int = LP_PAIRS) -> float | None:
    """The exact model's LP relaxation with both slacks at 0 (the module docstring's proof);
    ``None`` without scipy, over ``lp_pairs`` pairs or the exact model's memory limit, or
    when the LP finds no point."""
    from lbctl.planner import milp
    from lbctl.planner.goals import Targets
    from lbctl.planner.greedy import Caps

    if not milp.available() or (listed := milp.pairs_of(view, rules, limit=lp_pairs)) is None:
        return None
    size = milp.size_of(view, rules, Caps(), listed)
    if not size.fits:  # the exact model's memory limit holds for its relaxation too
        return None
    pairs = size.pairs
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint
    from scipy.optimize import milp as highs

    m = milp.build_model(view, rules, costs, Targets(umax, width), width, Caps(), pairs)
    n = len(m.pairs_)
    if m.lower[n + 2] > 0:  # a term that does not follow traffic is above the cap already
        return None
    m.upper[n + 2] = m.upper[n + 3] = 0.0
    m.lower[n] = -np.inf
    with milp.quiet_stdout():  # HiGHS's few lines would land in the middle of -o json
        res = highs(m.c, constraints=LinearConstraint(m.a, m.lb, m.ub),
                    integrality=np.zeros(len(m.c)), bounds=Bounds(m.lower, m.upper))
    if res.status != 0 or res.fun is None:
        return None
    return max(0.0, float(res.fun)) * m.norm * (1 - 1e-6)


def fractional_bound(view: LoadView, rules: Rules, costs: Costs, width: float,
                     umax: float) -> float | None:
    """The per-window fractional bound of the module docstring (any size, no scipy)."""
    import numpy as np

    usages = view.usages()
    if not usages:
        return 0.0
    lo_u, hi_u = min(usages), max(usages)
    start = lo_u - width
    grid = np.linspace(start, max(hi_u, start + 1e-9), _STEPS + 1)
    tops = np.minimum(grid + width, umax)

    movable = np.array([p is None for p in rules.pinned], dtype=bool)
    cost = np.asarray(costs.cost, dtype=float)
    drivers = np.asarray(view.drivers, dtype=float).reshape(-1, 3)
    owner = np.asarray(view.owner, dtype=np.int64)
    mov = np.flatnonzero(movable)
    mov = mov[np.argsort(owner[mov], kind="stable")]
    bounds_at = np.searchsorted(owner[mov], np.arange(len(view.brokers) + 1))
    cheapest = []
    for r in range(3):
        d = drivers[mov, r]
        ok = d > 0
        cheapest.append(float(np.min(cost[mov][ok] / d[ok])) if ok.any() else math.inf)

    shed = np.zeros(len(grid))
    gain = np.zeros(len(grid))
    for j, t in enumerate(view.terms):
        if t.floor > tops[0]:
            shed += np.where(t.floor > tops, np.inf, 0.0)
        # the heaviest term only: one knapsack per broker keeps the bound valid and cheap
        r = max(range(3), key=lambda r: t.now[r])
        now = t.now[r]
        if now != -math.inf and now > tops[0]:
            seg = mov[bounds_at[j]:bounds_at[j + 1]]
            shed += _shed_cost(drivers[seg, r], cost[seg], now, t.per_unit[r], tops)
        if usages[j] < grid[-1]:
            best = np.full(len(grid), np.inf)
            for r in range(3):
                now, k = t.now[r], t.per_unit[r]
                if now == -math.inf or k <= 0 or cheapest[r] == math.inf:
                    continue
                # a per-unit cost below ~1e-308 (a limit near the float range) overflows to
                # inf: no finite gain reaches the band there, as the bound should say
                with np.errstate(over="ignore"):
                    best = np.minimum(best, np.maximum(0.0, grid - now) / k * cheapest[r])
            if t.floor != -math.inf:
                best = np.where(grid <= t.floor, 0.0, best)
            best = np.where(grid <= usages[j], 0.0, best)
            gain += best
    bounds = [float(shed[0]), float(gain[-1])]
    bounds += [max(float(shed[k + 1]), float(gain[k])) for k in range(len(grid) - 1)]
    lb = min(bounds)
    return lb if math.isfinite(lb) else None


def aggregated_bound(view: LoadView, rules: Rules, costs: Costs, width: float, umax: float,
                     bins: int = AGG_BINS) -> float | None:
    """The LP relaxation with destinations aggregated per broker and mix class (the module
    docstring's "Any size"). ``None`` without scipy, when a movable bundle's driver is negative
    or not finite (the mix classes assume neither), or when the LP finds no point."""
    from lbctl.planner import milp

    if not milp.available():
        return None
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint
    from scipy.optimize import milp as highs
    from scipy.sparse import coo_array

    from lbctl.planner.milp import Reach, _y_choices

    n = len(view.brokers)
    if n == 0 or not view.bundles:
        return 0.0
    terms = view.terms
    usages = view.usages()
    lub = max(usages)
    owner = np.asarray(view.owner, dtype=np.int64)
    drivers = np.asarray(view.drivers, dtype=np.float64).reshape(-1, 3)
    cost = np.asarray(costs.cost, dtype=np.float64)
    movable = np.array([p is None for p in rules.pinned], dtype=bool)
    if not np.isfinite(drivers[movable]).all() or (drivers[movable] < 0).any():
        return None
    # a bundle that carries no driver changes no term: moving it only costs, so it is left out
    mov = np.flatnonzero(movable & (drivers.sum(axis=1) > 0))
    open_ = np.ones(n, dtype=bool)
    for j in rules.closed:
        open_[j] = False
    d = drivers[mov]
    if not len(mov):
        return 0.0
    scale = d.sum(axis=0)
    scale[scale <= 0] = 1.0
    ds = d / scale  # each resource in shares of its total: the classes do not depend on units
    share = ds / ds.sum(axis=1, keepdims=True)
    key = np.minimum((share * bins).astype(np.int64), bins - 1)
    code = (key[:, 0] * bins + key[:, 1]) * bins + key[:, 2]
    classes, klass = np.unique(code, return_inverse=True)
    nk = len(classes)
    lo_share = np.full((nk, 3), np.inf)
    hi_share = np.full((nk, 3), -np.inf)
    np.minimum.at(lo_share, klass, share)
    np.maximum.at(hi_share, klass, share)
    total = np.zeros((nk, 3))
    np.add.at(total, klass, ds)
    own = np.zeros((n, nk, 3))
    np.add.at(own, (owner[mov], klass), ds)

    # variables: y (one per bundle in mov), z[j,k,r] (scaled driver of class k received by j),
    # lo, hi, then one u per broker and term that may hold it above lo
    nb = len(mov)
    z0 = nb
    nz = n * nk * 3
    v_lo, v_hi = z0 + nz, z0 + nz + 1
    nvar = v_hi + 1

    def zv(j: int | Any, k: int | Any, r: int | Any) -> Any:
        return z0 + (np.asarray(j) * nk + np.asarray(k)) * 3 + np.asarray(r)

    rows_r: list[Any] = []
    rows_c: list[Any] = []
    rows_v: list[Any] = []
    lb: list[float] = []
    ub: list[float] = []

    def add(cols: Any, vals: Any, lo: float, hi: float) -> None:
        rows_r.append(np.full(len(cols), len(lb), dtype=np.int64))
        rows_c.append(np.asarray(cols, dtype=np.int64))
        rows_v.append(np.asarray(vals, dtype=np.float64))
        lb.append(lo)
        ub.append(hi)

    # conservation: what every broker receives of a class is what its bundles give away
    jj = np.arange(n)
    for k in range(nk):
        ins = np.flatnonzero(klass == k)
        for r in range(3):
            add(np.r_[zv(jj, k, r), ins], np.r_[np.ones(n), -ds[ins, r]], 0.0, 0.0)
    # a class's mix: what a broker receives of it has each share within the class's range
    for j in range(n):
        if not open_[j]:
            continue
        for k in range(nk):
            cols = zv(j, k, np.arange(3))
            for r in range(3):
                e = np.zeros(3)
                e[r] = 1.0
                if lo_share[k, r] > 0:
                    add(cols, e - lo_share[k, r], 0.0, np.inf)
                if hi_share[k, r] < 1:
                    add(cols, e - hi_share[k, r], -np.inf, 0.0)
    ordered = np.argsort(owner[mov], kind="stable")  # positions in mov, by owner
    out_at = np.searchsorted(owner[mov][ordered], np.arange(n + 1))
    nvar_u = nvar
    d_all = drivers[mov]
    for j, t in enumerate(terms):
        outs = ordered[out_at[j]:out_at[j + 1]]  # positions in mov of j's bundles
        d_out = d_all[outs]
        # every bundle it does not own may come in (a superset of any plan's), one row each:
        # Reach takes each bundle's contribution alone
        d_in = d_all[owner[mov] != j] if open_[j] else np.zeros((0, 3))
        reach = Reach(t, d_in, d_out)
        choices = reach.holding(_y_choices(t))
        expr: dict[int, tuple[Any, Any, float]] = {}
        for r in range(3):
            if t.now[r] == -math.inf:
                continue
            slope = t.per_unit[r]
            cols = np.r_[zv(j, np.arange(nk), r), outs]
            vals = np.r_[np.full(nk, slope * scale[r]), -slope * d_all[outs, r]]
            expr[r] = (cols, vals, t.now[r])
            add(np.r_[cols, v_hi], np.r_[vals, -1.0], -np.inf, -t.now[r])
            add(cols, vals, -np.inf, umax - t.now[r])
        if len(choices) == 1:
            r = choices[0]
            if r == -1:
                add([v_lo], [1.0], -np.inf, t.floor)
            else:
                cols, vals, now = expr[r]
                add(np.r_[v_lo, cols], np.r_[1.0, -vals], -np.inf, now)
        elif choices:
            us = list(range(nvar_u, nvar_u + len(choices)))
            nvar_u += len(choices)
            add(us, np.ones(len(us)), 1.0, 1.0)
            for r, u in zip(choices, us, strict=True):
                big_m = reach.big_m(r, lub)
                if r == -1:
                    add([v_lo, u], [1.0, big_m], -np.inf, big_m + t.floor)
                else:
                    cols, vals, now = expr[r]
                    add(np.r_[v_lo, u, cols], np.r_[1.0, big_m, -vals], -np.inf, big_m + now)
    add([v_hi, v_lo], [1.0, -1.0], -np.inf, width)
    nvar = nvar_u

    norm = float(cost[mov].sum()) or 1.0
    c = np.zeros(nvar)
    c[:nb] = cost[mov] / norm
    lower = np.zeros(nvar)
    upper = np.ones(nvar)
    zup = np.maximum(total[None, :, :] - own, 0.0)  # never one's own bundles back
    zup[~open_] = 0.0
    upper[z0:z0 + nz] = zup.reshape(-1)
    hi_floor = max((t.floor for t in terms if t.floor != -math.inf), default=0.0)
    lower[v_lo], upper[v_lo] = -np.inf, lub
    lower[v_hi], upper[v_hi] = hi_floor, np.inf
    a = coo_array((np.concatenate(rows_v), (np.concatenate(rows_r), np.concatenate(rows_c))),
                  shape=(len(lb), nvar)).tocsr()
    with milp.quiet_stdout():
        res = highs(c, constraints=LinearConstraint(a, np.asarray(lb), np.asarray(ub)),
                    integrality=np.zeros(nvar), bounds=Bounds(lower, upper))
    if res.status != 0 or res.fun is None:
        return None
    return max(0.0, float(res.fun)) * norm * (1 - 1e-6)


def _shed_cost(d: Any, c: Any, now: float, per_unit: float, tops: Any) -> Any:
    """Fractional-knapsack cost of taking ``now - top`` off one term of one broker, per top
    (``d``, ``c``: its movable bundles' drivers of that resource and their costs)."""
    import numpy as np

    excess = np.maximum(0.0, now - tops)
    if per_unit <= 0:
        return np.where(excess > 0, np.inf, 0.0)
    need = excess / per_unit
    ok = d > 0
    d, c = d[ok], c[ok]
    order = np.argsort(c / d, kind="stable")
    cumd = np.concatenate(([0.0], np.cumsum(d[order])))
    cumc = np.concatenate(([0.0], np.cumsum(c[order])))
    out = np.interp(need, cumd, cumc)
    return np.where(need > cumd[-1] * (1 + 1e-12), np.inf, out)
