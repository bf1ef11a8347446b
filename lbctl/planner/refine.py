"""Fewer bytes for the same goals: a pass after greedy that trades each move for bundles carrying
fewer bytes per point of relief.

Greedy (:mod:`lbctl.planner.greedy`) sheds a broker's *cheapest sufficient* bundle: one bundle
that brings it into the window, however many bytes it carries per point of usage it takes off.
Bundles differ in that by 10-100x (a bundle of many small messages relieves CPU for few bytes, a
bundle of few large ones costs many bytes per point), and the exact model picks the ones that
are cheap per point: on ``benchmarks/plans_on_hardware.py``'s 12-broker seed 2, greedy moved
2,016 MB/s where the exact model moved 1,579 over the same goals, mostly by shedding 0.6-MB/s-a-
point bundles where greedy shed 7-MB/s-a-point ones.

Both steps work on a fixed window ``[lo, hi]`` (every broker inside it meets the band and the
cap, so each step is checked on the brokers it touches only):

* :func:`mend` brings the brokers outside the window inside it: a broker above sheds its
  unmoved bundles in order of cost per unit of its heaviest term's driver (the least bytes per
  point first) to brokers that stay inside, the one short of the window first, else the least
  loaded; a broker below takes bundles in the same order from brokers that stay inside. Within a
  budget and a number of bundles (:data:`TRADE`): it fails rather than spend more.
* :func:`refine` takes a plan that meets the goals and, for each move, most expensive first,
  sends the bundle back and :func:`mend`\\ s its two brokers for less than that move cost:
  kept when that works (the plan is then cheaper, still inside the window), undone otherwise.
  Moves the window does not need are dropped on the way.
* Only bundles whose bytes per message are within :data:`MIX` of their broker's are traded:
  the load model predicts an unusual mix worst, and the cheapest bundles per point are the
  least usual ones (without the rule the pass cut in-band plans in truth, 80/55 -> 75/45 % at
  n = 12/30).
* :func:`polish` refines greedy's plan in two windows (anchored at its least and at its most
  loaded broker) and keeps the cheapest of the three; :func:`lbctl.planner.solve.solve` keeps it
  when it beats greedy's on the goals, then cost. Greedy itself is unchanged
  (``tests/planner/greedy_reference.py`` still gives its very moves).

Measured (``benchmarks/plans_on_hardware.py``, 20 seeds x {5, 12, 30, 60}, auto solver, the same
80 plans): bytes moved against the proven bound, median 2.38 -> 1.84, p90 3.51 -> 3.19, against the
closest Pulsar configuration 0.94 (on lbctl's own model, 11 cases n = 5-30: greedy's plans 1.90x
its LP relaxation, polished 1.45x); in band in truth not lower (14/14/5/0 -> 14/14/6/1 of 20;
n = 12, 30 on 40 seeds: 39 -> 40 of 80). It costs about what greedy costs (0.34 s on 300 brokers
and 1,313 moves).

**Deterministic.** Orders are by (ratio, bundle index), (usage, broker index); every scan is cut
at a fixed count (:data:`_SCAN`, :data:`_DEST_TRIES`, :data:`WORK` in all), never a clock: the
same input gives the same plan on any machine. The safety rules hold as in greedy: every step keeps its brokers inside
the window (under ``hi``, which is at most the cap and the planned ceiling) and asks
:meth:`~lbctl.planner.assignment.Assignment.refuses` of each destination (topics, anti-affinity,
kinds of topics, closed brokers); pinned bundles are never candidates; ``--max-moves`` and
``--max-throughput`` are counted.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Sequence

from lbctl.planner.assignment import EPS, Assignment
from lbctl.planner.greedy import Caps, candidates_by_broker

#: bundles looked at per step of :func:`mend` (in ratio order) before it gives up
_SCAN = 256
#: destinations tried per bundle
_DEST_TRIES = 48
#: passes of :func:`refine` over the moves
PASSES = 3
#: candidates :func:`polish` may look at in all (bundles scanned, destinations tried): a count,
#: not a clock, so the plan stays a function of the input; about half a second of CPU, reached
#: by plans of a thousand moves and more (300 brokers, 1,313 moves: 0.34 s, 8 % fewer bytes)
WORK = 500_000
#: the most bundles one move is traded for. Each moved bundle adds its share of the load model's
#: error, and the cheapest bundles per point are the ones whose mix of messages and bytes is
#: least like their broker's: measured on ``benchmarks/plans_on_hardware.py`` (n = 12, 30; 40
#: seeds), unbounded trades moved the fewest bytes (median 1.64-1.70x the bound) but landed 37
#: plans of 80 in band in truth against greedy's 39; at most 4, 40 (median 1.91-2.06x); 8, 36
TRADE = 4
#: the window :func:`polish` refines in is at least this share of the planned band wide (else the
#: plan's own range): trades that spread brokers to the planned band's edges lose the room a
#: tight plan leaves for the model's error (same runs: 38 of 80 in band at the full width, 40)
SPREAD = 0.5
#: a bundle is traded only if its bytes per message are within this factor (either way) of its
#: broker's own mix (the broker's throughput over its message rate). The load model turns a
#: bundle's messages and bytes into CPU with one fleet byte ratio, so it predicts an unusual mix
#: worst, and the cheapest bundles per point are the least usual ones. Chosen on
#: ``benchmarks/plans_on_hardware.py`` seeds 21-40 (n = 12/30 in band in truth: none 85/55 %,
#: 2 85/55, 3 90/60, 4 90/55, 8 85/55; greedy alone 95/55); on seeds 1-20: in band 80/55 % as
#: greedy alone (75/45 with any mix), bytes/bound median 2.30 (greedy alone 2.46, any mix 1.99)
#: (``None``: any mix)
MIX: float | None = 3.0


class Ratios:
    """Movable bundles in order of cost per unit of each resource's driver, over the cluster and
    per broker (ties by bundle index); and the work left (:data:`WORK`)."""

    def __init__(self, a: Assignment, cands: Sequence[Sequence[int]], work: int = WORK):
        self.work = work
        view = a.view
        drivers = view.drivers
        cost = a.costs.cost
        usual = _usual(view.owner, view.throughput, view.msg_rate, len(a.u), MIX)

        def ordered(bundles: Iterable[int], r: int) -> list[int]:
            return sorted((i for i in bundles if drivers[i][r] > 0 and usual(i)),
                          key=lambda i: (cost[i] / drivers[i][r], i))

        self.by_broker = [[ordered(lst, r) for r in range(3)] for lst in cands]
        self.every = [ordered((i for lst in cands for i in lst), r) for r in range(3)]


def _usual(owner: Sequence[int], tp: Sequence[float], rate: Sequence[float], brokers: int,
           factor: float | None) -> Callable[[int], bool]:
    """Whether a bundle's bytes per message are within ``factor`` of its owner's (:data:`MIX`)."""
    if factor is None:
        return lambda i: True
    tps, rates = [0.0] * brokers, [0.0] * brokers
    for i, j in enumerate(owner):
        tps[j] += tp[i]
        rates[j] += rate[i]
    mix = [t / r if r > 0 else math.inf for t, r in zip(tps, rates, strict=True)]
    span = math.log(factor)

    def usual(i: int) -> bool:
        m, b = mix[owner[i]], (tp[i] / rate[i] if rate[i] > 0 else math.inf)
        if math.isinf(m) or math.isinf(b) or m <= 0 or b <= 0:
            return math.isinf(m) == math.isinf(b) or (m == 0 and b == 0)
        return abs(math.log(b / m)) <= span + 1e-12

    return usual


def _low_term(a: Assignment, j: int, lo: float) -> int:
    """The resource whose term lifts broker ``j`` to ``lo`` for the least driver."""
    t = a.terms[j]
    best, best_r = math.inf, -1
    for r in range(3):
        k = t.per_unit[r]
        if t.now[r] == -math.inf or k <= 0:
            continue
        need = max(0.0, lo - t.resource(r, a.delta[j][r])) / k
        if need < best:
            best, best_r = need, r
    return best_r


def mend(a: Assignment, ratios: Ratios, lo: float, hi: float, fix: Sequence[int],
         budget: float, caps: Caps, exclude: frozenset[int] = frozenset(),
         most: int | None = None) -> list[int] | None:
    """Bring the brokers ``fix`` inside ``[lo, hi]`` by moving at most ``most`` unmoved bundles
    (not ``exclude``), every other broker staying inside, for a total cost below ``budget``: the
    bundles moved, or ``None`` (and every move it made undone) when it cannot."""
    most = len(a.view.bundles) if most is None else most
    view = a.view
    cost = a.costs.cost
    added: list[int] = []
    spent = 0.0
    # receivers, least loaded first (a scan of every broker, counted as work)
    order = heapq.nsmallest(_DEST_TRIES + 2, range(len(a.u)), key=lambda j: (a.u[j], j))
    ratios.work -= len(a.u)

    def fail() -> None:
        for k in reversed(added):
            a.undo(k)

    def usable(k: int) -> bool:
        return (k not in a.moved and k not in exclude and spent + cost[k] < budget
                and not caps.block(a, k))

    def placed(k: int, d: int) -> bool:
        """``k`` moved to ``d`` (and noted) unless ``d``'s rules refuse it."""
        if a.refuses(k, d) is not None:
            return False
        a.move(k, d)
        added.append(k)
        return True

    def step_down(s: int) -> bool:
        r = a.heaviest_term(s)
        if r < 0:
            return False
        short = [d for d in fix if a.u[d] < lo - EPS and d != s]
        for k in ratios.by_broker[s][r][:_SCAN]:
            ratios.work -= 1
            if not usable(k):
                continue
            after = a.usage_if(s, k, -1.0)
            if after < lo - EPS or a.u[s] - after <= EPS:
                continue
            tried = 0
            for d in [*short, *order]:
                if d == s:
                    continue
                ratios.work -= 1
                if a.usage_if(d, k, 1.0) > hi + EPS:
                    continue
                tried += 1
                if tried > _DEST_TRIES:
                    break
                if placed(k, d):
                    return True
        return False

    def step_up(d: int) -> bool:
        r = _low_term(a, d, lo)
        if r < 0:
            return False
        seen = 0
        for k in ratios.every[r]:
            if seen >= _SCAN:
                break
            ratios.work -= 1
            if a.owner[k] == d or not usable(k):
                continue
            seen += 1
            s = view.owner[k]
            if a.usage_if(s, k, -1.0) < lo - EPS:
                continue
            after = a.usage_if(d, k, 1.0)
            if after > hi + EPS or after - a.u[d] <= EPS:
                continue
            if placed(k, d):
                return True
        return False

    # the brokers above the window (the most loaded first), then those below it (the least first)
    phases: tuple[tuple[Callable[[int], tuple[float, int]], Callable[[int], bool],
                        Callable[[int], bool]], ...] = (
        (lambda j: (-a.u[j], j), lambda j: a.u[j] > hi + EPS, step_down),
        (lambda j: (a.u[j], j), lambda j: a.u[j] < lo - EPS, step_up))
    for rank, outside, step in phases:
        for j in sorted(fix, key=rank):
            while outside(j):
                if len(added) >= most or not step(j):
                    fail()
                    return None
                spent = sum(cost[k] for k in added)
    if any(a.u[j] > hi + EPS or a.u[j] < lo - EPS for j in fix):
        fail()
        return None
    return added


