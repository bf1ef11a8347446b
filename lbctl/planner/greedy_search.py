"""The searches the greedy planner runs per move, without scanning a broker's every bundle.

A broker may own most of the cluster (one of 20 brokers with 50,000 of 60,000 bundles): a step
that tried each of its bundles against each receiver made the plan quadratic in bundles (issue
30: > 600 s where ``recommend`` takes 0.67 s). The two searches here find *the same* bundle the
exhaustive scans found — same comparison, same tie-breaks — while looking at a few:

* :func:`best_levelling_move` — the min-max levelling step (:func:`lbctl.planner.greedy.level`):
  the bundle of the most loaded broker, and the receiver among the least loaded few, that give
  the lowest peak of the two (then the cheaper bundle, then the earlier one). It walks each
  resource's bundles sorted by their driver outward from where the donor's falling term meets
  the receivers' rising one — every walk visits bundles in nondecreasing order of a lower bound
  of their peak — and stops once every walk's next bound is above the best peak found (Fagin's
  threshold algorithm over the per-resource orders).
* :class:`Present` — which positions of a broker's bundle list are still on it, with the nearest
  one below a position in O(log n) (a Fenwick tree), so local search's "the next cheaper bundle of
  the same source" no longer walks past every bundle already moved.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from lbctl.planner.assignment import EPS, Assignment

#: (peak, cost, bundle, receiver's rank) of the best levelling move: the order the exhaustive
#: scan's ``(peak, cost) <`` comparison over bundles in (cost, index) order gives
LevelKey = tuple[float, float, int, int]
#: one broker's movable, unmoved bundles sorted by a resource's driver: (drivers, bundles)
Sorted = tuple[list[float], list[int]]


class Present:
    """Positions ``0 … n-1`` each present or not; the nearest present position below ``x`` in
    O(log n). A Fenwick tree of counts: a prefix count, then the position of that rank."""

    __slots__ = ("_n", "_tree", "_top")

    def __init__(self, present: Sequence[bool]):
        n = len(present)
        tree = [0] * (n + 1)
        for x, p in enumerate(present):
            if p:
                tree[x + 1] += 1
        for k in range(1, n + 1):  # linear build: each node adds itself to its parent
            parent = k + (k & -k)
            if parent <= n:
                tree[parent] += tree[k]
        self._n = n
        self._tree = tree
        self._top = 1 << (n.bit_length() - 1) if n else 0

    def set(self, x: int, present: bool) -> None:
        """Mark position ``x`` (its current state must be the opposite)."""
        k, v, tree, n = x + 1, 1 if present else -1, self._tree, self._n
        while k <= n:
            tree[k] += v
            k += k & -k

    def below(self, x: int) -> int:
        """The largest present position ``< x``, or -1."""
        tree = self._tree
        count, k = 0, x
        while k > 0:
            count += tree[k]
            k -= k & -k
        if count == 0:
            return -1
        pos, step = 0, self._top  # the count-th present position, by binary lifting
        while step:
            nxt = pos + step
            if nxt <= self._n and tree[nxt] < count:
                pos = nxt
                count -= tree[nxt]
            step >>= 1
        return pos


class _Bound:
    """A lower bound, as a function of a bundle's driver ``x`` of resource ``r``, of the peak
    ``max(donor after, receiver after)`` of moving it from ``j`` to any of ``receivers``:
    ``max(left(x), right(x))`` with ``left = max(floor_j, term_jr)`` (falls with ``x``) and
    ``right = min_d max(floor_d, term_dr)`` (rises with ``x``; a receiver's term is left out when
    its slope is negative). A walk outward from where they cross meets bundles in nondecreasing
    bound. Each term is computed with the very expression :meth:`Assignment.usage_if` uses, and
    floating-point rounding is monotone, so the bound never exceeds the exact peak and the
    order holds exactly."""

    __slots__ = ("dj", "floor_j", "k", "now", "recv")

    def __init__(self, a: Assignment, j: int, r: int, receivers: Sequence[int]):
        t = a.terms[j]
        self.now, self.k, self.dj, self.floor_j = t.now[r], t.per_unit[r], a.delta[j][r], t.floor
        self.recv: list[tuple[float, float, float, float, bool]] = []
        for d in receivers:
            td = a.terms[d]
            nd, kd = td.now[r], td.per_unit[r]
            self.recv.append((nd, kd, a.delta[d][r], td.floor, nd != -math.inf and kd >= 0))

    @staticmethod
    def usable(a: Assignment, j: int, r: int) -> bool:
        """Whether resource ``r`` lowers ``j``'s usage as bundles leave (a term, a slope > 0)."""
        t = a.terms[j]
        return t.now[r] != -math.inf and t.per_unit[r] > 0

    def left(self, x: float) -> float:
        v = self.now + self.k * (self.dj + -1.0 * x)
        return self.floor_j if self.floor_j > v else v

    def right(self, x: float) -> float:
        right = math.inf
        for nd, kd, dd, fd, rises in self.recv:
            w = fd
            if rises:
                u = nd + kd * (dd + 1.0 * x)
                if u > w:
                    w = u
            if w < right:
                right = w
        return right

    def __call__(self, x: float) -> float:
        v, w = self.left(x), self.right(x)
        return v if v > w else w


