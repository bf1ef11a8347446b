"""The closed loop: the load manager decides, bundles move, load is recomputed, repeat.

Every cycle (``loadBalancerSheddingIntervalMinutes`` apart, starting at the first snapshot's
``capturedAt``):

1. **Traffic.** Each bundle carries the stats of the snapshot in force: the starting snapshot, or
   with a sequence (trace-driven mode) the latest snapshot captured at or before the cycle's time
   (the last one after the trace ends). Ownership is the simulation's own: the starting owners,
   changed only by the simulated unloads. Bundles new in the trace join their reported owner;
   bundles gone from it are dropped; brokers new in the trace join with their report (calibrated
   then); the bundles of a broker gone from it go to their reported owner if alive, else to the
   least loaded broker.
2. **True load.** Each broker's report is recomputed from the bundles it carries by its **host**
   (:mod:`lbctl.simulate.hosts`, :mod:`lbctl.truth`): the hosts given (``SimulationOptions.hosts``,
   mixed hardware with noise in the benchmarks), else hosts inferred from each broker's first
   report (cores, NIC and heap from its limits, costs that reproduce its reported CPU). The truth
   is not lbctl's load model: lbctl's planner (``--strategy lbctl``) has to learn it from the
   reports, and ``usageAfter`` is checked against it.
3. **What the leader sees.** A broker rewrites its report only when ``needBrokerDataUpdate`` says
   so (:mod:`lbctl.simulate.reports`); otherwise the leader keeps the last report written (the
   first cycle sees the snapshot exactly as given, so cycle 1 is ``lbctl recommend``).
4. **The cycle.** The load manager :func:`lbctl.loadmanager.select.choose` picks for the simulator
   runs on that view (:meth:`~lbctl.loadmanager.base.LoadManager.run_cycle`), with the memory of
   the previous cycle: bundle time averages, the grace period, the shedder's history (EWMA, hit
   counters) and the placement strategy's history all carry over as in ``recommend`` on a sequence.
5. **The splits, then the moves.** Every split the cycle made (the modular
   ``checkNamespaceBundleSplit`` when ``loadBalancerAutoBundleSplitEnabled``, lbctl's planner when
   no move can reach the band) replaces its bundle by its children on the same broker
   (``NamespaceService.splitAndOwnBundle``); children the split unloads
   (``loadBalancerAutoUnloadSplitBundlesEnabled``) go where the leader's next lookup places them
   (``selectBrokerForAssignment``: :func:`lbctl.loadmanager.assign.modular_assignments`). Pulsar
   divides only the hash range: each topic's traffic follows its hash into a child. The trace
   keeps reporting the parent (it knows nothing of the simulation's splits), so each cycle a
   child carries its share of the parent's traffic in the trace snapshot in force: the share of
   the parent's listed topics (``topics``) whose hash falls in the child's range when the
   snapshot lists them, else an even share (:func:`_split_shares`). Then every unload that was
   carried out moves its bundle to the chosen destination (the cycle's
   :meth:`~lbctl.loadmanager.base.CycleResult.effect`).

An **extensible** snapshot runs the extensible load manager in the same loop
(:mod:`lbctl.simulate.extensible`): each broker's reporter keeps its ``BrokerLoadData`` — every
``loadBalancerReportUpdateMinIntervalMillis`` a tick takes the broker's true load into the EMAs
(``BrokerLoadData.update``) — and the leader sees the data as last published (a broker publishes
when ``needBrokerDataUpdate`` says so) together with every broker's top bundles of its true bundle
stats (``TopKBundles``); TransferShedder decides with its hit count, cool-down and recently
unloaded bundles carried, and a transfer moves its bundle to the shedder's destination, an unload
to the broker placement would pick at the next lookup. Cycle 1 is ``lbctl recommend`` on the
snapshot.

What the leader sees and how its memory is fed is the driver's part: :class:`ModularDriver` for the
modular load manager and lbctl's planner (``--strategy lbctl``, which plans on the brokers' load
reports), :class:`~lbctl.simulate.extensible.ExtensibleDriver` for the extensible one. The loop
hands a driver each cycle as a :class:`Tick`.

Metrics are taken on the true load at the moment of decision (:mod:`lbctl.simulate.metrics`).
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from msgspec import Struct

from lbctl.config import Settings, read_broker_conf
from lbctl.errors import UsageError
from lbctl.loadmanager.base import CycleResult, LoadManager
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.loadmanager.select import Options, choose, kind_of, profile_of, settings_for
from lbctl.model.bundle import (
    BundleName,
    BundleNameError,
    topic_hash,
    topic_namespace,
    whole_topic_shares,
)
from lbctl.model.bundlecolumns import StatsColumns, columns_of, numpy_or_none
from lbctl.model.cluster import EXTENSIBLE, MODULAR, ClusterState
from lbctl.model.cycle import Elapsed, Moved, Split
from lbctl.model.load import BundleData, LocalBrokerData, NamespaceBundleStats
from lbctl.model.loaddata import BundleDataView
from lbctl.model.loadmodel import LoadModel
from lbctl.planner.cycle import PlannerLoadManager, offer
from lbctl.planner.propose import ProposeOptions
from lbctl.records import replace
from lbctl.simulate.hosts import INFERRED_IDLE, host_report, inferred_host, inferred_hosts
from lbctl.simulate.metrics import (
    BounceTracker,
    PredictionError,
    Spread,
    prediction_errors,
    ratio,
    settle_cycle,
)
from lbctl.simulate.prediction import predicted_after
from lbctl.simulate.reports import need_update
from lbctl.simulate.sampling import sample_all
from lbctl.truth.hosts import Host

DEFAULT_CYCLES = 60
#: the most cycles one run simulates (about 69 days of one-minute cycles): a bound on the work a
#: two-line sequence years apart, or a mistyped --cycles, can ask for
MAX_CYCLES = 100_000
DEFAULT_BAND = 0.10
_ZERO = NamespaceBundleStats()


@dataclass(frozen=True, slots=True)
class Move:
    """One unload the load manager carried out, as the simulation applied it."""

    bundle: str
    source: str
    destination: str
    reason: str
    throughput: float
    msg_rate: float
    bounce_back: bool
    above_average: bool


@dataclass(frozen=True, slots=True)
class CycleRecord:
    """One cycle: the true load it decided on, what the leader saw, and what moved."""

    cycle: int
    at: int  # epoch ms
    loads: Mapping[str, float]  # true weighted max usage (fraction) per broker
    reported: Mapping[str, float]  # the same figure in the report the leader saw
    scores: Mapping[str, float | None]  # the shedder's smoothed score, where it keeps one
    bundles: Mapping[str, int]
    throughput: Mapping[str, float]
    msg_rate: Mapping[str, float]
    moves: tuple[Move, ...]
    skipped: int
    reports_written: int
    gate: str | None
    spread: Spread
    #: lbctl's figure: the usage after this cycle's moves as its plan predicted it (fraction, per
    #: broker); None when the cycle made no prediction (Pulsar's strategies never make one)
    predicted: Mapping[str, float] | None = None
    #: the bundles split this cycle (before its moves)
    splits: tuple[str, ...] = ()
    #: lbctl's figure, a counterfactual (``SimulationOptions.unmoved``): the true load once this
    #: cycle is over had its moves not been made (its splits kept), on the same traffic and host
    #: noise as the truth it is set beside (:meth:`SimulationResult.truth_after`); None when not
    #: asked for or nothing moved
    unmoved: Spread | None = None
    #: the exception the shedding strategy threw this cycle ("" when it returned): Pulsar's
    #: ``LoadSheddingTask`` logs it and unloads nothing, so a run of such cycles is no run of
    #: balanced cycles (AvgShedder's broker sort before PR #24954)
    failure: str = ""

    @property
    def moved_throughput(self) -> float:
        return sum(m.throughput for m in self.moves)

    @property
    def moved_msg_rate(self) -> float:
        return sum(m.msg_rate for m in self.moves)


def _failure(result: CycleResult) -> str:
    """The exception the cycle's shedding strategy threw ("" when none): only the modular load
    manager's decision records one (``ShedDecision.failure``)."""
    decision = getattr(result, "decision", None)
    return str(getattr(decision, "failure", "") or "")


