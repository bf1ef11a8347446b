"""A lower bound on the cost of any plan that meets capacity and the band: the greedy plan's gap.

For a window ``[lo, lo + width]`` every broker above it must send away enough driver to bring each
weighted term down to ``hi`` (at best its cheapest bundles per unit of that driver, taken
fractionally), and every broker below it must receive enough to lift one term to ``lo`` (at best
at the cluster's cheapest cost per unit of driver). A bundle leaves one broker and reaches one, so
the larger of the two sums bounds that window's plans from below. The bound over all windows
is the least of those; windows are scanned on a grid, pairing each interval's smallest shedding
(at its top) with its smallest receiving (at its bottom), which keeps the bound valid between grid
points. Pinned bundles never count as movable. ``None`` when no window can be reached.
"""

from __future__ import annotations

import math
from typing import Any

from lbctl.planner.constraints import Rules
from lbctl.planner.cost import Costs
from lbctl.planner.load import LoadView

_STEPS = 100


def lower_bound(view: LoadView, rules: Rules, costs: Costs, width: float,
                umax: float) -> float | None:
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
