"""The conditions one capture shows, each a pure function of what the watcher has seen.

Kinds (``Condition.kind``) and the Pulsar setting or behaviour each follows:

* ``broker-down``: a broker seen before is not among the active brokers now (its ZooKeeper/
  metadata-store registration is gone); ``report-stale``: its load report was last written longer
  ago than three times ``loadBalancerReportUpdateMaxIntervalMinutes`` (cluster time; 45 min at
  Pulsar's 15) — ``ModularLoadManagerImpl.needBrokerDataUpdate`` rewrites a report at least that
  often, and the setting is dynamic, so the bound follows the captured configuration
  (``Thresholds.stale_ms`` overrides it);
* ``out-of-band``: a broker's usage as the load manager sees it (the weighted maximum resource
  usage, ``LocalBrokerData.getMaxResourceUsageWithWeight``) is outside the band — the cluster's
  average ± ``loadBalancerBrokerThresholdShedderPercentage`` points, or above
  ``loadBalancerBrokerOverloadedThresholdPercentage``;
* ``ping-pong``: a bundle changed owner ``ping_pong`` times or more within ``window_ms``;
  ``unload-storm``: more than ``storm`` ownership changes in one window;
* ``split-blocked``: a bundle over a split threshold (``BundleSplitterTask``: topics, sessions,
  message rate, bandwidth) in a namespace already at ``loadBalancerNamespaceMaximumBundles``;
* ``balancer-paused``: ``loadBalancerEnabled`` or ``loadBalancerSheddingEnabled`` false in the
  dynamic configuration (what ``lbctl drain --pause-balancer`` sets);
* ``leader-changed``: the leader broker differs from the previous capture's (shown for one capture);
* ``idle-broker``: an active broker owning no bundle (raised after its grace: a broker that just
  started is expected to be empty for a while);
* ``doctor:<rule>``: a finding of ``lbctl doctor`` on the capture.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from lbctl.config import Settings
from lbctl.doctor.rules.stale_report import MISSED_WRITES
from lbctl.model.cluster import ClusterState
from lbctl.watch.anomalies import Condition

_MIB = 1024 * 1024


class Move(Struct, frozen=True):
    """A bundle whose owner changed between two captures (``before`` None: it had no owner)."""

    bundle: str
    before: str | None
    after: str
    at: int  # epoch ms of the capture that showed it


def moves(last_owner: Mapping[str, str], later: ClusterState,
          owners: Mapping[str, str] | None = None) -> list[Move]:
    """Ownership changes since each bundle's last known owner (``last_owner``, updated by the
    caller): an unloaded bundle may be unowned in one capture and owned again in the next — one
    move. Bundles that vanished (split, deleted) are not moves; a split's children appear with
    their first owner and are not moves either. ``owners``: who owns each bundle at ``later``
    when read from the brokers themselves (``ownedNamespaces``), else the load reports'."""
    now = later.owners() if owners is None else owners
    return [Move(b, last_owner[b], o, later.captured_at) for b, o in sorted(now.items())
            if b in last_owner and last_owner[b] != o]


class MoveLog:
    """The moves of the last ``window_ms`` (cluster time)."""

    def __init__(self, window_ms: int):
        self.window_ms = window_ms
        self.items: deque[Move] = deque()

    def add(self, items: Iterable[Move], now: int) -> None:
        self.items.extend(items)
        while self.items and now - self.items[0].at > self.window_ms:
            self.items.popleft()


def usage_of(state: ClusterState, settings: Settings) -> dict[str, float]:
    """Each broker's weighted maximum usage (a fraction), as the load manager's shedders see it
    (``getMaxResourceUsageWithWeight`` with the release's weights: :meth:`Settings.weights4`,
    the deprecated ``…Bandwith…`` keys honoured, the heap only where the release counts it)."""
    w = settings.weights4()
    memory = settings.weighted_usage_memory_weight()
    return {b: d.max_resource_usage_with_weight(*w, memory_weight=memory)
            for b, d in state.brokers.items()}


def band(usages: Mapping[str, float], settings: Mapping[str, Any]) -> tuple[float, float]:
    """The band (fractions): average ± ``loadBalancerBrokerThresholdShedderPercentage``, its top
    never above ``loadBalancerBrokerOverloadedThresholdPercentage`` and its bottom never above its
    top (an average over the overload threshold gave "band 89–85 %")."""
    if not usages:
        return 0.0, 1.0
    avg = sum(usages.values()) / len(usages)
    width = float(settings.get("loadBalancerBrokerThresholdShedderPercentage", 10)) / 100
    cap = float(settings.get("loadBalancerBrokerOverloadedThresholdPercentage", 85)) / 100
    high = min(cap, avg + width)
    return min(max(0.0, avg - width), high), high


#: a report older than this many of its broker's maximum write intervals is stale (the same
#: bound as ``lbctl doctor``'s stale-load-report, so the two never disagree on one report)
STALE_WRITES = MISSED_WRITES


class Thresholds(Struct, frozen=True):
    """The watcher's own limits (not Pulsar settings)."""

    #: None: three times the cluster's loadBalancerReportUpdateMaxIntervalMinutes
    stale_ms: int | None = None
    window_ms: int = 3_600_000
    ping_pong: int = 3
    storm: int = 20


