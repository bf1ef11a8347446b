"""Each broker's movable bundles in buckets of like drivers, so a repair step skips the buckets
that cannot hold its best change (issue 30, "no quadratic corner").

:func:`lbctl.planner.repair._best_step` scores every movable bundle on the most loaded brokers;
when one broker carries most of the cluster (``benchmarks/growth.py``'s deep broker) that is
tens of thousands of bundles per step. Here a broker's bundles are sorted by their drivers and
cut into about ``sqrt(n)`` buckets, each with the box its drivers lie in (lowest and highest of
each of the three drivers) and the largest ``|cost|`` of its bundles. For one (source,
destination) pair :func:`bound` gives, from the box, a key no bundle of the bucket can beat —
the step's own arithmetic evaluated on intervals — and the step reads the buckets best bound
first, stopping at the first one that cannot beat the best change found (or the plan itself).

Why a skipped bundle cannot be the step's choice. The step's choice is the least ``(key,
cost, pair, bundle)`` over the candidates that pass its filters (caps, the constraints, the
point-estimate ceiling: each depends on the candidate alone), where ``key = (capacity, band,
spread)``, rounded. Every operation from a bundle's drivers ``d`` to its key is, for fixed
other operands, monotone in each operand under IEEE-754 round-to-nearest (``+``, ``-``, ``*`` by
a constant — either way round, by its sign — ``max``, ``min``, ``abs`` on each side of 0, and
``round(x, k)``, which rounds exactly then to the nearest double); so the same operations on the
interval ends bound each intermediate value, hence each of the key's three parts from below,
hence the key lexicographically. The one exception, ``x ** 2`` (libm's ``pow``, within an ulp),
is bounded by ``x * x`` less a relative ``1e-12``. With ``lb`` the bucket's key bound and ``-c``
its least cost, every bundle's ``(key, cost) >= (lb, -c)``; a bucket with ``lb >= here`` holds
no candidate under the plan's key, and one with ``(lb, -c) > (best key, best cost)`` none that
beats the best so far — nor do the buckets after it, read in ``(lb, -c)`` order. A bucket whose
bound is not a number (a non-finite driver or usage) is always read. Removing a bundle leaves
its bucket's box as it was (still a box around the rest); a bundle that arrives goes to the
broker's unsorted tail, always read, and the broker is re-cut when the tail outgrows a bucket.

A bucket keeps its bundles by their topic count, so a step reads only the ones the destination
can take under ``loadBalancerBrokerMaxTopics`` (:meth:`lbctl.planner.constraints.Rules.refuses`
refuses the rest whatever else holds): a destination near the limit would otherwise have every
bundle of the source scored and refused — the deep broker's case, where the least loaded brokers
are the ones near it.

Buckets are weighed a :class:`Group` of about ``sqrt`` of them at a time (a group's bound is its
buckets' lowest at most): the bounds drawn per pair grew with ``sqrt(n)`` and were most of a
step at 60,000 bundles; the buckets still come in the order of their own bounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: a broker is bucketed from this many movable bundles (below it a step reads them all)
MIN_BUNDLES = 512
#: the fewest bundles in a bucket
MIN_BUCKET = 32

#: the fewest buckets in a group
GROUP_MIN = 4

#: the bound of a bucket that must be read
ANY = (-math.inf, -math.inf, -math.inf)


class Bucket:
    """Bundles of like drivers: their ids by (topics, id) and their topics in that order, the
    box of their drivers, their largest ``|cost|``."""

    __slots__ = ("ids", "tops", "lo", "hi", "cmax", "exact")

    def __init__(self, ids: list[int], drivers: Sequence[Sequence[float]],
                 cost: Sequence[float], topics: Sequence[int]):
        ids = sorted(ids, key=lambda i: (topics[i], i))
        self.ids = ids
        self.tops = [topics[i] for i in ids]
        ds = [drivers[i] for i in ids]
        self.lo = [min(d[r] for d in ds) for r in range(3)]
        self.hi = [max(d[r] for d in ds) for r in range(3)]
        cm = max(abs(cost[i]) for i in ids)
        self.cmax = cm
        #: whether a bound may be drawn (every driver and cost finite)
        self.exact = all(math.isfinite(x) for x in (*self.lo, *self.hi, cm))


class Group:
    """Consecutive buckets of a cut (:meth:`Index.of`), as one box: the box around theirs, the
    largest ``|cost|`` of theirs. Its bound (:func:`bound` takes it as it takes a bucket) is
    no higher than any of its buckets' — every operation of the bound is monotone in the box's
    ends, so a larger box bounds lower — and with the larger cost its ``(bound, -cmax)`` no
    higher either: a step weighs a group's buckets only when the group comes up
    (:func:`lbctl.planner.repair._bucketed`), ~sqrt of the buckets' bounds per pair instead
    of all of them (they grow with sqrt(n): at 60,000 bundles, 3 pairs x ~240 per step)."""

    __slots__ = ("members", "lo", "hi", "cmax", "exact")

    def __init__(self, members: list[int], buckets: Sequence[Bucket]):
        self.members = members
        bs = [buckets[k] for k in members]
        self.lo = [min(b.lo[r] for b in bs) for r in range(3)]
        self.hi = [max(b.hi[r] for b in bs) for r in range(3)]
        self.cmax = max(b.cmax for b in bs)
        self.exact = all(b.exact for b in bs)


class Index:
    """Each broker's movable bundles in :class:`Bucket` s (a broker with at least
    :data:`MIN_BUNDLES`), kept as bundles move (module docstring)."""

    def __init__(self, on: list[list[int]], drivers: Sequence[Sequence[float]],
                 cost: Sequence[float], topics: Sequence[int]):
        self.on = on
        self.drivers = drivers
        self.cost = cost
        self.topics = topics
        self.buckets: dict[int, list[Bucket]] = {}
        #: each cut broker's buckets in :class:`Group` s of about sqrt(buckets)
        self.groups: dict[int, list[Group]] = {}
        self.where: dict[int, Bucket] = {}
        self.tail: dict[int, list[int]] = {}

    def of(self, j: int) -> tuple[list[Bucket], list[int]] | None:
        """Broker ``j``'s buckets and tail, cut now if it has none; ``None`` when it carries too
        few movable bundles to be worth it."""
        if j in self.buckets:
            if len(self.tail[j]) <= max(MIN_BUCKET, math.isqrt(len(self.on[j]))):
                return self.buckets[j], self.tail[j]
            self._drop(j)
        ids = self.on[j]
        if len(ids) < MIN_BUNDLES:
            return None
        d = self.drivers
        scale = [max((abs(d[i][r]) for i in ids), default=0.0) for r in range(3)]
        inv = [1.0 / s if s > 0 and math.isfinite(s) else 0.0 for s in scale]

        def rank(i: int) -> tuple[float, int]:
            x = d[i]
            k = x[0] * inv[0] + x[1] * inv[1] + x[2] * inv[2]
            return (k if k == k else math.inf, i)

        order = sorted(ids, key=rank)
        size = max(MIN_BUCKET, math.isqrt(len(order)))
        out = [Bucket(order[k:k + size], d, self.cost, self.topics) for k in range(0, len(order), size)]
        for b in out:
            for i in b.ids:
                self.where[i] = b
        self.buckets[j] = out
        g = max(GROUP_MIN, math.isqrt(len(out)))
        self.groups[j] = [Group(list(range(k, min(k + g, len(out)))), out)
                          for k in range(0, len(out), g)]
        self.tail[j] = []
        return out, self.tail[j]

    def _drop(self, j: int) -> None:
        del self.groups[j]
        for b in self.buckets.pop(j):
            for i in b.ids:
                self.where.pop(i, None)
        del self.tail[j]

    def move(self, i: int, src: int, dst: int) -> None:
        """Bundle ``i`` went from ``src`` to ``dst`` (after :func:`repair.relocate`)."""
        b = self.where.pop(i, None)
        if b is not None:
            k = b.ids.index(i)
            del b.ids[k], b.tops[k]
        elif src in self.tail and i in self.tail[src]:
            self.tail[src].remove(i)
        if dst in self.tail:
            self.tail[dst].append(i)


def _abs(lo: float, hi: float) -> tuple[float, float]:
    if lo >= 0.0:
        return lo, hi
    if hi <= 0.0:
        return -hi, -lo
    return 0.0, max(-lo, hi)


def _mul(k: float, lo: float, hi: float) -> tuple[float, float]:
    a, b = k * lo, k * hi
    return (a, b) if a <= b else (b, a)


def _sq_lo(lo: float, hi: float) -> float:
    """A lower bound of ``x ** 2`` for ``x`` in ``[lo, hi]``."""
    m = lo if lo > 0.0 else (-hi if hi < 0.0 else 0.0)
    return m * m * (1.0 - 1e-12)


def _usage(floor: float, terms: Sequence[tuple[float, float, float]], res: Sequence[int],
           lo: Sequence[float], hi: Sequence[float], sign: float) -> tuple[float, float]:
    """The range of ``max(floor, x0 + per * (x -/+ d[r]))`` over the box ``[lo, hi]`` of ``d``
    (``sign`` -1: the bundle leaves, +1: it arrives), as the step computes it."""
    ulo = uhi = floor
    for r, (x0, per, x) in zip(res, terms, strict=True):
        if sign < 0:
            ylo, yhi = x - hi[r], x - lo[r]
        else:
            ylo, yhi = x + lo[r], x + hi[r]
        plo, phi = _mul(per, ylo, yhi)
        wlo, whi = x0 + plo, x0 + phi
        if wlo > ulo:
            ulo = wlo
        if whi > uhi:
            uhi = whi
    return ulo, uhi


def _spread(unc: float, start: float, idle: float, lo: float, hi: float) -> tuple[float, float]:
    """The range of ``unc * min(abs(u - start), max(0.0, u - idle))`` for ``u`` in ``[lo, hi]``."""
    alo, ahi = _abs(lo - start, hi - start)
    mlo, mhi = max(0.0, lo - idle), max(0.0, hi - idle)
    return _mul(unc, min(alo, mlo), min(ahi, mhi))


def bound(b: Bucket | Group, s: tuple[float, tuple[tuple[float, float, float], ...], Sequence[int],
                              float, float, float],
          d: tuple[float, tuple[tuple[float, float, float], ...], Sequence[int],
                   float, float, float],
          other_hi: float | None, other_lo: float | None, max_usage: float, width: float,
          mean: float, now_s: float, now_d: float) -> tuple[float, float, float]:
    """A key (capacity, band, spread, rounded as the step rounds them) no bundle of ``b`` can
    beat for the pair whose source is ``s`` and destination ``d`` — each ``(floor, terms, res,
    unc, start, idle)`` — with the other brokers' ends ``other_hi`` / ``other_lo`` (the band
    goal, not the standard deviation). ``ANY`` (read the bucket) when a value on the way is not
    finite: the ends then no longer bound what lies between them."""
    if not b.exact:
        return ANY
    floor_s, leave, res_s, unc_s, start_s, idle_s = s
    floor_d, come, res_d, unc_d, start_d, idle_d = d
    us_lo, us_hi = _usage(floor_s, leave, res_s, b.lo, b.hi, -1.0)
    ud_lo, ud_hi = _usage(floor_d, come, res_d, b.lo, b.hi, 1.0)
    ss_lo, ss_hi = _spread(unc_s, start_s, idle_s, us_lo, us_hi)
    sd_lo, sd_hi = _spread(unc_d, start_d, idle_d, ud_lo, ud_hi)
    hs_lo = us_lo + ss_lo  # the source's high end, at least
    ls_hi = us_hi - ss_lo  # its low end, at most
    hi_lo = max(hs_lo, ud_lo + sd_lo, hs_lo if other_hi is None else other_hi)
    lo_hi = min(ls_hi, ud_hi - sd_lo, ls_hi if other_lo is None else other_lo)
    if not math.isfinite(us_lo + us_hi + ud_lo + ud_hi + ss_lo + ss_hi + sd_lo + sd_hi
                         + hi_lo + lo_hi):
        return ANY
    cap = max(0.0, hi_lo - max_usage)
    band = max(0.0, hi_lo - lo_hi - width)
    spread = (_sq_lo(us_lo - mean, us_hi - mean) + _sq_lo(ud_lo - mean, ud_hi - mean)
              - now_s - now_d)
    return round(cap, 8), round(band, 8), round(spread, 10)