@dataclass(frozen=True)
class SimulationResult:
    """A whole run, and its summary figures."""

    cluster: str
    start: int
    shedding: str
    placement: str
    interval_minutes: int
    band: float
    bounce_window_ms: int
    trace_snapshots: int
    settings: Mapping[str, Any]
    model: LoadModel
    cycles: tuple[CycleRecord, ...]
    final_loads: Mapping[str, float]
    final_throughput: Mapping[str, float] = field(default_factory=dict)
    #: how a comparison names the run (the load manager's label)
    label: str = ""
    #: the Pulsar release modelled (``Profile.to_dict()``), chosen as every command chooses it
    pulsar_version: Mapping[str, Any] = field(default_factory=dict)
    #: whether the strategy predicts its plans' usage after (lbctl's planner; Pulsar's do not)
    predicts: bool = False
    #: what the truth was: ``inferred`` (hosts from the reports), ``mixed``, or a hosts file
    hosts: str = "inferred"
    #: the truth itself: every broker's host at the end of the run
    truth_hosts: Mapping[str, Host] = field(default_factory=dict)

    @property
    def final(self) -> Spread:
        return Spread.of(list(self.final_loads.values()))

    def brokers(self) -> list[str]:
        """Every broker that took part, in order of first appearance."""
        seen: dict[str, None] = {}
        for c in self.cycles:
            seen.update(dict.fromkeys(c.loads))
        seen.update(dict.fromkeys(self.final_loads))
        return list(seen)

    def truth_after(self, k: int) -> Mapping[str, float]:
        """The true loads once cycle ``k`` (1-based) has moved its bundles: what the next cycle
        decides on, or the run's final loads after the last cycle."""
        return self.cycles[k].loads if k < len(self.cycles) else self.final_loads

    def prediction(self) -> PredictionError | None:
        """The predicted usage after against the truth (:class:`PredictionError`); ``None`` for
        a strategy that predicts nothing."""
        if not self.predicts:
            return None
        return prediction_errors([c.predicted for c in self.cycles],
                                 [self.truth_after(c.cycle) for c in self.cycles])

    def settled_at(self) -> int | None:
        return settle_cycle([c.spread.range for c in self.cycles], self.final.range, self.band)

    def summary(self) -> dict[str, Any]:
        moves = [m for c in self.cycles for m in c.moves]
        settled = self.settled_at()
        first = self.cycles[0].spread if self.cycles else Spread.of([])
        return {
            "cycles": len(self.cycles),
            "minutes": len(self.cycles) * self.interval_minutes,
            "unloads": len(moves),
            "skipped": sum(c.skipped for c in self.cycles),
            "bundlesMoved": len({m.bundle for m in moves}),
            "throughputMoved": sum(m.throughput for m in moves),
            "msgRateMoved": sum(m.msg_rate for m in moves),
            "bounceBacks": sum(m.bounce_back for m in moves),
            "aboveAveragePlacements": sum(m.above_average for m in moves),
            "reportsWritten": sum(c.reports_written for c in self.cycles),
            "cyclesWithUnloads": sum(1 for c in self.cycles if c.moves),
            "initial": first.to_dict(),
            "final": self.final.to_dict(),
            "finalThroughputRatio": ratio(list(self.final_throughput.values())),
            "band": self.band,
            "settledAtCycle": settled,
            "settleMinutes": None if settled is None else (settled - 1) * self.interval_minutes,
            "predictionError": None if (p := self.prediction()) is None else p.to_dict(),
        } | ({"bundlesSplit": n} if (n := sum(len(c.splits) for c in self.cycles)) else {})


