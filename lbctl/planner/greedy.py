"""Greedy + local search: a plan for any cluster size, in time near-linear in the moves it makes.

The band goal says every broker's usage must end inside some window ``[lo, lo + width]``
(``width`` = the target range). For a chosen window:

1. **Shed.** Brokers above the window, most loaded first, give bundles away: the cheapest bundle
   whose departure brings the broker inside the window (without dropping it below), else the one
   that takes the most off; each to the least loaded broker that may take it (constraints) and
   stays inside the window with it.
2. **Fill.** Brokers below the window, least loaded first, take bundles from the most loaded
   brokers that can spare them (staying inside the window): the cheapest bundle that lifts the
   receiver into the window, else the one that lifts it most.
3. **Local search.** Moves are undone, most expensive first, where the band holds without them;
   then each move is replaced by a cheaper bundle of the same source where the band still holds.

Windows are ranked by an estimate of the traffic they need moved (the excess above the window
and the deficit below it, in bytes/s at each broker's own cost per point of usage); the best few
are planned and the cheapest plan that meets the goals wins (else the one nearest to them).
When no window can be reached, two more candidates: one planning for capacity alone, and a
min-max levelling (the most loaded broker gives to the least loaded while that lowers the peak).
:func:`solve_hosted` is a second pass for when none meets the goals because a bundle is too big
to share a broker (:class:`Hosts`); :func:`lbctl.planner.solve.solve` runs it.

A broker's bundles are kept sorted by the driver of its heaviest resource, so a step finds the
smallest bundle covering what the broker must shed by bisection rather than by trying them all.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Generator, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from typing import Any

from lbctl.planner.assignment import EPS, Assignment, Violation, better
from lbctl.planner.constraints import Rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy_search import Present, best_levelling_move, exchange
from lbctl.planner.load import LoadView

_DEST_TRIES = 48  # destinations looked at per bundle before giving up on it
_BUNDLE_TRIES = 8  # bundles tried per broker step
_NEAR = 8  # covering bundles compared by cost (the smallest ones)
_DONORS = 4  # donors scanned per fill step (the first that can lift the receiver wins)
_SWAPS = 3  # cheaper bundles tried per move in local search
_HOSTED = 16  # heaviest bundles per resource driver that may need a broker of their own
#: swaps (:func:`~lbctl.planner.greedy_search.exchange`) are tried on clusters of more (bundle,
#: destination) pairs than this: the greedy-only regime of ``benchmarks/plans_on_hardware.py``
#: n = 120 (171,000 pairs) and 300 (1.08 M), where they were measured (in band in truth 30 ->
#: 55 % at n = 120). Not below: on a 5-broker closed loop (``tests/planner/test_planner_cycle.py``,
#: brokers back from a restart) a swapped plan the robust repair then judged too uncertain left
#: the range at 40 points where the single-move plan reached the band a cycle later
SWAP_PAIRS = 100_000


@dataclass(frozen=True, slots=True)
class Caps:
    max_moves: int | None = None
    max_throughput: float | None = None

    def block(self, a: Assignment, i: int) -> bool:
        """Whether moving bundle ``i`` next in plan ``a`` would pass ``--max-moves`` or
        ``--max-throughput`` (every pass of the planner asks this one question)."""
        if self.max_moves is not None and len(a.moved) >= self.max_moves:
            return True
        return (self.max_throughput is not None
                and a.throughput + a.view.throughput[i] > self.max_throughput + EPS)


def candidates_by_broker(view: LoadView, rules: Rules, costs: Costs) -> list[list[int]]:
    """Each broker's movable bundles, cheapest first."""
    out: list[list[int]] = [[] for _ in view.brokers]
    for i, why in enumerate(rules.pinned):
        if why is None:
            out[view.owner[i]].append(i)
    for lst in out:
        lst.sort(key=lambda i: (costs.cost[i], i))
    return out


#: a pass's broker heaps are rebuilt without their stale entries (:meth:`_Fill._compact`) when
#: they hold more than this many entries per broker (with 16 brokers' worth of room)
HEAP_SLACK = 4
#: bundles of one broker from which :meth:`_Fill._without` computes their usages with numpy (the
#: same float operations as :meth:`Assignment.usage_if`; below it, a loop is cheaper)
VECTOR_MIN = 256


