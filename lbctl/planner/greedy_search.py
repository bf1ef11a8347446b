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