@dataclass(frozen=True)
class SimulationOptions:
    """The simulation's own knobs (strategies and settings come from :class:`Options`)."""

    cycles: int | None = None  # default: 60, or longer to cover a trace
    band: float = DEFAULT_BAND  # settle band on the load range (fraction)
    bounce_window: int | None = None  # cycles; default: the grace period
    #: percent: the inferred hosts' idle usage (and the reported calibration's); default: none
    idle_usage: float | None = None
    #: the brokers' hosts (the truth the reports come from); default: inferred from their reports
    hosts: Mapping[str, Host] | None = None
    #: seeds the hosts' report noise
    seed: int = 0
    #: how the hosts were chosen, as the run reports it (``--hosts``: mixed, a file's name);
    #: default: ``given`` when ``hosts`` is, else ``inferred``
    truth: str | None = None
    #: ``--strategy lbctl``: the planner's goals (default: the settle band as target range)
    planner: ProposeOptions | None = None
    #: also evaluate each cycle with moves against the truth had they not been made
    #: (``CycleRecord.unmoved``): a cycle's moves are judged against what the traffic alone did
    #: (a diurnal wave raises the max by itself); costs a host report per broker they touched
    unmoved: bool = False

    def planner_options(self) -> ProposeOptions:
        if self.planner is None:
            return ProposeOptions(target_range=self.band * 100)
        if self.planner.target_range is None and self.planner.target_std is None:
            return replace(self.planner, target_range=self.band * 100)
        return self.planner


def check_states(states: Sequence[ClusterState]) -> None:
    """At least one snapshot, all of one kind of cluster; extensible ones (run by the extensible
    load manager, or by the modular one on their brokers' reports in ``compare``) must carry each
    broker's bundle stats, which the load model moves around."""
    if not states:
        raise UsageError("no snapshot given")
    if kind_of(states) != EXTENSIBLE:
        return
    for st in states:
        missing = [b for b, pub in st.broker_load_data.items()
                   if b not in st.brokers or (not st.brokers[b].lastStats and (
                       pub.data.bundleCount or _published_tops(st, b)))]
        if missing:
            raise UsageError(f"{st.source or st.cluster}: the simulator needs each broker's bundle "
                             f"stats (brokers[b].lastStats) to move load; missing for "
                             f"{', '.join(missing)}")


