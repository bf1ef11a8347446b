"""Which solver runs, what happens when it cannot, and how far from optimal the answer may be.

``--solver auto`` (the default) always computes the greedy plan (and, when it misses the goals,
greedy's hosted pass for bundles too big to share a broker, :func:`lbctl.planner.greedy.solve_hosted`,
kept when nearer them); when scipy is installed and the
problem has at most ``--exact-limit`` (bundle, destination) pairs it also runs the exact model on
HiGHS within a work limit (:data:`lbctl.planner.milp.NODE_LIMIT` nodes), and keeps whichever plan
is nearer the goals, then cheaper. ``exact`` runs the exact model whatever the number of pairs,
unless its estimated memory is over :data:`lbctl.planner.milp.MEMORY_LIMIT` (1 GB: greedy then,
with a note); ``greedy`` never does. Without scipy the exact model is skipped with a note (never
an error).

**The same input gives the same plan.** The greedy plan is deterministic (brokers and bundles are
read in name order, :func:`lbctl.planner.load.canonical`, and ties go to the lower name); the exact
solver's answer is a function of the model and its work limits (nodes, gap), not of the clock.
``--time-limit`` is only the exact solver's safety net, in CPU seconds of the whole command
(every exact pass shares it, :class:`ExactBudget`; the model's build counts against it), so other processes' load never trips it; with the default work limits and
``--exact-limit`` it is out of reach. When it does run out first (a very slow machine, a tiny
limit, ``--solver exact`` on a big model) the exact run is discarded, the greedy plan is kept and
a note says the plan then depends on the machine.

The **gap** is how much cheaper a plan meeting the same goals could be, relative to this one: from
HiGHS's dual bound when the exact model ran, else from :mod:`lbctl.planner.bounds`; 0 means
provably optimal. It is ``None`` when the goals cannot be met (there is nothing to compare with).

The goals solved for are already narrowed by the load model's margin
(:meth:`lbctl.planner.goals.Targets.inside`, see :mod:`lbctl.planner.propose`). When the goals
cannot be met (the
cluster is short of capacity, a bundle is too big for the band), a plan is proposed only if it
brings the cluster at least :data:`IMPROVEMENT` (0.1 point) nearer to them — capacity first, then
the band; otherwise nothing moves.
"""

from __future__ import annotations

import math
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from lbctl.planner import milp
from lbctl.planner.assignment import TOLERANCE, Assignment, Violation, better
from lbctl.planner.bounds import lower_bound
from lbctl.planner.constraints import Rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy import Caps, Shared, solve_greedy, solve_hosted
from lbctl.planner.load import LoadView
from lbctl.planner.lp_round import lp_plan
from lbctl.planner.refine import polish

_R = TypeVar("_R")