class Orders:
    """What every pass of one solve sorts and reads the same way, made once for them all: each
    broker's movable bundles sorted by their driver of a resource (:meth:`_Fill._by_driver`;
    a pass takes a copy less the bundles it has moved) and the drivers as a numpy array.

    At 60,000 bundles with one broker owning 50,000 (``benchmarks/growth.py``'s deep broker),
    every pass — each window's shed-and-fill, the capacity-only plan, the levelling, the hosted
    pass — sorted that broker's 50,000 bundles again, and :meth:`_Fill._big_first` called
    ``usage_if`` on each of them one at a time. Filtering a sorted list gives the list sorting
    the filtered bundles would give because ``(driver, bundle)`` pairs are totally ordered —
    unless a driver is NaN (no order): such a broker is sorted per pass, as before."""

    def __init__(self, view: LoadView, cands: Sequence[Sequence[int]]):
        self.view = view
        self.cands = cands
        self._sorted: dict[tuple[int, int], tuple[list[float], list[int]] | None] = {}
        self._array: Any = None

    def by_driver(self, j: int, r: int) -> tuple[list[float], list[int]] | None:
        """Broker ``j``'s movable bundles sorted by (driver of ``r``, bundle), all of them
        (None: a driver is NaN; the caller sorts its own)."""
        key = (j, r)
        if key not in self._sorted:
            drivers = self.view.drivers
            items = sorted((drivers[i][r], i) for i in self.cands[j])
            ds = [d for d, _ in items]
            nan = any(map(math.isnan, ds))
            self._sorted[key] = None if nan else (ds, [i for _, i in items])
        return self._sorted[key]

    def drivers(self) -> Any:
        """Every bundle's drivers, an (n, 3) float64 array."""
        if self._array is None:
            import numpy as np

            self._array = np.array(self.view.drivers, dtype=np.float64).reshape(-1, 3)
        return self._array


def _dominant(a: Assignment, j: int) -> int:
    t = a.terms[j]
    best, best_r = -math.inf, 0
    for r in range(3):
        v = t.resource(r, a.delta[j][r])
        if v > best:
            best, best_r = v, r
    return best_r


