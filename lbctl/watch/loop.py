"""The watcher: each interval, one capture of the cluster and everything that follows from it.

One tick (:meth:`Watcher.tick`):

1. read the cluster through the one live state source (and who the leader is);
2. append the capture to the history (acknowledged once on disk);
3. run lbctl's load manager on it on the leader's clock (the strategies' memory carried from tick
   to tick) and check the leader against it (:mod:`lbctl.watch.divergence`);
4. gather the capture's conditions (:mod:`lbctl.watch.detect`, ``lbctl doctor``'s findings) and
   fold them into the anomalies (:mod:`lbctl.watch.anomalies`), saved with the history;
5. send what was raised or resolved (:mod:`lbctl.watch.notify`), queue or apply a healing plan
   where the operator switched healing on for that kind (:mod:`lbctl.watch.heal`);
6. publish what ``/metrics`` and the status page show (:mod:`lbctl.watch.status`).

A restarted watcher resumes from its history: the last captures are replayed through the load
manager to rebuild the strategies' memory, ownership and the move log — with the ownership each
capture was taken with (:class:`lbctl.watch.history.Seen`, where the history has it) — and the
anomalies' saved state means nothing already raised is raised again.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from msgspec import Struct, field

from lbctl.admin.clock import ClusterClock
from lbctl.loadmanager.clock import Follower, interval_ms
from lbctl.loadmanager.select import Options
from lbctl.model.cluster import ClusterState
from lbctl.records import replace
from lbctl.watch.anomalies import ANOMALY_FILE, Condition, Event, Tracker
from lbctl.watch.detect import MoveLog, Thresholds, conditions, known_brokers, moves, usage_of
from lbctl.watch.divergence import Checker, warm_up
from lbctl.watch.history import History, Retention, Seen, seen_of
from lbctl.watch.leader_view import LeaderView
from lbctl.watch.status import Status, UsageHistory, build_status

#: captures replayed at start to rebuild memory
RESUME_CAPTURES = 120
#: how much shorter than ``loadBalancerSheddingIntervalMinutes`` the gap between two captures
#: may be and still hold one of the leader's cycles (lbctl runs one then): a capture is stamped
#: when its read starts, a little after the interval's tick, so captures an interval apart came
#: a few milliseconds short half the time — and 60 times that beside ``lbctl sandbox --speed
#: 60``, where 200 of 448 captures ran no cycle (a move they showed was matched against none)
CYCLE_SLACK = 0.1


class WatchOptions(Struct, frozen=True):
    """What ``lbctl watch`` was told."""

    history: Path
    interval_s: float = 60.0
    retention: Retention = field(default_factory=Retention)
    #: kind → grace in milliseconds (cluster time) before a condition is raised
    grace_ms: Mapping[str, int] = field(default_factory=dict)
    limits: Thresholds = field(default_factory=Thresholds)
    patience: int = 2  # shedding intervals an expected move may take
    doctor: bool = True
    #: who owns each bundle from every broker's ``ownedNamespaces`` (moves seen at the capture
    #: they happen), else from the load reports only (a move shows once both are rewritten)
    ownership: bool = True
    #: lbctl's apply journal: an unload it sent is lbctl's, not the leader's (None: not read)
    journal: Path | None = None
    #: the load reports are served refreshed, as Pulsar's load-report endpoint serves them
    #: (``ModularLoadManagerWrapper.generateLoadReport``: the bundles and usage now, the gains
    #: and losses since the last write, ``lastUpdate`` kept); False: as the broker wrote them
    #: (``lbctl sandbox --reports-as-written``). Only a first capture needs telling: later ones
    #: show which (:mod:`lbctl.watch.leader_view`)
    refreshed: bool = True


class Capture(Struct, frozen=True):
    """One read of the cluster: the state, the leader, who owns each bundle as the brokers list
    it (None: from the reports only) and the unloads the leader's own shedding counted
    (:func:`unload_count`; None: not read)."""

    state: ClusterState
    leader: str | None = None
    owners: dict[str, str] | None = None
    unloads: int | None = None


class TickResult(Struct, frozen=True):
    state: ClusterState
    events: tuple[Event, ...]
    conditions: tuple[Condition, ...]


class Watcher:
    """Reads ``cluster`` (a :class:`~lbctl.sources.cluster.LiveCluster`) each tick."""

    def __init__(self, cluster: Any, opts: WatchOptions, lm_opts: Options, *,
                 clock: Callable[[], float] = time.time,
                 on_events: Callable[[list[Event], ClusterState], None] | None = None,
                 on_state: Callable[[ClusterState, Any, list[Event]], None] | None = None,
                 warn: Callable[[str], None] = lambda _m: None):
        self.cluster = cluster
        self.opts = opts
        self.lm_opts = lm_opts
        self.clock = clock
        self.on_events = on_events
        self.on_state = on_state
        self.warn = warn
        self.history = History(opts.history, opts.retention)
        self.tracker = Tracker(opts.grace_ms)
        self.tracker.load(opts.history / ANOMALY_FILE)
        self.checker = Checker(opts.patience)
        self.follower: Follower | None = None
        #: each broker's report as the leader read it (:mod:`lbctl.watch.leader_view`): the
        #: load-report endpoint serves it refreshed, ``lastUpdate`` kept at the last write
        self.view = LeaderView(opts.refreshed)
        self.last_owner: dict[str, str] = {}
        self.known: set[str] = set()
        self.log = MoveLog(opts.limits.window_ms)
        self.leader: str | None = None
        #: whether the last capture read ownership from the brokers (None: no capture yet)
        self.owned_read: bool | None = None
        self.usage = UsageHistory()
        self.captures = 0
        self.errors = 0
        self.last_error: str | None = None
        self.status: Status | None = None
        self.ours: set[str] = set()  # bundles lbctl's own healing moved (besides the queue's)
        self._plan_bundles: dict[str, frozenset[str]] = {}  # plan id → the bundles it moves
        self.last_plan: Any = None  # the load manager's plan on the last capture
        #: lbctl's own unloads on its last cycle (bundle → the time its memory holds them at) and
        #: the leader's moves seen since (bundle → the capture that showed it): the follower's
        #: grace map is corrected with them before the next cycle (:meth:`_correct`)
        self._decided: dict[str, int] = {}
        self._moved: dict[str, int] = {}
        #: the same for the extensible load manager's recently unloaded *brokers* (broker → the
        #: time): the sources of lbctl's own unloads, and the brokers the leader's moves left
        self._decided_from: dict[str, int] = {}
        self._left: dict[str, int] = {}
        #: bundles whose grace lbctl's last cycle counted on, though it ends before the leader's
        #: next cycle (:meth:`_grace_ending`)
        self._ending: frozenset[str] = frozenset()
        #: bundles in flight: left their broker's listing (owned by nobody since) → the capture
        #: that showed it, the broker left and whether lbctl's grace-ending window excused the
        #: leader's unload of it then (:meth:`_in_flight`); and the arrivals so excused
        self._away: dict[str, tuple[int, str, bool]] = {}
        self.excused: frozenset[str] = frozenset()
        #: the states this capture's moves were judged on (an unexpected-unload's evidence)
        self.judged = ""
        #: this capture's moves no captured report lets lbctl judge (bundle → why:
        #: :meth:`_unseen`), each an ``unjudged-unload`` rather than an unexpected one
        self.unseen: dict[str, str] = {}
        self._unseen_away: dict[str, str] = {}  # the same of the bundles in flight (``_away``)
        #: the moves judged without lbctl's apply journal, within the move window (bundle → the
        #: start of its window, the capture that showed it, from, to, its grace entry), and
        #: those its journal told since, each a manual-unload at this capture
        #: (:meth:`_late_journal`)
        self._unmatched: dict[str, tuple[int, int, str, str, int]] = {}
        self.late: dict[str, str] = {}
        #: the unloads the leader's next cycle may make on the last capture's reports
        #: (:meth:`_next_cycle`)
        self._could: frozenset[tuple[str, str]] = frozenset()
        #: the follower after lbctl's last cycle and that cycle's capture: the leader's next
        #: cycle replayed on the load data it may have read (:meth:`_between`)
        self._could_from: tuple[Follower, ClusterState] | None = None
        #: the bundles of this capture's expectations that lbctl's cycle does not decide on the
        #: load data the leader may read by its next cycle (:func:`_ahead`): tentative, judged
        #: again on the next capture
        self.unsure: frozenset[str] = frozenset()
        #: the leader and its unload count at the last capture, who owned each bundle then as
        #: the brokers listed it (None: not read), and the bundles that left a broker since
        #: without the leader (bundle → the capture's time and why), told when they arrive on
        #: their next owner: :meth:`_not_leaders`
        self._unloads: tuple[str, int] | None = None
        self._prev: ClusterState | None = None  # the last capture (its configuration, its time)
        self._listed: Mapping[str, str] | None = None
        self._left_alone: dict[str, tuple[int, str]] = {}
        self._journal_failed = False  # the apply journal could not be read (said once)
        #: the journal's unloads as last read: (its size and mtime, from when, what)
        self._journal_cache: tuple[tuple[int, int], int, dict[str, int]] | None = None
        self._record_failed = False  # a capture's record could not be written (said once)
        #: cycles lbctl follows the leader before its expectations are firm (None: never), from
        #: the last cycle's strategy and settings (:func:`lbctl.watch.divergence.warm_up`)
        self.warm_up: int | None = 1
        #: TransferShedder's ``unloadConditionHitCount`` in lbctl's memory is the leader's
        #: (None: the strategy keeps none; :meth:`_hits`), and the leader's transfers seen since
        #: lbctl's last cycle reset the leader's (:meth:`_correct`)
        self.hits_synced: bool | None = None
        self._own_acts = 0  # lbctl's own unloading cycles while the counts were not known equal
        self._leader_acted = False
        #: the cluster's time for the watcher's clock (:mod:`lbctl.admin.clock`): the captures and
        #: the apply journal's times are compared with the brokers'. Each capture opens a client;
        #: this one clock is every such client's (:meth:`_read`), so it outlives them
        self.cluster_clock = ClusterClock(lambda: self.clock())
        self.last_tick: float | None = None  # the watcher's clock at the last good capture
        #: True while a capture reads the cluster (only reads: a stop may abandon it at once)
        self.reading = False
        self._lock = threading.Lock()
        self._resume()

    # --- resume -------------------------------------------------------------------------------
    def _resume(self) -> None:
        states = self.history.recent(RESUME_CAPTURES)
        records = self.history.seen(states) if states else {}
        for st in states:
            self.view.of(st)  # (the history holds the leader's view: this only remembers it)
            # memory, ownership, moves and the leader's open expectations — no conditions, no
            # events: without the expectations, the first capture after a restart resolved an
            # open leader-divergence and a later one raised it again. Each capture with the
            # ownership it was taken with: replayed with the reports', a move the brokers had
            # listed before the reports showed it was seen again at the first live capture
            rec = records.get(st.captured_at)
            owners = rec.ownership_of(st) if rec is not None else None
            ending = self._ending
            settings = self._settings(st)
            seen, decided, manual = self._cycle(st, settings, frozenset(self.ours), owners,
                                                recorded=rec)
            self.checker.observe(st, seen, decided, interval_ms(settings), frozenset(self.ours),
                                 warm=self.warm, free=ending | self.excused
                                 | _agreed(seen, decided),
                                 owners=owners, manual=manual, last=self.last_owner,
                                 judged=self.judged, unseen=self.unseen,
                                 unsure=self.unsure)
        if states:
            self.known = known_brokers(states)
            # the page and /metrics show the last capture on record (its age in the lag, the
            # page headed "no capture yet") rather than nothing while the cluster is unreachable
            self.status = build_status(self, states[-1], settings)

    # --- one capture --------------------------------------------------------------------------
    def _read(self) -> Capture:
        """The capture, the leader, who owns each bundle now (None: from the reports only) and
        the leader's unload count.

        Ownership is read from the brokers (:mod:`lbctl.sources.live_ownership`) because the
        load reports lag a move by up to ``loadBalancerReportUpdateMaxIntervalMinutes``: a bundle
        moved there and back within one report interval showed no move, and lbctl's expected
        moves were checked against the ownership of the last reports, not the leader's. A
        cluster that refuses the listing is followed by its reports, with one warning when that
        starts and one when the listing comes back.

        The leader's unload count (``ModularLoadManagerImpl``'s ``brk_lb_unload_bundle_count``,
        in the leader's ``/broker-stats/metrics``) tells its unloads from an operator's: it
        counts the bundles its own ``doLoadShedding`` unloaded, never an admin unload. It is
        read only with the brokers' ownership (with the reports, a move shows too long after
        for the count to say whose it was).

        On the extensible load manager the leader's ``UnloadCounter`` counts admin unloads too
        (``ExtensibleLoadManagerImpl.unloadNamespaceBundleAsync`` hands ``UnloadManager`` a
        Success decision with reason ``Admin``), so its totals (``brk_lb_unload_bundle_total``)
        cannot tell them apart; its breakdown can: ``brk_lb_unload_broker_breakdown_total`` with
        ``result="Success"`` and the reasons of ``UnloadScheduler``'s own decisions
        (:func:`unload_count`)."""
        from lbctl.admin.client import BROKER_METRICS, call
        from lbctl.errors import LbctlError
        from lbctl.model.cluster import EXTENSIBLE, MODULAR
        from lbctl.sources.live_brokers import LEADER_BROKER, leader_id

        unloads = None
        with self.cluster.session() as reader:
            # the client's answers feed the cluster's clock (:mod:`lbctl.admin.clock`); who
            # leads, first: its answer puts the capture on the cluster's clock
            reader.client.clock = self.cluster_clock
            try:
                leader = leader_id(reader.client.json(call(LEADER_BROKER)))
            except LbctlError:
                leader = None
            reader.clock = lambda: self.cluster_clock.at(self.clock())
            reader.ownership = self.opts.ownership
            read = reader.read()
            kind = read.state.load_manager
            if (leader is not None and read.owners is not None
                    and kind in (MODULAR, EXTENSIBLE)):
                try:
                    unloads = unload_count(reader.client.json(call(
                        BROKER_METRICS, base=reader.client.broker_url(leader))), kind)
                except LbctlError:
                    unloads = None
        if self.opts.ownership and (read.owners is not None) != self.owned_read:
            if read.owners is None:
                note = next((w for w in read.warnings if "ownedNamespaces" in w),
                            "ownedNamespaces not read")
                self.warn(f"ownership: {note}")
            elif self.owned_read is False:
                self.warn("ownership: read from every broker's ownedNamespaces again")
            self.owned_read = read.owners is not None
        return Capture(read.state, leader, read.owners, unloads)

    def _settings(self, state: ClusterState) -> Any:
        from lbctl.loadmanager.select import profile_of, settings_for

        profile, _ = profile_of([state], self.lm_opts)
        return settings_for(state, self.lm_opts, {}, profile)

    def _cycle(self, state: ClusterState, settings: Any, ours: frozenset[str] = frozenset(),
               owners: Mapping[str, str] | None = None, *, capture: Capture | None = None,
               recorded: Seen | None = None) -> tuple[list[Any], list[Any], dict[str, str]]:
        """The load manager's cycle on ``state`` (with its ``settings``, resolved once by the
        caller), the ownership changes it shows and which of them were not the leader's (bundle
        → why: :meth:`_not_leaders`); ``ours``: the bundles lbctl's own healing moved (not the
        leader's unloads); ``owners``: who owns each bundle now as the brokers list it (None:
        the reports'); ``capture``: the live read (its leader's unload count); ``recorded``: a
        replayed capture's record, whose moves not the leader's are taken as they were found.
        The cycle itself runs on the reports' ownership, which is what the leader's
        ``ModularLoadManagerImpl`` reads."""
        from lbctl.loadmanager import select
        from lbctl.model.cluster import EXTENSIBLE

        # the load manager is built from its own copy (what choosing reads of the settings is
        # not what the cycle read, which the plan lists) — a copy, not a second resolution
        lm = select.choose([state], self.lm_opts, settings.with_values())
        if self.follower is None or lm.kind != self.follower.lm.kind:
            self.follower = Follower(lm)
        decided: list[Any] = []
        prev = self.follower.prev
        seen = moves(self.last_owner, state, owners)
        self.unsure = frozenset()
        active = set(state.available())
        fresh: dict[str, int] = {}
        leaving: dict[str, tuple[str, int]] = {}  # bundle → the broker it left, when seen
        could = self._could  # what lbctl's last cycle's reports let the leader's next one do
        could |= self._between(state, seen)
        self.judged = _judged(self._prev, state, settings)
        self.unseen = self._unseen(seen, state, owners)
        left = self._in_flight(state, owners, seen, could)
        for m in seen:
            # a failover (its broker gone) or lbctl's own healing is no unload of the leader's;
            # the unload is dated by the capture its bundle left its broker at, not the one it
            # arrived at (its clients may take minutes to look it up again)
            if (m.before is None or m.before in active) and m.bundle not in ours:
                at = left.get(m.bundle, m.at)
                fresh[m.bundle] = at
                if m.before is not None:
                    leaving[m.bundle] = (m.before, at)

        def whose(decided: list[Any]) -> dict[str, str]:
            """The moves of this capture that were not the leader's, kept out of lbctl's grace
            maps (the leader's ``doLoadShedding`` records its own unloads only)."""
            if recorded is not None:
                found = self._replayed([m for m in seen if m.bundle in fresh], state, settings,
                                       recorded, fresh)
            elif capture is None:
                found = {}
            else:
                found = self._not_leaders([m for m in seen if m.bundle in fresh], state,
                                          settings, capture, decided, ending, could, fresh)
            for b in found:
                fresh.pop(b, None)
                leaving.pop(b, None)
            return found

        manual: dict[str, str] = {}
        ending = self._ending  # as lbctl's last cycle left it (this one's comes after the moves)
        # with the ownership read from the brokers, a move shows at the first capture after the
        # leader's cycle that made it, while the reports (which both cycles read) may still hold
        # the bundle where it was: lbctl's cycle on this capture is the leader's past one, so
        # the move enters lbctl's grace map after it (a cycle with it there already made the
        # leader's next choice instead, and the leader's move was unexpected); from the reports
        # alone a move shows once they are rewritten, after the leader's cycle, and enters first
        if owners is None:
            manual = whose([])
            self._moved.update(fresh)
            self._left.update(dict(leaving.values()))
            fresh, leaving = {}, {}
        # the leader runs one cycle a loadBalancerSheddingIntervalMinutes (LoadSheddingTask):
        # captures closer than that see no cycle of its, and lbctl runs none either — one per
        # capture made each capture's cycle expect other bundles than the one before it (memory
        # as if the first had shed), six a minute at --interval 10, none ever done
        if prev is None:
            self._moved.update(_lost_before(state, self.opts.refreshed))
            if owners is not None:
                # moved after its broker last wrote its report (before this first capture, so
                # no move is seen): the leader has it in its grace map, as lbctl must
                reported = state.owners()
                self._moved.update({b: state.captured_at for b, o in owners.items()
                                    if reported.get(b, o) != o})
                # in flight (owned by nobody): an unload whose clients are not back yet, which
                # a refreshed report no longer tells of once its broker rewrote it
                # (``writeBrokerDataOnZooKeeper`` clears the gains and losses it wrote)
                for b in _unowned(state, owners):
                    self._moved.setdefault(b, state.captured_at)
                if self.opts.refreshed:
                    # arrived since its owner's write (a refreshed report's gains): neither
                    # written report holds it, so the reports' owners above did not tell
                    for b in _gained_since(state, owners):
                        self._moved.setdefault(b, state.captured_at)
        if prev is None or state.captured_at - prev[0].captured_at \
                >= interval_ms(prev[1]) * (1 - CYCLE_SLACK):
            self._correct()
            self._ending = self._grace_ending(state, settings, prev)
            ahead = _ahead(state, settings, self._prev)
            before = None if ahead is None else copy.copy(self.follower)
            result = self.follower.step(state, settings)
            self.warm_up = warm_up(result.shedding, settings)
            self._hits(result)
            self.last_plan = result.plan()
            decided = list(self.last_plan.actions)
            carried = [a for a in decided if a.action in ("unload", "transfer") and not a.skipped]
            self.unsure = self._unsure(before, ahead, settings, carried)
            self._decided = {a.bundle: state.captured_at for a in carried}
            self._decided_from = {a.broker: state.captured_at for a in carried}
            self._could = self._next_cycle(state, settings)
        if owners is not None:
            manual = whose(decided)
            # a bundle that left its broker's listing at this capture (the leader's unload, as
            # far as the evidence tells) enters lbctl's grace maps now, as a move seen does, not
            # when its clients bring it back (90 s later, lbctl's next cycle chose it again)
            for b, (at, o, _x) in self._away.items():
                if at == state.captured_at and o in active and b not in ours \
                        and b not in self._left_alone:
                    self._moved.setdefault(b, at)
                    self._left.setdefault(o, at)
        if owners is not None and fresh:
            # (the moves seen this capture, the operators' left out, are the leader's: the cycle
            # that made them came before lbctl's cycle on this capture)
            self._leader_acted = True
            if state.load_manager == EXTENSIBLE and decided:
                decided = _superseded(decided, {b: o for b, (o, _at) in leaving.items()})
        self._moved.update(fresh)
        self._left.update(dict(leaving.values()))
        self.last_owner.update(state.owners() if owners is None else owners)
        # ping-pong and unload-storm count the balancer's moves and unloads, not a failover (a
        # bundle whose broker is gone): a crash of a broker with 22 bundles was an unload-storm
        self.log.add([m for m in seen if m.before is None or m.before in active],
                     state.captured_at)
        self.usage.add(state.captured_at, usage_of(state, settings))
        self._prev, self._listed = state, owners
        if recorded is not None:
            self._unloads = (None if recorded.leader is None or recorded.leaderUnloads is None
                             else (recorded.leader, recorded.leaderUnloads))
        elif capture is not None:
            self._unloads = (None if capture.leader is None or capture.unloads is None
                             else (capture.leader, capture.unloads))
        return seen, decided, manual

    def _unseen(self, seen: list[Any], state: ClusterState,
                owners: Mapping[str, str] | None) -> dict[str, str]:
        """The moves of this capture whose state the leader decided on no capture holds (bundle
        → why), so that lbctl cannot judge them: with the brokers' ownership, the bundle was
        listed by the broker it left at the last capture, but neither that capture's report of
        the broker nor this one's holds it — the broker rewrote its report with the bundle,
        the leader's cycle read that report and shed the bundle, and the broker rewrote it again
        without, all between two captures (``LocalBrokerData.bundles``, ``lastUpdate``). The
        leader may shed such a bundle only where its grace map does not hold it
        (``ModularLoadManagerImpl.doLoadShedding``'s ``recentlyUnloadedBundles``, the extensible
        ``UnloadScheduler``'s): a bundle whose last move was an operator's, a failover's or
        its first assignment. One lbctl's grace map holds (the leader's own unload, its grace
        not over) is judged as before: shed again within its grace, whatever the reports, it
        breaks the leader's rules. Before, the leader's re-shed of an operator's bundle was an
        unexpected-unload (the usage it was shed on is in no capture)."""
        if owners is None or not seen:
            return {}
        out: dict[str, str] = {}
        for m in seen:
            why = self._unseen_one(m.bundle, m.before, state)
            if why is not None:
                out[m.bundle] = why
        return out

    def _unseen_one(self, bundle: str, x: str | None, state: ClusterState) -> str | None:
        """Why the leader's unload of ``bundle`` off ``x``, seen gone from ``x``'s listing at
        ``state``, cannot be judged (:meth:`_unseen`); None when it can. Asked when the bundle
        leaves the listing: a bundle in flight is told when it arrives, captures later, when the
        leader's unload has entered lbctl's grace map."""
        prev, f = self._prev, self.follower
        if x is None or prev is None or f is None or (self._listed or {}).get(bundle) != x:
            return None
        recently = getattr(f.memory, "recently_unloaded", None) or {}
        if bundle in recently or bundle in self._moved:
            return None
        old, new = prev.brokers.get(x), state.brokers.get(x)
        if old is None or new is None or _holds(old, bundle) or _holds(new, bundle) \
                or new.lastUpdate <= old.lastUpdate:
            return None
        return (f"{x} owned it at {_when(prev.captured_at)}, but neither its load report of "
                f"{_when(old.lastUpdate)} nor the one of {_when(new.lastUpdate)} holds it: the "
                "report the leader shed it on was written in between and no capture holds it, "
                "so the evidence is incomplete; the bundle was not in the leader's grace map")

    def _next_cycle(self, state: ClusterState, settings: Any) -> frozenset[tuple[str, str]]:
        """The unloads (bundle, broker) the leader's next cycle may make on this capture's
        reports: lbctl's cycle run once more, on a copy of its memory, one
        ``loadBalancerSheddingIntervalMinutes`` on. The leader's cycle comes up to an interval
        after lbctl's capture on its own clock, often on the same reports (a broker rewrites
        its report only past ``loadBalancerReportUpdateThresholdPercentage`` or
        ``…MaxIntervalMinutes``), and its clock alone changes what it does: a grace period
        (``loadBalancerSheddingGracePeriodMinutes``) or TransferShedder's cool-down
        (``loadBalanceSheddingDelayInSeconds``) runs out, ThresholdShedder's usage average
        takes one more step (``loadBalancerHistoryResourcePercentage``) — an unload made then,
        on reports the next capture no longer holds (the unload rewrote them), was an
        unexpected-unload. A cycle that fails is no excuse."""
        import copy

        f = self.follower
        if f is None:
            return frozenset()
        self._could_from = (copy.copy(f), state) if state.broker_load_data else None
        out: set[tuple[str, str]] = set()
        ahead = _ahead(state, settings, self._prev)
        for each in (state,) if ahead is None else (state, ahead):
            ghost = copy.copy(f)
            try:
                # the capture held an interval on, as the load manager's projection holds it
                # (the extensible brokers republish the same load data at the new time:
                # TransferShedder's cool-down counts from a broker's ``updatedAt``, not the
                # cycle's clock); and the extensible brokers' load data as the leader may read
                # it by then (:func:`_ahead`): a leader that transferred off a broker whose
                # published ``weightedMaxEMA`` rose between the capture and its cycle (the
                # bundles just received; live22's EMA moving at every report tick) made an
                # unload on data no capture held — an unexpected-unload at minute 4 beside the
                # extensible sandbox's wave of 0.8
                later = f.lm.held(each, each.captured_at + interval_ms(settings))
                result = ghost.step(later, settings)
                # a cycle that moved nothing has no unload to excuse: its plan is not built
                # (``acted``: an unload or transfer carried out — a third of this check's CPU)
                acts = result.plan().actions if result.acted else ()
            except Exception as e:  # the judgement is only an excuse: never stop watching
                self.warn(f"divergence: the next cycle's check failed: {e!r}")
                continue
            out.update((a.bundle, a.broker) for a in acts
                       if a.action in ("unload", "transfer") and not a.skipped)
        return frozenset(out)

    def _between(self, state: ClusterState, seen: list[Any]) -> frozenset[tuple[str, str]]:
        """The unloads (bundle, broker) of this capture's moves that no projection of lbctl's
        last cycle foresaw (:meth:`_next_cycle`) but that the leader's cycle between the two
        captures makes on load data it may have read. The extensible leader reads each broker's
        ``BrokerLoadData`` as last written (``BrokerLoadDataReporter.reportAsync``, a write at
        any report tick whose figures moved past ``loadBalancerReportUpdateThresholdPercentage``),
        so each broker's published ``weightedMaxEMA`` at its cycle lies between what the last
        capture and this one show — some brokers written since, some not, which no capture
        holds. For each broker a move left, lbctl's next cycle on the last capture (its
        ownership and bundles, as the leader had them) is replayed once on the end of those
        ranges that favours that move: the broker at its higher figure, every broker that is
        above it either way at its higher, every other at its lower (the spread and the order
        ``TransferShedder`` sheds by). The leader that transferred off a broker whose EMA rose
        from 0.435 to 0.571 between two captures (the bundles it had received), with the
        spread 0.004 over ``loadBalancerBrokerLoadStdThreshold``, was an unexpected-unload.
        A wrong strategy or setting is still told: its moves are not what lbctl's model does
        on any of those figures. A replay that fails excuses nothing."""
        if self._could_from is None or not state.broker_load_data or not seen:
            return frozenset()
        base, was = self._could_from
        settings = self._settings(was)
        sources = sorted({m.before for m in seen if m.before is not None
                          and (m.bundle, m.before) not in self._could})
        then, now = was.broker_load_data, state.broker_load_data
        out: set[tuple[str, str]] = set()
        for b in sources:
            if b not in then:
                continue
            span = {x: (min(p.data.weightedMaxEMA, now[x].data.weightedMaxEMA),
                        max(p.data.weightedMaxEMA, now[x].data.weightedMaxEMA))
                    if x in now and p.has_features and now[x].has_features
                    else (p.data.weightedMaxEMA, p.data.weightedMaxEMA)
                    for x, p in then.items()}
            top = span[b][1]
            loads = {x: (hi if x == b or lo >= top else lo) for x, (lo, hi) in span.items()}
            if all(loads[x] == then[x].data.weightedMaxEMA for x in then):
                continue  # the last capture's own figures: already projected
            mixed = replace(was, broker_load_data=MappingProxyType({
                x: replace(p, data=replace(p.data, weightedMaxEMA=loads[x]))
                for x, p in then.items()}))
            try:
                later = base.lm.held(mixed, was.captured_at + interval_ms(settings))
                result = copy.copy(base).step(later, settings)
                acts = result.plan().actions if result.acted else ()
            except Exception as e:  # only an excuse: never stop watching for it
                self.warn(f"divergence: the check on the leader's possible data failed: {e!r}")
                continue
            out.update((a.bundle, a.broker) for a in acts
                       if a.action in ("unload", "transfer") and not a.skipped)
        return frozenset(out)

    def _unsure(self, before: Follower | None, ahead: ClusterState | None, settings: Any,
                carried: list[Any]) -> frozenset[str]:
        """The bundles of ``carried`` (the unloads lbctl's cycle decided on the capture) that
        the same cycle, from the same memory (``before``: the follower before it stepped), does
        not decide on ``ahead`` (:func:`_ahead`): the leader's cycle reads the load data its
        brokers last wrote, which may be as far on as that by then, so a decision whose margin
        lies within the gap may go either way in the leader — its expectation stays tentative
        (it excuses the move, never raises a divergence) and the next capture judges it again
        (its firm expectation takes the tentative one's place: :class:`Checker`). A stuck
        leader is still reported: once the brokers' data stops moving, the two cycles agree.
        A check that fails leaves every expectation firm."""
        if before is None or ahead is None or not carried:
            return frozenset()
        try:
            result = before.step(ahead, settings)
            acts = result.plan().actions if result.acted else ()
        except Exception as e:  # the judgement only softens: never stop watching for it
            self.warn(f"divergence: the check on the leader's possible data failed: {e!r}")
            return frozenset()
        also = {(a.bundle, a.broker) for a in acts
                if a.action in ("unload", "transfer") and not a.skipped}
        return frozenset(a.bundle for a in carried if (a.bundle, a.broker) not in also)

    def _in_flight(self, state: ClusterState, owners: Mapping[str, str] | None,
                   seen: list[Any], could: frozenset[tuple[str, str]]) -> dict[str, int]:
        """The bundles of this capture's moves that were seen in flight (owned by nobody, with
        the brokers' ownership) → the capture that first showed them gone from their broker;
        the bundles that left their broker's listing since the last capture enter
        ``_away``, excused when lbctl's last cycle left them in its grace-ending window
        (:meth:`_grace_ending`), and :attr:`excused` holds the arrivals so excused.

        An unload shows in two steps when clients take time to look the bundle up again
        (``ModularLoadManagerImpl`` unloads; the next owner is chosen at the lookup): it leaves
        its broker's listing at the capture after the leader's cycle, and arrives up to
        minutes later. Judged at its arrival, the state the leader decided on was gone: the
        grace that let the leader re-shed a bundle had ended in lbctl's map too by then, and
        the bundle entered lbctl's map at its arrival, two captures after the leader's —
        30 minutes on, the leader re-shed it a cycle before lbctl could (an unexpected-unload
        with clients back after 90 s)."""
        now = state.captured_at
        window = self.opts.limits.window_ms
        moved = {m.bundle: m for m in seen}
        back = {b: v for b, v in self._away.items() if b in moved and moved[b].before == v[1]}
        now_excused = {m.bundle for m in seen if (m.bundle, m.before) in could}
        # still in flight (owned by nobody) within the move window; arrived or gone: done
        self._away = {b: v for b, v in self._away.items() if b not in moved
                      and now - v[0] <= window and (owners is None or b not in owners)}
        if owners is not None and self._listed is not None:
            from lbctl.watch.divergence import _gone

            for b, o in self._listed.items():
                # (a bundle split or deleted is gone, not in flight)
                if b not in owners and b not in self._away and not _gone(b, state):
                    self._away[b] = (now, o, b in self._ending or (b, o) in could)
                    why = self._unseen_one(b, o, state)
                    if why is not None:
                        self._unseen_away[b] = why
        self.excused = frozenset(b for b, v in back.items() if v[2]) | now_excused
        for b in back:
            why = self._unseen_away.pop(b, None)
            if why is not None:
                self.unseen[b] = why
        self._unseen_away = {b: v for b, v in self._unseen_away.items() if b in self._away}
        return {b: v[0] for b, v in back.items()}

    def _correct(self) -> None:
        """The follower's recently unloaded bundles made the leader's, as far as the captures
        show, before lbctl's next cycle. lbctl's memory takes its own decisions as carried out
        (``ModularLoadManagerImpl.doLoadShedding`` puts each unloaded bundle in
        ``recentlyUnloadedBundles`` at the cycle's time, the extensible ``UnloadManager`` on a
        Success; both skip such a bundle for ``loadBalancerSheddingGracePeriodMinutes``), so a
        decision the leader never carried out (taken during the warm-up, or where the leader did
        something else) kept its bundle out of lbctl's choices for 30 minutes while the leader
        could shed it, and a bundle the leader did unload was not in lbctl's map (or was, at
        lbctl's time, not the leader's): the two grace periods ended apart — an
        unexpected-unload and a leader-divergence 30 minutes after the start — and a stuck
        leader was reported only once that grace had run. Now the leader's moves seen since the
        last cycle enter the map at the capture that showed them, and lbctl's own unloads of
        that cycle not seen done leave it (a later capture showing one done puts it back)."""
        f = self.follower
        recently = getattr(f.memory, "recently_unloaded", None) if f is not None else None
        if f is not None and recently is not None and (self._decided or self._moved):
            f.memory = replace(f.memory, recently_unloaded=MappingProxyType(
                _corrected(recently, self._decided, self._moved)))
        # the extensible load manager's per-broker list (``UnloadScheduler`` puts each unload's
        # source broker in ``recentlyUnloadedBrokers`` when it succeeds; TransferShedder holds a
        # broker there out of the cycle for ``loadBalanceSheddingDelayInSeconds`` and drops it
        # after): a broker lbctl's cycle unloaded from, the leader not, cooled lbctl's next
        # cycles down alone, and a broker the leader unloaded from was shed again by lbctl
        brokers = getattr(f.memory, "recently_unloaded_brokers", None) if f is not None else None
        if f is not None and brokers is not None and (self._decided_from or self._left):
            f.memory = replace(f.memory, recently_unloaded_brokers=MappingProxyType(
                _corrected(brokers, self._decided_from, self._left)))
        self._decided, self._moved = {}, {}
        self._decided_from, self._left = {}, {}
        # TransferShedder zeroes ``unloadConditionHitCount`` at every cycle that decided an
        # unload (``findBundlesForUnloading``: a non-empty ``decisionCache``), and only then or
        # when the condition is not hit: a leader whose count ran ahead of lbctl's (it had been
        # counting before the watcher started) acted a cycle or more before lbctl would, and
        # lbctl, counting on, acted cycles after — out of phase for good (threshold 3: two
        # leader-divergences and three unexpected-unloads in 40 minutes). The leader's
        # transfers seen since lbctl's last cycle zero lbctl's count too, as the leader's was
        hits = getattr(f.memory, "hit_count", None) if f is not None else None
        if f is not None and self._leader_acted and hits is not None:
            if hits:
                f.memory = replace(f.memory, hit_count=0)
            self.hits_synced = True
        self._leader_acted = False

    def _grace_ending(self, state: ClusterState, settings: Any, prev: Any) -> frozenset[str]:
        """The bundles in the follower's grace map (before this cycle expires any) whose
        ``loadBalancerSheddingGracePeriodMinutes`` may have run out in the leader before its
        next cycle. lbctl's cycle runs at its capture, the leader's up to one
        ``loadBalancerSheddingIntervalMinutes`` later on its own clock (the phase is unknown),
        and a move enters lbctl's map when a capture shows it, up to the gap between captures
        after the leader made it (ownership shows in load reports): past that, the leader's
        ``ModularLoadManagerImpl.doLoadShedding`` may have dropped the bundle from
        ``recentlyUnloadedBundles`` and shed it again while lbctl's cycle still held it — a move
        neither expected nor unexpected (a fresh leader re-shed its first unload 31 minutes
        later, one cycle before lbctl's grace ended)."""
        assert self.follower is not None
        recently = getattr(self.follower.memory, "recently_unloaded", None) or {}
        step = interval_ms(settings)
        gap = step if prev is None else max(0, state.captured_at - prev[0].captured_at)
        grace = int(settings["loadBalancerSheddingGracePeriodMinutes"]) * 60_000
        until = state.captured_at + step + gap - grace
        return frozenset(b for b, ts in recently.items() if ts < until)

    def tick(self) -> TickResult:
        """One capture (module docstring). A read that fails raises (the loop reports it)."""
        self.reading = True
        try:
            capture = self._read()
        finally:
            self.reading = False
        # the reports as the leader read them, not as the endpoint refreshed them: what the
        # history keeps (a restart replays it as it was judged) and the cycle reads
        state, leader, owners = self.view.of(capture.state), capture.leader, capture.owners
        self.history.append(state)
        with self._lock:
            self.captures += 1
            ours = self._ours(state.captured_at)
            ending = self._ending  # as lbctl's last cycle left it (the moves seen came after)
            settings = self._settings(state)
            self.late = {}
            seen, decided, manual = self._cycle(state, settings, ours, owners, capture=capture)
            self._record(state, capture, manual)
            found = self.checker.observe(state, seen, decided, interval_ms(settings), ours,
                                         warm=self.warm,
                                         free=ending | self.excused | _agreed(seen, decided),
                                         owners=owners, manual=manual, last=self.last_owner,
                                         judged=self.judged, unseen=self.unseen,
                                         unsure=self.unsure)
            found += [Condition("manual-unload", b, "info", why) for b, why in self.late.items()]
            found += conditions(state, settings, known=self.known, leader=leader,
                                previous_leader=self.leader, log=self.log,
                                limits=self.opts.limits)
            if self.opts.doctor:
                found += self._doctor(state)
            self.known |= set(state.available())
            self.leader = leader or self.leader
            events = self.tracker.update(found, state.captured_at)
            self.tracker.save(self.opts.history / ANOMALY_FILE)
            self._withdraw(events, state)
            self.status = build_status(self, state, settings)
        if events and self.on_events is not None:
            self.on_events(events, state)
        if self.on_state is not None:
            self.on_state(state, settings, events)
        self.last_tick = self.clock()
        return TickResult(state, tuple(events), tuple(found))

    def _record(self, state: ClusterState, capture: Capture, manual: dict[str, str]) -> None:
        """The capture's record beside it in the history (:class:`~lbctl.watch.history.Seen`):
        what a restart replays it with. A record that cannot be written is said (once, until one
        can be again), not fatal: the capture then replays with its reports' ownership."""
        from lbctl.errors import LbctlError

        try:
            self.history.record(seen_of(state, "admin" if self.opts.ownership else "reports",
                                        capture.owners, leader=capture.leader,
                                        unloads=capture.unloads, not_leaders=manual,
                                        late=self.late), state)
        except LbctlError as e:
            if not self._record_failed:
                self.warn(f"history: {e}")
            self._record_failed = True
        else:
            self._record_failed = False

    def _not_leaders(self, seen: list[Any], state: ClusterState, settings: Any,
                     capture: Capture, decided: list[Any], ending: frozenset[str],
                     could: frozenset[tuple[str, str]] = frozenset(),
                     started: Mapping[str, int] | None = None) -> dict[str, str]:
        """The moves of this capture (failovers and lbctl's healing already left out) that were
        not the leader's, each with the evidence: an operator's ``pulsar-admin namespaces
        unload`` moves a bundle as the leader's unload does, but the leader does not put it in
        its grace map, and it is no divergence of the leader's.

        * lbctl's apply journal sent an unload of the bundle since the move could have started
          (the previous capture, less one shedding interval; the reports' maximum write interval
          more with the reports' ownership, which lag the move);
        * with the brokers' ownership, a bundle leaves its broker's listing at the capture after
          its unload (and shows on its next owner once its clients are back, maybe captures
          later): the bundles that left since the last capture are judged then
          (:meth:`_departures`), and told when they arrive."""
        out: dict[str, str] = {}
        if capture.owners is not None:
            self._departures(state, capture, decided, ending, could)
        now = state.captured_at
        window = self.opts.limits.window_ms
        self._unmatched = {b: v for b, v in self._unmatched.items() if now - v[1] <= window}
        if not seen and not self._unmatched:
            return out
        starts = self._starts(seen, state, settings, capture.owners is not None, started)
        sent = self._journal_unloads(min([*starts.values(), *(v[0] for v in
                                                             self._unmatched.values())]))
        self._late_journal(sent)
        for m in seen:
            left = self._left_alone.pop(m.bundle, None)
            t = sent.get(m.bundle)
            if t is not None and t >= starts[m.bundle]:
                out[m.bundle] = f"lbctl apply sent its unload at {_when(t)}"
                # (a bundle in flight entered lbctl's grace maps when it left its broker)
                self._ungrace(m.bundle, m.before, (started or {}).get(m.bundle, m.at))
            elif left is not None and capture.owners is not None:
                out[m.bundle] = left[1]
            elif self.opts.journal is not None and m.before is not None:
                self._unmatched[m.bundle] = (starts[m.bundle], now, m.before, m.after,
                                             (started or {}).get(m.bundle, m.at))
        return out

    def _starts(self, seen: list[Any], state: ClusterState, settings: Any, read: bool,
                started: Mapping[str, int] | None) -> dict[str, int]:
        """When each move could have started: from the capture before the one that first showed
        it (a bundle in flight: gone from its broker's listing captures before it arrived), less
        one shedding interval, and the reports' maximum write interval more when ownership was
        not ``read`` from the brokers (the reports lag the move)."""
        prev = self._prev
        lag = interval_ms(settings) + (
            0 if read else int(settings["loadBalancerReportUpdateMaxIntervalMinutes"]) * 60_000)
        gap = state.captured_at - prev.captured_at if prev is not None else interval_ms(settings)
        return {m.bundle: (started or {}).get(m.bundle, m.at) - gap - lag for m in seen}

    def _replayed(self, seen: list[Any], state: ClusterState, settings: Any, recorded: Seen,
                  started: Mapping[str, int]) -> dict[str, str]:
        """A replayed capture's moves that were not the leader's, as its record says, and the
        journal's pending windows rebuilt as :meth:`_not_leaders` left them: the moves judged
        the leader's wait for a late journal record (:meth:`_late_journal`) as they did live,
        and those the record says a later record matched (``late``) leave the pending windows
        and lbctl's grace maps at the capture that matched them. Before, a restart forgot the
        windows — a record written while the watcher was down was never matched, the bundle
        stayed in lbctl's grace map as the leader's unload — and a match made before the
        restart was undone by the replay, the bundle back in the grace map."""
        found = dict(recorded.notLeaders)
        now = state.captured_at
        window = self.opts.limits.window_ms
        self._unmatched = {b: v for b, v in self._unmatched.items() if now - v[1] <= window}
        for b in recorded.late:
            v = self._unmatched.pop(b, None)
            if v is not None:
                self._ungrace(b, v[2], v[4])
        if self.opts.journal is None:
            return found
        starts = self._starts(seen, state, settings, recorded.read, started)
        for m in seen:
            if m.bundle not in found and m.before is not None:
                self._unmatched[m.bundle] = (starts[m.bundle], now, m.before, m.after,
                                             started.get(m.bundle, m.at))
        return found

    def _late_journal(self, sent: Mapping[str, int]) -> None:
        """The moves judged without lbctl's apply journal whose unload it has recorded since:
        an unload ``lbctl apply`` (or an approved plan) sent whose journal record came after the
        capture that saw the move — a journal read from another host, written when the request
        returned, or a capture between the send and the write. Read by each move's time window
        (from the capture before it, less the lag, to the capture that showed it) for the move
        window after, not only when the move is seen: each is a ``manual-unload`` (:attr:`late`)
        and leaves lbctl's grace maps, where it had entered as the leader's unload."""
        for b, (since, at, before, after, entered) in list(self._unmatched.items()):
            t = sent.get(b)
            if t is None or not since <= t <= at:
                continue
            del self._unmatched[b]
            self.late[b] = (f"bundle {b} moved from {before} to {after} at {_when(at)}: not the "
                            f"leader's unload (lbctl apply sent its unload at {_when(t)}; its "
                            "journal record came after the capture that saw the move)")
            self._ungrace(b, before, entered)

    def _ungrace(self, bundle: str, broker: str | None, at: int) -> None:
        """``bundle``'s entry at ``at`` (and ``broker``'s, extensible) out of lbctl's grace maps,
        pending or in the follower's memory: an unload that was not the leader's
        (``doLoadShedding`` and ``UnloadScheduler`` record their own only)."""
        if self._moved.get(bundle) == at:
            del self._moved[bundle]
        if broker is not None and self._left.get(broker) == at:
            del self._left[broker]
        f = self.follower
        if f is None:
            return
        recently = getattr(f.memory, "recently_unloaded", None)
        if recently is not None and recently.get(bundle) == at:
            f.memory = replace(f.memory, recently_unloaded=MappingProxyType(
                {k: v for k, v in recently.items() if k != bundle}))
        brokers = getattr(f.memory, "recently_unloaded_brokers", None)
        if broker is not None and brokers is not None and brokers.get(broker) == at:
            f.memory = replace(f.memory, recently_unloaded_brokers=MappingProxyType(
                {k: v for k, v in brokers.items() if k != broker}))

    def _departures(self, state: ClusterState, capture: Capture, decided: list[Any],
                    ending: frozenset[str],
                    could: frozenset[tuple[str, str]] = frozenset()) -> None:
        """The bundles that left a broker's listing since the last capture (both read from the
        brokers) without the leader, as far as the evidence tells, into ``_left_alone``:

        * the leader does not shed (``loadBalancerEnabled`` or ``loadBalancerSheddingEnabled``
          false in the dynamic configuration at both captures: ``ModularLoadManagerImpl
          .doLoadShedding`` and the extensible ``UnloadScheduler.execute`` return at once);
        * the leader (the same broker at both) counted fewer unloads in between
          (``brk_lb_unload_bundle_count``, raised by ``doLoadShedding`` by every bundle it chose,
          carried out or not, never by an admin unload; on the extensible load manager the
          ``UnloadCounter`` breakdown's Success decisions but the ``Admin`` ones, raised when
          ``UnloadScheduler``'s unloads complete: :func:`unload_count`) than the departures
          lbctl's model expects of it take, leaving none for the others; none at all, and no departure is the
          leader's. Where the count leaves room for some of several unexpected departures, which
          are the leader's is unknown: none is said to be an operator's.

        A failover (its broker gone) and a bundle gone from its namespace (split, deleted) are
        no departure; a judgement waits at most the move window for its bundle to arrive."""
        from lbctl.watch.divergence import _gone

        prev, listed, owners = self._prev, self._listed, capture.owners
        now_ms = state.captured_at
        window = self.opts.limits.window_ms
        self._left_alone = {b: v for b, v in self._left_alone.items() if now_ms - v[0] <= window}
        if prev is None or listed is None or owners is None:
            return
        active = set(state.available())
        gone = [(b, o) for b, o in listed.items()
                if owners.get(b) != o and o in active and not _gone(b, state)]
        if not gone:
            return
        since = _when(prev.captured_at)
        off = [k for k in ("loadBalancerEnabled", "loadBalancerSheddingEnabled")
               if _false(state.config.get(k)) and _false(prev.config.get(k))]
        if off:
            for b, _o in gone:
                self._left_alone[b] = (now_ms, f"the leader does not shed: {off[0]}=false in "
                                       f"the dynamic configuration since {since} at least")
            return
        last, count = self._unloads, capture.unloads
        if last is None or count is None or capture.leader != last[0] or count < last[1]:
            return  # no count, another leader (its own count), or a restarted one
        rose = count - last[1]
        chosen = {(a.bundle, a.broker) for a in decided
                  if a.action in ("unload", "transfer") and not a.skipped}
        opened = self.checker.open
        # (``could``: what the leader's next cycle on the last capture's reports may do —
        # :meth:`_next_cycle` — is expected of it as much: an operator's unload in the interval
        # of such a move was unexpected, the count's room taken by a move lbctl had foreseen)
        expected = [(b, o) for b, o in gone if (b, o) in chosen or (b, o) in could
                    or b in ending or (b in opened and opened[b].broker == o)]
        others = gone if rose == 0 else [x for x in gone if x not in expected]
        if rose > len(expected) and rose != 0:
            return  # room for some of the others: whose is unknown
        name = count_name(state.load_manager)
        for b, _o in others:
            self._left_alone[b] = (now_ms, (
                f"the leader {last[0]} made no unload since {since} "
                f"({name} stayed at {count})" if rose == 0 else
                f"the leader {last[0]} counted {rose} unload(s) since {since} "
                f"({name} {last[1]} → {count}), as many as the moves "
                "lbctl's model expected of it"))

    def _journal_unloads(self, since_ms: int) -> dict[str, int]:
        """bundle → when lbctl's apply journal last sent its unload (epoch ms), from ``since_ms``
        on; a journal that cannot be read counts as none, said once until it can be again.

        Read again only when the file changed (its size and modification time) or an earlier
        start is asked: the moves' time windows keep it asked each capture for the move window
        (:meth:`_late_journal`), and its last 16 MB need not be parsed each minute to say the
        same."""
        if self.opts.journal is None:
            return {}
        import os

        from lbctl.apply.journal import journal_unloads

        try:
            st = os.stat(self.opts.journal)
            key: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except OSError:
            key = None
        cached = self._journal_cache
        if key is not None and cached is not None and cached[0] == key and cached[1] <= since_ms:
            return {b: t for b, t in cached[2].items() if t >= since_ms}
        failed: list[str] = []
        found = journal_unloads(self.opts.journal, self.cluster_clock.local(since_ms / 1000),
                                warn=failed.append)
        if failed and not self._journal_failed:
            self.warn(f"journal: {failed[0]}")
        self._journal_failed = bool(failed)
        # (the journal is dated by this host's clock: on the cluster's, as the captures are)
        out = {b: int(self.cluster_clock.at(t) * 1000) for b, t in found.items()}
        self._journal_cache = None if failed or key is None else (key, since_ms, out)
        return out

    def _withdraw(self, events: list[Event], state: ClusterState) -> None:
        """The pending plans of the anomalies this capture resolved are withdrawn: a plan for a
        state that is gone is not approvable (a 7-minute-old plan gave "applied (done 1, skipped
        6)" — re-validation skipped what the cluster had fixed itself)."""
        from lbctl.errors import LbctlError
        from lbctl.watch.plans import PlanQueue

        for e in events:
            if e.event != "resolved":
                continue
            try:
                for m in PlanQueue(self.opts.history).withdraw_for(
                        e.anomaly.id, when=state.captured_at_iso,
                        why=f"anomaly {e.anomaly.id} resolved at {state.captured_at_iso}"):
                    self.warn(f"plan {m.id} withdrawn: {m.note}")
            except LbctlError as err:  # a queue that cannot be written must not stop watching
                self.warn(f"plans: {err}")

    def _ours(self, now_ms: int) -> frozenset[str]:
        """The bundles of the healing plans approved (by ``lbctl plans approve`` or ``--heal
        …=apply``) within the move window: their moves are lbctl's own, not an unexpected
        unload ("manual, or another load manager?" was said of the very plan the operator had
        just approved)."""
        from datetime import datetime

        from lbctl.watch.plans import PlanQueue

        out = set(self.ours)
        for m in PlanQueue(self.opts.history).list():
            if m.status not in ("approved", "applied", "partial") or m.decided is None:
                continue
            try:
                at = int(datetime.fromisoformat(m.decided).timestamp() * 1000)
            except ValueError:
                continue
            if now_ms - at > self.opts.limits.window_ms:
                continue
            if m.id not in self._plan_bundles:
                self._plan_bundles[m.id] = _bundles_of(PlanQueue(self.opts.history)
                                                       .plan_path(m.id))
            out |= self._plan_bundles[m.id]
        return frozenset(out)

    @property
    def followed(self) -> int:
        """Shedding cycles lbctl has followed the leader for (the history's replayed ones too)."""
        return 0 if self.follower is None else self.follower.cycles

    def _hits(self, result: Any) -> None:
        """Whether lbctl's ``unloadConditionHitCount`` is the leader's yet, after a cycle.

        The leader's count is older than the watcher and unknown to it
        (``TransferShedder.findBundlesForUnloading`` zeroes it when the condition is not hit and
        when the cycle decided an unload, and adds one at every other cycle that reaches the
        gate). It is known to equal lbctl's only after a cycle that reaches the gate without a
        hit (both zeroed on the same data), after the leader's own transfers are seen (its count
        zeroed: :meth:`_correct`), or at once with ``loadBalancerSheddingConditionHitCountThreshold``
        0 (any hit passes the gate, whatever the count). lbctl's own unload is no proof: a leader
        that acted just before the watcher's first capture counts from 0 while lbctl counts on,
        and acts cycles after lbctl. Its second is: from lbctl's first, zeroed, the leader's count
        is at least lbctl's, so a leader that has not acted by lbctl's second does not act (a
        stuck leader is still reported). Until then the warm-up's ``threshold + 1`` cycles are not enough: a cycle TransferShedder
        skips before its gate (``LoadStats.update``'s CoolDown after a transfer, for
        ``loadBalanceSheddingDelayInSeconds``; outdated or missing load data) leaves the count as
        it was."""
        shed = getattr(result, "shed", None)
        if self.hits_synced is None and hasattr(result.memory, "hit_count"):
            self.hits_synced = False
        if shed is None or not shed.condition:
            return
        if shed.threshold <= 0 or (shed.hit_count == 0 and not shed.decisions):
            self.hits_synced = True
        elif shed.decisions and not self.hits_synced:
            self._own_acts += 1
            self.hits_synced = self._own_acts >= 2

    @property
    def warm(self) -> bool:
        """lbctl's memory has warmed up: divergence checks are on (a fresh watcher's memory
        starts at its first capture, the leader's long before — :mod:`lbctl.watch.divergence`),
        TransferShedder's hit count the leader's (:meth:`_hits`)."""
        return (self.warm_up is not None and self.followed >= self.warm_up
                and self.hits_synced is not False)

    @property
    def what(self) -> str:
        return str(getattr(self.cluster, "what", "the cluster"))

    def current(self) -> Status | None:
        """What ``/metrics`` and the status page show now: the last good capture's figures,
        with the counters, the last error and the plans waiting as they are at this moment — a
        failing read builds no new status, and a plan queued or approved since the capture
        must not wait for the next one to show."""
        import msgspec

        from lbctl.watch.status import pending_plans

        with self._lock:
            s = self.status
            if s is None:
                return None
            return msgspec.structs.replace(s, captures=self.captures, errors=self.errors,
                                           last_error=self.last_error,
                                           plans=pending_plans(self.opts.history))

    def counters(self) -> tuple[int, int]:
        """Captures appended and captures failed, so far."""
        return self.captures, self.errors

    def healthy(self) -> tuple[bool, str]:
        """``/healthz``: the last capture succeeded, within three intervals."""
        if self.last_error is not None:
            return False, f"last capture failed: {self.last_error}"
        if self.last_tick is None:
            return False, "no capture yet"
        lag = self.clock() - self.last_tick
        if lag > 3 * self.opts.interval_s:
            return False, f"no capture for {lag:.0f} s"
        return True, f"ok: {self.captures} capture(s), {len(self.tracker.active())} active anomalies"

    def _doctor(self, state: ClusterState) -> list[Condition]:
        from lbctl.doctor.run import diagnose

        try:
            report = diagnose([state], self.lm_opts)
        except Exception as e:  # a rule's failure must not stop the watcher
            self.warn(f"doctor: {e}")
            return []
        sev = {"error": "critical", "warning": "warning"}
        out = []
        for f in report.findings:
            subject = ",".join(f.brokers or f.namespaces or f.bundles or f.settings) or state.cluster
            out.append(Condition(f"doctor:{f.rule}", subject,
                                 sev.get(f.severity.value, "info"), f"{f.found} Fix: {f.fix}"))
        return out

    # --- the loop -----------------------------------------------------------------------------
    def run(self, stop: threading.Event, count: int | None = None) -> None:
        """Tick every interval until ``stop`` is set (or ``count`` ticks); a failed read is
        reported and counted, and the next interval tries again."""
        n = 0
        while not stop.is_set():
            started = time.monotonic()
            try:
                self.tick()
                self.last_error = None
            except Exception as e:
                from lbctl.errors import LbctlError

                with self._lock:
                    self.errors += 1
                    self.last_error = str(e) if isinstance(e, LbctlError) else repr(e)
                # not on a last attempt that leaves no capture: the caller's error line says
                # the same reason (lbctl.cli.watcher), and once is enough (hostile18)
                if count is None or n + 1 < count or self.captures:
                    self.warn(f"capture failed: {self.last_error}")
            n += 1
            if count is not None and n >= count:
                return
            stop.wait(max(0.0, self.opts.interval_s - (time.monotonic() - started)))


def unload_count(metrics: Any, load_manager: str = "modular") -> int | None:
    """The unloads the leader's own shedding made, as a ``/broker-stats/metrics`` answer
    counts them; None where it does not tell.

    * modular: ``brk_lb_unload_bundle_count`` (the ``bundleUnloading`` entry
      ``ModularLoadManagerImpl.updateBundleUnloadingMetrics`` keeps; never an admin unload);
    * extensible: the sum of ``brk_lb_unload_broker_breakdown_total`` over the
      ``result="Success"`` entries whose ``reason`` is not ``Admin`` (``UnloadCounter.toMetrics``:
      ``UnloadScheduler``'s decisions are Overloaded or Underloaded, an operator's unload through
      ``ExtensibleLoadManagerImpl.unloadNamespaceBundleAsync`` is Admin). Only an answer that has
      the Success/Admin entry is trusted: without it the release may count an admin unload
      under another reason, and its totals (``brk_lb_unload_bundle_total``) count them all."""
    if not isinstance(metrics, list):
        return None
    extensible = load_manager == "extensible"
    total, admin = 0, False
    for entry in metrics:
        if not isinstance(entry, dict):
            continue
        dims, values = entry.get("dimensions"), entry.get("metrics")
        if not (isinstance(dims, dict) and dims.get("metric") == "bundleUnloading"
                and isinstance(values, dict)):
            continue
        name = "brk_lb_unload_broker_breakdown_total" if extensible else "brk_lb_unload_bundle_count"
        n = values.get(name)
        if not isinstance(n, (int, float)) or isinstance(n, bool) or n < 0:
            continue
        if not extensible:
            return int(n)
        if dims.get("result") != "Success":
            continue
        if dims.get("reason") == "Admin":
            admin = True
        else:
            total += int(n)
    return total if extensible and admin else None


def count_name(load_manager: str) -> str:
    """The leader's unload count as :func:`unload_count` reads it, for the evidence."""
    if load_manager == "extensible":
        return 'brk_lb_unload_broker_breakdown_total{result="Success", reason≠"Admin"}'
    return "brk_lb_unload_bundle_count"


def _holds(report: Any, bundle: str) -> bool:
    """A broker's load report lists ``bundle``."""
    return bundle in report.lastStats or bundle in report.bundles


def _false(value: Any) -> bool:
    return str(value).strip().lower() == "false"


def _when(ms: int) -> str:
    from lbctl.model.cluster import iso_time

    return iso_time(ms)[11:16]


def _corrected(recently: Mapping[str, int], decided: Mapping[str, int],
               seen: Mapping[str, int]) -> dict[str, int]:
    """A grace map made the leader's: lbctl's own entries of its last cycle (``decided``, at that
    cycle's time) that no move showed carried out leave it, the leader's moves seen enter it at
    the capture that showed them."""
    fixed = dict(recently)
    for key, at in decided.items():
        if key not in seen and fixed.get(key) == at:
            del fixed[key]
    fixed.update(seen)
    return fixed


def _judged(prev: ClusterState | None, state: ClusterState, settings: Any) -> str:
    """The states a move seen at ``state`` was judged on, for the evidence: lbctl's cycle on the
    last capture's reports (and the leader's next cycle on them, an interval later:
    :meth:`Watcher._next_cycle`), and its cycle on this capture's."""
    if prev is None:
        return f"judged on the reports of {_when(state.captured_at)}"
    nxt = prev.captured_at + interval_ms(settings)
    return (f"none of lbctl's cycles makes it expected: on the reports of "
            f"{_when(prev.captured_at)} at {_when(prev.captured_at)} and at {_when(nxt)} "
            f"(the leader's next cycle), nor on those of {_when(state.captured_at)}")


def _ahead(state: ClusterState, settings: Any,
           prev: ClusterState | None = None) -> ClusterState | None:
    """``state`` with each extensible broker's published ``weightedMaxEMA`` moved on as far as
    the leader may read it at its next cycle; ``None`` for a modular capture (or one without
    the extensible load data).

    ``BrokerLoadDataReporter.reportAsync`` runs every ``loadBalancerReportUpdateMinIntervalMillis``
    and each run updates the broker's local ``BrokerLoadData`` (``generateLoadData`` →
    ``BrokerLoadData.update``: ``ema·h + (1 − h)·weightedMax`` with ``h =
    loadBalancerHistoryResourcePercentage``), written or not; a write (``needBrokerDataUpdate``)
    publishes the EMA as it then is, which the leader's ``TransferShedder`` reads from the
    load-data store. So between a capture and the leader's next cycle (one
    ``loadBalancerSheddingIntervalMinutes``: ``k`` ticks) a broker that writes publishes an EMA
    up to ``1 − h^k`` of the way to its weighted maximum (72 % at the defaults' 12 ticks; it
    was one tick's 10 % while the sandbox moved the EMA only at writes). The capture's figures
    are those of the last write, so that weighted maximum is where the EMA heads — carried on
    by its change since ``prev`` (the capture before), as a load that keeps rising or falling
    does for one more interval (a wave of ±50 % over 10 minutes took a broker from 0.90 to
    0.78 in one interval where its last write said 0.85); this is the far end of what the
    leader may see, the capture the near one."""
    data = state.broker_load_data
    if not data:
        return None
    h = float(settings["loadBalancerHistoryResourcePercentage"])
    tick = int(settings["loadBalancerReportUpdateMinIntervalMillis"])
    if not 0.0 <= h < 1.0:
        return None
    k = max(1, interval_ms(settings) // tick) if tick > 0 else 1
    moved = 1.0 - h ** k
    before = {} if prev is None else prev.broker_load_data
    out = {}
    for b, p in data.items():
        d = p.data
        if not p.has_features:
            out[b] = p
            continue
        heads = d.weighted_max(settings)
        q = before.get(b)
        if q is not None and q.has_features:
            heads = max(0.0, 2 * heads - q.data.weighted_max(settings))
        out[b] = replace(p, data=replace(
            d, weightedMaxEMA=d.weightedMaxEMA + (heads - d.weightedMaxEMA) * moved))
    return replace(state, broker_load_data=MappingProxyType(out))


def _superseded(decided: list[Any], left: Mapping[str, str]) -> list[Any]:
    """lbctl's extensible cycle on a capture that shows the leader's transfers (``left``: each
    bundle seen moving → the broker it left), kept to the unloads the leader made: that cycle
    stands for the leader's past one (:func:`_agreed`), but the extensible capture's ownership
    is the service-unit channel's, after the transfers, while the brokers' load data is from
    before them — so lbctl's TransferShedder, its count past the gate one cycle after the
    leader's (``loadBalancerSheddingConditionHitCountThreshold`` above 0), shed the broker again
    for the bundles the leader had just moved, and expected it of a leader that had already
    acted on that broker and then sat out ``loadBalanceSheddingDelayInSeconds``
    (``UnloadScheduler`` puts each transfer's source in ``recentlyUnloadedBrokers``;
    ``TransferShedder``'s ``LoadStats.update`` skips the cycle as CoolDown): a leader-divergence
    each time the count came round. The leader's choice is what it did — and that includes the
    bundles it moved *onto* a broker: TransferShedder's swap (an underloaded broker's bundles
    sent to the overloaded one while the overloaded one's go the other way) left them on the
    broker lbctl's cycle, reading the channel after the swap, then shed them from, and lbctl
    expected a transfer back that no leader cycle makes (a leader-divergence at minute 12
    beside the extensible sandbox at threshold 3 once the published ``weightedMaxEMA`` moved at
    every report tick, live22's 48da4dd). Only an unload of a bundle off the broker it was seen
    leaving is kept."""
    return [a for a in decided if not (a.action in ("unload", "transfer") and not a.skipped
                                       and left.get(a.bundle) != a.broker)]


def _agreed(seen: list[Any], decided: list[Any]) -> frozenset[str]:
    """The moves this capture shows that lbctl's cycle on the same capture decides too (the
    bundle, off the broker it left). The leader's cycle runs up to one shedding interval before
    lbctl's on its own clock, and reads the brokers' load reports as lbctl's does: with the
    ownership read from the brokers, its unload shows at the next capture while the reports
    still hold the bundle where it was, and lbctl's cycle on them makes the same decision one
    capture after the leader — the same unload, not an unexpected one."""
    chosen = {(a.bundle, a.broker) for a in decided
              if a.action in ("unload", "transfer") and not a.skipped}
    return frozenset(m.bundle for m in seen if (m.bundle, m.before) in chosen)


def _lost_before(state: ClusterState, refreshed: bool = True) -> dict[str, int]:
    """The unloads a first capture can tell of, though it sees no move: the bundles a broker's
    report lists as lost (``LocalBrokerData.lastBundleLosses``) that another broker owns now or
    nobody does — a leader's unload made just before the watcher started (its grace runs on in
    the leader). A report as written lists those lost before its write (dated at the report's
    time); Pulsar's load-report endpoint answers a refreshed one (``LocalBrokerData.update``
    after the write's ``cleanDeltas``), listing those lost since — after ``lastUpdate``, so
    dated at this capture: at ``lastUpdate`` lbctl's grace ended before the leader's."""
    owners = state.owners()
    out: dict[str, int] = {}
    for broker, report in state.brokers.items():
        for b in report.lastBundleLosses:
            if owners.get(b) != broker:
                out[b] = state.captured_at if refreshed or not report.lastUpdate \
                    else report.lastUpdate
    return out


def _gained_since(state: ClusterState, owners: Mapping[str, str]) -> list[str]:
    """The bundles each broker now owns (as the brokers list it) that its refreshed report
    gained since its last write (``LocalBrokerData.lastBundleGains``) and did not lose again,
    but a split's children (inside a range the same report lost): moves, not splits."""
    out: list[str] = []
    for broker, report in state.brokers.items():
        lost = [_range_of(b) for b in report.lastBundleLosses]
        for b in report.lastBundleGains:
            if owners.get(b) != broker or b in report.lastBundleLosses:
                continue
            r = _range_of(b)
            if r is not None and any(p is not None and p[0] == r[0] and p[1] <= r[1]
                                     and r[2] <= p[2] for p in lost):
                continue
            out.append(b)
    return out


def _range_of(bundle: str) -> tuple[str, int, int] | None:
    """(namespace, lower, upper) of a bundle's name (None: not a bundle name)."""
    from lbctl.model.bundle import BundleName, BundleNameError

    try:
        name = BundleName.parse(bundle)
    except BundleNameError:
        return None
    return name.namespace, name.range.lower, name.range.upper


def _unowned(state: ClusterState, owners: Mapping[str, str]) -> list[str]:
    """The bundles of the namespaces' boundaries that neither the brokers' listing nor any
    report holds: owned by nobody at this capture."""
    from lbctl.model.bundle import bundle_name

    reported = state.owners()
    out: list[str] = []
    for ns, bounds in state.namespaces.items():
        for lo, hi in zip(bounds, bounds[1:], strict=False):
            b = bundle_name(ns, lo, hi)
            if b not in owners and b not in reported:
                out.append(b)
    return out


def _bundles_of(plan: Path) -> frozenset[str]:
    """The bundles a plan@1 file's actions name (none when it cannot be read). Read with the one
    safe reader: a link planted at the plan's name is not followed, and a FIFO there does not
    hang the watcher's loop."""
    import msgspec

    from lbctl.errors import LbctlError
    from lbctl.safe.files import read_regular

    try:
        doc = msgspec.json.decode(read_regular(str(plan), what="a plan@1 file",
                                               error=LbctlError))
    except (LbctlError, msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        return frozenset()
    actions = doc.get("actions") if isinstance(doc, dict) else None
    return frozenset(a["bundle"] for a in actions or () if isinstance(a, dict)
                     and isinstance(a.get("bundle"), str))