def _inside(a: Assignment, j: int, lo: float, hi: float) -> bool:
    return lo - EPS <= a.u[j] <= hi + EPS


def refine(a: Assignment, ratios: Ratios, lo: float, hi: float, caps: Caps,
           passes: int = PASSES) -> None:
    """Make a plan whose brokers are all inside ``[lo, hi]`` cheaper, keeping them inside: each
    move, most expensive first, is dropped when the window holds without it, else traded for
    cheaper ones :func:`mend` finds; unchanged when none is."""
    if not a.moved or not all(_inside(a, j, lo, hi) for j in range(len(a.u))):
        return
    cost = a.costs.cost
    for _ in range(passes):
        changed = False
        for i in sorted(a.moved, key=lambda i: (-cost[i], i)):
            if ratios.work <= 0:
                return
            if i not in a.moved:
                continue
            d = a.moved[i]
            s = a.view.owner[i]
            a.undo(i)
            fix = [j for j in (s, d) if not _inside(a, j, lo, hi)]
            if not fix:
                changed = True
                continue
            if mend(a, ratios, lo, hi, fix, cost[i] * (1 - 1e-9), caps, frozenset((i,)),
                    TRADE) is not None:
                changed = True
            else:
                a.move(i, d)
        if not changed:
            return


def polish(a: Assignment, width: float, umax: float, caps: Caps) -> Assignment:
    """The cheapest of ``a`` and its :func:`refine`\\ s in two windows, anchored at its least and
    at its most loaded broker, as wide as its range or :data:`SPREAD` of ``width`` if that is
    more (``a`` itself when its brokers are not within ``width`` and under ``umax``)."""
    if not a.moved or not a.violation_free(width, umax):
        return a
    best = a
    ratios = Ratios(a, candidates_by_broker(a.view, a.rules, a.costs))
    lo_u, hi_u = min(a.u), max(a.u)
    width = max(hi_u - lo_u, width * SPREAD)
    for lo, hi in ((lo_u, min(lo_u + width, umax)), (hi_u - width, hi_u)):
        b = Assignment(a.view, a.rules, a.costs)
        b.apply(a.moves())
        refine(b, ratios, lo, hi, caps)
        if b.cost < best.cost - EPS:
            best = b
    return best