class _Walk:
    """One resource's bundles from where the bound is lowest outward, in nondecreasing bound."""

    __slots__ = ("bound", "ds", "ids", "left", "lv", "right", "rv")

    def __init__(self, ds: list[float], ids: list[int], bound: _Bound):
        self.ds, self.ids, self.bound = ds, ids, bound
        lo, hi = 0, len(ds)  # the first index where the rising side reaches the falling one
        while lo < hi:
            mid = (lo + hi) // 2
            if bound.right(ds[mid]) >= bound.left(ds[mid]):
                hi = mid
            else:
                lo = mid + 1
        self.left, self.right = lo - 1, lo
        self.lv = bound(ds[self.left]) if self.left >= 0 else math.inf
        self.rv = bound(ds[self.right]) if self.right < len(ds) else math.inf

    def next_bound(self) -> float:
        return self.lv if self.lv < self.rv else self.rv

    def pop(self) -> int:
        """The next bundle (the walk must not be exhausted: ``next_bound() < inf``)."""
        if self.lv < self.rv:
            i = self.ids[self.left]
            self.left -= 1
            self.lv = self.bound(self.ds[self.left]) if self.left >= 0 else math.inf
        else:
            i = self.ids[self.right]
            self.right += 1
            self.rv = (self.bound(self.ds[self.right]) if self.right < len(self.ds)
                       else math.inf)
        return i


def best_levelling_move(a: Assignment, j: int, receivers: Sequence[int],
                        sorted_by: Callable[[int], Sorted], candidates: Sequence[int],
                        capped: Callable[[int], bool]) -> tuple[int, int] | None:
    """The move (bundle, receiver) of one levelling step from the most loaded broker ``j``:
    among its unmoved, uncapped bundles and ``receivers`` (in their order), the lowest peak
    ``max(j after, receiver after)`` under ``j``'s usage now, then the cheaper bundle, then the
    one earlier in ``candidates`` (sorted by cost then index), then the earlier receiver; a
    receiver that refuses the bundle does not count. ``sorted_by(r)`` is ``j``'s bundles sorted by
    their driver of resource ``r`` (:meth:`lbctl.planner.greedy._Fill._by_driver`)."""
    if not receivers:
        return None
    top = a.u[j]
    best: LevelKey | None = None
    best_d = -1
    cost = a.costs.cost
    moved = a.moved

    def consider(i: int) -> None:
        nonlocal best, best_d
        if i in moved or capped(i):
            return
        us = a.usage_if(j, i, -1.0)
        for rank, d in enumerate(receivers):
            peak = max(us, a.usage_if(d, i, 1.0))
            if peak < top - EPS:
                key = (peak, cost[i], i, rank)
                if (best is None or key < best) and a.refuses(i, d) is None:
                    best, best_d = key, d

    walks = []
    for r in range(3):
        if _Bound.usable(a, j, r):
            ds, ids = sorted_by(r)
            walks.append(_Walk(ds, ids, _Bound(a, j, r, receivers)))
    if not walks:  # no resource lowers j's usage: every bundle (none will qualify, as before)
        for i in candidates:
            consider(i)
    else:
        seen: set[int] = set()
        while True:
            threshold = max(w.next_bound() for w in walks)  # no unseen bundle peaks lower
            if threshold == math.inf or threshold >= top - EPS or (
                    best is not None and threshold > best[0]):
                break
            for w in walks:
                if w.next_bound() == math.inf:
                    continue
                i = w.pop()
                if i not in seen:
                    seen.add(i)
                    consider(i)
    return None if best is None else (best[2], best_d)


#: work units (usage evaluations, bundles sorted) one window's :func:`exchange` may spend: a
#: count, not a clock, so the plan stays a function of the input
EXCHANGE_WORK = 200_000
_EX_BUNDLES = 8  # bundles of the extreme broker tried per step (the most relief first)
_EX_PARTNERS = 16  # partner brokers tried per bundle
_EX_NEAR = 6  # partner bundles tried per (bundle, partner), around the balancing one