class _Fill:
    """One window's shed-and-fill pass over an assignment."""

    def __init__(self, a: Assignment, cands: Sequence[Sequence[int]], lo: float, hi: float,
                 caps: Caps, hosts: Hosts | None = None, orders: Orders | None = None):
        self.a = a
        self.cands = cands
        #: the sorts and arrays shared with the solve's other passes (made here when alone)
        self.orders = orders if orders is not None else Orders(a.view, cands)
        self.lo = lo
        self.hi = hi
        self.caps = caps
        self.hosts = hosts  # big bundles may go to a broker that sheds the rest (solve_hosted)
        n = len(a.u)
        self.ver = [0] * n
        self.low: list[tuple[float, int, int]] = [(a.u[j], 0, j) for j in range(n)]
        heapq.heapify(self.low)
        self.high: list[tuple[float, int, int]] = [(-a.u[j], 0, j) for j in range(n)]
        heapq.heapify(self.high)
        self._sorted: dict[tuple[int, int], tuple[list[float], list[int]]] = {}
        self._np: tuple[Any, Any, Any, Any, Any] | None = None  # see _columns

    # --- bookkeeping --------------------------------------------------------------------------
    def _touch(self, j: int) -> None:
        self.ver[j] += 1
        heapq.heappush(self.low, (self.a.u[j], self.ver[j], j))
        heapq.heappush(self.high, (-self.a.u[j], self.ver[j], j))
        if len(self.low) + len(self.high) > 2 * HEAP_SLACK * (len(self.ver) + 16):
            self._compact()

    def _compact(self) -> None:
        """Both heaps without their stale entries. Every move pushes its two brokers' new
        usages on both heaps, and most stale entries are never popped (a deep broker's old
        usages sit at the bottom of ``low``, the receivers' at the bottom of ``high``): 20,000
        moves left 20,000 entries to sift through per pop. The current entries are all kept and
        ``(usage, version, broker)`` orders them totally, so the brokers come off in the same
        order."""
        ver = self.ver
        for heap in (self.low, self.high):
            heap[:] = [e for e in heap if e[1] == ver[e[2]]]
            heapq.heapify(heap)

    def _capped(self, i: int) -> bool:
        return self.caps.block(self.a, i)

    def _out_of_moves(self) -> bool:
        c = self.caps
        return c.max_moves is not None and len(self.a.moved) >= c.max_moves

    def _move(self, i: int, dst: int) -> None:
        src = self.a.owner[i]
        self.a.move(i, dst)
        if self._np is not None:
            delta = self._np[2]
            delta[src] = self.a.delta[src]
            delta[dst] = self.a.delta[dst]
        self._drop(src, i)
        self._touch(src)
        self._touch(dst)

    def _walk(self, heap: list[tuple[float, int, int]]) -> Generator[int, None, None]:
        """Brokers in heap order (stale entries dropped); entries are put back when the walk
        ends."""
        popped = []
        try:
            while heap:
                e = heapq.heappop(heap)
                if e[1] != self.ver[e[2]]:
                    continue
                popped.append(e)
                yield e[2]
        finally:
            for e in popped:
                heapq.heappush(heap, e)

    def _pop_top(self, heap: list[tuple[float, int, int]], skip: set[int]) -> int | None:
        """The first current broker of ``heap`` not in ``skip`` (entries of ``skip`` dropped)."""
        while heap:
            e = heap[0]
            if e[1] != self.ver[e[2]] or e[2] in skip:
                heapq.heappop(heap)
                continue
            return e[2]
        return None

    def _by_driver(self, j: int, r: int) -> tuple[list[float], list[int]]:
        """Broker ``j``'s movable, unmoved bundles sorted by their driver of resource ``r``."""
        key = (j, r)
        hit = self._sorted.get(key)
        if hit is None:
            moved = self.a.moved
            whole = self.orders.by_driver(j, r)
            if whole is None:  # a NaN driver: this pass's own sort, as ever
                drivers = self.a.view.drivers
                items = sorted((drivers[i][r], i) for i in self.cands[j] if i not in moved)
                hit = ([d for d, _ in items], [i for _, i in items])
            elif not moved:
                hit = (whole[0].copy(), whole[1].copy())
            else:
                keep = [k for k, i in enumerate(whole[1]) if i not in moved]
                hit = ([whole[0][k] for k in keep], [whole[1][k] for k in keep])
            self._sorted[key] = hit
        return hit

    def _drop(self, j: int, i: int) -> None:
        d = self.a.view.drivers[i]
        for r in range(3):
            hit = self._sorted.get((j, r))
            if hit is None:
                continue
            ds, ids = hit
            # sorted by (driver, bundle): the run of equal drivers is sorted by bundle
            lo = bisect.bisect_left(ds, d[r])
            k = bisect.bisect_left(ids, i, lo, bisect.bisect_right(ds, d[r], lo))
            if k < len(ids) and ids[k] == i:
                del ds[k]
                del ids[k]

    def _destination(self, i: int, src: int) -> int | None:
        """The least loaded broker that may take ``i`` and stays inside the window with it;
        failing that (a big bundle, brokers of different strength), the broker where it ends
        lowest, if that is inside the window."""
        low, ver, a = self.low, self.ver, self.a
        while low and low[0][1] != ver[low[0][2]]:
            heapq.heappop(low)  # (stale: the walk below would drop it too)
        if low and (j := low[0][2]) != src and a.u[j] <= self.hi and \
                a.refuses(i, j) is None and a.usage_if(j, i, 1.0) <= self.hi + EPS:
            return j  # the walk's first broker fits: what it would return, without the walk
        with closing(self._walk(self.low)) as walk:
            found = self._first_fit(walk, i, src)
        if found is not None:
            return found
        return self._lowest(i, src)

    def _lowest(self, i: int, src: int) -> int | None:
        """The broker other than ``src`` where bundle ``i`` ends lowest (the lower index on a
        tie) that may take it and stays inside the window with it. Every broker's usage with
        ``i`` is computed at once with numpy (the very float operations of ``usage_if``): a
        loop over brokers per bundle made a cluster of 5,000 brokers take minutes."""
        import numpy as np

        a = self.a
        cols = self._columns()
        now, per, delta, floor, counts = cols
        x = np.asarray(a.view.drivers[i], dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            terms = np.where(counts, now + per * (delta + x), -np.inf)
        u = np.fmax(floor, np.fmax(np.fmax(terms[:, 0], terms[:, 1]), terms[:, 2]))
        fit = u <= self.hi + EPS
        fit[src] = False
        idx = np.flatnonzero(fit)
        for j in idx[np.lexsort((idx, u[idx]))].tolist():
            if a.refuses(i, j) is None:
                return int(j)
        return None

    def _columns(self) -> tuple[Any, Any, Any, Any, Any]:
        """Per broker: terms now, slopes, driver changes so far, floor, which terms count
        (numpy; the changes kept up to date by :meth:`_move`)."""
        if self._np is None:
            import numpy as np

            terms = self.a.terms
            now = np.array([t.now for t in terms], dtype=np.float64).reshape(-1, 3)
            self._np = (now, np.array([t.per_unit for t in terms],
                                      dtype=np.float64).reshape(-1, 3),
                        np.array(self.a.delta, dtype=np.float64).reshape(-1, 3),
                        np.array([t.floor for t in terms], dtype=np.float64),
                        now != -np.inf)
        return self._np

    def _first_fit(self, walk: Iterator[int], i: int, src: int) -> int | None:
        a = self.a
        tries = 0
        for j in walk:
            if j == src:
                continue
            if a.u[j] > self.hi or tries >= _DEST_TRIES:
                return None  # the rest are fuller still
            tries += 1
            if a.refuses(i, j) is None and a.usage_if(j, i, 1.0) <= self.hi + EPS:
                return j
        return None

    # --- the two phases -------------------------------------------------------------------------
    def _shed_choices(self, j: int) -> list[int]:
        """Bundles of donor ``j`` worth trying, best first: the cheapest of the smallest ones
        that bring it inside the window, then the largest ones that do not overshoot it."""
        a = self.a
        r = _dominant(a, j)
        t = a.terms[j]
        k = t.per_unit[r]
        ds, ids = self._by_driver(j, r)
        if not ids:
            return []
        if k <= 0:
            return []  # its usage does not follow traffic: nothing to shed
        now = t.resource(r, a.delta[j][r])
        need = (a.u[j] - self.hi) / k  # driver to remove so the heaviest term reaches hi
        room = (now - self.lo) / k  # most driver removable without dropping below lo
        first = bisect.bisect_left(ds, need - 1e-12)
        last = bisect.bisect_right(ds, room + 1e-12)
        cover = [ids[x] for x in range(first, min(last, first + _NEAR))]
        cover.sort(key=lambda i: a.costs.cost[i])
        partial = [ids[x] for x in range(min(first, last) - 1, max(min(first, last) - 1
                                                                   - _BUNDLE_TRIES, -1), -1)]
        return cover + partial

    def _shed_one(self, j: int) -> tuple[int, int] | None:
        a = self.a
        uj = a.u[j]
        tried = 0
        for i in self._shed_choices(j):
            if self._capped(i):
                continue
            after = a.usage_if(j, i, -1.0)
            if uj - after <= EPS or (after < self.lo - EPS and not self._cannot_keep(j, i)):
                continue  # (with hosts, a bundle its broker cannot keep may leave it below:
                # the fill phase lifts it)
            dst = self._destination(i, j)
            if dst is not None:
                return i, dst
            tried += 1
            if tried >= _BUNDLE_TRIES:
                break
        return None

    def _big_first(self) -> None:
        """Bundles too big for the least loaded broker (more than half the window, and it would
        overshoot there) go first, each to the broker where it ends lowest: on a cluster of
        unequal hosts only the strong ones may hold them, and the small bundles placed before
        would fill those up."""
        a = self.a
        width = self.hi - self.lo
        big: list[tuple[float, int, int]] = []
        must: set[int] = set()  # big bundles whose broker cannot get inside the window otherwise
        lowest = min(range(len(a.u)), key=lambda d: a.u[d]) if a.u else 0
        for j in range(len(a.u)):
            if a.u[j] <= self.hi + EPS:
                continue
            uj = a.u[j]
            effects = [(uj - x, i) for x, i in zip(self._without(j, self.cands[j]),
                                                   self.cands[j], strict=True)]
            total = sum(e for e, _ in effects)
            for effect, i in effects:
                # small, or the least loaded broker can take it: the usual path (which never
                # sheds a broker below the window: with hosts, one it cannot keep goes first)
                if effect <= width / 2 or (j != lowest
                                           and a.usage_if(lowest, i, 1.0) <= self.hi + EPS
                                           and not self._cannot_keep(j, i)):
                    continue
                rest = total - effect
                if (a.u[j] - effect >= self.lo - EPS or rest < a.u[j] - self.hi
                        or self._cannot_keep(j, i)):
                    big.append((-effect, i, j))
                    if a.u[j] - effect < self.lo - EPS:
                        must.add(i)  # the fill phase brings its broker back up
        order = sorted(big)
        if self.hosts is not None:
            # bundles their brokers cannot keep first, the one needing the strongest host first:
            # the few brokers that can hold them are not to be filled by bundles that fit anywhere
            need = {i: self.hosts.lowest_alone(a, i) for _, i, j in big if self._cannot_keep(j, i)}
            order.sort(key=lambda e: (e[1] not in need, -need.get(e[1], 0.0)))
        taken: set[int] = set()  # brokers given a big bundle to hold (hosts only)
        for _, i, j in order:
            if self._out_of_moves() or i in a.moved or a.u[j] <= self.hi + EPS:
                continue
            if (a.usage_if(j, i, -1.0) < self.lo - EPS and i not in must
                    and not self._cannot_keep(j, i)) or self._capped(i):
                continue
            dst = self._lowest(i, j)
            if dst is None and self.hosts is not None:
                dst = self.hosts.host(a, i, j, self.hi, taken)
            if dst is not None:
                self._move(i, dst)
                taken.add(dst)

    def _without(self, j: int, ids: Sequence[int]) -> list[float]:
        """Broker ``j``'s usage were each bundle of ``ids`` to leave it: ``usage_if(j, i, -1.0)``
        for each, with numpy for :data:`VECTOR_MIN` bundles or more — the same IEEE operations
        in the same order (``now + per * (delta + -1.0 * driver)``, a term replacing the floor
        only when greater, so a NaN term never does), element by element."""
        a = self.a
        if len(ids) < VECTOR_MIN:
            return [a.usage_if(j, i, -1.0) for i in ids]
        import numpy as np

        d = self.orders.drivers()[np.asarray(ids, dtype=np.intp)]
        t = a.terms[j]
        dj = a.delta[j]
        u = np.full(len(ids), t.floor, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            for r in range(3):
                now = t.now[r]
                if now != -math.inf:
                    v = now + t.per_unit[r] * (dj[r] + -1.0 * d[:, r])
                    u = np.where(v > u, v, u)
        out: list[float] = u.tolist()
        return out

    def _cannot_keep(self, j: int, i: int) -> bool:
        """Whether broker ``j`` stays above the window keeping bundle ``i`` whatever else leaves
        (with hosts only: its usage holding ``i`` and none of its movable bundles)."""
        return self.hosts is not None and self.hosts.alone(self.a, j, i) > self.hi + EPS

    def shed(self) -> None:
        a = self.a
        self._big_first()
        stuck: set[int] = set()
        while not self._out_of_moves():
            j = self._pop_top(self.high, stuck)
            if j is None or a.u[j] <= self.hi + EPS:
                return
            choice = self._shed_one(j)
            if choice is None:
                stuck.add(j)
                continue
            self._move(*choice)

    def _fill_choices(self, r: int, s: int) -> list[int]:
        """Bundles of donor ``s`` that might lift receiver ``r`` into the window."""
        a = self.a
        t = a.terms[r]
        best_need, best_res = math.inf, -1
        for res in range(3):
            k = t.per_unit[res]
            now = t.resource(res, a.delta[r][res])
            if now == -math.inf or k <= 0:
                continue
            need = max(0.0, self.lo - now) / k
            if need < best_need:
                best_need, best_res = need, res
        if best_res < 0:
            return []
        ds, ids = self._by_driver(s, best_res)
        k = t.per_unit[best_res]
        room = (self.hi - t.resource(best_res, a.delta[r][best_res])) / k
        first = bisect.bisect_left(ds, best_need - 1e-12)
        last = bisect.bisect_right(ds, room + 1e-12)
        cover = [ids[x] for x in range(first, min(last, first + _NEAR))]
        cover.sort(key=lambda i: a.costs.cost[i])
        top = min(first, last)
        partial = [ids[x] for x in range(top - 1, max(top - 1 - _BUNDLE_TRIES, -1), -1)]
        return cover + partial

    def _fill_one(self, r: int) -> tuple[int, int] | None:
        a = self.a
        ur = a.u[r]
        best: tuple[int, float, float, int] | None = None  # (not cover, -gain or cost, …, i)
        donors = 0
        walk = self._walk(self.high)
        for s in walk:
            if s == r:
                continue
            if a.u[s] <= self.lo + EPS or donors >= _DONORS or (best is not None
                                                                  and best[0] == 0):
                break
            donors += 1
            for i in self._fill_choices(r, s):
                if self._capped(i):
                    continue
                if a.usage_if(s, i, -1.0) < self.lo - EPS:
                    continue
                after = a.usage_if(r, i, 1.0)
                if after > self.hi + EPS or after - ur <= EPS:
                    continue
                if a.refuses(i, r) is not None:
                    continue
                cover = after >= self.lo - EPS
                key = (0, a.costs.cost[i], 0.0, i) if cover else (1, ur - after,
                                                                  a.costs.cost[i], i)
                if best is None or key < best:
                    best = key
                if cover:
                    break
        walk.close()
        return None if best is None else (best[3], r)

    def fill(self) -> None:
        a = self.a
        stuck: set[int] = set()
        while not self._out_of_moves():
            r = self._pop_top(self.low, stuck)
            if r is None or a.u[r] >= self.lo - EPS:
                return
            choice = self._fill_one(r)
            if choice is None:
                stuck.add(r)
                continue
            self._move(*choice)


# --- local search -----------------------------------------------------------------------------------
def improve(a: Assignment, cands: Sequence[Sequence[int]], width: float, umax: float,
            passes: int = 2) -> None:
    """Undo moves the band does not need, then swap moves for cheaper bundles of the same source.

    Only changes that keep every broker inside the band (and under ``umax``) are kept, so a plan
    that meets the goals still meets them. Each change is checked on the two brokers it touches
    against bounds on all the others, before it is made."""
    if not a.moved or not a.violation_free(width, umax):
        return

    def fits(us: float, ud: float, lo: float, hi: float) -> bool:
        """The band holds with the source at ``us`` and the destination at ``ud``, every other
        broker being within ``[lo, hi]``."""
        return (max(us, ud) <= umax + EPS
                and max(hi, us, ud) - min(lo, us, ud) <= width + EPS)

    for _ in range(passes):
        changed = False
        lo, hi = min(a.u), max(a.u)
        for i in sorted(a.moved, key=lambda i: -a.costs.cost[i]):
            dst = a.moved[i]
            src = a.view.owner[i]
            us, ud = a.usage_swap(src, -1, i), a.usage_swap(dst, i, -1)
            if fits(us, ud, lo, hi):
                a.undo(i)
                lo, hi = min(lo, ud), max(hi, us)
                changed = True
        # per source, which of its bundles are still on it: the next cheaper one in O(log n),
        # not a walk past every bundle moved (a deep broker sheds thousands)
        present: dict[int, Present] = {}
        for i in sorted(a.moved, key=lambda i: -a.costs.cost[i]):
            dst = a.moved[i]
            src = a.view.owner[i]
            lst = cands[src]
            on = present.get(src)
            if on is None:
                on = present[src] = Present([k not in a.moved for k in lst])
            tried = 0
            x = _cost_index(a, lst, a.costs.cost[i])
            while (x := on.below(x)) >= 0:
                k = lst[x]
                tried += 1
                if tried > _SWAPS:
                    break
                us, ud = a.usage_swap(src, k, i), a.usage_swap(dst, i, k)
                if not fits(us, ud, lo, hi):
                    continue
                a.undo(i)
                if a.refuses(k, dst) is None:
                    a.move(k, dst)
                    on.set(x, False)
                    on.set(_position(a, lst, i), True)
                    lo, hi = min(lo, us, ud), max(hi, us, ud)
                    changed = True
                    break
                a.move(i, dst)
        if not changed:
            return


def _position(a: Assignment, lst: Sequence[int], i: int) -> int:
    """Where bundle ``i`` is in ``lst`` (sorted by cost, then index)."""
    key = (a.costs.cost[i], i)
    lo, hi = 0, len(lst)
    while lo < hi:
        mid = (lo + hi) // 2
        if (a.costs.cost[lst[mid]], lst[mid]) < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _cost_index(a: Assignment, lst: Sequence[int], cost: float) -> int:
    lo, hi = 0, len(lst)
    while lo < hi:
        mid = (lo + hi) // 2
        if a.costs.cost[lst[mid]] < cost:
            lo = mid + 1
        else:
            hi = mid
    return lo


@dataclass(frozen=True, slots=True)
class GreedyResult:
    assignment: Assignment
    window: tuple[float, float] | None  # (lo, hi) of the winning window; None: capacity only


def _rho(view: LoadView) -> list[float]:
    """Bytes/s of typical traffic per unit of usage (fraction), per broker, on its dominant
    resource: what one point of usage costs to move there."""
    totals = view.driver_totals
    tp = sum(view.throughput)
    out = []
    for t in view.terms:
        r = max(range(3), key=lambda r: t.now[r])
        per = t.per_unit[r]
        if t.now[r] == -math.inf or per <= 0 or totals[r] <= 0:
            out.append(math.inf)
        else:
            out.append(tp / totals[r] / per)
    return out


def rank_windows(view: LoadView, usages: Sequence[float], width: float, umax: float,
                 count: int, floor: float = -math.inf) -> list[float]:
    """The ``lo`` of the ``count`` most promising windows (estimated traffic to move), none
    below ``floor``."""
    rho = _rho(view)
    lo_u, hi_u = min(usages), max(usages)
    steps = 120
    start = max(lo_u - width, floor)
    span = max(hi_u - start, 1e-9)
    order = sorted(range(len(usages)), key=lambda j: usages[j])
    us = [usages[j] for j in order]
    ps = [rho[j] for j in order]
    # prefix sums of u·rho and rho, to evaluate each window in O(log n)
    cu = [0.0]
    cr = [0.0]
    for u, p in zip(us, ps, strict=True):
        cu.append(cu[-1] + (u * p if math.isfinite(p) else math.inf))
        cr.append(cr[-1] + p)

    def estimate(lo: float) -> float:
        hi = min(lo + width, umax)
        k = bisect.bisect_left(us, lo)  # brokers below lo: 0..k-1
        gain = lo * cr[k] - cu[k] if k else 0.0
        m = bisect.bisect_right(us, hi)  # brokers above hi: m..n-1
        shed = (cu[-1] - cu[m]) - hi * (cr[-1] - cr[m]) if m < len(us) else 0.0
        return max(shed, gain) if not math.isnan(max(shed, gain)) else math.inf

    grid = [start + span * k / steps for k in range(steps + 1)]
    best = min(grid, key=lambda lo: (estimate(lo), lo))
    picks = [best]
    for frac in (0.25, -0.25, 0.5, -0.5, 0.125, -0.125, 0.75, -0.75):
        if len(picks) >= count:
            break
        if best + frac * width >= floor:
            picks.append(best + frac * width)
    return picks[:count]


def solve_greedy(view: LoadView, rules: Rules, costs: Costs, targets: Targets, width: float,
                 caps: Caps, windows: int | None = None,
                 swaps: bool | None = None, shared: Shared | None = None) -> GreedyResult:
    """The best of a few windows' shed-and-fill plans (then swaps where the band is missed,
    then local search), and a capacity-only plan. ``windows`` defaults to 5, 1 for clusters of
    more than 20,000 bundles; ``swaps``: whether to try them (``None``: above
    :data:`SWAP_PAIRS` pairs; ``False``: shed-and-fill's own plans, as the equality test's
    reference); ``shared``: what earlier solves of the same cluster made (:class:`Shared`)."""
    shared = Shared.of(shared, view, rules, costs)
    cands, orders = shared.cands, shared.orders
    umax = targets.max_usage
    results = _window_plans(view, rules, costs, cands, width, umax, caps, windows, swaps=swaps,
                            orders=orders)
    if not any(r[0].ok for r in results):
        a = Assignment(view, rules, costs)
        fill = _Fill(a, cands, -math.inf, umax, caps, orders=orders)
        fill.shed()
        results.append((_violation(a, width, umax), a.cost, a, None))
        a = shared.levelled(caps)
        results.append((_violation(a, width, umax), a.cost, a, None))
    return _best(results)


_Planned = tuple[Violation, float, Assignment, tuple[float, float] | None]


def _window_plans(view: LoadView, rules: Rules, costs: Costs, cands: Sequence[Sequence[int]],
                  width: float, umax: float, caps: Caps, windows: int | None,
                  floor: float = -math.inf, hosts: Hosts | None = None,
                  swaps: bool | None = None, orders: Orders | None = None) -> list[_Planned]:
    """Each ranked window's shed-and-fill plan, then local search: ``windows`` of them (5, 1
    for clusters of more than 20,000 bundles, whose local search also makes one pass, not two),
    none below ``floor``; with ``hosts``, big bundles may take a broker of their own. When none
    meets the goals (and ``swaps``; ``None``: above :data:`SWAP_PAIRS` pairs), each plan gets
    :func:`~lbctl.planner.greedy_search.exchange`'s swaps, kept where they reach the band (then
    local search again): swaps only where single moves fail."""
    large = len(view.bundles) > 20_000
    if swaps is None:
        swaps = sum(map(len, cands)) * max(len(view.brokers) - 1, 0) > SWAP_PAIRS
    if windows is None:
        windows = 1 if large else 5
    if orders is None:
        orders = Orders(view, cands)
    results: list[_Planned] = []
    for lo in rank_windows(view, view.usages(), width, umax, windows, floor=floor):
        a = Assignment(view, rules, costs)
        fill = _Fill(a, cands, lo, min(lo + width, umax), caps, hosts, orders)
        fill.shed()
        fill.fill()
        improve(a, cands, width, umax, 1 if large else 2)
        results.append((_violation(a, width, umax), a.cost, a, (lo, lo + width)))
    if swaps and not any(r[0].ok for r in results):
        # single moves reached no window: each plan with swaps, kept where they reach the band
        # (greedy_search.exchange; issue 29's "b" misses on mixed hosts), then local search
        for k, (_, _, a, window) in enumerate(results):
            moved = len(a.moved), a.cost
            exchange(a, cands, width, umax, partial(_within, a, caps))
            if (len(a.moved), a.cost) != moved or a.violation_free(width, umax):
                improve(a, cands, width, umax, 1 if large else 2)
                results[k] = (_violation(a, width, umax), a.cost, a, window)
    return results


def _within(a: Assignment, caps: Caps) -> bool:
    """Whether ``a`` keeps to ``--max-moves`` and ``--max-throughput``."""
    return ((caps.max_moves is None or len(a.moved) <= caps.max_moves)
            and (caps.max_throughput is None or a.throughput <= caps.max_throughput + EPS))


def _best(results: Sequence[_Planned]) -> GreedyResult:
    """The plan nearest the goals, then cheapest (:func:`better`); the first on a tie."""
    best_i = 0
    for k in range(1, len(results)):
        if better(results[k][0], results[k][1], results[best_i][0], results[best_i][1]):
            best_i = k
    _, _, best, window = results[best_i]
    return GreedyResult(best, window)


class Hosts:
    """Brokers emptied of their movable bundles, as hosts for bundles too big to share one.

    A hot bundle may weigh most of a band's level even on the strongest broker (a few of the
    lognormal bundles of a large cluster do: 45 points of a 32-core host while the fleet settles
    near 45 %). The only plans that meet the band then give it a broker of its own — one that
    sheds the rest of its bundles — and put the window high enough to hold it. :meth:`ceiling` is
    the lowest top of the window any plan can have; :meth:`host` the broker a big bundle goes to
    when no broker can take it as it is."""

    def __init__(self, a: Assignment, cands: Sequence[Sequence[int]]):
        drivers = a.view.drivers
        self.bare: list[list[float]] = []
        for lst in cands:
            d = [0.0, 0.0, 0.0]
            for i in lst:
                x = drivers[i]
                for r in range(3):
                    d[r] -= x[r]
            self.bare.append(d)

    def alone(self, a: Assignment, j: int, i: int) -> float:
        """Broker ``j``'s usage holding bundle ``i`` and none of its movable bundles."""
        x, b = a.view.drivers[i], self.bare[j]  # (its owner's bare load is without it)
        return a.terms[j].usage((b[0] + x[0], b[1] + x[1], b[2] + x[2]))

    def lowest_alone(self, a: Assignment, i: int) -> float:
        """Bundle ``i`` alone on the broker where it weighs least (its owner, or one that may
        take it)."""
        best = math.inf
        for d in range(len(a.u)):
            if d == a.owner[i] or a.refuses(i, d) is None:
                best = min(best, self.alone(a, d, i))
        return best

    def ceiling(self, a: Assignment, cands: Sequence[Sequence[int]]) -> float:
        """The lowest usage the most loaded broker can have after any moves: each of the
        heaviest bundles (:data:`_HOSTED` per resource driver) held alone by the broker where it
        weighs least (its owner, or one that may take it); every broker's own pinned load."""
        drivers = a.view.drivers
        n = len(a.u)
        movable = [i for lst in cands for i in lst]
        heavy: set[int] = set()
        for r in range(3):
            heavy.update(heapq.nlargest(_HOSTED, movable, key=lambda i: (drivers[i][r], -i)))
        top = max((a.terms[j].usage(self.bare[j]) for j in range(n)), default=0.0)
        for i in sorted(heavy):
            top = max(top, self.lowest_alone(a, i))
        return top

    def host(self, a: Assignment, i: int, src: int, hi: float, taken: set[int]) -> int | None:
        """The broker to hold big bundle ``i`` (none that holds another already): of those that,
        emptied, hold it inside the window (up to ``hi``), the one with the least to shed (the
        lowest usage with it now), the lower index on a tie."""
        best: tuple[float, int] | None = None
        for d in range(len(a.u)):
            if d == src or d in taken or self.alone(a, d, i) > hi + EPS:
                continue
            key = (a.usage_if(d, i, 1.0), d)
            if (best is None or key < best) and a.refuses(i, d) is None:
                best = key
        return None if best is None else best[1]


def solve_hosted(view: LoadView, rules: Rules, costs: Costs, targets: Targets, width: float,
                 caps: Caps, windows: int | None = None,
                 shared: Shared | None = None) -> GreedyResult | None:
    """Greedy's shed-and-fill with room made for bundles too big to share a broker
    (:class:`Hosts`): windows no lower than :meth:`Hosts.ceiling` allows, and a big bundle no
    broker can take as it is sent to one that sheds its other bundles. For :func:`solve`'s
    caller when :func:`solve_greedy` misses the goals; ``None`` when no window is high enough
    under the cap (the band is out of reach by moves). ``windows`` and local search's passes
    as :func:`solve_greedy`'s, ``shared`` too."""
    shared = Shared.of(shared, view, rules, costs)
    umax = targets.max_usage
    hosts, top = shared.hosts()
    if top > umax + EPS:
        return None
    results = _window_plans(view, rules, costs, shared.cands, width, umax, caps, windows,
                            floor=top - width, hosts=hosts, orders=shared.orders)
    return _best(results) if results else None


class Shared:
    """What every solve of one cluster (``view``, ``rules``, ``costs``: the same objects) makes
    the same way, made once: each broker's candidates, their sorts (:class:`Orders`), the
    levelled plan per :class:`Caps` (:func:`level` reads neither the width nor the cap), and
    :func:`solve_hosted`'s hosts and ceiling (neither reads the width nor the targets).

    propose's margin passes (1, 0.5 and 0 of the margin) and a std target's four widths each
    ran all of it again: at 60,000 bundles with one broker owning 50,000 (``benchmarks/growth.py``'s
    deep broker) the levelling made the same 1,518 moves in every pass and each hosted pass
    spent ~0.1 s re-making its set-up. A levelled plan is handed out as a fresh
    :class:`Assignment` replaying the recorded moves in their order (``Assignment.move``'s
    float operations in the same order: the same state to the bit), so a caller may change it.
    ``made`` counts what was computed (tests check the sharing)."""

    def __init__(self, view: LoadView, rules: Rules, costs: Costs):
        self.view, self.rules, self.costs = view, rules, costs
        self._cands: list[list[int]] | None = None  # made on first use (a solve may need none)
        self._orders: Orders | None = None
        self._levelled: dict[Caps, list[tuple[int, int]]] = {}
        self._hosts: tuple[Hosts, float] | None = None
        self.made = {"cands": 0, "level": 0, "hosts": 0}

    @property
    def cands(self) -> list[list[int]]:
        """:func:`candidates_by_broker`."""
        if self._cands is None:
            self._cands = candidates_by_broker(self.view, self.rules, self.costs)
            self.made["cands"] += 1
        return self._cands

    @property
    def orders(self) -> Orders:
        if self._orders is None:
            self._orders = Orders(self.view, self.cands)
        return self._orders

    @classmethod
    def of(cls, shared: Shared | None, view: LoadView, rules: Rules, costs: Costs) -> Shared:
        """``shared`` when it was made for these very objects, else a new one (a caller's
        stale one is never read for another cluster)."""
        if shared is not None and shared.view is view and shared.rules is rules \
                and shared.costs is costs:
            return shared
        return cls(view, rules, costs)

    def levelled(self, caps: Caps) -> Assignment:
        """A fresh assignment holding :func:`level`'s plan under ``caps``."""
        a = Assignment(self.view, self.rules, self.costs)
        moves = self._levelled.get(caps)
        if moves is None:
            level(a, self.cands, caps, self.orders)
            self._levelled[caps] = a.moves()
            self.made["level"] += 1
        else:
            a.apply(moves)
        return a

    def hosts(self) -> tuple[Hosts, float]:
        """:class:`Hosts` of the cluster as it is, and its :meth:`Hosts.ceiling`."""
        if self._hosts is None:
            start = Assignment(self.view, self.rules, self.costs)
            hosts = Hosts(start, self.cands)
            self._hosts = (hosts, hosts.ceiling(start, self.cands))
            self.made["hosts"] += 1
        return self._hosts


def level(a: Assignment, cands: Sequence[Sequence[int]], caps: Caps,
          orders: Orders | None = None) -> None:
    """Min-max levelling, for clusters where no window can be reached: move a bundle from the
    most loaded broker to the least loaded one that may take it whenever that lowers the larger
    of the two below the most loaded broker's usage, until no such move is left."""
    fill = _Fill(a, cands, -math.inf, math.inf, caps, orders=orders)
    for _ in range(len(a.view.bundles)):
        if fill._out_of_moves():
            return
        j = fill._pop_top(fill.high, set())
        if j is None:
            return
        with closing(fill._walk(fill.low)) as walk:
            receivers = [d for _, d in zip(range(_DONORS), (d for d in walk if d != j),
                                           strict=False)]
        # the bundle x receiver with the lowest peak, then cheapest (greedy_search: a few
        # bundles looked at, not all of j's)
        best = best_levelling_move(a, j, receivers, partial(fill._by_driver, j), cands[j],
                                   fill._capped)
        if best is None:
            return
        fill._move(*best)


def _violation(a: Assignment, width: float, umax: float) -> Violation:
    cap = max(0.0, max(a.u) - umax)
    band = max(0.0, max(a.u) - min(a.u) - width)
    return Violation(cap, band)