def _published_tops(st: ClusterState, broker: str) -> int:
    tops = st.top_bundles_load_data.get(broker)
    return len(tops.bundles) if tops is not None else 0


def _all_extensible(states: Sequence[ClusterState]) -> bool:
    return all(st.load_manager == EXTENSIBLE for st in states)


#: told (cycle done, cycles in all) after each cycle; for a progress display, never for results
CycleProgress = Callable[[int, int], None]


def simulate(states: Sequence[ClusterState], opts: Options,
             sim: SimulationOptions | None = None, *,
             progress: CycleProgress | None = None) -> SimulationResult:
    """Run the closed loop from ``states[0]`` (the rest, if any, is the trace)."""
    sim = sim or SimulationOptions()
    if not states:
        raise UsageError("no snapshot given")
    conf = read_broker_conf(opts.broker_conf) if opts.broker_conf else {}
    # the run's own first settings: what the load manager reads of them is what it reports
    profile, _ = profile_of(states, opts)  # one release for the whole run (lbctl.versions.choose)
    settings0 = settings_for(states[0], opts, conf, profile)
    lm = choose(states, opts, settings0, simulating=True, own=offer(sim.planner_options()))
    if lm.kind == MODULAR and _all_extensible(states):
        # lbctl's planner moves the brokers' load reports as on a modular cluster (as compare does)
        states = [replace(st, load_manager=MODULAR) for st in states]
    check_states(states)
    if lm.kind == EXTENSIBLE:
        from lbctl.simulate.extensible import ExtensibleDriver

        driver: Driver = ExtensibleDriver()
    else:
        driver = ModularDriver()
    run = _Run(states, opts, sim, _Start(conf, settings0, lm, driver))
    run.progress = progress
    return run.run()


class _Start(Struct, frozen=True):
    """What :func:`simulate` chose before the loop: the ``--broker-conf`` file (read), the first
    snapshot's settings (what the load manager reads of them is what the run reports), the load
    manager and its driver."""

    conf: Mapping[str, str]
    settings0: Settings
    lm: LoadManager[Any]
    driver: Driver


class Tick(Struct, frozen=True):
    """One cycle of the loop, as a driver sees it: its number (1: the snapshot as given), its
    time, the trace snapshot in force and that snapshot's settings, how many brokers wrote their
    report before it."""

    k: int
    now: int
    trace_state: ClusterState
    settings: Settings
    written: int


class Driver(Protocol):
    """A load manager's part of a run: what its leader sees, and how its memory is fed."""

    def start(self, run: _Run) -> None:
        """Set up before the first cycle (the run's ownership and settings are known)."""

    def view(self, run: _Run, tick: Tick) -> ClusterState:
        """What the leader sees at a cycle after the first (the first sees the snapshot)."""

    def decide(self, run: _Run, tick: Tick, view: ClusterState, memory: Any) -> CycleResult:
        """The load manager's cycle on ``view`` with the memory of the previous one."""


