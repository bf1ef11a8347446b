"""Plans for taking a broker out of service and putting it back (``lbctl drain``,
``lbctl rebalance-after``): plan@1 objects that ``apply`` carries out.

**Drain** — every bundle the broker owns (its heartbeat and SLA-monitor namespaces excepted: they
never move) to the broker the cluster's own placement would choose with the drained broker gone:

* modular load manager: ``ModularLoadManagerImpl.selectBroker`` as :mod:`lbctl.loadmanager.modular`
  runs it (the max-topics and distribute-evenly filters, the placement strategy of the settings or
  ``--placement``, the overload re-check), over every broker but the drained one, bundle after
  bundle; each choice is *preallocated* to its broker (``BrokerData.preallocatedBundleData``, as
  ``selectBroker`` records it), so the next choice sees it — LeastLongTermMessageRate counts the
  preallocated bundles' long-term rates, the filters their topics and namespaces;
* extensible load manager: ``ExtensibleLoadManagerImpl``'s choice at the next lookup — the broker
  filters (max topics, versions, isolation) over the available brokers but the drained one, then
  its LeastResourceUsageWithWeight (which keeps no preallocation: the weighted-max EMAs stay as
  published until the brokers report again, so its picks repeat among the least loaded brokers,
  as Pulsar's would within one reporting interval).

Bundles are placed heaviest first (throughput, then message rate): the order in which they are
unloaded and looked up is lbctl's choice, not Pulsar's. A bundle for which placement finds no
broker is a skipped action saying so.

**Fill** — lbctl's own corrective plan after a restart (Pulsar has none: a restarted broker waits
for the shedder, which may leave it idle — Pulsar issue 12160 — or move many bundles at once). It
raises the restarted broker toward the cluster's mean usage: from the most loaded broker above
the mean, the largest bundle whose share of that broker's usage fits both what the source has
above the mean and what the target lacks below it; when none fits, the one move from the most
loaded broker that leaves it and the target closest to each other (if it narrows their gap at all),
then stop. A broker's
usage is shared among its bundles in proportion to their throughput (:mod:`lbctl.plan`'s
estimate). The target must pass the placement filters for each
bundle (max topics; on the extensible load manager its broker filters). The plan carries no pacing:
``apply --concurrency N --interval S`` (what ``rebalance-after`` prints) moves at most N bundles per
interval, so the restarted broker is not hit by a thundering herd. A bundle unloaded within
``loadBalancerSheddingGracePeriodMinutes`` (the snapshot's ``recentlyUnloaded``, or the journal's
unloads the caller passes: the drain that emptied the broker, a rollback) is left where it is, as
Pulsar's shedders leave ``recentlyUnloadedBundles``: ``apply`` refuses to move it again, so a plan
listing it would be carried out only in part.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from lbctl.config import Settings
from lbctl.errors import UsageError
from lbctl.explain.words import text
from lbctl.loadmanager.select import Options, extensible_load_manager
from lbctl.model.bundle import is_system_service_namespace, namespace_of
from lbctl.model.cluster import EXTENSIBLE, ClusterState
from lbctl.plan import Action, BrokerRow, Plan
from lbctl.units import pct, rounded

DRAIN = "drain"
FILL = "fill"


def usage_of(state: ClusterState, settings: Settings) -> dict[str, float]:
    """Each broker's load as its load manager compares it (weighted max resource usage; the
    published ``weightedMaxEMA`` on the extensible load manager)."""
    out: dict[str, float] = {}
    if state.load_manager == EXTENSIBLE:
        out = {b: float(p.data.weightedMaxEMA) for b, p in state.broker_load_data.items()}
    w = settings.weights4()
    for b, local in state.brokers.items():
        out.setdefault(b, float(local.max_resource_usage_with_weight(*w)))
    return out


def movable_bundles(state: ClusterState, broker: str) -> list[str]:
    """The broker's bundles that can move, heaviest first (throughput, message rate, name)."""
    local = state.brokers[broker]
    names = dict.fromkeys([*local.lastStats, *local.bundles])
    out = [b for b in names if b.count("/") >= 2
           and not is_system_service_namespace(namespace_of(b))]

    def weight(b: str) -> tuple[float, float, str]:
        st = local.lastStats.get(b)
        return (-(st.throughput if st else 0.0), -(st.msg_rate if st else 0.0), b)

    return sorted(out, key=weight)


def _share(state: ClusterState, broker: str, bundle: str, usage: float) -> float:
    """The part of ``broker``'s usage its ``bundle`` carries (throughput shares, else message
    rates, else equal shares), as :mod:`lbctl.plan` estimates it."""
    stats = state.brokers[broker].lastStats
    st = stats.get(bundle)
    if st is None or not stats:
        return 0.0
    tp = sum(s.throughput for s in stats.values())
    if tp > 0:
        return usage * st.throughput / tp
    rate = sum(s.msg_rate for s in stats.values())
    if rate > 0:
        return usage * st.msg_rate / rate
    return usage / len(stats)