class _Exchange:
    """The state of one :func:`exchange` pass: which movable bundles are on each broker now,
    each broker's sorted by a resource's driver (built when asked, dropped when it changes),
    and the work left."""

    def __init__(self, a: Assignment, cands: Sequence[Sequence[int]], work: int):
        self.a = a
        self.work = work
        self.on: list[set[int]] = [{i for i in lst if i not in a.moved} for lst in cands]
        for i, d in a.moved.items():
            self.on[d].add(i)
        self._sorted: dict[tuple[int, int], Sorted] = {}

    def by_driver(self, j: int, r: int) -> Sorted:
        hit = self._sorted.get((j, r))
        if hit is None:
            drivers = self.a.view.drivers
            items = sorted((drivers[i][r], i) for i in self.on[j])
            self.work -= len(items) + 1
            hit = self._sorted[(j, r)] = ([x for x, _ in items], [i for _, i in items])
        return hit

    def place(self, i: int, d: int) -> None:
        """Bundle ``i`` (movable) to broker ``d``: a move, a move sent elsewhere, or undone."""
        a = self.a
        s = a.owner[i]
        if s == d:
            return
        if i in a.moved:
            a.undo(i)
        if a.owner[i] != d:
            a.move(i, d)
        self.on[s].discard(i)
        self.on[d].add(i)
        for r in range(3):
            self._sorted.pop((s, r), None)
            self._sorted.pop((d, r), None)

    def added_cost(self, i: int, d: int) -> float:
        """What sending ``i`` to ``d`` adds to the plan's cost (negative: a move undone)."""
        a = self.a
        c = a.costs.cost[i]
        return (c if a.view.owner[i] != d else 0.0) - (c if i in a.moved else 0.0)

    def heaviest(self, j: int) -> int:
        """The resource of broker ``j``'s heaviest term now (0 when none follows traffic)."""
        return max(self.a.heaviest_term(j), 0)

    def near(self, giver: int, taker: int, into_giver: int, out_taker: int) -> list[int]:
        """Up to :data:`_EX_NEAR` bundles of ``giver`` (not ``out_taker``'s partner), around the
        one that leaves ``giver`` (receiving ``into_giver``) and ``taker`` (giving ``out_taker``)
        level: bisection over ``giver``'s bundles sorted by its heaviest resource's driver."""
        a = self.a
        ds, ids = self.by_driver(giver, self.heaviest(giver))
        lo, hi = 0, len(ids)
        while lo < hi:  # the first bundle with which the giver ends no higher than the taker
            mid = (lo + hi) // 2
            k = ids[mid]
            self.work -= 2
            if a.usage_swap(giver, k, into_giver) <= a.usage_swap(taker, out_taker, k):
                hi = mid
            else:
                lo = mid + 1
        half = _EX_NEAR // 2
        return ids[max(lo - half, 0):lo + half]


def exchange(a: Assignment, cands: Sequence[Sequence[int]], width: float, umax: float,
             within_caps: Callable[[], bool], work: int = EXCHANGE_WORK) -> None:
    """Swaps and relocations that narrow the range where single moves from the greedy's fill
    left it too wide (issue 29: on mixed 8/16/32-core hosts an 8-core broker keeps a bundle of 25
    points it would weigh 6 on a 32-core host; the fill cannot move it, as its broker would drop
    below the window, so the fleet's max stays pinned).

    Each step takes the most loaded broker (the lower index on a tie) and looks for the pair of
    moves that lowers it most: one of its bundles (the :data:`_EX_BUNDLES` giving most relief,
    then by index) to a partner (the :data:`_EX_PARTNERS` where the bundle weighs least for the
    relief it gives, then by usage and index), and nothing or one of the partner's bundles (of
    :data:`_EX_NEAR` around the one that levels the two) back. Failing that, it raises the least
    loaded broker the same way: a bundle from one of the most loaded brokers, nothing or one of
    its own bundles back. A step is made only when the pair ends strictly inside the range
    (the max lower, or the min higher, the other end not passed), each broker under the cap or
    no higher than it was, every bundle's destination agreeing (``refuses``), within the move
    and throughput caps; pinned bundles are not candidates. Ties: (peak, added cost, bundle,
    partner, bundle back). Cut at ``work`` units, never a clock."""
    n = len(a.u)
    if n < 2 or a.violation_free(width, umax):
        return
    order = list(a.moved)
    ex = _Exchange(a, cands, work)
    made: list[tuple[int, int]] = []  # (bundle, its broker before), in the order placed
    while ex.work > 0 and not a.violation_free(width, umax):
        step = _lower_top(ex, umax) or _raise_bottom(ex, umax)
        if step is None:
            break
        made.extend((x, a.owner[x]) for x, _ in step)
        for x, d in step:
            ex.place(x, d)
        if not within_caps():
            break
    if not within_caps() or not a.violation_free(width, umax):
        # short of the band the swaps are not kept: a plan that misses anyway is not made
        # larger (the closed loop's plans on a misreported cluster got worse with them)
        for x, d in reversed(made):
            ex.place(x, d)
        if made:
            a.moved = {i: a.moved[i] for i in order}  # the plan as it was, its moves in order


