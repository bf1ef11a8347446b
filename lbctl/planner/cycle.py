"""lbctl's planner as one more strategy of the simulator (``simulate``/``compare --strategy lbctl``).

Each cycle the leader's view (the reports last written) goes to :meth:`PlannerLoadManager.run_cycle`,
which answers with the same records the modular load manager gives (unload outcomes with a
destination), so the simulator moves bundles, measures and compares exactly as for Pulsar's
strategies. The planner acts like an operator who runs ``lbctl propose`` and applies the plan:

* **plan once**: when the reported loads are outside the band (range above the target, or a
  broker above the capacity goal), it plans the whole cluster and every move is carried out in
  that cycle;
* **trust its own moves**: a broker reports on its own schedule (``needBrokerDataUpdate``), so
  until its report shows a move of the last plans (the bundle gone from the source, present at the
  destination), the planner takes the report as the move predicts it (the load model), for at
  most ``loadBalancerReportUpdateMaxIntervalMinutes`` — like the preallocation Pulsar's placement
  keeps — rather than plan again on a stale report;
* **re-plan only when the band is left**: inside the band it does nothing at all;
* it keeps its first calibration of the load model (a host's cost per unit of traffic does not
  change because bundles moved), calibrating brokers that join later from their first report, as
  the simulator does; bundles it moved stay put for ``loadBalancerSheddingGracePeriodMinutes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from lbctl.config import Settings
from lbctl.loadmanager.loaddata import update_bundle_data
from lbctl.model.cluster import ClusterState
from lbctl.model.cycle import CycleMemory
from lbctl.model.decision import Selection, SheddingDecision, UnloadOutcome
from lbctl.model.loadmodel import LoadModel
from lbctl.planner import PLANNER
from lbctl.planner.goals import Stats as UsageStats
from lbctl.planner.goals import band_met
from lbctl.planner.load import calibrate, carried, with_moves
from lbctl.planner.propose import ProposeOptions, propose

_EMPTY: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True)
class PlannerMemory:
    """What the planner keeps between cycles."""

    model: LoadModel | None = None
    recently_moved: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    pending: tuple[tuple[str, str, str], ...] = ()  # (bundle, source, destination)
    planned_at: int | None = None
    plans: int = 0
    #: the reported usages when no plan could improve the cluster (not planned again unchanged)
    hopeless: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class _Name:
    name: str


@dataclass(frozen=True)
class PlannerCycle:
    """One cycle of the planner, in the shape the simulator reads."""

    state: ClusterState
    decision: SheddingDecision | None
    outcomes: tuple[UnloadOutcome, ...]
    gate: str | None
    memory: CycleMemory

    @property
    def unloads(self) -> tuple[UnloadOutcome, ...]:
        return tuple(o for o in self.outcomes if o.skipped is None)


class PlannerLoadManager:
    """Runs the planner cycle after cycle (module docstring)."""

    shedding = _Name(PLANNER)
    placement = _Name(PLANNER)

    def __init__(self, options: ProposeOptions):
        self.options = ProposeOptions(
            max_usage=options.max_usage, target_range=options.target_range,
            target_std=options.target_std, max_moves=options.max_moves,
            max_throughput=options.max_throughput, solver=options.solver,
            time_limit=options.time_limit, exact_limit=options.exact_limit, splits=False)

    def run_cycle(self, state: ClusterState, settings: Settings,
                  memory: CycleMemory | None = None) -> PlannerCycle:
        mem = memory or CycleMemory()
        pm = mem.shedding if isinstance(mem.shedding, PlannerMemory) else PlannerMemory()
        bundle_data = update_bundle_data(state, mem.bundle_data)
        now = state.captured_at
        grace = int(settings["loadBalancerSheddingGracePeriodMinutes"]) * 60_000
        recent = {b: t for b, t in pm.recently_moved.items() if t >= now - grace}

        def done(gate: str | None, outcomes: tuple[UnloadOutcome, ...] = (),
                 decision: SheddingDecision | None = None, *, model: LoadModel | None = None,
                 pending: tuple[tuple[str, str, str], ...] = (),
                 planned_at: int | None = None,
                 hopeless: tuple[tuple[str, float], ...] = ()) -> PlannerCycle:
            new = PlannerMemory(model or pm.model, MappingProxyType(recent), pending,
                                planned_at if planned_at is not None else pm.planned_at,
                                pm.plans + (1 if outcomes else 0), hopeless)
            return PlannerCycle(state, decision, outcomes, gate,
                                CycleMemory(bundle_data, mem.recently_unloaded, new))

        if len(state.brokers) <= 1:
            return done(f"only {len(state.brokers)} broker: nothing to plan", pending=pm.pending)
        # moves of earlier plans the reports do not show yet count as done (predicted by the
        # model), until loadBalancerReportUpdateMaxIntervalMinutes has passed since the plan
        limit = int(settings["loadBalancerReportUpdateMaxIntervalMinutes"]) * 60_000
        pending: tuple[tuple[str, str, str], ...] = ()
        if pm.pending and pm.planned_at is not None and now - pm.planned_at <= limit:
            owner, _ = carried(state)
            pending = tuple(p for p in pm.pending if p[0] in owner and p[1] in state.brokers
                            and p[2] in state.brokers and not (
                                p[0] in state.brokers[p[2]].lastStats
                                and p[0] not in state.brokers[p[1]].lastStats))
        model = pm.model or calibrate(state)
        if pending:
            state = with_moves(state, model, pending)
        targets = self.options.targets(settings)
        w = settings.weights4()
        usages = [rep.max_resource_usage_with_weight(*w) for rep in state.brokers.values()]
        st = UsageStats.of(usages)
        if st.max <= targets.max_usage + 1e-9 and band_met(st, targets):
            return done(f"inside the band ({targets.band_words()}; range "
                        f"{st.range * 100:.2f} points): nothing to do", model=model,
                        pending=pending)
        seen = tuple(zip(state.brokers, usages, strict=True))
        if pm.hopeless and _same(pm.hopeless, seen):
            return done("no plan can bring the cluster nearer to the goals (unchanged since "
                        "the last attempt)", model=model, pending=pending, hopeless=seen)
        proposal = propose(state, settings, self.options, model=model, recently_moved=recent)
        view = proposal.view
        reasons = proposal.reasons()
        outcomes = []
        moved = []
        for i, dst in proposal.moves:
            src = view.brokers[view.owner[i]]
            sel = Selection(src, view.bundles[i], reasons[i], view.msg_rate[i],
                            view.throughput[i], view.brokers[dst])
            outcomes.append(UnloadOutcome(sel, view.brokers[dst]))
            moved.append((view.bundles[i], src, view.brokers[dst]))
            recent[view.bundles[i]] = now
        decision = SheddingDecision(PLANNER, tuple(o.selection for o in outcomes),
                                    notes=(proposal.solution.status,))
        gate = None if outcomes else proposal.solution.status
        # goals out of reach: remember where this plan leaves the cluster, and do not plan again
        # until the brokers change or their load moves more than three points from there
        hopeless = () if proposal.solution.violation.ok and outcomes else (
            tuple(zip(view.brokers, proposal.usages_after(), strict=True)))
        return done(gate, tuple(outcomes), decision, model=model, pending=pending + tuple(moved),
                    planned_at=now if outcomes else None, hopeless=hopeless)


def _same(a: tuple[tuple[str, float], ...], b: tuple[tuple[str, float], ...]) -> bool:
    """The same brokers at about the same usages (within three points)."""
    return len(a) == len(b) and all(x == y and abs(u - v) <= 0.03
                                    for (x, u), (y, v) in zip(a, b, strict=True))
