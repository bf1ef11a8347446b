"""``lbctl propose``: one snapshot and the goals in, one plan@1 and its explanation out.

:func:`propose` builds the planner's view of the cluster (:mod:`lbctl.planner.load`), its
constraints, the costs, solves (:mod:`lbctl.planner.solve`), looks for bundles no move can place
(:mod:`lbctl.planner.splits`), and returns a :class:`Proposal`, whose :meth:`~Proposal.plan` is a
plan@1 that ``lbctl apply`` can execute as it stands:

* every action is an ``unload`` of an existing bundle from its **current owner** (the broker the
  snapshot says owns it) with a ``destinationBroker`` that is a live broker of the snapshot, other
  than the owner (``pulsar-admin namespaces unload -b RANGE -d BROKER``), or a ``split`` with the
  boundaries ``split-bundle`` previews;
* each bundle appears at most once;
* ``shedding`` and ``placement`` are ``lbctl`` (the planner decides both);
* each broker's ``usageAfter`` is the load model's prediction after all the unloads, which is
  what the goals were checked on; the ``explanation`` key carries the solver, the gap, the goals
  before/after, the balancedness score and why each move was chosen (``docs/propose.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lbctl.config import Settings
from lbctl.errors import LbctlError, UsageError
from lbctl.model.cluster import ClusterState
from lbctl.model.decision import Label, Reason
from lbctl.model.loadmodel import LoadModel
from lbctl.plan import Action, BrokerRow, Plan
from lbctl.planner import PLANNER
from lbctl.planner.assignment import Assignment, violation
from lbctl.planner.constraints import Rules, build_rules
from lbctl.planner.cost import Costs, Totals
from lbctl.planner.goals import DEFAULT_RANGE, GoalResult, Targets, balancedness, evaluate
from lbctl.planner.greedy import Caps, Shared
from lbctl.planner.hedge import hedge
from lbctl.planner.load import RESOURCES, LoadView, build, canonical
from lbctl.planner.repair import repair
from lbctl.planner.solve import (
    EXACT_LIMIT,
    SOLVERS,
    ExactBudget,
    Solution,
    SolveOptions,
    band_widths,
    solve,
)
from lbctl.planner.splits import SplitFinding, find_splits
from lbctl.units import rounded

#: how many standard errors of its slope a broker's predicted change may be off by, for the
#: robust repair (:func:`_robust`; 0, 1, 2 measured: 1 and 2 alike, better than 0)
ROBUST_Z = 1.0
#: the share of the model's margin the robust repair keeps inside the band
ROBUST_MARGIN = 0.5


@dataclass(frozen=True)
class ProposeOptions:
    """The goals and limits of ``lbctl propose`` (percentages and points as typed; MB/s)."""

    max_usage: float | None = None  # percent; default loadBalancerBrokerOverloadedThresholdPercentage
    target_range: float | None = None  # points; default 10 unless target_std
    target_std: float | None = None  # points
    max_moves: int | None = None
    max_throughput: float | None = None  # bytes/s
    solver: str = "auto"
    time_limit: float = 10.0
    exact_limit: int = EXACT_LIMIT
    splits: bool = True
    refine: bool = True  # greedy's plan refined for fewer bytes (lbctl.planner.refine)

    def check(self) -> None:
        if self.target_range is not None and self.target_std is not None:
            raise UsageError("give --target-range or --target-std, not both")
        for name, v in (("--max-usage", self.max_usage), ("--target-range", self.target_range),
                        ("--target-std", self.target_std),
                        ("--max-throughput",  # asked in MB/s: named in what was typed
                         None if self.max_throughput is None else self.max_throughput / 1048576),
                        ("--time-limit", self.time_limit)):
            if v is not None and (not math.isfinite(v) or v < 0):
                raise UsageError(f"{name} must be a number >= 0, got {v:g}")
        if self.max_moves is not None and self.max_moves < 0:
            raise UsageError(f"--max-moves must be >= 0, got {self.max_moves}")
        if self.exact_limit < 0:
            raise UsageError(f"--exact-limit must be >= 0, got {self.exact_limit}")
        if self.solver not in SOLVERS:
            raise UsageError(f"--solver must be one of {', '.join(SOLVERS)}, got {self.solver!r}")

    def targets(self, settings: Settings) -> Targets:
        self.check()
        umax = (self.max_usage if self.max_usage is not None
                else float(settings["loadBalancerBrokerOverloadedThresholdPercentage"]))
        rng = None
        if self.target_std is None:
            rng = DEFAULT_RANGE if self.target_range is None else self.target_range / 100
        std = None if self.target_std is None else self.target_std / 100
        return Targets(umax / 100, rng, std, self.max_moves, self.max_throughput)


@dataclass(frozen=True)
class Proposal:
    """A solved proposal: the state, what was solved, and the result."""

    state: ClusterState
    settings: Settings
    view: LoadView
    rules: Rules
    costs: Costs
    targets: Targets
    solution: Solution
    after: Assignment
    splits: SplitFinding
    goals: tuple[GoalResult, ...]
    notes: tuple[str, ...] = ()
    order: tuple[tuple[int, int], ...] = field(default=())
    #: the brokers in the order the snapshot listed them (the plan's rows keep it)
    listed: tuple[str, ...] = ()

    @property
    def moves(self) -> tuple[tuple[int, int], ...]:
        return self.order or self.solution.moves

    def usages_before(self) -> list[float]:
        return self.view.usages()

    def usages_after(self) -> list[float]:
        return list(self.after.u)

    def totals(self) -> Totals:
        return Totals.of(self.view, self.costs, [i for i, _ in self.moves])

    def balancedness(self) -> tuple[float, float]:
        return balancedness(self.goals, after=False), balancedness(self.goals, after=True)

    def reasons(self) -> dict[int, Reason]:
        """Per moved bundle: Overloaded when the move relieves a broker at or above the mean
        usage, Underloaded when it feeds a broker from one below it."""
        before = self.usages_before()
        mean = sum(before) / len(before)
        return {i: Reason.OVERLOADED if before[self.view.owner[i]] >= mean else Reason.UNDERLOADED
                for i, _ in self.moves}

    def plan(self) -> Plan:
        view = self.view
        reasons = self.reasons()
        actions = [
            Action(action="unload", bundle=view.bundles[i], broker=view.brokers[view.owner[i]],
                   reason=str(reasons[i]), destinationBroker=view.brokers[dst],
                   msgRate=rounded(view.msg_rate[i]), throughput=rounded(view.throughput[i]))
            for i, dst in self.moves
        ]
        actions += self.splits.actions
        before, after = self.usages_before(), self.usages_after()
        sent = [0.0] * len(view.brokers)
        got = [0.0] * len(view.brokers)
        for i, dst in self.moves:
            sent[view.owner[i]] += view.throughput[i]
            got[dst] += view.throughput[i]
        counts = [0] * len(view.brokers)
        for o in view.owner:
            counts[o] += 1
        rows = []
        index = view.index()
        for b in self.listed or view.brokers:
            j = index[b]
            rep = self.state.brokers[b]
            label = reason = None
            why = f"usage {before[j]:.1%} -> {after[j]:.1%}"
            if sent[j] > 0:
                label, reason = str(Label.SUCCESS), str(Reason.OVERLOADED)
                why += f"; sends {sent[j] / 1048576:,.2f} MB/s away"
            elif got[j] > 0:
                label, reason = str(Label.SUCCESS), str(Reason.UNDERLOADED)
                why += f"; takes {got[j] / 1048576:,.2f} MB/s"
            if j in self.rules.closed:
                why += f"; takes no bundle: {self.rules.closed[j]}"
            rows.append(BrokerRow(
                broker=b, usage=before[j], usage_after=after[j], score=None,
                msg_rate=rep.msg_rate, throughput=rep.throughput,
                bundles=len(rep.lastStats) or rep.numBundles or counts[j], label=label,
                reason=reason, why=why,
                numbers={"usageAfter": after[j], "throughputOut": sent[j],
                         "throughputIn": got[j]},
                resources=rep.resource_percents()))
        gate = None
        if not actions:
            gate = self.solution.status
        st = self.state
        return Plan(st.cluster, st.captured_at_iso, st.load_manager, PLANNER, PLANNER,
                    self.settings, tuple(actions), tuple(rows), len(view.bundles), gate)


def propose(state: ClusterState, settings: Settings, options: ProposeOptions | None = None, *,
            model: LoadModel | None = None,
            recently_moved: Mapping[str, int] | None = None,
            history: Sequence[ClusterState] = (),
            held: Mapping[str, str] | None = None) -> Proposal:
    """Plan ``state`` against the goals of ``options`` (see the module docstring).

    ``model`` reuses a load model (the simulator's planner keeps learning one); else it is
    learnt from ``history`` (the snapshots up to ``state``, oldest first) when that holds more
    than one, else calibrated on ``state``. ``recently_moved`` pins bundles moved by earlier plans
    to the grace period; ``held`` pins more, each with why."""
    options = options or ProposeOptions()
    targets = options.targets(settings)
    if not state.brokers:
        raise UsageError("the snapshot has no broker")
    listed = tuple(state.brokers)
    state = canonical(state)
    if model is None and len(history) > 1:
        model = LoadModel.learn([canonical(h) for h in history])
    view = build(state, settings, model)
    _check_finite(state, view)
    rules = build_rules(state, settings, view, recently_moved, held)
    notes: list[str] = []
    if view.model.history and not math.isfinite(view.model.ratio_error):
        notes.append("the reports' history does not tell what a byte costs against a message "
                     "(the brokers' message sizes changed too little): bytes are costed at the "
                     "fleet's fit, and a bundle whose message size differs from its new "
                     "broker's is predicted with less confidence")
    for b in view.model.thin():
        j = view.index().get(b)
        if j is not None and j not in rules.closed:
            rules.closed[j] = ("too little history to predict its usage (thin): it takes no "
                               "bundle")
    costs = Costs.of(view)
    caps = Caps(options.max_moves, options.max_throughput)
    before = view.usages()
    margin = view.model.margin(planned_level(view, before, targets))
    planning = targets.inside(margin, max(before))
    v0 = violation(before, targets)
    refused = False
    if v0.ok:
        solution = Solution((), "none", "the goals are already met: nothing to move", 0.0, 0.0,
                            band_widths(planning)[-1], v0)
    elif refused := not _room(planning):
        solution = Solution((), "none", _no_room(targets, planning, margin), None, None, 0.0, v0)
    else:
        # one exact-solver budget for every pass below (--time-limit is the command's), and
        # greedy's set-up and levelling, which no pass's narrower goals change, made once
        solve_options = SolveOptions(options.solver, options.time_limit, options.exact_limit,
                                     options.refine, ExactBudget(options.time_limit),
                                     Shared(view, rules, costs))
        solution = _solved(view, rules, costs, planning, caps, solve_options)
        for share in (0.5, 0.0):  # the margin out of reach: as much of it as the bundles allow
            if solution.violation.ok:
                break
            narrower = _solved(view, rules, costs, targets.inside(margin * share, max(before)),
                               caps, solve_options)
            if narrower.violation.ok:
                solution = narrower
                notes.append(f"the band is planned {margin * share * 100:.1f} points inside the "
                             f"target, not the load model's full margin ({margin * 100:.1f})")
    uncertain = False  # the goals were met as predicted, not on the model's uncertain ends
    if solution.moves and view.model.history and targets.target_range is not None:
        robust = _robust(view, rules, costs, solution, targets.inside(
            margin * ROBUST_MARGIN, max(before)), caps)
        uncertain = solution.violation.ok and not robust.violation.ok
        if uncertain:
            notes.append("the band is left out of reach: loading the brokers whose cost the "
                         "load model knows least would risk raising the most loaded broker "
                         "(each broker's predicted usage plus its slope's error, kept below "
                         "the highest usage now)")
        solution = robust
        if not uncertain:
            solution = _hedged(view, rules, costs, solution, targets.inside(
                margin * ROBUST_MARGIN, max(before)), caps, targets.target_range)
    after = Assignment(view, rules, costs)
    after.apply(solution.moves)
    splits = SplitFinding((), (), ())
    if options.splits and not solution.violation.ok and len(view.brokers) > 1 and not refused \
            and not uncertain:
        # too big for the band asked for (not the narrower one planned for)
        width = targets.target_range if targets.target_range is not None else solution.width
        splits = find_splits(state, settings, after, width)
        if splits.actions and solution.moves and v0.capacity <= 0 and caps == Caps():
            # moves for a band they cannot reach: the split comes first, the cluster is planned
            # again once the split bundles report (moves relieving an overloaded broker stay)
            notes.append(f"{len(solution.moves)} move(s) that could not reach the band are not "
                         "proposed: split first, then plan again")
            solution = Solution((), solution.solver, "a bundle is too big for the band: split "
                                "it first", None, None, solution.width, v0, solution.notes)
            after = Assignment(view, rules, costs)
            splits = find_splits(state, settings, after, width)  # on the bundles where they are
        notes += splits.notes
    res_before = _resources(view, ())
    res_after = _resources(view, solution.moves)
    goals = evaluate(before, after.u, res_before, res_after, targets)
    order = tuple(sorted(solution.moves, key=lambda m: (view.owner[m[0]],
                                                        -view.throughput[m[0]], m[0])))
    notes = list(solution.notes) + notes
    if len(view.brokers) == 1:
        notes.append("one broker: there is nowhere to move a bundle")
    return Proposal(state, settings, view, rules, costs, targets, solution, after, splits,
                    tuple(goals), tuple(notes), order, listed)


#: the resources whose percentages make the weighted usage (``getMaxResourceUsageWithWeight``)
_WEIGHED = ("cpu", "directMemory", "bandwidthIn", "bandwidthOut")


def _check_finite(state: ClusterState, view: LoadView) -> None:
    """Refuse a broker whose usage the plan would start from is not a number: a report's usage
    beyond float range (``ResourceUsage.percentUsage()`` computes in float: 1e308 of 800 is
    +Infinity), or a load model spoilt by such reports. The planner's comparisons pass over a NaN
    term, so such a broker was planned on its other resources alone and the plan said "the goals
    are already met" beside a broker at +inf (``recommend`` models Pulsar's strategies on the
    same figures, as Java computes them)."""
    for b, rep in state.brokers.items():
        for res in _WEIGHED:
            r = getattr(rep, res)
            if not math.isfinite(r.percent):
                raise LbctlError(
                    f"broker {b}: its {res} usage is not a finite percentage (it reports "
                    f"{r.usage:g} of {r.limit:g}: {r.percent:g} % in Java's float arithmetic); "
                    "lbctl's planner cannot plan on it: correct the report")
    for j, b in enumerate(view.brokers):
        for res in _WEIGHED:
            if not math.isfinite(view.percents[j][res]):
                raise LbctlError(
                    f"broker {b}: the load model learnt from the history gives its {res} usage "
                    f"as {view.percents[j][res]:g} % (a report in the history beyond float "
                    "range); lbctl's planner cannot plan on it: leave those snapshots out")


def _solved(view: LoadView, rules: Rules, costs: Costs, planning: Targets, caps: Caps,
            options: SolveOptions) -> Solution:
    """The solver's plan, repaired (:mod:`lbctl.planner.repair`) when it misses the goals."""
    solution = solve(view, rules, costs, planning, caps, options)
    if solution.violation.ok or not solution.moves:
        return solution
    moves = repair(view, rules, costs, solution.moves, planning, caps)
    return _revised(view, rules, costs, solution, moves, "repair", planning)