class _Run:
    """The mutable state of one simulation run."""

    def __init__(self, states: Sequence[ClusterState], opts: Options, sim: SimulationOptions,
                 start: _Start):
        self.lm = start.lm  # decides each cycle
        self.driver = start.driver  # feeds it (module docstring)
        self.states = list(states)
        self.times = [s.captured_at for s in self.states]
        self.opts = opts
        self.sim = sim
        self.conf = start.conf
        self._settings: dict[int, Settings] = {0: start.settings0}
        self.settings0_profile = start.settings0.profile
        s0 = self.states[0]
        self.settings0 = self.settings(0)
        interval = int(self.settings0["loadBalancerSheddingIntervalMinutes"])
        if interval <= 0:
            raise UsageError(f"loadBalancerSheddingIntervalMinutes must be positive, got {interval}")
        self.interval = interval
        self.interval_ms = interval * 60_000
        span = self.times[-1] - self.times[0]
        trace_cycles = math.ceil(span / self.interval_ms) + 1 if len(self.states) > 1 else 1
        if sim.cycles is None and trace_cycles > MAX_CYCLES:
            raise UsageError(
                f"the sequence spans {trace_cycles:,} cycles of {interval} min (from its first to "
                f"its last capturedAt), more than {MAX_CYCLES:,}: pass --cycles N to simulate "
                "part of it")
        cycles = sim.cycles if sim.cycles is not None else max(DEFAULT_CYCLES, trace_cycles)
        if cycles < 1:
            raise UsageError(f"--cycles must be at least 1, got {cycles}")
        if cycles > MAX_CYCLES:
            raise UsageError(f"--cycles must be at most {MAX_CYCLES:,}, got {cycles:,}")
        self.n_cycles = cycles
        if sim.bounce_window is not None:
            if sim.bounce_window < 0:
                raise UsageError(f"--bounce-window must be >= 0, got {sim.bounce_window}")
            window = sim.bounce_window * self.interval_ms
        else:
            window = int(self.settings0["loadBalancerSheddingGracePeriodMinutes"]) * 60_000
        self.bounce = BounceTracker(window)

        # ownership and traffic at the start
        self.trace_index = 0
        #: a split's child -> (the trace's bundle it comes from, the part of it it carries)
        self.derived: dict[str, tuple[str, BundleShare]] = {}
        self.stats = self._stats_of(0)
        self.owner: dict[str, str] = {}
        self.owned: dict[str, dict[str, None]] = {b: {} for b in s0.brokers}
        for broker, rep in s0.brokers.items():
            for x in (*rep.lastStats, *rep.bundles):
                if x not in self.owner:
                    self.owner[x] = broker
                    self.owned[broker][x] = None
        self.model = LoadModel.calibrate(
            s0, {b: [self.stats[x] for x in xs] for b, xs in self.owned.items()}, sim.idle_usage)
        self.hosts: dict[str, Host] = dict(sim.hosts) if sim.hosts is not None else {}
        idle = INFERRED_IDLE if sim.idle_usage is None else sim.idle_usage / 100
        for b, host in inferred_hosts(s0, idle).items():
            self.hosts.setdefault(b, host)
        self.rng = random.Random(sim.seed)
        self.written: dict[str, LocalBrokerData] = dict(s0.brokers)
        self.true: dict[str, LocalBrokerData] = {}
        self.dirty: set[str] = set(s0.brokers)
        #: a moved bundle -> the broker it left, for the next recompute's counterfactual
        self._undo: dict[str, str] = {}
        self.unmoved: Spread | None = None  # that counterfactual, once computed
        self.weights = self.settings0.weights4()
        self.driver.start(self)

    # --- inputs ---------------------------------------------------------------------------------
    def settings(self, i: int) -> Settings:
        s = self._settings.get(i)
        if s is None:
            s = self._settings[i] = settings_for(self.states[i], self.opts, self.conf,
                                                 self.settings0_profile)
        return s

    def _stats_of(self, i: int) -> dict[str, NamespaceBundleStats]:
        stats: dict[str, NamespaceBundleStats] = {}
        for rep in self.states[i].brokers.values():
            for x in rep.bundles:
                stats.setdefault(x, _ZERO)
            stats.update(rep.lastStats)
        if self.derived:
            stats = self._derive(stats, self.states[i])
        return stats

    def _derive(self, stats: dict[str, NamespaceBundleStats],
                st: ClusterState) -> dict[str, NamespaceBundleStats]:
        """The trace's stats with every bundle the simulation split replaced by its children's
        shares of it (module docstring, step 5)."""
        out = dict(stats)
        for child, (root, part) in self.derived.items():
            parent = stats.get(root)
            out.pop(root, None)
            if parent is not None:
                out[child] = part.of(parent, _topic_share(st, root, child))
        return out

    def _follow_trace(self, i: int) -> None:
        """Switch to trace snapshot ``i``: new traffic, joining/leaving brokers and bundles."""
        st = self.states[i]
        self.trace_index = i
        self.stats = self._stats_of(i)
        trace_owner: dict[str, str] = {}
        for broker, rep in st.brokers.items():
            for x in (*rep.lastStats, *rep.bundles):
                trace_owner.setdefault(x, broker)
        for broker, rep in st.brokers.items():
            if broker not in self.owned:
                self.owned[broker] = {}
                self.written[broker] = rep
                if broker not in self.model:
                    self.model.add_broker(broker, rep, rep.lastStats.values())
                if broker not in self.hosts:
                    self.hosts[broker] = inferred_host(rep)
        alive = set(st.brokers)
        for gone in [b for b in self.owned if b not in alive]:
            for x in self.owned.pop(gone):
                del self.owner[x]
            self.written.pop(gone, None)
            self.true.pop(gone, None)
        for x in [x for x in self.owner if x not in self.stats]:
            del self.owned[self.owner.pop(x)][x]
        loads = {b: self._usage(self.true[b]) for b in self.owned if b in self.true}
        for x in self.stats:
            if x in self.owner:
                continue
            dest = trace_owner.get(x)
            if dest not in self.owned:
                dest = min(self.owned, key=lambda b: (loads.get(b, 0.0), b))
            self.owner[x] = dest
            self.owned[dest][x] = None
        self.dirty = set(self.owned)

    # --- the loop -------------------------------------------------------------------------------
    def _usage(self, rep: LocalBrokerData) -> float:
        return rep.max_resource_usage_with_weight(*self.weights)

    def _recompute(self) -> None:
        # in name order: each report draws its noise from the run's generator, and a set's order
        # of strings changes with the process's hash seed (the same --host-seed, another run)
        undone = self._unmoved_owned()
        twins: dict[str, LocalBrokerData] = {}
        for b in sorted(self.dirty):
            carried = {x: self.stats[x] for x in self.owned[b]}
            if b in undone:  # the same noise draw, from a copy: the run's draws stay its own
                twin = random.Random()
                twin.setstate(self.rng.getstate())
                twins[b] = host_report(self.hosts[b], self.written[b],
                                       {x: self.stats[x] for x in undone[b]}, twin)
            self.true[b] = host_report(self.hosts[b], self.written[b], carried, self.rng)
        self.dirty = set()
        if undone:
            for b in undone.keys() - twins.keys():  # not recomputed: no draw to share
                twins[b] = host_report(self.hosts[b], self.written[b],
                                       {x: self.stats[x] for x in undone[b]})
            self.unmoved = Spread.of([self._usage(twins.get(b, self.true[b]))
                                      for b in self.owned])

    def _unmoved_owned(self) -> dict[str, list[str]]:
        """The bundles of each broker the last cycle's moves touched, had they not been made
        (``SimulationOptions.unmoved``): every moved bundle still carried back on the broker it
        left, if that broker is still there; empty when nothing is to be undone."""
        undo, self._undo = self._undo, {}
        back: dict[str, list[str]] = {}
        for x, src in undo.items():
            now = self.owner.get(x)
            if now is None or now == src or src not in self.owned:
                continue
            back.setdefault(src, []).append(x)
            back.setdefault(now, [])
        gone = {x for xs in back.values() for x in xs}
        return {b: [x for x in self.owned[b] if x not in gone] + back[b] for b in back}

    def _publish(self, now: int, settings: Settings) -> int:
        """Brokers write their reports where ``needBrokerDataUpdate`` says so; returns how many."""
        written = 0
        max_interval = int(settings["loadBalancerReportUpdateMaxIntervalMinutes"]) * 60_000
        for b, true in self.true.items():
            last = self.written[b]
            changed = true is not last and b in self._changed
            due = now - last.lastUpdate > max_interval
            if due or (changed and need_update(last, true, now, settings)):
                self.written[b] = replace(true, lastUpdate=now)
                # written: the broker clears its gains and losses
                self.true[b] = replace(self.written[b], lastBundleGains=(), lastBundleLosses=())
                written += 1
        return written

    progress: CycleProgress | None = None

    def run(self) -> SimulationResult:
        s0 = self.states[0]
        t0 = s0.captured_at
        memory: Any = None
        records: list[CycleRecord] = []
        self._changed: set[str] = set(self.owned)
        for k in range(1, self.n_cycles + 1):
            now = t0 + (k - 1) * self.interval_ms
            i = bisect.bisect_right(self.times, now) - 1
            if i != self.trace_index:
                self._follow_trace(i)
            self._changed = set(self.dirty)
            self._recompute()
            self._record_unmoved(records)
            trace_state = self.states[self.trace_index]
            settings = self.settings(self.trace_index)
            tick = Tick(k, now, trace_state, settings,
                        0 if k == 1 else self._publish(now, settings))
            view = s0 if k == 1 else self.driver.view(self, tick)
            loads = {b: self._usage(self.true[b]) for b in self.owned}
            spread = Spread.of(list(loads.values()))
            result = self.driver.decide(self, tick, view, memory)
            memory = result.memory
            effect = result.effect()
            counts = {b: len(xs) for b, xs in self.owned.items()}
            split, placed = self._split(effect.splits, view, tick)
            moves = self._move(effect.moves + placed, loads, spread, now)
            if self.sim.unmoved:
                for m in moves:
                    if m.source != m.destination:
                        self._undo.setdefault(m.bundle, m.source)
            records.append(CycleRecord(
                cycle=k, at=now, loads=MappingProxyType(loads),
                reported={b: self._usage(view.brokers[b]) for b in view.brokers},
                scores={b: effect.scores.get(b) for b in view.brokers},
                bundles=counts,
                throughput={b: self.true[b].throughput for b in self.owned},
                msg_rate={b: self.true[b].msg_rate for b in self.owned},
                moves=moves, skipped=effect.skipped,
                reports_written=tick.written, gate=result.gate, spread=spread,
                predicted=predicted_after(result), splits=split, failure=_failure(result),
            ))
            if self.progress is not None:
                self.progress(k, self.n_cycles)
        self._recompute()
        self._record_unmoved(records)
        final = {b: self._usage(self.true[b]) for b in self.owned}
        shedding, placement = self.lm.strategies
        return SimulationResult(
            cluster=s0.cluster, start=t0, shedding=shedding,
            placement=placement, interval_minutes=self.interval,
            band=self.sim.band, bounce_window_ms=self.bounce.window_ms,
            trace_snapshots=len(self.states), settings=self.settings0.read_values(),
            model=self.model, cycles=tuple(records), final_loads=final,
            final_throughput={b: self.true[b].throughput for b in self.owned},
            label=self.lm.label, pulsar_version=self.settings0.profile.to_dict(),
            predicts=isinstance(self.lm, PlannerLoadManager),
            hosts=self.sim.truth or ("given" if self.sim.hosts is not None else "inferred"),
            truth_hosts=dict(self.hosts),
        )

    def _record_unmoved(self, records: list[CycleRecord]) -> None:
        """The last cycle's counterfactual, once the recompute after it has made it."""
        if self.unmoved is not None:
            records[-1] = replace(records[-1], unmoved=self.unmoved)
            self.unmoved = None

    def _split(self, splits: tuple[Split, ...], view: ClusterState,
               tick: Tick) -> tuple[tuple[str, ...], tuple[Moved, ...]]:
        """Carry out the cycle's splits (module docstring, step 5): each bundle still owned is
        replaced by its children on its owner; returns the bundles split and the moves of the
        children a split unloads (to where the next lookup places them). A split of a bundle no
        broker owns any more, or whose children exist already, is dropped (Pulsar skips a bundle
        its namespace no longer has: ``checkBundleDataExistInNamespaceBundles``)."""
        if not splits:
            return (), ()
        done: list[str] = []
        unloaded: list[str] = []
        stale = False  # children made here have no stats until they are rebuilt, once
        for s in splits:
            owner = self.owner.get(s.bundle)
            if owner is None or not s.children or any(c in self.owner for c in s.children):
                continue
            if stale and s.bundle not in self.stats:  # a child split in the same cycle
                self.stats, stale = self._stats_of(self.trace_index), False
            root, part = self.derived.pop(s.bundle, (s.bundle, BundleShare()))
            topics = self.stats.get(s.bundle, _ZERO).topics
            del self.owned[owner][s.bundle]
            del self.owner[s.bundle]
            for child, share in zip(s.children, part.split(topics, len(s.children)),
                                    strict=True):
                self.derived[child] = (root, share)
                self.owner[child] = owner
                self.owned[owner][child] = None
            stale = True
            self.dirty.add(owner)
            done.append(s.bundle)
            if s.unload:
                unloaded += s.children
        if stale:
            self.stats = self._stats_of(self.trace_index)
        if not unloaded:
            return tuple(done), ()
        from lbctl.loadmanager.assign import modular_assignments

        picks, _ = modular_assignments(view, tick.settings, unloaded, self.opts, view.owners())
        # a child the lookup gives back to its owner does not move
        return tuple(done), tuple(Moved(a.bundle, a.broker, "Split") for a in picks
                                  if a.broker is not None and a.broker != self.owner[a.bundle])

    def _move(self, decided: tuple[Moved, ...], loads: Mapping[str, float], spread: Spread,
              now: int) -> tuple[Move, ...]:
        """Carry out the cycle's moves on the simulation's ownership (a move to a broker that is
        gone, or of a bundle no broker owns, is dropped)."""
        moves = []
        for m in decided:
            x, dest = m.bundle, m.destination
            src = self.owner.get(x)
            if src is None or dest is None or dest not in self.owned:
                continue
            st = self.stats.get(x, _ZERO)
            bounce = src != dest and self.bounce.move(x, src, dest, now)
            moves.append(Move(x, src, dest, m.reason, st.throughput, st.msg_rate,
                              bounce, loads.get(dest, 0.0) > spread.mean))
            if src != dest:
                del self.owned[src][x]
                self.owned[dest][x] = None
                self.owner[x] = dest
                self.dirty.update((src, dest))
        return tuple(moves)