SOLVERS = ("auto", "exact", "greedy")
#: (bundle, destination) pairs up to which ``auto`` runs the exact model: HiGHS's root work (cuts,
#: sub-MIPs: no public work limit, see :mod:`lbctl.planner.milp`) measured 1.3-3.9 CPU s at 240
#: pairs, 1.7-2.7 at 680 and 5.3 at 1,590, and 30-40 at 10,440 (where 20,000 used to let it run
#: into the limit every time): up to 1,000 the default :data:`TIME_LIMIT` stays out of reach.
#: Not a rule that makes every ``--time-limit`` give the same plan: a 100-node run took up to
#: 0.44 CPU s at 45 pairs, 0.97 at 72, 2.8 at 240 (random clusters, 8 seeds a size; 10x between
#: models of one size), so a limit of 1 s is out of reach only for ~50 pairs and fewer — a cut
#: that would give up the exact plan on plans_on_hardware's 5-broker clusters (8.5 % fewer
#: bytes moved over seeds 1-8 after repair, 44 % on seed 7). Below a few seconds, the
#: safety net is the documented fallback (docs/propose.md, "Deterministic plans")
EXACT_LIMIT = 1_000
#: the exact solver's safety net, CPU seconds
TIME_LIMIT = 10.0
INSTALL_HINT = "pip install 'lbctl[propose]'"
#: a plan that cannot meet the goals is only worth its moves if it gets this much nearer them
IMPROVEMENT = 0.001


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its waited-for children (the exact solver's forks,
    :func:`lbctl.planner.milp._within`), user and system."""
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + ch.ru_utime + ch.ru_stime


class ExactBudget:
    """``--time-limit`` as the whole command's exact-solver budget, in CPU seconds: every exact
    pass (a solve's main and cheapest-nearest runs, propose's narrower passes) gets what the
    earlier ones left, its model's sizing and build counted; none runs once it is spent. A pass
    the budget stops falls back to greedy's plan as a clock-stopped run always did, so the plan
    is still decided by the work limits wherever the clock does not intervene. (Each pass used
    to get the full limit: 172 CPU s for ``--time-limit 60`` on a 114k-pair model.)

    ``limits`` lists the limit each pass was given (tests count them)."""

    __slots__ = ("limits", "seconds", "used")

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.used = 0.0
        self.limits: list[float] = []

    def left(self) -> float:
        return self.seconds - self.used

    def charge(self, run: Callable[[], _R]) -> _R:
        """``run()``, its CPU seconds (this process's and its children's) taken from the
        budget."""
        t0 = _cpu_seconds()
        try:
            return run()
        finally:
            self.used += max(0.0, _cpu_seconds() - t0)

    def solve(self, run: Callable[[float], milp.MilpResult]) -> milp.MilpResult:
        """``run(limit)`` with what is left as its limit; a ``"time limit"`` result without
        running when nothing is."""
        left = self.left()
        if left <= 0:
            return milp.MilpResult(None, "time limit", None, None, None, 1.0, 0)
        self.limits.append(left)
        return self.charge(lambda: run(left))


@dataclass(frozen=True, slots=True)
class SolveOptions:
    solver: str = "auto"
    time_limit: float = TIME_LIMIT
    exact_limit: int = EXACT_LIMIT
    refine: bool = True  # greedy's plan polished for fewer bytes (lbctl.planner.refine.polish)
    #: shared by every solve of one command (propose's passes); ``None``: this solve's own
    budget: ExactBudget | None = field(default=None, compare=False)
    #: greedy's set-up and levelling made once for every solve of one cluster (propose's margin
    #: passes: :class:`lbctl.planner.greedy.Shared`); ``None``: this solve's own (its widths share)
    shared: Shared | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Solution:
    """The moves chosen (bundle index, destination index) and how they were found."""

    moves: tuple[tuple[int, int], ...]
    solver: str  # "exact (HiGHS)", "greedy", "none"
    status: str  # in words
    gap: float | None
    lower_bound: float | None  # bytes/s-equivalent cost no plan meeting the goals can go below
    width: float  # the band width planned for (fraction)
    violation: Violation
    notes: tuple[str, ...] = ()


def band_widths(targets: Targets) -> list[float]:
    """The widths of the windows to plan for: the target range, or for a std target a few widths
    the std is likely to hold in (std <= width / 2 always)."""
    if targets.target_std is not None:
        s = targets.target_std
        return [4 * s, 3 * s, 2.5 * s, 2 * s]
    return [targets.target_range or 0.0]


def _widest(targets: Targets, brokers: int) -> float:
    """The widest range a plan meeting the band goal can have: the target range, or for a std
    target ``std · sqrt(2n)`` (two brokers at the extremes, the rest at the mean)."""
    if targets.target_std is not None:
        return targets.target_std * math.sqrt(2 * max(brokers, 1))
    return targets.target_range or 0.0


def _better(v: Violation, base: Violation) -> bool:
    """Whether ``v`` is nearer the hard goals than ``base`` by :data:`IMPROVEMENT` at least
    (capacity first, then the band)."""
    if v.capacity < base.capacity - IMPROVEMENT:
        return True
    return v.capacity <= base.capacity + 1e-9 and v.band < base.band - IMPROVEMENT


def _beats(a: Assignment, b: Assignment, targets: Targets) -> bool:
    return better(a.violation(targets), a.cost, b.violation(targets), b.cost)


def _lp_rounded(view: LoadView, rules: Rules, costs: Costs, targets: Targets, width: float,
                caps: Caps, greedy: Assignment) -> Assignment | None:
    """The rounded LP plan (:mod:`lbctl.planner.lp_round`) planned no wider than greedy's plan
    and no higher than its most loaded broker when greedy's meets the goals: it is then kept
    for its bytes only, never for a range or a peak the load model's error has less room in."""
    if greedy.violation(targets).ok:
        width = min(width, max(greedy.u) - min(greedy.u))
        targets = Targets(min(targets.max_usage, max(greedy.u)), targets.target_range,
                          targets.target_std, targets.max_moves, targets.max_throughput)
    return lp_plan(view, rules, costs, targets, width, caps)