def not_active(broker: str, cluster: str, brokers: Sequence[str]) -> UsageError:
    """The error for a broker the cluster does not list: the closest name, else the active ones
    (the docs' ``broker-3:8080`` typed on the sandbox matches nothing: say what does)."""
    from lbctl.config import closest

    hint = closest(broker, brokers)
    if hint:
        return UsageError(f"{broker} is not an active broker of {cluster} (did you mean {hint}?)")
    names = sorted(brokers)
    listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return UsageError(f"{broker} is not an active broker of {cluster}"
                      + (f"; its active brokers: {listed}" if names else ""))


def _check(state: ClusterState, broker: str) -> None:
    if broker not in state.brokers:
        raise not_active(broker, state.cluster, list(state.brokers))


# --- drain ------------------------------------------------------------------------------------
def drain_plan(state: ClusterState, settings: Settings, broker: str, opts: Options) -> Plan:
    """Every movable bundle of ``broker`` to where the cluster's placement would put it."""
    _check(state, broker)
    bundles = movable_bundles(state, broker)
    if state.load_manager == EXTENSIBLE:
        picks, placement = _extensible_picks(state, settings, broker, bundles, opts)
    else:
        picks, placement = _modular_picks(state, settings, broker, bundles, opts)
    actions = []
    for b in bundles:
        st = state.brokers[broker].lastStats.get(b)
        dest, why = picks[b]
        actions.append(Action(
            action="unload", bundle=b, broker=broker, reason="Admin", destinationBroker=dest,
            msgRate=rounded(st.msg_rate if st else None),
            throughput=rounded(st.throughput if st else None),
            skipped=None if dest else why))
    return _plan(state, settings, DRAIN, placement, actions)


def _modular_picks(state: ClusterState, settings: Settings, broker: str, bundles: Sequence[str],
                   opts: Options) -> tuple[dict[str, tuple[str | None, str]], str]:
    """Each bundle's ``selectBrokerForAssignment`` with the drained broker gone, each pick
    preallocated (:func:`lbctl.loadmanager.assign.modular_assignments`)."""
    from lbctl.loadmanager.assign import modular_assignments, without_broker

    picks, placement = modular_assignments(without_broker(state, broker), settings, bundles, opts,
                                           owners={})
    return {a.bundle: (a.broker, "" if a.broker else a.why) for a in picks}, placement


def _extensible_picks(state: ClusterState, settings: Settings, broker: str,
                      bundles: Sequence[str], opts: Options
                      ) -> tuple[dict[str, tuple[str | None, str]], str]:
    from lbctl.loadmanager.extensible import _lookups, _store
    from lbctl.model.cycle import ExtensibleMemory
    from lbctl.strategies.placement.broker_filters import FilterContext

    ext = extensible_load_manager(opts)
    store, _, _ = _store(state, settings, ExtensibleMemory())
    lookups = _lookups(state)
    fctx = FilterContext(settings, store)
    out: dict[str, tuple[str | None, str]] = {}
    for b in bundles:
        d = ext._preview(b, broker, lookups, fctx, store, settings)
        out[b] = (d.broker, "" if d.broker else text(d.why) or "no candidate broker")
    return out, "LeastResourceUsageWithWeight"


# --- fill ---------------------------------------------------------------------------------------
def in_grace(state: ClusterState, settings: Settings, recent: Mapping[str, float],
             now: float) -> set[str]:
    """The bundles unloaded within ``loadBalancerSheddingGracePeriodMinutes``: ``recent`` (bundle
    → epoch seconds of its last unload, the journal's) before ``now``, and the snapshot's own
    ``recentlyUnloaded`` before its capture — the bundles ``apply``'s validation refuses to move."""
    grace_s = float(settings["loadBalancerSheddingGracePeriodMinutes"]) * 60
    if grace_s <= 0:
        return set()
    out = {b for b, when in recent.items() if now - when < grace_s}
    out.update(b for b, ts in state.recently_unloaded.items()
               if state.captured_at - ts < grace_s * 1000)
    return out