class BundleShare(Struct, frozen=True):
    """The part of a trace bundle a split's child carries, when the trace does not list the
    bundle's topics (:func:`_topic_share`): each child takes a whole number of its parent's
    topics, as even as they divide (a topic never divides: a one-topic bundle's children are all
    of it and nothing), and each topic an even part of the traffic; ``share`` is the product
    down the splits, of topics and traffic alike (a bundle with no topics divides evenly)."""

    share: float = 1.0

    def split(self, topics: int, n: int) -> tuple[BundleShare, ...]:
        """This part split ``n`` ways, its ``topics`` dealt to the children in order."""
        return tuple(BundleShare(x) for x in whole_topic_shares(topics, n, self.share))

    def of(self, st: NamespaceBundleStats,
           by_topics: tuple[float, float] | None) -> NamespaceBundleStats:
        """This part of ``st``: its messages and bytes by the listed topics' shares when the
        trace gives them, else by this share."""
        if by_topics is None:
            return st.part(self.share)
        return st.part(self.share, *by_topics)


def _topic_share(st: ClusterState, root: str, child: str) -> tuple[float, float] | None:
    """The shares (messages, bytes) of the traffic of ``root``'s topics the snapshot lists
    (``topics``) whose hash falls in ``child``'s range: each topic follows its hash into a
    child (``NamespaceBundleFactory.splitBundles`` divides the range, not the traffic); ``None``
    when it lists no topic of ``root`` with both."""
    if not st.topics:
        return None
    try:
        parent, mine = BundleName.parse(root), BundleName.parse(child)
    except BundleNameError:
        return None
    msgs = bytes_ = msgs_in = bytes_in = 0.0
    for name, ts in st.topics.items():
        h = topic_hash(name)
        if not parent.range.contains(h) or topic_namespace(name) != parent.namespace:
            continue
        m, b = ts.msgRateIn + ts.msgRateOut, ts.msgThroughputIn + ts.msgThroughputOut
        msgs += m
        bytes_ += b
        if mine.range.contains(h):
            msgs_in += m
            bytes_in += b
    return (msgs_in / msgs, bytes_in / bytes_) if msgs > 0 and bytes_ > 0 else None