_Step = list[tuple[int, int]]


def _fits(a: Assignment, j: int, u: float, umax: float) -> bool:
    """Broker ``j`` may end at ``u``: under the cap, or no higher than it is."""
    return u <= umax + EPS or u <= a.u[j] + EPS


def _pair(ex: _Exchange, e: int, d: int, out_e: int, out_d: int) -> tuple[float, float] | None:
    """The usages of ``e`` and ``d`` after ``out_e`` goes to ``d`` and ``out_d`` to ``e``
    (either -1: none), or ``None`` when a destination refuses its bundle."""
    a = ex.a
    ex.work -= 2
    if out_e >= 0 and a.owner[out_e] != e:
        return None
    if (out_e >= 0 and a.refuses(out_e, d) is not None) or (
            out_d >= 0 and a.refuses(out_d, e) is not None):
        return None
    return a.usage_swap(e, out_e, out_d), a.usage_swap(d, out_d, out_e)


def _lower_top(ex: _Exchange, umax: float) -> _Step | None:
    a = ex.a
    n = len(a.u)
    e = max(range(n), key=lambda j: (a.u[j], -j))
    top, bottom = a.u[e], min(a.u)
    gives = []
    for i in ex.on[e]:
        ex.work -= 1
        gives.append((a.usage_if(e, i, -1.0) - top, i))
    gives.sort()
    best: tuple[float, float, int, int, int] | None = None
    for relief, i in gives[:_EX_BUNDLES]:
        if relief >= -EPS or ex.work <= 0:
            break
        ranked = []
        for d in range(n):
            if d == e or a.u[d] >= top - EPS:
                continue
            ex.work -= 1
            ranked.append(((a.usage_if(d, i, 1.0) - a.u[d]) / -relief, a.u[d], d))
        ranked.sort()
        for _, _, d in ranked[:_EX_PARTNERS]:
            for k in [-1, *ex.near(d, e, i, i)]:
                got = _pair(ex, e, d, i, k)
                if got is None:
                    continue
                ue, ud = got
                peak = max(ue, ud)
                if peak >= top - EPS or min(ue, ud) < bottom - EPS or not (
                        _fits(a, e, ue, umax) and _fits(a, d, ud, umax)):
                    continue
                key = (peak, ex.added_cost(i, d) + (ex.added_cost(k, e) if k >= 0 else 0.0),
                       i, d, k)
                if best is None or key < best:
                    best = key
    if best is None:
        return None
    _, _, i, d, k = best
    return [(i, d)] + ([(k, e)] if k >= 0 else [])


def _raise_bottom(ex: _Exchange, umax: float) -> _Step | None:
    a = ex.a
    n = len(a.u)
    e = min(range(n), key=lambda j: (a.u[j], j))
    low, top = a.u[e], max(a.u)
    best: tuple[float, float, int, int, int] | None = None
    donors = sorted(range(n), key=lambda j: (-a.u[j], j))[:_EX_PARTNERS]
    ex.work -= n
    for d in donors:
        if a.u[d] <= low + EPS or ex.work <= 0:
            break
        for i in ex.near(d, e, -1, -1):
            for k in [-1, *ex.near(e, d, i, i)]:
                got = _pair(ex, e, d, k, i)
                if got is None:
                    continue
                ue, ud = got
                if min(ue, ud) <= low + EPS or max(ue, ud) > top + EPS or not (
                        _fits(a, e, ue, umax) and _fits(a, d, ud, umax)):
                    continue
                key = (-min(ue, ud), ex.added_cost(i, e)
                       + (ex.added_cost(k, d) if k >= 0 else 0.0), i, d, k)
                if best is None or key < best:
                    best = key
    if best is None:
        return None
    _, _, i, d, k = best
    return [(i, e)] + ([(k, d)] if k >= 0 else [])