def fill_plan(state: ClusterState, settings: Settings, broker: str, opts: Options, *,
              max_moves: int | None = None, recent: Mapping[str, float] | None = None,
              now: float | None = None) -> Plan:
    """The corrective plan that raises a restarted ``broker`` toward the mean (module docstring).
    ``recent``: the journal's unloads (bundle → epoch seconds), judged at ``now`` (default the
    snapshot's capture): those within the grace period stay."""
    _check(state, broker)
    staying = in_grace(state, settings, recent or {},
                       state.captured_at / 1000 if now is None else now)
    usage = usage_of(state, settings)
    finite = [u for u in usage.values() if math.isfinite(u)]
    if not finite or len(state.brokers) < 2:
        return _plan(state, settings, FILL, FILL, [],
                     gate="fewer than two brokers with a load figure: nothing to fill")
    mean = sum(finite) / len(finite)
    est = dict(usage)
    if est[broker] >= mean:
        return _plan(state, settings, FILL, FILL, [],
                     gate=f"{broker} is at {pct(est[broker])}, at or above the average "
                          f"{pct(mean)}: nothing to fill")
    accepts, take = _target_filter(state, settings, broker)
    pools: dict[str, list[tuple[str, float]]] = {}
    for src in state.brokers:
        if src == broker or est[src] <= mean:
            continue
        pools[src] = [(b, _share(state, src, b, usage[src])) for b in movable_bundles(state, src)
                      if b not in staying]
    actions: list[Action] = []
    overshoot_done = False
    while est[broker] < mean and (max_moves is None or len(actions) < max_moves):
        lack = mean - est[broker]
        chosen: tuple[str, str, float] | None = None
        for src in sorted(pools, key=lambda x: (-est[x], x)):
            room = est[src] - mean
            fits = [(b, s) for b, s in pools[src] if 0 < s <= min(room, lack) and accepts(b)]
            if fits:
                b, s = max(fits, key=lambda x: (x[1], x[0]))
                chosen = (src, b, s)
                break
        if chosen is None and not overshoot_done and pools:
            src = max(pools, key=lambda x: (est[x], x))
            gap = est[src] - est[broker]
            narrower = [(b, s) for b, s in pools[src] if 0 < s < gap and accepts(b)]
            if narrower:  # the one leaving the pair closest to each other
                b, s = min(narrower, key=lambda x: (abs(gap - 2 * x[1]), x[0]))
                chosen = (src, b, s)
                overshoot_done = True
        if chosen is None:
            break
        src, b, s = chosen
        take(b)
        pools[src] = [(x, y) for x, y in pools[src] if x != b]
        est[src] -= s
        est[broker] += s
        st = state.brokers[src].lastStats.get(b)
        actions.append(Action(
            action="unload", bundle=b, broker=src, reason="Underloaded", destinationBroker=broker,
            msgRate=rounded(st.msg_rate if st else None),
            throughput=rounded(st.throughput if st else None)))
        if overshoot_done:
            break
    return _plan(state, settings, FILL, FILL, actions)


def _target_filter(state: ClusterState, settings: Settings, broker: str) -> tuple[Any, Any]:
    """(``accepts(bundle)``: may ``broker`` take it — max topics, counting what the plan already
    gives it; on the extensible load manager, its broker filters —, ``take(bundle)``: the plan
    gives it)."""
    local = state.brokers[broker]
    max_topics = int(settings["loadBalancerBrokerMaxTopics"])
    given = {"topics": local.numTopics}
    ext_ok: Any = None
    if state.load_manager == EXTENSIBLE:
        from lbctl.loadmanager.extensible import _lookups, _store
        from lbctl.model.cycle import ExtensibleMemory
        from lbctl.strategies.placement.broker_filters import (
            FilterContext,
            FilterError,
            apply_filters,
            default_pipeline,
        )

        store, _, _ = _store(state, settings, ExtensibleMemory())
        lookup = {broker: _lookups(state)[broker]}
        fctx = FilterContext(settings, store)

        def ext_ok(bundle: str) -> bool:
            try:
                cands, _ = apply_filters(dict(lookup), bundle, fctx, default_pipeline())
            except FilterError:
                return True  # Pulsar logs a failing filter and keeps its candidates
            return broker in cands

    def topics(bundle: str) -> int:
        st = state.bundle_stats(bundle)
        return int(st.topics) if st is not None else 0

    def accepts(bundle: str) -> bool:
        if given["topics"] + topics(bundle) > max_topics:
            return False
        return ext_ok is None or bool(ext_ok(bundle))

    def take(bundle: str) -> None:
        given["topics"] += topics(bundle)

    return accepts, take


# --- the plan object ---------------------------------------------------------------------------
def _plan(state: ClusterState, settings: Settings, shedding: str, placement: str,
          actions: Sequence[Action], gate: str | None = None) -> Plan:
    usage = usage_of(state, settings)
    after = dict(usage)
    for a in actions:
        if a.skipped is not None or a.destinationBroker is None or a.broker not in usage:
            continue
        s = _share(state, a.broker, a.bundle, usage[a.broker])
        after[a.broker] -= s
        after[a.destinationBroker] = after.get(a.destinationBroker, 0.0) + s
    rows = [BrokerRow(broker=b, usage=usage[b], usage_after=after[b], score=None,
                      msg_rate=local.msg_rate, throughput=local.throughput,
                      bundles=len(local.lastStats) or local.numBundles)
            for b, local in state.brokers.items()]
    return Plan(state.cluster, state.captured_at_iso, state.load_manager, shedding, placement,
                settings, tuple(actions), tuple(rows), state.bundle_count(), gate)

