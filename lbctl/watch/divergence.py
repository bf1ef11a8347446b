"""The leader checked against its own rules: what it should have done, against what it did.

Each capture runs lbctl's load manager for the cluster (the one ``recommend`` runs, chosen from
the capture's ``loadManagerClassName`` and settings) on the leader's clock, with the strategies'
memory carried from capture to capture (:class:`lbctl.loadmanager.clock.Follower`, the cycles that
elapsed in between replayed). Its unloads and transfers are *expected* moves. A later capture
showing the bundle on another broker fulfils the expectation; an expectation still open after
``patience`` shedding intervals is a divergence, reported with the reason the configuration gives
(shedding off in the dynamic configuration, the balancer disabled) or, when it gives none, the
leader's silence itself. An ownership change no expectation explains is reported too: a manual
unload, lbctl's own ``apply``, or another load manager than configured. Where the evidence says
the move was not the leader's (lbctl's apply journal, shedding off, the leader's own unload count:
:meth:`lbctl.watch.loop.Watcher._not_leaders`) it is a ``manual-unload`` instead, never a
divergence; the watcher's own healing plans' moves — approved by ``lbctl plans approve`` or
``--heal …=apply`` within the move window — are excused, ``ours``.
**Warm-up.** A fresh watcher starts lbctl's memory at its first capture while the leader's has a
long history: ThresholdShedder's per-broker usage average (``brokerAvgResourceUsage``, updated each
cycle as ``old·p + new·(1 − p)`` with ``p = loadBalancerHistoryResourcePercentage``) still carries
what the brokers did before the watcher started, so a broker that had just received bundles looks
overloaded to lbctl and not to the leader — a false divergence minutes after start. Expectations
are therefore *tentative* until lbctl has followed :func:`warm_up` cycles (computed from the
settings, :data:`FIRST_WEIGHT`): they excuse the leader's moves they foresee, but never raise a
divergence nor count as expected unloads; and a move of the leader's that none foresaw is not an
``unexpected-unload`` then either — the leader chose on a memory lbctl has not caught up with (a
``manual-unload``, told by its evidence, still is one). A restart replays the history, so a watcher whose
history already spans the warm-up is warm at once.

A bundle that left a broker no longer among the active ones is a failover — its clients looked it
up again and it was assigned anew (``ModularLoadManagerImpl.selectBrokerForAssignment``) — and
not an unexpected unload: the broker's ``broker-down`` says it once,
where one ``unexpected-unload`` per bundle would bury it (a crashed broker with 20 bundles gave 20).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping
from typing import Any

from msgspec import Struct

from lbctl.loadmanager.clock import warm_up_cycles
from lbctl.model.cluster import ClusterState
from lbctl.records import replace
from lbctl.watch.anomalies import Condition
from lbctl.watch.detect import Move


class Expected(Struct, frozen=True):
    """A move the leader should make: ``bundle`` off ``broker`` (to ``destination`` when named),
    decided on the capture of ``at`` for ``reason`` (the strategy's label), due by ``due``;
    ``tentative`` while lbctl's memory warms up (it excuses the move, never raises a divergence)."""

    bundle: str
    broker: str
    destination: str | None
    reason: str
    at: int
    due: int
    tentative: bool = False


#: lbctl's memory counts as the leader's once the first capture's weight in ThresholdShedder's
#: usage average is below this (a tenth: a broker's history the watcher never saw then moves the
#: average by under a tenth of the gap, where the shedding threshold is 10 points by default)
FIRST_WEIGHT = 0.1


def warm_up(shedding: str, settings: Mapping[str, Any]) -> int | None:
    """Cycles lbctl must follow the leader (the first capture's cycle counted) before its
    expectations are firm; ``None`` when they never are.

    ThresholdShedder: the first capture seeds the average and weighs ``p ** k`` after ``k`` more
    cycles, so ``1 + ⌈log FIRST_WEIGHT / log p⌉`` (23 at the default ``p = 0.9``; 1 at ``p = 0``;
    never at ``p ≥ 1``, where the leader's average stays what it first saw, before the watcher).
    The hit-count strategies (TransferShedder, AvgShedder) and the rest:
    :func:`~lbctl.loadmanager.clock.warm_up_cycles`; TransferShedder also until
    ``loadBalanceSheddingDelayInSeconds`` has passed since the first capture: ``UnloadScheduler``
    puts each transfer's source broker in ``recentlyUnloadedBrokers``, which no capture shows,
    and ``TransferShedder``'s ``LoadStats.update`` skips every cycle as CoolDown while one of them
    is within the delay — a leader that had transferred a minute before the watcher's first
    capture sat out lbctl's first expectations (two leader-divergences beside ``lbctl sandbox
    --extensible --speed 60``). An entry older than the delay is dropped by the next cycle, so
    past it lbctl's list is the leader's (the moves seen enter it: :meth:`Watcher._correct`)."""
    if shedding == "ThresholdShedder":
        p = float(settings["loadBalancerHistoryResourcePercentage"])
        if p >= 1:
            return None
        if p <= 0:
            return 1
        return 1 + max(0, math.ceil(math.log(FIRST_WEIGHT) / math.log(p) - 1e-9))
    n = warm_up_cycles(shedding, settings)  # type: ignore[arg-type]
    if shedding == "TransferShedder" and "loadBalanceSheddingDelayInSeconds" in settings \
            and "loadBalancerSheddingIntervalMinutes" in settings:
        step_s = 60 * max(1, int(settings["loadBalancerSheddingIntervalMinutes"]))
        n = max(n, 1 + math.ceil(int(settings["loadBalanceSheddingDelayInSeconds"]) / step_s))
    return n


def expectations(plan_actions: Iterable[Any], at: int, interval_ms: int, patience: int,
                 tentative: bool = False) -> list[Expected]:
    """The unloads/transfers a cycle decided (skipped actions are not expected)."""
    out = []
    for a in plan_actions:
        if a.action not in ("unload", "transfer") or a.skipped:
            continue
        out.append(Expected(a.bundle, a.broker, a.destinationBroker, a.reason, at,
                            at + patience * interval_ms, tentative))
    return out


def why_not(config: Mapping[str, Any]) -> str:
    """The configuration's reason a leader does not shed, or the plain fact that it did not."""
    if str(config.get("loadBalancerEnabled", "true")).lower() == "false":
        return "the leader's load balancer is off in the dynamic configuration (loadBalancerEnabled=false)"
    if str(config.get("loadBalancerSheddingEnabled", "true")).lower() == "false":
        return "the leader's shedding is off in the dynamic configuration (loadBalancerSheddingEnabled=false)"
    return ("nothing in the configuration explains it: a stuck leader, a strategy other than the "
            "configured one, or lbctl's model is wrong")


def _when(ms: int) -> str:
    from lbctl.model.cluster import iso_time

    return iso_time(ms)[11:16]


class Checker:
    """Open expectations and the moves seen; yields the divergences of each capture."""

    def __init__(self, patience: int = 2):
        self.patience = patience
        self.open: dict[str, Expected] = {}
        self.expected_total = 0
        self.observed_total = 0
        #: moves no captured state let lbctl judge (each an ``unjudged-unload``: the evidence is
        #: incomplete) — not the warm-up's, which say nothing of the evidence
        self.unjudged_total = 0
        #: moves seen while lbctl's memory warmed up that no expectation foresaw: not judged
        #: either, counted apart (a fresh watcher's first 23 cycles made the unjudged count
        #: look like missing evidence)
        self.warmup_total = 0

    def observe(self, state: ClusterState, seen: Iterable[Move], decided: Iterable[Any],
                interval_ms: int, ours: frozenset[str] = frozenset(), warm: bool = True,
                free: frozenset[str] = frozenset(),
                owners: Mapping[str, str] | None = None,
                manual: Mapping[str, str] | None = None,
                last: Mapping[str, str] | None = None,
                judged: str = "",
                unseen: Mapping[str, str] | None = None,
                unsure: frozenset[str] = frozenset()) -> list[Condition]:
        """Fold in one capture: the moves it shows, the cycle's decisions on it; ``ours``: bundles
        the watcher's own healing moved, never reported as unexpected; ``warm``: lbctl's memory
        has warmed up (module docstring), else the cycle's expectations are tentative and a move
        none foresaw is not judged (the evidence of a manual unload still is); ``free``:
        bundles whose grace period ends before the leader's next cycle, so that it may shed them
        though lbctl's cycle could not (a move of one is not unexpected); ``owners``: who owns
        each bundle now as the brokers list it (``ownedNamespaces``), else the load reports'
        (which lag a move by up to ``loadBalancerReportUpdateMaxIntervalMinutes``); ``manual``:
        the moves the evidence says were not the leader's (bundle → why), each a
        ``manual-unload`` and never a divergence of the leader's (the expectation it met is
        closed: the bundle left the broker, whoever moved it); ``last``: each bundle's last known
        owner — a decision on a bundle owned by nobody now whose last owner is the broker it is
        to leave is expected all the same (it is in flight from that broker: the leader's
        unload, which lbctl's cycle on the same reports repeats, while its clients have not
        looked it up again — 90 s later, its arrival two captures on was an unexpected-unload);
        ``judged``: the states lbctl's cycles judged the moves on, said in an unexpected-unload's
        evidence (none of them makes it expected); ``unseen``: the moves whose state the leader
        decided on no capture holds (bundle → why: :meth:`lbctl.watch.loop.Watcher._unseen`),
        each an ``unjudged-unload`` (info) that says the evidence is incomplete, never an
        unexpected-unload, when no expectation explains it; ``unsure``: the bundles whose
        expectation of this cycle is tentative though lbctl is warm (the leader may read other
        load data by its cycle, on which lbctl's cycle decides otherwise:
        :meth:`lbctl.watch.loop.Watcher._unsure`), judged again at the next capture."""
        out: list[Condition] = []
        now = state.captured_at
        active = set(state.available())
        for m in seen:
            self.observed_total += 1
            e = self.open.pop(m.bundle, None)
            why = (manual or {}).get(m.bundle)
            if why is not None:
                out.append(Condition(
                    "manual-unload", m.bundle, "info",
                    f"bundle {m.bundle} moved from {m.before} to {m.after}: not the leader's "
                    f"unload ({why})"))
            elif (e is None and m.bundle not in ours and m.bundle not in free
                    and (m.before is None or m.before in active)):
                if not warm:
                    # lbctl's memory is not yet the leader's (the module docstring's warm-up):
                    # a move it did not foresee says nothing of the leader's rules — a fresh
                    # watcher beside a hot cluster whose leader had seen the broker at 90 % a
                    # minute before lbctl's first capture raised seven in its first 16 minutes
                    self.warmup_total += 1
                    continue
                why = (unseen or {}).get(m.bundle)
                if why is not None:
                    self.unjudged_total += 1
                    out.append(Condition(
                        "unjudged-unload", m.bundle, "info",
                        f"bundle {m.bundle} moved from {m.before} to {m.after}: not judged, "
                        f"lbctl cannot tell whether the leader's rules allowed it ({why})"))
                    continue
                out.append(Condition(
                    "unexpected-unload", m.bundle, "warning",
                    f"bundle {m.bundle} moved from {m.before} to {m.after}: an unload lbctl's "
                    "model does not expect — manual, or another load manager?"
                    + (f" ({judged})" if judged else "")))
        if owners is None:
            owners = state.owners()
        for e in sorted(self.open.values(), key=lambda e: e.bundle):
            # still on the broker that should have shed it; owned by nobody, it was unloaded
            # and waits for its clients (its next owner fulfils the expectation)
            if now > e.due and owners.get(e.bundle) == e.broker and not e.tentative:
                out.append(Condition(
                    "leader-divergence", e.broker, "warning",
                    f"expected {e.broker} to shed {e.bundle} ({e.reason}) at {_when(e.at)} — "
                    f"it did not; {why_not(state.config)}"))
        for b, e in list(self.open.items()):
            # a tentative expectation past its due, the bundle not moved, is dropped (it never
            # diverges; a later cycle may expect the move again)
            if e.tentative and now > e.due and owners.get(b) == e.broker:
                del self.open[b]
        last = last or {}
        for e in expectations(decided, now, interval_ms, self.patience, tentative=not warm):
            if e.bundle in unsure and not e.tentative:
                e = replace(e, tentative=True)
            cur = self.open.get(e.bundle)
            # once warm, a cycle's firm expectation takes a tentative one's place; the bundle on
            # the broker that is to shed it, or in flight from it (unloaded, its clients not
            # back yet: the expectation outlives its time unowned, as the divergence check waits)
            here = owners.get(e.bundle)
            if ((cur is None or (cur.tentative and not e.tentative))
                    and (here == e.broker or (here is None and last.get(e.bundle) == e.broker))):
                self.open[e.bundle] = e
                self.expected_total += not e.tentative
        # a bundle gone (split, deleted) can no longer move; one merely unowned (unloaded, its
        # clients not back yet, or absent from reports not rewritten since) is not gone: its
        # arrival elsewhere is the expected move, not an unexpected one
        for b, e in list(self.open.items()):
            if _gone(b, state) or (b not in owners and now > e.due + FORGET_AFTER * interval_ms):
                del self.open[b]
        return _grouped(out)


#: shedding intervals past its due time after which an expectation whose bundle is owned by
#: nobody is forgotten (its clients never came back)
FORGET_AFTER = 10


def _gone(bundle: str, state: ClusterState) -> bool:
    """``bundle`` no longer among its namespace's bundles (split or deleted), as far as the
    capture's bundle boundaries tell (no boundaries: not known to be gone)."""
    ns, _, rng = bundle.rpartition("/")
    bounds = state.namespaces.get(ns)
    if bounds is None:
        return False
    lo, _, hi = rng.partition("_")
    try:
        a, b = int(lo, 16), int(hi, 16)
    except ValueError:
        return False
    i = bisect.bisect_left(bounds, a)
    return not (i + 1 < len(bounds) and bounds[i] == a and bounds[i + 1] == b)


def _grouped(items: list[Condition]) -> list[Condition]:
    """One leader-divergence per broker (its first bundle's sentence, the count added)."""
    out: list[Condition] = []
    per: dict[str, list[Condition]] = {}
    for c in items:
        if c.kind == "leader-divergence":
            per.setdefault(c.subject, []).append(c)
        else:
            out.append(c)
    for broker, cs in sorted(per.items()):
        first = cs[0]
        more = f" (and {len(cs) - 1} more bundle(s))" if len(cs) > 1 else ""
        out.append(Condition(first.kind, broker, first.severity, first.message + more))
    return out
