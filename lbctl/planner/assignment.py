"""Bundles on brokers while a plan is being built: predicted usage, topics and group counts.

Every solver works on an :class:`Assignment`: it moves bundles (each at most once, from its owner
to one destination), and reads back each broker's predicted weighted usage
(:class:`~lbctl.planner.load.BrokerTerms`), topic count and anti-affinity counts, so constraints
and goals are checked on the state the plan would leave.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from lbctl.planner.constraints import Rules, group_counts
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Stats, Targets
from lbctl.planner.load import LoadView

EPS = 1e-9


@dataclass(frozen=True, slots=True)
class Violation:
    """How far a state is from the hard goals (fractions), compared lexicographically."""

    capacity: float
    band: float

    def key(self) -> tuple[float, float]:
        # differences below a millionth of a point are numerical noise
        return (round(self.capacity, 8), round(self.band, 8))

    @property
    def ok(self) -> bool:
        return self.capacity <= 1e-8 and self.band <= 1e-8


#: violations closer than this (a tenth of a point) count as equal: then the cheaper plan wins
TOLERANCE = 0.001


def better(v: Violation, cost: float, w: Violation, other: float) -> bool:
    """Whether a plan at ``(v, cost)`` beats one at ``(w, other)``: nearer capacity (by more than
    :data:`TOLERANCE`), else nearer the band, else cheaper. Without the tolerance a plan moving
    half the cluster would beat a light one for a hundredth of a point of capacity."""
    if abs(v.capacity - w.capacity) > TOLERANCE:
        return v.capacity < w.capacity
    if abs(v.band - w.band) > TOLERANCE:
        return v.band < w.band
    if v.ok != w.ok:
        return v.ok
    return cost < other


def violation(usages: list[float], targets: Targets) -> Violation:
    st = Stats.of(usages)
    cap = max(0.0, st.max - targets.max_usage)
    if targets.target_std is not None:
        band = max(0.0, st.std - targets.target_std)
    else:
        band = max(0.0, st.range - (targets.target_range or 0.0))
    return Violation(cap, band)


class Assignment:
    """Owners, per-broker driver changes and the usage they give, under moves."""

    def __init__(self, view: LoadView, rules: Rules, costs: Costs):
        self.view = view
        self.rules = rules
        self.costs = costs
        n = len(view.brokers)
        self.terms = view.terms
        self.delta = [[0.0, 0.0, 0.0] for _ in range(n)]
        self.u = [t.usage() for t in view.terms]
        self.owner = list(view.owner)
        self.topics = list(view.broker_topics)
        self.groups = group_counts(rules, view.owner)
        self.moved: dict[int, int] = {}  # bundle -> destination, in the order moved
        self.cost = 0.0
        self.throughput = 0.0

    # --- predictions ------------------------------------------------------------------------------
    def usage_if(self, j: int, i: int, sign: float) -> float:
        """Broker ``j``'s usage if bundle ``i`` arrived (``sign`` +1) or left (-1)."""
        d = self.view.drivers[i]
        t = self.terms[j]
        dj = self.delta[j]
        u = t.floor
        for r in range(3):
            now = t.now[r]
            if now != -math.inf:
                v = now + t.per_unit[r] * (dj[r] + sign * d[r])
                if v > u:
                    u = v
        return u

    def usage_swap(self, j: int, out: int, into: int) -> float:
        """Broker ``j``'s usage if bundle ``out`` left it and bundle ``into`` arrived
        (either may be -1: none). The exchange search's unit of work (millions of calls on a
        large namespace): the three resources unrolled, with the same operations in the same
        order as a loop over them."""
        t = self.terms[j]
        now, per = t.now, t.per_unit
        dj = self.delta[j]
        drivers = self.view.drivers
        o = drivers[out] if out >= 0 else None
        n = drivers[into] if into >= 0 else None
        u = t.floor
        inf = -math.inf
        if now[0] != inf:
            x = dj[0]
            if o is not None:
                x -= o[0]
            if n is not None:
                x += n[0]
            v = now[0] + per[0] * x
            if v > u:
                u = v
        if now[1] != inf:
            x = dj[1]
            if o is not None:
                x -= o[1]
            if n is not None:
                x += n[1]
            v = now[1] + per[1] * x
            if v > u:
                u = v
        if now[2] != inf:
            x = dj[2]
            if o is not None:
                x -= o[2]
            if n is not None:
                x += n[2]
            v = now[2] + per[2] * x
            if v > u:
                u = v
        return u

    def heaviest_term(self, j: int) -> int:
        """The resource of broker ``j``'s heaviest weighted term now (-1: none follows
        traffic): the driver a bundle must carry to relieve ``j``."""
        t = self.terms[j]
        best, best_r = -math.inf, -1
        for r in range(3):
            if t.now[r] == -math.inf or t.per_unit[r] <= 0:
                continue
            v = t.resource(r, self.delta[j][r])
            if v > best:
                best, best_r = v, r
        return best_r

    def refuses(self, i: int, j: int) -> str | None:
        return self.rules.refuses(i, j, self.topics, self.view.topics[i], self.groups)

    # --- changes ----------------------------------------------------------------------------------
    def _shift(self, i: int, src: int, dst: int) -> None:
        d = self.view.drivers[i]
        ds, dd = self.delta[src], self.delta[dst]
        for r in range(3):
            ds[r] -= d[r]
            dd[r] += d[r]
        self.u[src] = self.terms[src].usage(ds)
        self.u[dst] = self.terms[dst].usage(dd)
        t = self.view.topics[i]
        self.topics[src] -= t
        self.topics[dst] += t
        g = self.rules.group.get(i)
        if g is not None:
            self.groups[(g, src)] = self.groups.get((g, src), 0) - 1
            self.groups[(g, dst)] = self.groups.get((g, dst), 0) + 1
        self.owner[i] = dst

    def move(self, i: int, dst: int) -> None:
        """Move bundle ``i`` (still on its owner) to ``dst``."""
        assert i not in self.moved and self.owner[i] != dst
        self._shift(i, self.owner[i], dst)
        self.moved[i] = dst
        self.cost += self.costs.cost[i]
        self.throughput += self.view.throughput[i]

    def undo(self, i: int) -> None:
        """Send moved bundle ``i`` back to its owner (the move is forgotten)."""
        dst = self.moved.pop(i)
        self._shift(i, dst, self.view.owner[i])
        self.cost -= self.costs.cost[i]
        self.throughput -= self.view.throughput[i]

    def apply(self, moves: Iterable[tuple[int, int]]) -> None:
        for i, dst in moves:
            self.move(i, dst)

    # --- figures ------------------------------------------------------------------------------------
    def moves(self) -> list[tuple[int, int]]:
        return list(self.moved.items())

    def violation(self, targets: Targets) -> Violation:
        return violation(self.u, targets)

    def violation_free(self, width: float, umax: float) -> bool:
        """Whether every broker is under ``umax`` and within ``width`` of the others."""
        hi = max(self.u)
        return hi <= umax + EPS and hi - min(self.u) <= width + EPS