def _robust(view: LoadView, rules: Rules, costs: Costs, solution: Solution, goals: Targets,
            caps: Caps) -> Solution:
    """The plan repaired against the model's uncertainty (:func:`repair` with each broker's
    slope error): a broker whose cost is little known should not take (or shed) the biggest
    change — its error grows with the change."""
    moves = repair(view, rules, costs, solution.moves, goals, caps, _uncertainty(view))
    return _revised(view, rules, costs, solution, moves, "robust repair", goals)


def _hedged(view: LoadView, rules: Rules, costs: Costs, solution: Solution, goals: Targets,
            caps: Caps, width: float) -> Solution:
    """The plan hedged against the model's error on many brokers at once
    (:mod:`lbctl.planner.hedge`)."""
    moves = hedge(view, rules, costs, solution.moves, goals, caps, _uncertainty(view), width)
    return _revised(view, rules, costs, solution, moves, "hedge", goals)


def _uncertainty(view: LoadView) -> list[float]:
    """Each broker's relative uncertainty the robust passes weigh changes by: its slope error,
    :data:`ROBUST_Z` times over (0 for a broker the model has no quality for)."""
    quality = view.model.quality
    return [ROBUST_Z * q.slope_error if (q := quality.get(b)) is not None else 0.0
            for b in view.brokers]


