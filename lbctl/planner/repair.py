"""A repair pass after the solver: the most and least loaded brokers levelled one bundle at a time.

Greedy plans for a window ``[lo, lo + width]`` chosen up front; when the band is narrow (the
target less the load model's margin on each side) a window it could not fill leaves the plan a few
points out — the brokers left at the top of the range untouched, the ones at the bottom unfed.
This pass takes the plan as it stands and, while the goals are not met, makes the single change
that brings the cluster nearest to them (:func:`lbctl.planner.assignment.better`: capacity, then
the band, then cost): a bundle from one of the most loaded brokers to one of the least loaded,
where the bundle is one the plan moved (it is re-routed, or sent back to its owner) or one the
plan left alone (a new move). A change is made only when it brings the plan nearer the goals, so
the pass never worsens the solver's plan; the constraints (:mod:`lbctl.planner.constraints`),
pinned bundles and the caps hold as for the solver. Deterministic: brokers and bundles are
tried in index order, ties go to the lower index.

The idea is Cruise Control's: goals are optimised in turn over the proposals the previous ones
left (``GoalOptimizer``), each step a single replica move that must not violate the goals already
met; here the step is scored on the goals the plan has to meet, in their order.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial

from lbctl.planner.assignment import EPS, Assignment, Violation, better
from lbctl.planner.constraints import Rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Stats, Targets
from lbctl.planner.greedy import Caps
from lbctl.planner.load import LoadView
from lbctl.planner.repair_index import Bucket, Group, Index, bound

#: the most / least loaded brokers a step looks at, each
_ENDS = 3
#: steps per broker (a plan is a few moves per broker; the pass stops when no step helps)
_STEPS_PER_BROKER = 4


def repair(view: LoadView, rules: Rules, costs: Costs, moves: tuple[tuple[int, int], ...],
           targets: Targets, caps: Caps,
           uncertainty: Sequence[float] | None = None) -> tuple[tuple[int, int], ...]:
    """``moves`` changed, one bundle at a time, while that brings the plan nearer ``targets``
    (module docstring); ``moves`` itself when no change helps.

    ``uncertainty`` (per broker, a share of its predicted change) makes the goals robust: a
    broker predicted at ``u`` after a change ``d`` may be anywhere in ``u ± uncertainty · |d|``
    (a slope known to 10 % misses a 100-point change by 10 points), and the band and the cap
    are checked on those ends — a plan that loads a broker whose cost is little known is
    steered toward brokers whose cost is known."""
    a = Assignment(view, rules, costs)
    a.apply(moves)
    ends = Ends(a, uncertainty)
    v = ends.violation(targets)
    if v.ok or len(a.u) < 2:
        return moves
    # robust: the plan as predicted may not get worse (the ends alone would trade it away)
    point = None if uncertainty is None else Ends(a, None)
    ceiling = None if point is None else point.violation(targets)
    on: list[list[int]] = [[] for _ in view.brokers]  # movable bundles by current broker
    for i, why in enumerate(rules.pinned):
        if why is None:
            on[a.owner[i]].append(i)
    start = v
    index = Index(on, view.drivers, costs.cost, view.topics)
    for _ in range(_STEPS_PER_BROKER * len(a.u) + 20):
        step = _best_step(a, ends, on, targets, caps, v, point, ceiling, index)
        if step is None:
            break
        i, dst, v = step
        src = a.owner[i]
        relocate(a, on, i, dst)
        index.move(i, src, dst)
        if v.ok:
            break
    return tuple(a.moves()) if better(v, a.cost, start, math.inf) else moves


class Ends:
    """Each broker's highest and lowest usage the model's uncertainty allows.

    A broker's usage is known at two points: now (its report, weighed against its fit) and at
    no traffic (its idle usage, pooled over the fleet: :meth:`LoadModel._base_priors`). Its
    slope's error grows with the distance from the nearer of the two: a broker shedding from
    200 % to 50 % is off by its slope's error times the 45 points it keeps above idle, not
    times the 150 it sheds (measured on ``benchmarks/plans_on_hardware.py``, seeds 1-20,
    30-120 brokers: errors over slope error times change, sd 0.55-0.73 for brokers that only
    shed, 1.0 for those that only take; over the nearer distance 0.75-0.83 and 1.0)."""

    def __init__(self, a: Assignment, uncertainty: Sequence[float] | None):
        self.a = a
        self.start = [t.usage() for t in a.terms]
        self.unc = list(uncertainty) if uncertainty is not None else [0.0] * len(a.u)
        carried = [[0.0, 0.0, 0.0] for _ in a.u]
        if uncertainty is not None:
            for i, o in enumerate(a.view.owner):
                d = a.view.drivers[i]
                c = carried[o]
                c[0] -= d[0]
                c[1] -= d[1]
                c[2] -= d[2]
        #: each broker's usage carrying nothing
        self.idle = [t.usage(c) for t, c in zip(a.terms, carried, strict=True)]

    def spread(self, j: int, u: float) -> float:
        return self.unc[j] * min(abs(u - self.start[j]), max(0.0, u - self.idle[j]))

    def high(self, j: int, u: float) -> float:
        return u + self.spread(j, u)

    def low(self, j: int, u: float) -> float:
        return u - self.spread(j, u)

    def violation(self, targets: Targets) -> Violation:
        if targets.target_std is not None:
            return self.a.violation(targets)
        u = self.a.u
        hi = max(self.high(j, x) for j, x in enumerate(u))
        lo = min(self.low(j, x) for j, x in enumerate(u))
        return Violation(max(0.0, hi - targets.max_usage),
                         max(0.0, hi - lo - (targets.target_range or 0.0)))


def _best_step(a: Assignment, ends: Ends, on: list[list[int]], targets: Targets, caps: Caps,
               now: Violation, point: Ends | None = None,
               ceiling: Violation | None = None,
               index: Index | None = None) -> tuple[int, int, Violation] | None:
    """The change that lowers (capacity, band, spread) most — spread, the sum of squared
    distances from the mean usage, lets the pass cross a plateau where several brokers share the
    lowest usage and one move cannot raise the minimum — ties to the cheaper change.

    With ``point`` (the ends without uncertainty) a change whose predicted usages would miss
    the goals by more than ``ceiling`` (the plan's own miss, capacity and band each) is not
    made — save one that lowers the ends' capacity miss at the price of the predicted band: a
    broker whose cost is little known, filled to the band, may land above the most loaded
    broker now, and never raising the max outranks the band (Cruise Control's goal priority:
    capacity before distribution). The predicted capacity miss never grows.

    The choice is the least ``(key, cost, pair, bundle)`` over the candidates that pass the
    filters (pairs in the order tried, bundles by index). With ``index``
    (:mod:`lbctl.planner.repair_index`) a source carrying many bundles is read a bucket at a
    time, best bound first, and the buckets that cannot hold the choice are skipped (the proof
    is that module's docstring); the band goal only — the standard deviation reads them all."""
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
    here_head = here[:2]
    best: tuple[tuple[float, float, float], float, int, int, int, Violation] | None = None
    std = targets.target_std is not None
    max_usage = targets.max_usage
    width = targets.target_range or 0.0
    u = a.u
    owner = a.view.owner
    moved = a.moved
    cost_of = a.costs.cost
    drivers = a.view.drivers
    unc, start, idle = ends.unc, ends.start, ends.idle
    rank = -1
    for src in high:
        for dst in low:
            rank += 1
            # a step goes down the usage as predicted, or down the high ends (a broker whose
            # cost is little known, predicted low, may be the highest at its end)
            if dst == src or u[dst] >= u[src] and (
                    ends.high(dst, u[dst]) >= ends.high(src, u[src])):
                continue
            # per pair, not per bundle: the ends of the brokers other than src and dst (the
            # bundle only moves those two), and the two brokers' spread terms now
            pair = (src, dst)
            other_hi = next((ends.high(j, u[j]) for j in by_high if j not in pair), None)
            other_lo = next((ends.low(j, u[j]) for j in by_low if j not in pair), None)
            if point is not None:
                p_hi = next((point.high(j, u[j]) for j in p_high if j not in pair), None)
                p_lo = next((point.low(j, u[j]) for j in p_low if j not in pair), None)
            now_s, now_d = (u[src] - mean) ** 2, (u[dst] - mean) ** 2
            unc_s, start_s, idle_s = unc[src], start[src], idle[src]
            unc_d, start_d, idle_d = unc[dst], start[dst], idle[dst]
            # Assignment.usage_if of both brokers, its terms read once per pair
            t_s, t_d = a.terms[src], a.terms[dst]
            floor_s, floor_d = t_s.floor, t_d.floor
            res_s = [r for r in range(3) if t_s.now[r] != -math.inf]
            res_d = [r for r in range(3) if t_d.now[r] != -math.inf]
            leave = [(t_s.now[r], t_s.per_unit[r], a.delta[src][r]) for r in range(3)
                     if t_s.now[r] != -math.inf]
            come = [(t_d.now[r], t_d.per_unit[r], a.delta[dst][r]) for r in range(3)
                    if t_d.now[r] != -math.inf]
            order: Iterable[int] = on[src]
            cut = None if std or index is None else index.of(src)
            if cut is not None and _finite(
                    floor_s, floor_d, *(x for t in (*leave, *come) for x in t), unc_s, start_s,
                    idle_s, unc_d, start_d, idle_d, mean, now_s, now_d, max_usage, width,
                    0.0 if other_hi is None else other_hi,
                    0.0 if other_lo is None else other_lo):
                sides = ((floor_s, tuple(leave), res_s, unc_s, start_s, idle_s),
                         (floor_d, tuple(come), res_d, unc_d, start_d, idle_d))
                buckets, tail = cut
                assert index is not None  # (cut is index's)
                # late binding wanted: each bucket is weighed against the best found by then
                order = _bucketed(
                    partial(bound, s=sides[0], d=sides[1], other_hi=other_hi,
                            other_lo=other_lo, max_usage=max_usage, width=width, mean=mean,
                            now_s=now_s, now_d=now_d),
                    index.groups[src], buckets, tail, here, lambda: best,  # noqa: B023
                    a.rules.topics_limit - a.topics[dst])
            for i in order:
                home = owner[i]
                new = i not in moved and dst != home
                if new and caps.block(a, i):
                    continue
                if a.refuses(i, dst) is not None:  # its owner too: it may have filled up
                    continue
                d = drivers[i]
                us = floor_s
                for r, (x0, per, x) in zip(res_s, leave, strict=True):
                    w = x0 + per * (x - d[r])
                    if w > us:
                        us = w
                ud = floor_d
                for r, (x0, per, x) in zip(res_d, come, strict=True):
                    w = x0 + per * (x + d[r])
                    if w > ud:
                        ud = w
                if std:
                    v = _violation_with(a, ends, by_high, by_low, src, us, dst, ud, targets)
                    cap, band = v.capacity, v.band
                else:  # _violation_with's sum, with the other brokers' ends taken per pair
                    sp_s = unc_s * min(abs(us - start_s), max(0.0, us - idle_s))
                    sp_d = unc_d * min(abs(ud - start_d), max(0.0, ud - idle_d))
                    hs = us + sp_s
                    ls = us - sp_s
                    hi = max(hs, ud + sp_d, hs if other_hi is None else other_hi)
                    lo = min(ls, ud - sp_d, ls if other_lo is None else other_lo)
                    cap, band = max(0.0, hi - max_usage), max(0.0, hi - lo - width)
                # keys compare capacity and band first: a candidate already behind on those,
                # against the plan or the best so far, needs no spread
                head = (round(cap, 8), round(band, 8))
                if head > here_head or best is not None and head > best[0][:2]:
                    continue
                spread = (us - mean) ** 2 + (ud - mean) ** 2 - now_s - now_d
                key = (*head, round(spread, 10))
                if not key < here:
                    continue
                c = cost_of[i]
                cost = (c if new else 0.0) - (c if dst == home else 0.0)
                if best is not None and not (key, cost, rank, i) < best[:4]:
                    continue
                if point is not None and ceiling is not None:
                    if std:
                        pv = _violation_with(a, point, p_high, p_low, src, us, dst, ud,
                                             targets)
                        p_cap, p_band = pv.capacity, pv.band
                    else:
                        hs, hd = point.high(src, us), point.high(dst, ud)
                        ls, ld = point.low(src, us), point.low(dst, ud)
                        hi = max(hs, hd, hs if p_hi is None else p_hi)
                        lo = min(ls, ld, ls if p_lo is None else p_lo)
                        p_cap, p_band = max(0.0, hi - max_usage), max(0.0, hi - lo - width)
                    if p_cap > ceiling.capacity + EPS or (
                            p_band > ceiling.band + EPS
                            and not cap < now.capacity - EPS):
                        continue
                best = (key, cost, rank, i, dst, Violation(cap, band))
    return None if best is None else (best[3], best[4], best[5])


def _finite(*xs: float) -> bool:
    return all(math.isfinite(x) for x in xs)


def _bucketed(weigh: Callable[[Bucket | Group], tuple[float, float, float]],
              groups: list[Group], buckets: list[Bucket], tail: list[int],
              here: tuple[float, float, float],
              best: Callable[[], tuple[tuple[float, float, float], float, int, int, int,
                                       Violation] | None],
              room: int) -> Iterator[int]:
    """The bundles of a source's tail, then of its buckets in order of (bound, least cost,
    bucket) — ``weigh`` gives a bound — up to the first bucket that cannot hold a change
    better than the plan (``here``) or than ``best()``, the best change found so far; of a
    bucket only the bundles of at most ``room`` topics (the destination's room under the topic
    limit: the others it refuses).

    The buckets are weighed a :class:`~lbctl.planner.repair_index.Group` at a time, when the
    group comes up in a heap of groups and weighed buckets: a group's (bound, least cost) is no
    higher than its buckets', so every bucket is weighed before one with a higher key is
    taken, and the buckets come in the order sorting them all would give (ties: the group
    first, then the lower bucket); the group that fails the stop above ends it as its first
    bucket would have."""
    yield from list(tail)
    heap: list[tuple[tuple[float, float, float], float, int, int]] = [
        (weigh(g), -g.cmax, -1, k) for k, g in enumerate(groups)]
    heapq.heapify(heap)
    while heap:
        lb, c, kind, k = heapq.heappop(heap)
        if not lb < here:
            return
        b = best()
        if b is not None and (lb, c) > (b[0], b[1]):
            return
        if kind < 0:
            for m in groups[k].members:
                bk = buckets[m]
                if bk.ids:
                    heapq.heappush(heap, (weigh(bk), -bk.cmax, 0, m))
            continue
        bk = buckets[k]
        yield from bk.ids[:bisect_right(bk.tops, room)]


def relocate(a: Assignment, on: list[list[int]], i: int, dst: int) -> None:
    """Bundle ``i`` to broker ``dst`` in the plan (a move, a re-route of its move, or its move
    undone when ``dst`` is its owner now), and in ``on`` (each broker's bundles a step may take,
    in index order: the passes' steps are then the same whatever the order bundles came in)."""
    src = a.owner[i]
    if i in a.moved:
        a.undo(i)
    if dst != a.view.owner[i]:
        a.move(i, dst)
    on[src].remove(i)
    on[dst].append(i)
    on[dst].sort()


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
