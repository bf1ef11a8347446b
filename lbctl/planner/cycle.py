"""lbctl's planner as one more load manager of the simulator (``simulate``/``compare --strategy
lbctl``): an implementation of :class:`lbctl.loadmanager.base.LoadManager`, offered to
:func:`lbctl.loadmanager.select.choose` by the commands that run it (:func:`offer`).

Each cycle the leader's view (the reports last written) goes to :meth:`PlannerLoadManager.run_cycle`,
which answers with the same records the modular load manager gives (unload outcomes with a
destination; a plan and an explanation as a modular cycle's), so the simulator moves bundles,
measures and compares exactly as for Pulsar's strategies. The planner acts like an operator who runs ``lbctl propose`` and applies the plan:

* **plan once**: when the reported loads are outside the band (range above the target, or a
  broker above the capacity goal), it plans the whole cluster and every move is carried out in
  that cycle;
* **trust its own moves**: a broker reports on its own schedule (``needBrokerDataUpdate``), so
  until its report shows a move of the last plans (the bundle gone from the source, present at the
  destination), the planner takes the report as the move predicts it (the load model), for at
  most ``loadBalancerReportUpdateMaxIntervalMinutes`` — like the preallocation Pulsar's placement
  keeps — rather than plan again on a stale report;
* **re-plan only when the band is left**: inside the band it does nothing at all (judged on the
  load model's estimate of now, as the plan is: :func:`_usages_now`), and a cluster that looks
  out of it only on reports not rewritten for a while is first carried along the traffic's
  trend (:func:`_trend`): still inside, it does nothing (a stale report taken as now moved
  bundles on clusters in band in truth, and their moves were worsening cycles,
  ``benchmarks/plans_on_hardware.py --loop-seeds 10``: 15 -> 7 at 12 brokers, 21 -> 10 at 30);
* **act only on a gain it can tell from noise, and never worsen a goal**: a plan predicted to
  leave the max or the range above doing nothing's is not carried out; with no broker above the
  cap (or none the plan can bring below it, the cluster above the cap on average), neither is a
  plan whose predicted fall of the max or the range is below :data:`GAIN_ERRORS` times the load
  model's error (issue 29: no cycle that worsens max or spread);
* **plan on the reports carried along the trend** (:func:`_carried_along`): a broker rewrites
  its report only when its load moved enough or a while has passed (``needBrokerDataUpdate``),
  so between reports the planner carries each one along the traffic's trend by the load
  model (:meth:`lbctl.model.loadmodel.LoadModel.along`), as it carries its own pending moves,
  and plans, judges the gain and predicts on those figures: under a rising wave a stale
  report reads low, and a plan filling it up to the max as read made it the new max in truth.
  ``benchmarks/plans_on_hardware.py`` loops, seeds 1-30 at 12 and 30 brokers (before: only
  the check that such a plan worsens nothing on the carried figures): worsening cycles
  42 -> 22, against no moves 24 -> 8, bundles moved twice 116 -> 111; the cost, within 3
  cycles of a disturbance 207 -> 204 of 240 and cycles to the band 1165 -> 1199 (at 30
  brokers a broker back from a restart was filled a few points short on the carried figures
  of a falling wave, seeds 20 and 26);
* **plan small while the load model is young** (:func:`_within_change_error`): below the cap,
  while fewer than half the brokers have a fit of their own, each broker's predicted usage is
  taken to be off by :meth:`lbctl.model.loadmodel.LoadModel.change_error` times the change the
  plan makes to it, and the plan leaves put the bundles whose moves could take the max or the
  range above doing nothing's at those ends (a 46-move plan at a closed loop's second cycle,
  on one report per broker, predicted a range of 8 points and made 27);
* it **learns its load model from the reports** (:meth:`lbctl.model.loadmodel.LoadModel.observe`):
  calibrated on the first cycle's reports, each report written since joins its broker's history,
  a broker's own fit is learnt once its history shows enough change, and a fit a report
  contradicts is discarded; moves predicted for reports not yet written are never taken as data;
  a broker absent from the last cycle (new, or back from a restart) starts afresh from its
  report (:func:`_rejoined`).
  Bundles it moved stay put for an hour (:data:`COOL_DOWN_MS`), or
  ``loadBalancerSheddingGracePeriodMinutes`` when longer (a split's children inherit their
  parent's): every plan is made with them pinned first, and one moves again only when no plan
  without it meets the cap (then only off a broker above it) or the band (then sending none
  back where it came from: one it would send back stays pinned, and the plan is made again) —
  and then as few of them as meet it, the heaviest first, and only when that plan beats the
  pinned one by a gain told from noise (:func:`_beyond_noise`)
  (:meth:`PlannerLoadManager._proposal`, :meth:`PlannerLoadManager._fewest_again`).
* **split a bundle no move can place** (issue 29 item 5): when the plan misses the band because a
  bundle is too big for it (:mod:`lbctl.planner.splits`, what ``propose`` proposes: the cluster's
  ``defaultNamespaceBundleSplitAlgorithm``, refused at ``loadBalancerNamespaceMaximumBundles``, a
  one-topic bundle never split), the split is carried out that cycle, as an operator runs
  ``pulsar-admin namespaces split-bundle`` without ``--unload``: the children stay on the owner
  (``NamespaceService.splitAndOwnBundle``), and the next cycles move them. Until the owner's
  report lists the children, the planner takes its report as the split predicts it (each child an
  even part of the parent, as ``range_equally_divide`` cuts the range) for at most
  ``loadBalancerReportUpdateMaxIntervalMinutes``, as it does for its moves: a split leaves the
  broker's load unchanged, so its report may not be rewritten for that long.
* it plans **greedy's own moves, unrefined** (``refine=False``, :mod:`lbctl.planner.refine`):
  the refinement that cuts a one-shot plan's bytes picks the bundles with the fewest bytes per
  point of relief, whose unusual message/byte mixes the load model predicts worst; in a loop a
  misprediction is paid with bundles moved again (``benchmarks/plans_on_hardware.py --loop-seeds
  10``, greedy: refined, bundles moved twice 124 -> 188 at 12 brokers, worsening cycles 29 -> 36
  at 30, cycles to band summed 523 -> 766 at 12; and a returning broker's bundles bounced back in
  ``tests/planner/test_planner_cycle.py::test_brokers_leaving_and_coming_back_are_each_one_pass``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from msgspec import Struct, field

from lbctl.config import Settings
from lbctl.explain import Explanation
from lbctl.loadmanager.base import LoadManager
from lbctl.loadmanager.clock import interval_ms, reports_written, shifted
from lbctl.loadmanager.loaddata import build_load_data, update_bundle_data
from lbctl.loadmanager.modular import ModularCycleResult
from lbctl.loadmanager.select import Own
from lbctl.model.bundle import whole_topic_shares
from lbctl.model.cluster import MODULAR, ClusterState
from lbctl.model.cycle import CycleMemory, Effect, Elapsed, Split, unload_effect
from lbctl.model.decision import Selection, SheddingDecision, UnloadOutcome
from lbctl.model.load import java_max
from lbctl.model.loadmodel import LoadModel
from lbctl.plan import Plan
from lbctl.planner import PLANNER
from lbctl.planner.assignment import TOLERANCE, Assignment
from lbctl.planner.goals import Stats as UsageStats
from lbctl.planner.goals import band_met
from lbctl.planner.load import calibrate, carried, percents_now, with_moves
from lbctl.planner.propose import Proposal, ProposeOptions, propose
from lbctl.records import replace

_EMPTY: Mapping[str, int] = MappingProxyType({})
_EMPTY_RATES: Mapping[str, tuple[int, float]] = MappingProxyType({})
#: a bundle the planner moved stays put this long (or the grace period, when longer): a plan
#: that moves a bundle back and forth within an hour is undoing itself (issue 29: no bundle moved
#: twice in an hour)
COOL_DOWN_MS = 60 * 60_000
#: a plan is carried out only when its predicted gain exceeds this many of the load model's errors
#: (:func:`_noise`): the range is the difference of two predicted usages, each off by up to the
#: margin. Measured on the benchmark's loops (5 seeds x 12/30 brokers): 0.5 / 1 / 1.5 / 2 gave
#: 178 / 140 / 131 / 123 bundles moved twice and 35 / 30 / 22 / 17 worsening cycles, the same
#: cycles to the band but one (10 -> 12)
GAIN_ERRORS = 2.0
#: how many times one cycle splits and plans again (a bundle, then its children, ...): a bundle
#: 2^3 = 8 times the band's width is placed within the cycle
SPLIT_ROUNDS = 3
#: how many times the band's re-move plan is made again with the bundles it sent back to the
#: broker they left pinned (:meth:`PlannerLoadManager._proposal`)
BACK_ROUNDS = 3


#: a split the planner made: (bundle, its owner, its children)
SplitMade = tuple[str, str, tuple[str, ...]]


class PlannerMemory(Struct, frozen=True):
    """What the planner keeps between cycles."""

    model: LoadModel | None = None
    recently_moved: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    #: the broker each of ``recently_moved`` left (a move back there would undo the planner's own)
    came_from: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    pending: tuple[tuple[str, str, str], ...] = ()  # (bundle, source, destination)
    planned_at: int | None = None
    plans: int = 0
    #: the reported usages when no plan could improve the cluster (not planned again unchanged)
    hopeless: tuple[tuple[str, float], ...] = ()
    #: the brokers of the last cycle (a broker absent from them is new, or back from a restart)
    brokers: tuple[str, ...] = ()
    #: the splits the reports do not show yet: (bundle, owner, children)
    splitting: tuple[SplitMade, ...] = ()
    split_at: int | None = None
    #: each bundle's message rate (in + out) in the latest report that listed it, and when that
    #: report was written (:func:`_trend`)
    rates: Mapping[str, tuple[int, float]] = field(default_factory=lambda: _EMPTY_RATES)
    #: the traffic's trend: the median bundle's growth, log per minute (:func:`_trend`)
    trend: float = 0.0


class PlannerCycle(Struct, frozen=True):
    """One cycle of the planner, in the records a modular cycle gives (its plan and explanation
    are a modular cycle's, built when asked for)."""

    state: ClusterState
    settings: Settings
    decision: SheddingDecision | None
    outcomes: tuple[UnloadOutcome, ...]
    gate: str | None
    memory: CycleMemory
    elapsed: Elapsed = Elapsed()
    warnings: tuple[str, ...] = ()
    opens_in: int | None = None
    projected: bool = False
    shedding: str = PLANNER
    placement: str = PLANNER
    #: the bundles split this cycle (their children stay on the owner)
    splits: tuple[Split, ...] = ()

    @property
    def unloads(self) -> tuple[UnloadOutcome, ...]:
        return tuple(o for o in self.outcomes if o.skipped is None)

    @property
    def acted(self) -> bool:
        return any(o.skipped is None for o in self.outcomes)

    def effect(self) -> Effect:
        return unload_effect(self.decision, self.outcomes, self.splits)

    def plan(self) -> Plan:
        return self._as_modular().plan()

    def explanation(self, broker: str | None = None, bundle: str | None = None) -> Explanation:
        return self._as_modular().explanation(broker, bundle)

    def _as_modular(self) -> ModularCycleResult:
        load = build_load_data(self.state, self.memory.bundle_data,
                               self.memory.recently_unloaded)
        return ModularCycleResult(
            self.state, self.settings, self.shedding, self.placement, load, self.decision,
            self.outcomes, self.gate, (), self.memory, (), self.elapsed, self.warnings,
            self.opens_in, self.projected)


class _Cycle(Struct, frozen=True):
    """What the steps of one planner cycle share: the settings and the clock, the memory carried
    on whatever the planner decides (the leader's bundle data), and the bundles moved within
    the grace period (this cycle's moves join them)."""

    settings: Settings
    elapsed: Elapsed
    base: CycleMemory
    recent: dict[str, int]
    came: dict[str, str]

    def result(self, state: ClusterState, gate: str | None, keep: PlannerMemory,
               outcomes: tuple[UnloadOutcome, ...] = (),
               decision: SheddingDecision | None = None,
               splits: tuple[Split, ...] = ()) -> PlannerCycle:
        return PlannerCycle(state, self.settings, decision, outcomes, gate,
                            replace(self.base, shedding=keep), self.elapsed, splits=splits)


class PlannerLoadManager(LoadManager[CycleMemory]):
    """Runs the planner cycle after cycle (module docstring)."""

    kind = MODULAR  # it plans on the brokers' load reports, as the modular load manager reads
    label = PLANNER  # it decides both shedding and placement
    strategies = (PLANNER, PLANNER)

    def __init__(self, options: ProposeOptions):
        self.options = replace(options, splits=True, refine=False)

    def initial_memory(self) -> CycleMemory:
        return CycleMemory(shedding=PlannerMemory())

    def run_cycle(self, state: ClusterState, settings: Settings,
                  memory: CycleMemory | None = None,
                  elapsed: Elapsed | None = None) -> PlannerCycle:
        mem = memory or self.initial_memory()
        elapsed = elapsed or Elapsed(interval_ms=interval_ms(settings))
        pm = mem.shedding if isinstance(mem.shedding, PlannerMemory) else PlannerMemory()
        now = state.captured_at
        grace = max(int(settings["loadBalancerSheddingGracePeriodMinutes"]) * 60_000, COOL_DOWN_MS)
        recent = {b: t for b, t in pm.recently_moved.items() if t >= now - grace}
        came = {b: s for b, s in pm.came_from.items() if b in recent}
        cycle = _Cycle(settings, elapsed, CycleMemory(
            update_bundle_data(state, mem.bundle_data, elapsed.samples), mem.recently_unloaded),
            recent, came)
        if len(state.brokers) <= 1:
            return cycle.result(state, f"only {len(state.brokers)} broker: nothing to plan",
                                replace(pm, recently_moved=MappingProxyType(recent),
                                        came_from=MappingProxyType(came), hopeless=()))
        rates, trend = _trend(state, pm.rates, pm.trend,  # on the reports as written
                              float(settings["loadBalancerReportUpdateThresholdPercentage"]))
        state, splitting = _with_splits(state, settings, pm)
        pending = _pending(state, settings, pm)
        model = pm.model
        if model is None:
            model = calibrate(state)
        else:
            _rejoined(model, state, pm.brokers)
            model.observe(state)  # the reports written since: refit, a fit they contradict discarded
        if pending:
            state = with_moves(state, model, pending)
        keep = replace(pm, model=model, recently_moved=MappingProxyType(recent),
                       came_from=MappingProxyType(came), pending=pending,
                       hopeless=(), brokers=tuple(state.brokers), splitting=splitting,
                       rates=rates, trend=trend)
        targets = self.options.targets(settings)
        usages = _usages_now(state, settings, model)
        # out of the band as the reports read: judged again with the reports not rewritten
        # since carried along the traffic's trend (it only ever holds the planner back); the
        # plan and its memory (``seen``, ``hopeless``) stay on the reports as read
        st = UsageStats.of(usages)
        if not (st.max <= targets.max_usage + 1e-9 and band_met(st, targets)) and trend:
            st = UsageStats.of(_usages_now(state, settings, model, trend))
        if st.max <= targets.max_usage + 1e-9 and band_met(st, targets):
            return cycle.result(state, f"inside the band ({targets.band_words()}; range "
                                       f"{st.range * 100:.2f} points): nothing to do", keep)
        seen = tuple(zip(state.brokers, usages, strict=True))
        if pm.hopeless and _same(pm.hopeless, seen):
            return cycle.result(state, "no plan can bring the cluster nearer to the goals "
                                       "(unchanged since the last attempt)",
                                replace(keep, hopeless=seen))
        # planned on the reports carried along the trend: a report not rewritten for a while
        # shows the traffic of then (the cycle's memory, ``seen``, stays on the reports as read)
        return self._plan(cycle, _carried_along(state, settings, model, trend), keep,
                          targets.max_usage, seen)

    def _plan(self, cycle: _Cycle, state: ClusterState, keep: PlannerMemory, cap: float,
              seen: tuple[tuple[str, float], ...]) -> PlannerCycle:
        """Plan the whole cluster and carry out every move this cycle, unless the plan's
        predicted gain is within the load model's error (:func:`_noise`). A plan that proposes
        splits (a bundle no move can place) is made again on the split cluster, up to
        :data:`SPLIT_ROUNDS` times, and its splits and moves are carried out together, as an
        operator splits a bundle, then its children, then moves them, within one cycle."""
        now = state.captured_at
        proposal = self._proposal(cycle, state, keep, cap, seen)
        first, unsplit, recent_before = proposal, state, set(cycle.recent)
        made: list[SplitMade] = []
        for _ in range(SPLIT_ROUNDS):
            found, refused = self._splits(cycle, state, keep, proposal)
            if refused and not made and not proposal.moves:
                # the split refused, the moves propose held back for it are the plan
                proposal = propose(state, cycle.settings, replace(self.options, splits=False),
                                   model=keep.model, recently_moved=dict(cycle.recent))
            if not found:
                break
            made += found
            for x, _, children in found:  # a child carries its parent's traffic: its cool-down
                if x in cycle.recent:
                    cycle.recent.update(dict.fromkeys(children, cycle.recent[x]))
            state, _ = _split_reports(state, found)
            proposal = self._proposal(cycle, state, keep, cap, seen)
        proposal = _within_change_error(proposal, cap)
        # the traffic's growth until the next cycle, when the moves are measured (:func:`_noise`)
        ahead = math.exp(keep.trend * cycle.elapsed.interval_ms / 60_000)
        why = _noise(proposal, cap, ahead) if proposal.moves else None
        if made and (why is not None or not proposal.moves):
            # a split is made for the moves it lets the plan make: without them it is not
            # (a split is permanent; a cluster above the cap on average split 34 bundles in one
            # cycle and moved none of them, benchmarks/plans_on_hardware.py n=12 seed 2)
            state, made = unsplit, []
            for x in cycle.recent.keys() - recent_before:
                del cycle.recent[x]
            proposal = first
            why = _noise(proposal, cap, ahead) if proposal.moves else None
        splits = tuple(Split(x, children) for x, _, children in made)
        if splits:
            keep = replace(keep, splitting=keep.splitting + tuple(made), split_at=now)
        view = proposal.view
        if why is not None:
            # a plan refused for the trend's rise is not one no plan can better: the next cycle
            # plans again (remembered as ``hopeless``, a rising wave with reports rarely
            # rewritten held the cluster out of the band for 10 cycles)
            return cycle.result(state, why, keep if why.endswith(_WAITS) else
                                replace(keep, hopeless=seen))
        reasons = proposal.reasons()
        outcomes = []
        moved = []
        for i, dst in proposal.moves:
            src = view.brokers[view.owner[i]]
            sel = Selection(src, view.bundles[i], reasons[i], view.msg_rate[i],
                            view.throughput[i], view.brokers[dst])
            outcomes.append(UnloadOutcome(sel, view.brokers[dst]))
            moved.append((view.bundles[i], src, view.brokers[dst]))
            cycle.recent[view.bundles[i]] = now
            cycle.came[view.bundles[i]] = src
        decision = SheddingDecision(PLANNER, tuple(o.selection for o in outcomes),
                                    notes=(proposal.solution.status,))
        gate = None if outcomes or splits else proposal.solution.status
        # goals out of reach: remember where this plan leaves the cluster, and do not plan again
        # until the brokers change or their load moves more than three points from there (a
        # split changes the cluster: the next cycle plans its children)
        hopeless = () if (proposal.solution.violation.ok and outcomes) or splits else (
            tuple(zip(view.brokers, proposal.usages_after(), strict=True)))
        return cycle.result(state, gate, replace(
            keep, pending=keep.pending + tuple(moved), planned_at=now if outcomes else
            keep.planned_at, plans=keep.plans + (1 if outcomes else 0), hopeless=hopeless),
            tuple(outcomes), decision, splits)

    def _splits(self, cycle: _Cycle, state: ClusterState, keep: PlannerMemory,
                proposal: Proposal) -> tuple[list[SplitMade], bool]:
        """The splits ``proposal`` proposes (bundle, owner, children) of bundles wider than the
        band (:func:`_wider_than_band`) — when cooled-down bundles were pinned, those a plan
        with none pinned proposes too: a bundle is split because no move can place it, not
        because the bundles that could make room for it are cooling down (a split is
        permanent; counting those, the loops split 92 bundles where they split 11,
        ``benchmarks/plans_on_hardware.py --loop-seeds 10`` n=12). And whether a split was
        refused so."""
        found = _wide_splits(proposal)
        if not found or not cycle.recent:
            return found, False
        free = propose(state, cycle.settings, self.options, model=keep.model)
        also = {x for x, _, _ in _wide_splits(free)}
        kept = [f for f in found if f[0] in also]
        return kept, len(kept) < len(found)

    def _proposal(self, cycle: _Cycle, state: ClusterState, keep: PlannerMemory, cap: float,
                  seen: tuple[tuple[str, float], ...]) -> Proposal:
        """The cycle's plan, planned first with every cooled-down bundle pinned (issue 29: no
        bundle moved twice in an hour). One moves again only when no plan without it meets a
        goal the pinned plan misses, and then as few of them as meet it
        (:meth:`_fewest_again`):

        * **the cap**: the pinned plan leaves a broker above it; then the cooled-down bundles
          of brokers above the cap (:func:`_cooling`) may leave them, when that brings the max
          lower — never a bundle of a broker at or below the cap. When the cluster's load is
          above the cap on average (spread as the plan spreads it), no plan meets the cap, and
          a lower max among overloaded brokers is no reason to move a bundle twice: they move
          again only when that meets the band's width, else the pinned plan stands (moved for
          a few points of the max, they were the cooled-down bundles shuffled among overloaded
          brokers cycle after cycle, and a worsening cycle, ``benchmarks/
          plans_on_hardware.py --loop-seeds 10`` n=12 seed 2 cycles 36-45; 10 seeds: bundles
          moved twice 62 -> 49 at 12 brokers, the same at 30);
        * **the band**: the pinned plan misses the band (the cap met), and a plan with none
          pinned meets the goals it plans to (the band inside the model's margin: a re-move
          for a plan that may land out of band in truth is a move made twice for nothing),
          sending no bundle back to the broker it left within the hour (a plan undoing its
          own move: a bounce-back): a bundle it would send back stays pinned and the plan is
          made again, up to :data:`BACK_ROUNDS` times (dropping the whole plan instead left a
          broker back from a restart out of band for 23 cycles, and another for good:
          ``benchmarks/plans_on_hardware.py --loop-seeds 10`` n=12 seeds 5 and 10). The
          heaviest are released first (:meth:`_fewest_again`); when every plan releasing them
          so sends a bundle back, the lightest first (heavy bundles are the ones a broker
          back from a restart most often gave away: ``tests/planner/test_planner_cycle.py::
          test_brokers_leaving_and_coming_back_are_each_one_pass`` stalled 40 points wide).

        Either way the plan moving them again is carried out in place of the pinned one only
        when it beats it by a gain told from noise (:func:`_beyond_noise`): a release meeting
        the band a few points narrower than the pinned plan moved 20 bundles again in one
        cycle for nothing in truth (``benchmarks/plans_on_hardware.py`` n=30 seed 8 cycle 8:
        the true range 13.1 -> 12.6; ``--loops 12,30 --loop-seeds 10``: bundles moved twice
        40 -> 20 at 30 brokers, 30 -> 30 at 12; within 3 cycles of a disturbance 33 -> 32 of
        40 and cycles to the band 208 -> 213 at 30, the same at 12; worsening cycles against no
        moves 6 -> 6 and 4 -> 4. Seeds 11-30: moved twice 35 -> 35 and 50 -> 40, cycles to the
        band 399 -> 406 and 439 -> 439, within 3 cycles the same).

        Not the plan's own capacity target (the most loaded broker less the model's margin,
        :meth:`lbctl.planner.goals.Targets.inside`): a plan misses it whenever the most loaded
        broker's bundles are pinned, and taken as a reason it moved every cooled-down bundle
        again, cycle after cycle (``benchmarks/plans_on_hardware.py`` n=30 seed 1: 68 bundles
        moved twice, a host emptied for a hot bundle shedding the rest and the next plans
        moving them on). Pulsar is stricter still: its shedders skip a bundle unloaded within
        ``loadBalancerSheddingGracePeriodMinutes`` even on an overloaded broker
        (``ModularLoadManagerImpl.doLoadShedding`` prunes ``recentlyUnloadedBundles`` to the
        grace period and hands it to the strategies;
        ``TransferShedderTest.testRecentlyUnloadedBundles``)."""
        pinned = propose(state, cycle.settings, self.options, model=keep.model,
                         recently_moved=dict(cycle.recent))
        if not cycle.recent or pinned.solution.violation.ok:
            return pinned
        again = self._release(cycle, state, keep, cap, seen, pinned)
        return again if _beyond_noise(again, pinned) else pinned

    def _release(self, cycle: _Cycle, state: ClusterState, keep: PlannerMemory, cap: float,
                 seen: tuple[tuple[str, float], ...], pinned: Proposal) -> Proposal:
        """The plan moving cooled-down bundles again for a goal ``pinned`` misses, else
        ``pinned`` (:meth:`_proposal`)."""
        top = max(pinned.usages_after(), default=0.0)
        if top > cap + 1e-9:
            cooling = _cooling(state, cycle.recent, dict(seen), cap)
            if len(cooling) == len(cycle.recent):
                return pinned
            relief = propose(state, cycle.settings, self.options, model=keep.model,
                             recently_moved=cooling)
            low = max(relief.usages_after(), default=0.0)
            if low >= top - TOLERANCE:
                return pinned
            after = UsageStats.of(relief.usages_after())
            width = relief.targets.target_range
            if after.mean > cap + 1e-9:
                # no plan meets the cap: a bundle moves again only for the band
                if width is None or after.range > width + 1e-9:
                    return pinned
                return self._fewest_again(
                    state, cycle, keep, relief,
                    lambda p: UsageStats.of(p.usages_after()).range <= width + 1e-9)
            bar = max(low + TOLERANCE, cap) + 1e-9
            return self._fewest_again(state, cycle, keep, relief,
                                      lambda p: max(p.usages_after(), default=0.0) <= bar)
        if _hard_met(pinned):
            return pinned
        free = propose(state, cycle.settings, self.options, model=keep.model)
        if not free.solution.violation.ok:
            return pinned
        for heaviest in (True, False):
            held: dict[str, int] = {}
            unheld = free
            for _ in range(BACK_ROUNDS):
                again = self._fewest_again(state, cycle, keep, unheld,
                                           lambda p: p.solution.violation.ok, heaviest)
                back = {again.view.bundles[i] for i, j in again.moves
                        if cycle.came.get(again.view.bundles[i]) == again.view.brokers[j]}
                if not back:
                    return again
                # the bundles it sends back stay put; the others may still meet the band
                held.update({x: cycle.recent[x] for x in back})
                unheld = propose(state, cycle.settings, self.options, model=keep.model,
                                 recently_moved=held)
                if not unheld.solution.violation.ok:
                    break
        return pinned

    def _fewest_again(self, state: ClusterState, cycle: _Cycle, keep: PlannerMemory,
                      free: Proposal, goal: Callable[[Proposal], bool],
                      heaviest: bool = True) -> Proposal:
        """A plan meeting ``goal`` that moves few cooled-down bundles again: of those ``free``
        (planned with fewer pinned) moves again, the fewest, heaviest first, whose release still
        meets it (a bisection on their number, each step a plan with the others pinned;
        issue 29: no bundle moved twice in an hour). The solver knows no price for a re-move,
        so unpinned it re-moves whatever is cheapest. Heaviest first: a heavy bundle is as much
        relief as several light ones, so fewer bundles move twice. (Lightest first, a smaller
        change for the model to mispredict, was chosen when a loop re-moved a cooled-down
        bundle for any gain of the max; with the re-moves held to the goals the pinned plan
        misses, heaviest first moved fewer bundles twice and no more often back or worse,
        ``benchmarks/plans_on_hardware.py --loops --loop-seeds 10``: bundles moved twice
        67 -> 62 at 12 brokers and 60 -> 39 at 30, worsening cycles 7 -> 5 and 16 -> 9, the
        cycles to the band not more.)"""
        view = free.view
        again = [x for _, x in sorted(((view.throughput[i], view.bundles[i])
                                       for i, _ in free.moves if view.bundles[i] in cycle.recent),
                                      reverse=heaviest)]
        best, lo, hi = free, 0, len(again)
        while lo < hi:
            mid = (lo + hi) // 2
            released = set(again[:mid])
            trial = propose(state, cycle.settings, self.options, model=keep.model,
                            recently_moved={x: t for x, t in cycle.recent.items()
                                            if x not in released})
            if goal(trial):
                best, hi = trial, mid
            else:
                lo = mid + 1
        return best

    # --- what lbctl.loadmanager.clock needs -------------------------------------------------------
    def memory_key(self, memory: CycleMemory) -> object:
        return memory.shedding, dict(memory.recently_unloaded)

    def held(self, state: ClusterState, at: int) -> ClusterState:
        return shifted(state, at)

    def samples(self, earlier: ClusterState, later: ClusterState) -> int:
        return reports_written(earlier, later)

    def timers(self, memory: CycleMemory) -> bool:
        """Whether the clock alone can still change the memory (a grace period, a plan's moves
        the reports do not show yet)."""
        pm = memory.shedding
        return isinstance(pm, PlannerMemory) and bool(pm.recently_moved or pm.pending)


def _pending(state: ClusterState, settings: Settings,
             pm: PlannerMemory) -> tuple[tuple[str, str, str], ...]:
    """The moves of earlier plans the reports do not show yet: they count as done (predicted by
    the model) until ``loadBalancerReportUpdateMaxIntervalMinutes`` has passed since the plan."""
    if not (pm.pending and _unreported(state, settings, pm.planned_at)):
        return ()
    owner, _ = carried(state)
    return tuple(p for p in pm.pending if p[0] in owner and p[1] in state.brokers
                 and p[2] in state.brokers and not (
                     p[0] in state.brokers[p[2]].lastStats
                     and p[0] not in state.brokers[p[1]].lastStats))


def _unreported(state: ClusterState, settings: Settings, since: int | None) -> bool:
    """Whether a change the planner made at ``since`` may still be missing from the reports:
    at most ``loadBalancerReportUpdateMaxIntervalMinutes`` have passed since (a broker rewrites
    its report at the latest then, ``ModularLoadManagerImpl.needBrokerDataUpdate``)."""
    limit = int(settings["loadBalancerReportUpdateMaxIntervalMinutes"]) * 60_000
    return since is not None and state.captured_at - since <= limit


def _with_splits(state: ClusterState, settings: Settings, pm: PlannerMemory
                 ) -> tuple[ClusterState, tuple[SplitMade, ...]]:
    """``state`` with the planner's splits the reports do not show yet carried out
    (:func:`_split_reports`), and those splits. A split is shown once its owner's report lists
    none of the bundle or some of its children; until then, for at most
    ``loadBalancerReportUpdateMaxIntervalMinutes`` since the last split (as :func:`_pending`
    takes moves), the planner takes the report as the split predicts it: a split leaves the
    broker's load unchanged, so its report may not be rewritten for that long."""
    if not (pm.splitting and _unreported(state, settings, pm.split_at)):
        return state, ()
    return _split_reports(state, pm.splitting)


def _split_reports(state: ClusterState, splits: Sequence[SplitMade]
                   ) -> tuple[ClusterState, tuple[SplitMade, ...]]:
    """``state`` with each split (bundle, owner, children) whose bundle its owner's report lists
    (and none of its children) carried out in that report, in the order made (a child split
    again follows its parent), and the splits carried out. The children take a whole number of
    the bundle's topics each, as even as they divide, and each topic an even part of its
    traffic (``range_equally_divide`` halves the hash range; the planner knows no more of where
    the traffic falls; a topic never divides)."""
    reports = dict(state.brokers)
    kept = []
    for x, owner, children in splits:
        rep = reports.get(owner)
        if rep is None or x not in rep.lastStats or any(c in rep.lastStats for c in children):
            continue
        kept.append((x, owner, children))
        stats = dict(rep.lastStats)
        parent = stats.pop(x)
        for c, f in zip(children, whole_topic_shares(parent.topics, len(children)), strict=True):
            stats[c] = parent.part(f)
        reports[owner] = replace(rep, lastStats=MappingProxyType(stats))
    if not kept:
        return state, ()
    return replace(state, brokers=MappingProxyType(reports)), tuple(kept)


def _rejoined(model: LoadModel, state: ClusterState, before: tuple[str, ...]) -> None:
    """Start afresh the history of every broker that was not among the last cycle's brokers:
    the leader forgets a broker that leaves (Pulsar's ``ModularLoadManagerImpl.updateAllBrokerData``
    removes it from ``loadData``'s broker data; back, it is a new ``BrokerData``), and a host that
    restarted is not the one its old reports describe. Kept, a short history with traffic left
    from before the restart made the returning empty broker *thin*, closed to every bundle, and
    the cluster stayed 40 points wide for 17 cycles (issue 29 item 5,
    ``benchmarks/plans_on_hardware.py`` n=12); calibrated on its report alone, an empty broker is
    its idle usage with its class's cost (:meth:`LoadModel.add_broker`)."""
    if not before:
        return
    known = set(before)
    for b, rep in state.brokers.items():
        if b not in known:
            model.add_broker(b, rep, rep.lastStats.values())


def _cooling(state: ClusterState, recent: Mapping[str, int], usage: Mapping[str, float],
             cap: float) -> dict[str, int]:
    """The cooled-down bundles that stay put even when the pinned plan leaves a broker above
    the cap: all but those on a broker above the cap (by ``usage``), whose relief comes first
    (:meth:`PlannerLoadManager._proposal`)."""
    owner, _ = carried(state)
    return {x: t for x, t in recent.items() if usage.get(owner.get(x, ""), 0.0) <= cap + 1e-9}


def _wide_splits(proposal: Proposal) -> list[SplitMade]:
    """The splits ``proposal`` proposes, (bundle, owner, children), of bundles wider than the
    band (:func:`_wider_than_band`)."""
    return [(a.bundle, a.broker, tuple(a.children)) for a in proposal.splits.actions
            if a.action == "split" and a.children and _wider_than_band(proposal, a.bundle)]


def _wider_than_band(proposal: Proposal, bundle: str) -> bool:
    """Whether ``bundle`` alone carries more of its broker (after the plan) than the band is
    wide: only such a bundle is split in the loop. :func:`lbctl.planner.splits.find_splits` also
    proposes bundles that no broker can take *where the plan leaves the others* (the least
    loaded broker plus the band), which on a crowded cluster names ordinary bundles, and a split
    is permanent (``loadBalancerNamespaceMaximumBundles``)."""
    a = proposal.after
    width = proposal.targets.target_range
    if width is None:
        return True
    i = proposal.view.bundles.index(bundle)
    j = a.owner[i]
    return a.u[j] - a.usage_if(j, i, -1.0) > width


def _beyond_noise(plan: Proposal, pinned: Proposal) -> bool:
    """Whether ``plan``, moving cooled-down bundles again, does better than ``pinned`` (the
    plan with all of them kept put) by a gain told from noise: its max or its range lower by
    :data:`GAIN_ERRORS` times the load model's error at the level it plans to (as
    :func:`_noise` asks of any plan against doing nothing). A bundle moved twice within the hour
    for a gain within the model's error is a move the next cycle may undo (issue 29)."""
    if plan is pinned:
        return True
    a = UsageStats.of(plan.usages_after())
    p = UsageStats.of(pinned.usages_after())
    gain = max(p.range - a.range, p.max - a.max)
    return gain >= GAIN_ERRORS * plan.view.model.margin(a.max)


def _change_ends(before: Sequence[float], after: Sequence[float],
                 err: Sequence[float]) -> tuple[float, float]:
    """The highest max and widest range ``after`` (usages a plan leads to from ``before``) may
    be in truth: each broker off by its ``err`` (:meth:`LoadModel.change_error`) times the
    change the plan makes to it."""
    spread = [e * abs(a - b) for e, a, b in zip(err, after, before, strict=True)]
    hi = max(a + s for a, s in zip(after, spread, strict=True))
    lo = min(a - s for a, s in zip(after, spread, strict=True))
    return hi, hi - lo


def _within_change_error(proposal: Proposal, cap: float) -> Proposal:
    """``proposal``, smaller when at its uncertain ends (:func:`_change_ends`) it may leave the
    max or the range above doing nothing's: the moved bundles whose return brings those ends
    down most are left put, one at a time, until they do not (none left: no moves). Below the
    cap only: above it, relieving the cap comes first (a closed loop's first cycle). A plan
    made on one or two reports per broker misses by up to the change it makes; its gain is
    then only worth having where it exceeds that change's error (issue 29: no worsening cycle).
    ``benchmarks/plans_on_hardware.py --loops 12,30 --loop-seeds 10``: at 30 brokers bundles
    moved twice 20 -> 11, worsening cycles 11 -> 7 (against no moves 6 -> 4), within 3 cycles
    of a disturbance 32 -> 31 of 40; at 12 brokers unchanged but one disturbance reached in 5
    cycles, not 2. An error of 0.3 changed nothing, 0.7 and 1.0 held back the first
    disturbance (to the band 213 -> 217 and 355 at 30 brokers). Held out, seeds 11-30: the same
    figures at both sizes. ``examples/rolling-restart.yaml``: the broker back from its restart
    is filled in two cycles, not one (one snapshot cannot tell its cost).
    """
    start = proposal.usages_before()
    before = UsageStats.of(start)
    if not proposal.moves or before.max > cap + 1e-9:
        return proposal
    err = [proposal.view.model.change_error(b) for b in proposal.view.brokers]
    if not any(err):
        return proposal

    def excess(u: Sequence[float]) -> float:
        hi, width = _change_ends(start, u, err)
        return max(0.0, hi - before.max) + max(0.0, width - before.range)

    a = Assignment(proposal.view, proposal.rules, proposal.costs)
    a.apply(proposal.moves)
    now = excess(a.u)
    if now <= 1e-9:
        return proposal
    while now > 1e-9 and a.moved:
        best: tuple[float, int, int] | None = None
        for i, dst in list(a.moved.items()):
            a.undo(i)
            e = excess(a.u)
            a.move(i, dst)
            if best is None or e < best[0] - 1e-12:
                best = (e, i, dst)
        assert best is not None
        now = best[0]
        a.undo(best[1])
    kept = {i for i, _ in a.moves()}
    moves = tuple(m for m in proposal.moves if m[0] in kept)
    # the solution's violation stays the whole plan's: a smaller plan carried out is not a
    # cluster no plan can improve (``hopeless``), the next cycle plans on the reports it brings
    return replace(proposal, after=a, order=moves,
                   solution=replace(proposal.solution, moves=moves))


def _carried_along(state: ClusterState, settings: Settings, model: LoadModel,
                   trend: float) -> ClusterState:
    """``state`` with every report not rewritten since ``lastUpdate`` carried along the
    traffic's trend (:func:`_trend`) by the load model (:meth:`LoadModel.along`): its bundles'
    rates times the trend's growth since, at most ``loadBalancerReportUpdateThresholdPercentage``
    of them (a broker whose traffic changed more would have rewritten its report,
    ``ModularLoadManagerImpl.needBrokerDataUpdate``), as :func:`_usages_now` reads it."""
    if not trend:
        return state
    bound = float(settings["loadBalancerReportUpdateThresholdPercentage"]) / 100
    now = state.captured_at
    reports = dict(state.brokers)
    for b, rep in state.brokers.items():
        age = (now - rep.lastUpdate) / 60_000 if rep.lastUpdate else 0.0
        if age > 0 and b in model.fits:
            reports[b] = model.along(b, rep, min(max(math.exp(trend * age), 1 - bound),
                                                 1 + bound))
    return replace(state, brokers=MappingProxyType(reports))


#: how :func:`_noise` ends the reason of a plan refused only for the trend's rise (tried again)
_WAITS = "before the next cycle: not carried out yet"


def _noise(proposal: Proposal, cap: float, ahead: float = 1.0) -> str | None:
    """Why a plan is not carried out: its predicted max or range above doing nothing's (Cruise
    Control's rule that an action must not violate a goal already met, here: must not worsen
    one it does not fix; a plan trading a wider range for a lower max, or the other way round,
    is one the next cycle undoes); with no broker above the cap (or a cluster whose load,
    spread as the plan spreads it, is above the cap on average: no plan relieves every broker,
    and moving on a small gain then only shuffles bundles among overloaded brokers, issue 29's
    bundles moved twice), a plan whose predicted gain
    (the fall of the max or of the range, whichever is larger) is within the load model's error
    at the level it plans to (:meth:`LoadModel.margin`, :data:`GAIN_ERRORS` times) cannot be
    told from noise, and moving on it worsens the cluster as often as it helps (issue 29: no
    worsening cycle). The proposal is made on the reports carried along the traffic's trend
    (:func:`_carried_along`), so the first rule also refuses a plan that fills a broker whose
    report lags the wave up to the max as read (the new max in truth).

    Under a rising trend (``ahead``, the traffic's growth factor until the next cycle, when the
    moves are measured, > 1), a plan that does not bring the cluster into the band inside the
    model's margin is carried out only when its predicted usages, grown by ``ahead``, leave the
    max and the range at or below the cluster's now: such a plan is a step, not the goal, and a
    step whose fall the wave's rise outruns is a cycle that worsens the max or the range in
    truth (issue 29). It is planned again next cycle (not ``hopeless``). A plan meeting the band
    is exempt (the band is the goal; holding it back for the wave left clusters out of it for
    10 cycles at 30 brokers), and so is one relieving a broker above the cap.
    ``benchmarks/plans_on_hardware.py`` loops, 12 and 30 brokers (base -> this rule): seeds
    1-10, worsening cycles 4 -> 2 and 7 -> 7; seeds 11-30, 7 -> 5 and 4 -> 2; worse than no
    moves, bundles moved twice, within 3 cycles and cycles to the band about level (8 -> 8,
    111 -> 110, 204 -> 204 of 240, 1199 -> 1199). ``None``: carry it out."""
    before = UsageStats.of(proposal.usages_before())
    after = UsageStats.of(proposal.usages_after())
    if after.max > before.max + 1e-9 or after.range > before.range + 1e-9:
        return (f"the plan's predicted max ({after.max * 100:.1f} %) or range "
                f"({after.range * 100:.1f} points) is above doing nothing's "
                f"({before.max * 100:.1f} %, {before.range * 100:.1f} points): not carried out")
    if before.max > cap + 1e-9 and after.mean <= cap + 1e-9:
        return None
    if ahead > 1.0 and not proposal.solution.violation.ok:
        nxt = UsageStats.of([u * ahead for u in proposal.usages_after()])
        if nxt.max > before.max + 1e-9 or nxt.range > before.range + 1e-9:
            return (f"the plan misses the band, and the traffic's trend takes its max "
                    f"({nxt.max * 100:.1f} %) or range ({nxt.range * 100:.1f} points) above "
                    f"the cluster's now ({before.max * 100:.1f} %, {before.range * 100:.1f} "
                    f"points) {_WAITS}")
    gain = max(before.range - after.range, before.max - after.max)
    error = GAIN_ERRORS * proposal.view.model.margin(after.max)
    if gain >= error:
        return None
    return (f"the plan's predicted gain ({gain * 100:.1f} points) is within the load model's "
            f"error ({error * 100:.1f} points: twice its p95 miss): not told from noise, not "
            "carried out")


def _usages_now(state: ClusterState, settings: Settings, model: LoadModel,
                trend: float = 0.0) -> list[float]:
    """Each broker's weighted max usage (``getMaxResourceUsageWithWeight``) on the load
    model's estimate of now (:meth:`LoadModel.now`: its report weighed against its fit), as
    :func:`lbctl.planner.load.build` gives the plan: the band is judged on the figures the plan
    is made on. On the raw reports the cycle called a cluster out of band that the plan then
    found inside (\"the goals are already met\"), and the other way round, for minutes at a
    time (issue 29 item 5). Per broker, without the plan's bundle columns: it runs every
    cycle.

    A report not rewritten since ``lastUpdate`` shows the traffic of then: each resource the
    model fits moves by its slope times the traffic's change since, the trend of the
    reports written meanwhile (:func:`_trend`), at most
    ``loadBalancerReportUpdateThresholdPercentage`` of it (a broker whose traffic changed more
    would have rewritten its report, ``ModularLoadManagerImpl.needBrokerDataUpdate``,
    :mod:`lbctl.simulate.reports`)."""
    wc, wd, wi, wo = settings.weights4()
    bound = float(settings["loadBalancerReportUpdateThresholdPercentage"]) / 100
    now = state.captured_at
    out = []
    for b, rep in state.brokers.items():
        pct = percents_now(model, b, rep)
        age = (now - rep.lastUpdate) / 60_000 if rep.lastUpdate else 0.0
        if trend and age > 0 and b in model.fits:
            f = min(max(math.exp(trend * age), 1 - bound), 1 + bound) - 1
            d = model.drivers(rep.lastStats.values())
            for res, fit in model.fits[b].items():
                pct[res] += fit.slope * d.get(res) * f
        out.append(java_max(pct["cpu"] * wc, pct["directMemory"] * wd, pct["bandwidthIn"] * wi,
                            pct["bandwidthOut"] * wo) / 100)
    return out


def _trend(state: ClusterState, before: Mapping[str, tuple[int, float]], trend: float,
           threshold: float) -> tuple[Mapping[str, tuple[int, float]], float]:
    """Each bundle's latest reported message rate (in + out) and when it was written, and the
    traffic's trend: over the bundles of the reports written since the last cycle, the median
    growth of a bundle's rate since the report that listed it before (log per minute; the median,
    as a surge of one namespace is not the whole cluster's traffic). No such bundle: the trend
    stays. What an operator reads off the reports' time series before trusting an old one."""
    rates: dict[str, tuple[int, float]] = {}
    growth = []
    for rep in state.brokers.values():
        at = rep.lastUpdate
        for x, s in rep.lastStats.items():
            old = before.get(x)
            if old is not None and old[0] >= at:
                rates.setdefault(x, old)  # not rewritten since (or listed by a newer report)
                continue
            if x in rates and rates[x][0] >= at:
                continue
            rate = s.msgRateIn + s.msgRateOut
            if old is not None and old[1] > 0 and rate > 0:
                growth.append(math.log(rate / old[1]) / ((at - old[0]) / 60_000))
            rates[x] = (at, rate)
    if growth:
        trend = statistics.median(growth)
        if abs(trend) > math.log1p(threshold / 100):
            trend = 0.0  # faster than a report a minute: a step (a surge, a restart), no trend
    return MappingProxyType(rates), trend


def _same(a: tuple[tuple[str, float], ...], b: tuple[tuple[str, float], ...]) -> bool:
    """The same brokers at about the same usages (within three points)."""
    return len(a) == len(b) and all(x == y and abs(u - v) <= 0.03
                                    for (x, u), (y, v) in zip(a, b, strict=True))


def offer(options: ProposeOptions | None = None) -> Own:
    """lbctl's planner as the simulator and ``compare`` offer it beside Pulsar's strategies
    (``--strategy lbctl``), planning against the goals of ``options``."""
    goals = options or ProposeOptions()
    return Own(PLANNER, "lbctl's planner", lambda: PlannerLoadManager(goals))


def _hard_met(p: Proposal) -> bool:
    return all(g.met_after for g in p.goals if g.hard)