def _revised(view: LoadView, rules: Rules, costs: Costs, solution: Solution,
             moves: tuple[tuple[int, int], ...], by: str, goals: Targets) -> Solution:
    """``solution`` with a pass's ``moves`` (the same solution when the pass changed nothing),
    its solver named with the pass, its violation judged against ``goals``."""
    if moves == solution.moves:
        return solution
    after = Assignment(view, rules, costs)
    after.apply(moves)
    return Solution(moves, f"{solution.solver} + {by}", solution.status, solution.gap,
                    solution.lower_bound, solution.width, after.violation(goals), solution.notes)


def planned_level(view: LoadView, before: Sequence[float], targets: Targets) -> float:
    """The usage a plan brings brokers to (a fraction): the mean of their usage now, at most
    the cap — where the load model's error is measured for the margin
    (:meth:`LoadModel.margin`)."""
    return min(targets.max_usage, sum(before) / len(before)) if before else targets.max_usage


def _room(planning: Targets) -> bool:
    band = planning.target_std if planning.target_std is not None else planning.target_range
    return (band or 0.0) > 0 and planning.max_usage > 0


def _no_room(targets: Targets, planning: Targets, margin: float) -> str:
    """Why the plan is refused: no band left inside the margin, or (the band has room) no cap —
    ``--max-usage 0`` was said to leave no room inside a 10-point band."""
    band = planning.target_std if planning.target_std is not None else planning.target_range
    if (band or 0.0) > 0:
        return (f"refused: the load model's error (±{margin * 100:.1f} points at p95) leaves no "
                f"room under the cap (max usage {targets.max_usage * 100:g} %); give a history "
                "of reports to learn the model from, or a higher --max-usage")
    return (f"refused: the load model's error (±{margin * 100:.1f} points at p95) leaves no "
            f"room inside the band ({targets.band_words()}); give a history of reports to learn "
            "the model from, or a wider band")


def _resources(view: LoadView, moves: tuple[tuple[int, int], ...]) -> dict[str, list[float]]:
    """Per weighted modelled resource, every broker's percentage (brokers with a limit)."""
    pct = view.resource_percents_after(moves)
    weights = {"cpu": view.weights[0], "bandwidthIn": view.weights[2],
               "bandwidthOut": view.weights[3]}
    out: dict[str, list[float]] = {}
    for res in RESOURCES:
        if weights[res] <= 0:
            continue
        vals = [p[res] for j, p in enumerate(pct) if res in view.model.fits.get(view.brokers[j], {})]
        if vals:
            out[res] = vals
    return out