def conditions(state: ClusterState, settings: Settings, *, known: Iterable[str],
               leader: str | None, previous_leader: str | None, log: MoveLog,
               limits: Thresholds) -> list[Condition]:
    """Every condition of one capture (doctor's and the leader's divergences are added by the
    watcher, which runs them)."""
    out: list[Condition] = []
    active = set(state.available())
    for b in sorted(set(known) - active):
        out.append(Condition("broker-down", b, "critical",
                             f"broker {b} is not among the active brokers"))
    stale_ms = limits.stale_ms if limits.stale_ms is not None else STALE_WRITES * 60_000 * int(
        settings.get("loadBalancerReportUpdateMaxIntervalMinutes", 15))
    for b, d in sorted(state.brokers.items()):
        age = state.captured_at - d.lastUpdate
        if d.lastUpdate and age > stale_ms:
            out.append(Condition("report-stale", b, "warning",
                                 f"broker {b}'s load report is {age // 60_000} min old (stale "
                                 f"after {stale_ms // 60_000} min; a broker writes one at least "
                                 "every loadBalancerReportUpdateMaxIntervalMinutes): its "
                                 "load-report writer is stuck or its metadata-store session is "
                                 "lost, and the leader decides on old figures"))
    usages = usage_of(state, settings)
    low, high = band(usages, settings)
    for b, u in sorted(usages.items()):
        if u > high or u < low:
            out.append(Condition(
                "out-of-band", b, "warning" if u <= high else "critical",
                f"broker {b} at {u * 100:.0f} % (band {low * 100:.0f}–{high * 100:.0f} %)"))
    counts: dict[str, int] = {}
    for m in log.items:
        counts[m.bundle] = counts.get(m.bundle, 0) + 1
    for bundle, n in sorted(counts.items()):
        if n >= limits.ping_pong:
            out.append(Condition("ping-pong", bundle, "warning",
                                 f"bundle {bundle} changed owner {n} times in "
                                 f"{limits.window_ms // 60_000} min"))
    if len(log.items) > limits.storm:
        out.append(Condition("unload-storm", state.cluster, "warning",
                             f"{len(log.items)} bundles changed owner in "
                             f"{limits.window_ms // 60_000} min"))
    out += _split_blocked(state, settings)
    paused = [k for k in ("loadBalancerEnabled", "loadBalancerSheddingEnabled")
              if str(state.config.get(k, "true")).lower() == "false"]
    if paused:
        out.append(Condition("balancer-paused", state.cluster, "warning",
                             f"{' and '.join(paused)} false in the dynamic configuration; "
                             "lbctl drain --restore puts back what a drain paused"))
    if leader and previous_leader and leader != previous_leader:
        out.append(Condition("leader-changed", state.cluster, "info",
                             f"the leader moved from {previous_leader} to {leader}"))
    owned = {b: len(d.bundles) for b, d in state.brokers.items()}
    for b in sorted(active):
        if owned.get(b, 0) == 0 and len(active) > 1:
            out.append(Condition("idle-broker", b, "info",
                                 f"broker {b} owns no bundle; lbctl rebalance-after {b} "
                                 "plans bundles for it"))
    return out


def _split_blocked(state: ClusterState, settings: Mapping[str, Any]) -> list[Condition]:
    """``BundleSplitterTask``'s thresholds, for namespaces that cannot split any more."""
    cap = int(settings.get("loadBalancerNamespaceMaximumBundles", 128))
    if not state.namespaces:
        return []
    topics = int(settings.get("loadBalancerNamespaceBundleMaxTopics", 1000))
    sessions = int(settings.get("loadBalancerNamespaceBundleMaxSessions", 1000))
    rate = float(settings.get("loadBalancerNamespaceBundleMaxMsgRate", 30000))
    bandwidth = float(settings.get("loadBalancerNamespaceBundleMaxBandwidthMbytes", 100)) * _MIB
    out: list[Condition] = []
    for d in state.brokers.values():
        for bundle, s in d.lastStats.items():
            ns = bundle.rsplit("/", 1)[0]
            bounds = state.namespaces.get(ns)
            if bounds is None or len(bounds) - 1 < cap:
                continue
            over = ((topics > 0 and s.topics > topics)
                    or (sessions > 0 and s.consumerCount + s.producerCount > sessions)
                    or (rate > 0 and s.msgRateIn + s.msgRateOut > rate)
                    or (bandwidth > 0 and s.msgThroughputIn + s.msgThroughputOut > bandwidth))
            if over and s.topics > 1:
                out.append(Condition("split-blocked", bundle, "warning",
                                     f"bundle {bundle} is over a split threshold but {ns} already "
                                     f"has {len(bounds) - 1} bundles "
                                     "(loadBalancerNamespaceMaximumBundles)"))
    return sorted(out, key=lambda c: c.subject)


def known_brokers(states: Sequence[ClusterState]) -> set[str]:
    """Every broker any of ``states`` showed active."""
    out: set[str] = set()
    for s in states:
        out.update(s.available())
    return out