class ModularDriver:
    """The modular load manager's part of a run (and lbctl's planner's, which reads the same
    reports): the leader sees the reports last written, and the bundle data sampled from them,
    which the simulation keeps rather than the cycle."""

    def __init__(self) -> None:
        self.bundle_data: Mapping[str, BundleData] = {}
        self._steady: dict[str, Any] = {}  # see sample_all
        self._np = numpy_or_none()
        self._stats_columns: list[StatsColumns] = []  # see BundleColumns.sampled

    def start(self, run: _Run) -> None:
        pass

    def _sample(self, run: _Run, written: int) -> Mapping[str, BundleData]:
        """The leader's bundle data for this cycle: one sample of every reported bundle when some
        broker wrote its report (``updateAll`` on the write notification), else unchanged."""
        if written:
            reported: dict[str, NamespaceBundleStats] = {}
            for b in run.owned:
                reported.update(run.written[b].lastStats)
            np = self._np
            if np is not None:  # the same figures, per column (lbctl.model.bundlecolumns)
                self.bundle_data = columns_of(np, self.bundle_data).sampled(
                    reported, self._stats_columns)
            else:
                self.bundle_data = sample_all(self.bundle_data, reported, self._steady)
        return self.bundle_data

    def view(self, run: _Run, tick: Tick) -> ClusterState:
        """What the leader sees: the reports last written."""
        s0 = run.states[0]
        trace_state = tick.trace_state
        return ClusterState(
            cluster=s0.cluster, captured_at=tick.now,
            brokers=MappingProxyType({b: run.written[b] for b in run.owned}),
            load_manager=s0.load_manager, config=trace_state.config,
            bundle_data=self._sample(run, tick.written),
            namespaces=trace_state.namespaces, topics=trace_state.topics,
            source=s0.source)

    def decide(self, run: _Run, tick: Tick, view: ClusterState, memory: Any) -> CycleResult:
        if memory is not None:  # our bundle data replaces the cycle's (already sampled)
            memory = replace(memory, bundle_data=self.bundle_data)
        elapsed = None
        if tick.k > 1 and not tick.written and isinstance(run.lm, ModularLoadManager):
            # no broker wrote its report since the last cycle: the leader's updateAll, and the
            # checkNamespaceBundleSplit it runs on each write, did not run (no split timer)
            elapsed = Elapsed(samples=0, interval_ms=run.interval_ms)
        result = run.lm.run_cycle(view, tick.settings, memory, elapsed)
        if tick.k == 1:
            data = result.memory.bundle_data
            self.bundle_data = (data.materialized() if isinstance(data, BundleDataView)
                                else dict(data))
        return result

