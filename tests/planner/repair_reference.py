"""repair.py's step search as it was before perf17 (issue 30 item 1): every candidate bundle scored
through ``_violation_with`` and ``Assignment.usage_if``. Kept to check the faster step makes the
very same choices (tests/planner/test_repair_equality.py)."""

from __future__ import annotations

from lbctl.planner.assignment import EPS, Assignment, Violation
from lbctl.planner.goals import Stats, Targets
from lbctl.planner.greedy import Caps
from lbctl.planner.repair import _ENDS, Ends


def _best_step(a: Assignment, ends: Ends, on: list[list[int]], targets: Targets, caps: Caps,
               now: Violation, point: Ends | None = None,
               ceiling: Violation | None = None) -> tuple[int, int, Violation] | None:
    """The change that lowers (capacity, band, spread) most — spread, the sum of squared
    distances from the mean usage, lets the pass cross a plateau where several brokers share the
    lowest usage and one move cannot raise the minimum — ties to the cheaper change.

    With ``point`` (the ends without uncertainty) a change whose predicted usages would miss
    the goals by more than ``ceiling`` (the plan's own miss, capacity and band each) is not
    made — save one that lowers the ends' capacity miss at the price of the predicted band: a
    broker whose cost is little known, filled to the band, may land above the most loaded
    broker now, and never raising the max outranks the band (Cruise Control's goal priority:
    capacity before distribution). The predicted capacity miss never grows."""
    n = len(a.u)
    by_high = sorted(range(n), key=lambda j: (-ends.high(j, a.u[j]), j))
    by_low = sorted(range(n), key=lambda j: (ends.low(j, a.u[j]), j))
    if point is not None:
        p_high = sorted(range(n), key=lambda j: (-a.u[j], j))
        p_low = p_high[::-1]
    high = by_high[:_ENDS]
    low = by_low[:_ENDS]
    mean = sum(a.u) / n
    here = (round(now.capacity, 8), round(now.band, 8), 0.0)
    best: tuple[tuple[float, float, float], float, int, int, Violation] | None = None
    for src in high:
        for dst in low:
            # a step goes down the usage as predicted, or down the high ends (a broker whose
            # cost is little known, predicted low, may be the highest at its end)
            if dst == src or a.u[dst] >= a.u[src] and (
                    ends.high(dst, a.u[dst]) >= ends.high(src, a.u[src])):
                continue
            for i in on[src]:
                home = a.view.owner[i]
                new = i not in a.moved and dst != home
                if new and caps.block(a, i):
                    continue
                if a.refuses(i, dst) is not None:  # its owner too: it may have filled up
                    continue
                us, ud = a.usage_if(src, i, -1.0), a.usage_if(dst, i, 1.0)
                v = _violation_with(a, ends, by_high, by_low, src, us, dst, ud, targets)
                spread = ((us - mean) ** 2 + (ud - mean) ** 2
                          - (a.u[src] - mean) ** 2 - (a.u[dst] - mean) ** 2)
                key = (round(v.capacity, 8), round(v.band, 8), round(spread, 10))
                if not key < here:
                    continue
                if point is not None and ceiling is not None:
                    pv = _violation_with(a, point, p_high, p_low, src, us, dst, ud, targets)
                    if pv.capacity > ceiling.capacity + EPS or (
                            pv.band > ceiling.band + EPS
                            and not v.capacity < now.capacity - EPS):
                        continue
                c = a.costs.cost[i]
                cost = (c if new else 0.0) - (c if dst == home else 0.0)
                if best is None or (key, cost) < (best[0], best[1]):
                    best = (key, cost, i, dst, v)
    return None if best is None else (best[2], best[3], best[4])


def _violation_with(a: Assignment, ends: Ends, by_high: list[int], by_low: list[int],
                    src: int, us: float, dst: int, ud: float, targets: Targets) -> Violation:
    """The plan's violation if ``src`` went to ``us`` and ``dst`` to ``ud`` (``by_high`` /
    ``by_low``: brokers by their high / low end, highest / lowest first)."""
    if targets.target_std is not None:
        u = list(a.u)
        u[src], u[dst] = us, ud
        st = Stats.of(u)
        return Violation(max(0.0, st.max - targets.max_usage),
                         max(0.0, st.std - targets.target_std))
    hs, hd = ends.high(src, us), ends.high(dst, ud)
    ls, ld = ends.low(src, us), ends.low(dst, ud)
    hi = max(hs, hd, next((ends.high(j, a.u[j]) for j in by_high if j not in (src, dst)), hs))
    lo = min(ls, ld, next((ends.low(j, a.u[j]) for j in by_low if j not in (src, dst)), ls))
    return Violation(max(0.0, hi - targets.max_usage),
                     max(0.0, hi - lo - (targets.target_range or 0.0)))
