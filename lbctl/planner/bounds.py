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


def lower_bound(view: LoadView, rules: Rules, costs: Costs, width: float,
                umax: float, lp_pairs: int = LP_PAIRS) -> float | None:
    """No plan meeting capacity (``umax``) and a band of ``width`` costs less: the larger of the
    fractional bound and, up to ``lp_pairs`` pairs with scipy installed, the LP bound (the LP
    costs ~1.7 CPU s at 38,000 pairs, the fractional bound milliseconds)."""
    frac = fractional_bound(view, rules, costs, width, umax)
    if frac is None:
        return None
    lp = relaxation_bound(view, rules, costs, width, umax, lp_pairs)
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
                best = np.minimum(best, np.maximum(0.0, grid - now) / k * cheapest[r])
            if t.floor != -math.inf:
                best = np.where(grid <= t.floor, 0.0, best)
            best = np.where(grid <= usages[j], 0.0, best)
            gain += best
    bounds = [float(shed[0]), float(gain[-1])]
    bounds += [max(float(shed[k + 1]), float(gain[k])) for k in range(len(grid) - 1)]
    lb = min(bounds)
    return lb if math.isfinite(lb) else None


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