def solve(view: LoadView, rules: Rules, costs: Costs, targets: Targets, caps: Caps,
          options: SolveOptions) -> Solution:
    start = Assignment(view, rules, costs)
    v0 = start.violation(targets)
    if v0.ok:
        return Solution((), "none", "the goals are already met: nothing to move", 0.0, 0.0,
                        band_widths(targets)[-1], v0)
    notes: list[str] = []

    # greedy, for every candidate width; the cheapest plan meeting the goals, else the nearest
    best: Assignment | None = None
    best_width = band_widths(targets)[0]
    shared = Shared.of(options.shared, view, rules, costs)  # what the widths and passes share
    for width in band_widths(targets):
        g = solve_greedy(view, rules, costs, targets, width, caps, shared=shared).assignment
        if not g.violation(targets).ok and (h := solve_hosted(
                view, rules, costs, targets, width, caps, shared=shared)) is not None \
                and _beats(h.assignment, g, targets):
            g = h.assignment  # a bundle too big to share a broker, given one (greedy.Hosts)
        if options.refine and (p := polish(g, width, targets.max_usage, caps)) is not g \
                and _beats(p, g, targets):
            g = p
        if best is None or _beats(g, best, targets):
            best, best_width = g, width
    assert best is not None
    solver, status = "greedy", "greedy + local search"
    gap: float | None = None
    bound: float | None = None

    movable = sum(1 for why in rules.pinned if why is None)
    most = movable * max(len(view.brokers) - 1, 0)  # pairs, before the constraints
    budget = options.budget if options.budget is not None else ExactBudget(options.time_limit)
    exact_wanted = options.solver == "exact" or (options.solver == "auto"
                                                  and most <= options.exact_limit)
    if options.solver == "auto" and not exact_wanted:
        notes.append(f"{most:,} (bundle, destination) pairs > --exact-limit "
                     f"{options.exact_limit:,}: greedy solver")
        if options.refine and (lp := _lp_rounded(view, rules, costs, targets, best_width, caps,
                                                 best)) is not None and _beats(lp, best, targets):
            best = lp
            status = "greedy + local search, LP relaxation rounded"
    elif exact_wanted and not milp.available():
        notes.append(f"scipy is not installed: greedy solver only ({INSTALL_HINT} for the "
                     "exact solver)")
    elif exact_wanted and not (size := budget.charge(
            lambda: milp.size_of(view, rules, caps))).fits:
        listed = size.pairs is not None
        notes.append(f"{len(size.pairs) if size.pairs is not None else most:,} (bundle, "
                     f"destination) pairs: the exact model would need "
                     f"{'about' if listed else 'more than'} {size.memory / 2**20:,.0f} MB, over "
                     f"its {milp.MEMORY_LIMIT / 2**20:,.0f} MB limit; greedy solver")
    elif exact_wanted:
        res = budget.solve(lambda limit: milp.solve_milp(
            view, rules, costs, targets, best_width, caps, limit, pairs=size.pairs))
        if res.moves is not None:
            exact = Assignment(view, rules, costs)
            exact.apply(res.moves)
            if not _beats(best, exact, targets):
                best = exact
                solver = "exact (HiGHS)"
                status = ("optimal" if res.status == "optimal"
                          else f"{res.status}: best plan found")
                gap = res.gap
            else:
                notes.append(f"the exact solver stopped ({res.status}) with a plan no better "
                             "than greedy's; greedy's is kept")
        elif res.status == "time limit":
            notes.append(f"the exact solver reached its safety net (--time-limit "
                         f"{options.time_limit:g} CPU s) before its work limit: greedy's plan is "
                         "kept, and on a faster machine the plan may differ")
        elif res.status == "wall limit":
            notes.append(f"the exact solver's child was stopped by the wall clock "
                         f"({milp.WALL_FACTOR:g}x --time-limit {options.time_limit:g} s, plus "
                         f"{milp.GRACE:g} s: starved of CPU or stuck): greedy's plan is kept, and "
                         "on a less loaded machine the plan may differ")
        else:
            notes.append(f"the exact solver found no plan ({res.status}); greedy's is kept")
        if res.bound is not None and best.violation(targets).ok:
            bound = res.bound * res.norm
        v_exact = best.violation(targets)
        if not v_exact.ok and res.moves is not None:
            # the goals are out of reach: the cheapest plan as near to them (within tolerance)
            span = v_exact.band + (targets.target_range or 0.0) if targets.target_std is None \
                else max(best.u) - min(best.u)
            limits = (v_exact.capacity + TOLERANCE, max(0.0, span - best_width) + TOLERANCE)
            cheap = budget.solve(lambda limit: milp.solve_milp(
                view, rules, costs, targets, best_width, caps, limit, pairs=size.pairs,
                slack_limits=limits))
            if cheap.moves is not None:
                lean = Assignment(view, rules, costs)
                lean.apply(cheap.moves)
                if _beats(lean, best, targets):
                    best = lean
                    solver, status = "exact (HiGHS)", f"{cheap.status}: cheapest nearest plan"

    v = best.violation(targets)
    if not v.ok and not _better(v, v0):
        return Solution((), solver, "the goals cannot be met and no plan brings the cluster "
                        f"nearer to them (by {IMPROVEMENT * 100:g} point or more)", None, None,
                        best_width, v0, tuple(notes))
    if v.ok:
        # the LP bound where auto would run the exact model (cheap there), never for greedy
        lb = lower_bound(view, rules, costs, _widest(targets, len(view.brokers)),
                         targets.max_usage,
                         lp_pairs=0 if options.solver == "greedy" else options.exact_limit,
                         aggregate=False)
        if lb is not None:
            bound = max(bound or 0.0, lb)
        if bound is not None and gap is None:
            gap = max(0.0, (best.cost - bound) / best.cost) if best.cost > 0 else 0.0
        elif bound is not None and gap is not None and best.cost > 0:
            gap = min(gap, max(0.0, (best.cost - bound) / best.cost))
    else:
        gap = None
        status += "; the goals cannot all be met"
    return Solution(tuple(best.moves()), solver, status, gap, bound, best_width, v,
                    tuple(notes))
