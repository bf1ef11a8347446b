"""``SimpleLoadManagerImpl``'s rankings, placement and overload shedding (Pulsar master 0058e734).

* :func:`rank` — ``updateRanking``: ``updateRealtimeResourceQuota`` then ``doLoadRanking``: one
  :class:`~lbctl.strategies.simple.ranking.Ranking` per broker (its preallocated bundles kept until
  its report shows them loaded) and its final rank.
* :func:`least_loaded` — ``getLeastLoadedBroker``: a bundle preallocated already goes where it was
  preallocated; else ``getFinalCandidates`` (namespace isolation policies, then the brokers serving
  the fewest bundles of the namespace), the active brokers only, then ``findBrokerForPlacement``
  (leastLoadedServer, leastMsgPerSecond) or ``WRRPlacementStrategy`` (weightedRandomSelection).
  ``findBrokerForPlacement``: the least loaded non-idle broker (``compareTo``'s 5 % bands); an
  idle broker instead when that one is above ``loadBalancerBrokerUnderloadedThresholdPercentage``
  or none is busy; a rotating pick when all are full; the broker with the most room left when the
  least loaded is above ``loadBalancerBrokerOverloadedThresholdPercentage``. The pick is
  preallocated (its quota counts at once); every candidate that had the bundle loaded drops it.
* :func:`shed` — ``doLoadShedding``: a broker whose CPU, direct memory or bandwidth (not heap) is
  above ``loadBalancerBrokerOverloadedThresholdPercentage`` gives up one bundle: the first of its
  bundles sorted on its bottleneck resource (``getSortedBundleStats``), if some candidate broker of
  the namespace is below ``loadBalancerBrokerComfortLoadLevelPercentage`` on all four; a broker
  with a single bundle keeps it.

Java's orders are reproduced: ``currentLoadReports`` and the rankings are ``HashMap``s keyed by
``http://`` + the broker id; a report's bundle stats are a ``HashMap`` copied from the JSON (its
capacity from the copy constructor); candidates come rank first, then by id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from random import Random
from typing import Literal

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.bundle import namespace_of
from lbctl.model.decision import Why
from lbctl.model.javaorder import java_hash_order
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats
from lbctl.model.policies import ClusterPolicies
from lbctl.strategies.placement.filters import remove_most_servicing
from lbctl.strategies.placement.namespace_policies import apply_namespace_policies
from lbctl.strategies.simple.quota import QuotaState, ResourceQuota, Stored, total, update_realtime
from lbctl.strategies.simple.ranking import LEAST_MSG, LLS, Ranking, java_long, ranking
from lbctl.strategies.simple.report import copied_order, reports_order, unit
from lbctl.strategies.simple.treemap import TreeMap

SimpleCode = Literal[
    "overloaded",  # a resource above the overload threshold: one bundle to give up
    "sole-bundle",  # overloaded, but its only bundle stays
    "no-room",  # overloaded, but no candidate is below the comfort level
    "fine",  # no resource above the overload threshold
    "no-bundles",  # overloaded without bundle stats
    "least-loaded",  # placement: the least loaded busy broker
    "idle",  # placement: an idle broker
    "random",  # placement: all full, the rotating pick
    "max-available",  # placement: all overloaded, the most room left
    "weighted-random",  # placement: WRRPlacementStrategy
    "preallocated",  # placement: the bundle was preallocated there already
    "no-candidate",  # placement: no candidate broker
    "grace",  # unload skipped: unloaded less than the grace period ago
    "dry-run",  # loadBalancerSheddingEnabled is off: Pulsar logs the unload only
    "split-away",  # unload fails: its broker split the bundle after writing its report
]
RESOURCES = ("CPU", "Memory", "BandwidthIn", "BandwidthOut")


class SimpleWhy(Why, frozen=True):
    """A reason of ``SimpleLoadManagerImpl``, with its figures."""

    code: SimpleCode
    broker: str = ""
    resource: str = ""
    percent: float = 0.0
    threshold: float = 0.0
    count: int = 0
    names: tuple[str, ...] = ()


# --- ranking -------------------------------------------------------------------------------------
class Ranked(Struct, frozen=True):
    """One ``updateRanking``: the quotas it learnt, each broker's ranking (in
    ``resourceUnitRankings`` order) and final rank, and the placement strategy it ranked for."""

    quotas: QuotaState
    stored: Stored
    rankings: Mapping[str, Ranking]
    ranks: Mapping[str, int]
    strategy: str

    def quota(self, bundle: str) -> ResourceQuota:
        return self.stored.quota(bundle, self.quotas.quotas)


def rank(reports: Mapping[str, LocalBrokerData], stamps: Mapping[str, int], stored: Stored,
         prev: QuotaState, preallocated: Mapping[str, tuple[str, ...]], strategy: str) -> Ranked:
    """``updateRanking`` (module docstring); ``preallocated``: each broker's preallocated bundles
    from the previous ranking and lookups."""
    order = reports_order(list(reports))
    ordered = {b: (reports[b], stamps[b]) for b in order}
    quotas = update_realtime(ordered, stored, prev)
    factor = quotas.cpu_factor
    if stored.cpu_factor is not None and prev.updated_at < 0:
        factor = stored.cpu_factor  # start(): the dynamic load factor, read after the 1st ranking
    quotas = QuotaState(factor, stored.memory_factor if stored.memory_factor is not None
                        and prev.updated_at < 0 else quotas.memory_factor, quotas.average,
                        quotas.quotas, quotas.updated_at)
    rankings: dict[str, Ranking] = {}
    ranks: dict[str, int] = {}

    def q(b: str) -> ResourceQuota:
        return stored.quota(b, quotas.quotas)

    for b in order:
        local = reports[b]
        loaded = copied_order(list(local.lastStats), set_copy=True)
        pre = tuple(x for x in preallocated.get(b, ()) if x not in local.lastStats)
        r = ranking(local, frozenset(loaded), total(q(x) for x in loaded),
                    pre, total(q(x) for x in _set_order(pre)), factor)
        rankings[b] = r
        ranks[b] = r.final_rank(strategy, stored.default)
    return Ranked(quotas, stored, rankings, ranks, strategy)


def _set_order(names: Sequence[str]) -> list[str]:
    return java_hash_order(names) if names else []


def namespace_counts(ranked: Ranked, rankings: Mapping[str, Ranking] | None = None
                     ) -> dict[str, dict[str, int]]:
    """``brokerToNamespaceToBundleRange``, inverted: namespace → broker → its bundle ranges
    there. ``updateBrokerToNamespaceToBundle`` fills it at the ranking with each broker's loaded
    and preallocated bundles, and each lookup adds its pick's bundle; a lookup that drops a bundle
    from a ranking's loaded set (``removeLoadedServiceUnit``) leaves it here. ``rankings``: the
    rankings after the lookups so far (their preallocations), else the ranking's own."""
    now = rankings if rankings is not None else ranked.rankings
    out: dict[str, dict[str, int]] = {}
    for b, r in ranked.rankings.items():
        pre = now[b].preallocated if b in now else r.preallocated
        for x in {*r.loaded, *pre}:
            per = out.setdefault(namespace_of(x), {})
            per[b] = per.get(b, 0) + 1
    return out


# --- getFinalCandidates --------------------------------------------------------------------------
def final_candidates(service_unit: str, namespace: str, ranked: Ranked,
                     policies: ClusterPolicies, loads_topics: Callable[[str, bool], bool],
                     rankings: Mapping[str, Ranking] | None = None) -> list[tuple[int, str]]:
    """``getFinalCandidates``: (rank, broker) in ``TreeMultimap`` order. ``service_unit`` is what
    ``removeMostServicingBrokersForNamespace`` parses a namespace from: a bundle name, or — when
    shedding asks about a namespace — the namespace name itself, whose parsed "namespace" (its
    tenant) no broker serves, so nothing is removed there."""
    available = list(ranked.rankings)
    cands = apply_namespace_policies(namespace, available, policies, loads_topics).brokers
    counted = remove_most_servicing(tuple(cands), namespace_of(service_unit),
                                    namespace_counts(ranked, rankings), [])
    keep = set(counted)
    return sorted(((ranked.ranks[b], b) for b in ranked.rankings if b in keep),
                  key=lambda rb: (rb[0], unit(rb[1])))


# --- placement -----------------------------------------------------------------------------------
class Placed(Struct, frozen=True):
    """A lookup's answer, the rankings and rotation cursor after it, and why."""

    broker: str | None
    rankings: Mapping[str, Ranking]
    cursor: int
    why: SimpleWhy
    candidates: tuple[str, ...] = ()


def least_loaded(bundle: str, ranked: Ranked, rankings: Mapping[str, Ranking], cursor: int,
                 settings: Settings, policies: ClusterPolicies, active: Sequence[str],
                 loads_topics: Callable[[str, bool], bool], rng: Random) -> Placed:
    """``getLeastLoadedBroker`` for ``bundle`` (module docstring)."""
    for b, r in rankings.items():
        if bundle in r.preallocated:
            return Placed(b, rankings, cursor, SimpleWhy("preallocated", b))
    live = set(active)
    cands = [(k, b) for k, b in final_candidates(bundle, namespace_of(bundle), ranked, policies,
                                                 loads_topics, rankings) if b in live]
    names = tuple(b for _, b in cands)
    if not cands:
        return Placed(None, rankings, cursor, SimpleWhy("no-candidate"), names)
    if ranked.strategy in (LLS, LEAST_MSG):
        placed = find_broker_for_placement(cands, bundle, ranked, rankings, cursor, settings)
    else:
        placed = weighted_random(cands, rankings, cursor, rng)
    return Placed(placed.broker, placed.rankings, placed.cursor, placed.why, names)


def find_broker_for_placement(cands: Sequence[tuple[int, str]], bundle: str, ranked: Ranked,
                              rankings: Mapping[str, Ranking], cursor: int,
                              settings: Settings) -> Placed:
    """``findBrokerForPlacement`` (module docstring)."""
    under = int(settings["loadBalancerBrokerUnderloadedThresholdPercentage"])
    over = int(settings["loadBalancerBrokerOverloadedThresholdPercentage"])
    default = ranked.stored.default
    unbounded = ranked.strategy == LEAST_MSG
    rankings = dict(rankings)
    min_load = 101.0
    max_avail = -1
    idle_b = max_b = random_b = selected = None
    sel_r: Ranking | None = None
    index = cursor % len(cands) if cands else 0
    quota = ranked.quota(bundle)
    for _, b in cands:
        index -= 1
        r = rankings.get(b)
        if r is None:
            continue
        if bundle in r.loaded:
            r = rankings[b] = r.without_loaded(bundle, quota)
        if index < 0 and random_b is None:
            random_b = b
        load = r.estimated
        avail = java_long(r.max_capacity(default) * max(0.0, (100 - load) / 100))
        if avail > max_avail:
            max_avail, max_b = avail, b
        if r.idle:
            if idle_b is None:
                idle_b = b
        elif selected is None or sel_r is None or (
                r.compare_message_rate(sel_r) if unbounded else r.compare_to(sel_r)) < 0:
            selected, sel_r, min_load = b, r, load
    why: SimpleWhy
    if (min_load > under and idle_b is not None) or selected is None:
        selected = idle_b
        why = SimpleWhy("idle", idle_b or "", percent=min_load, threshold=under)
    elif min_load >= 100.0 and random_b is not None and not unbounded:
        selected = random_b
        why = SimpleWhy("random", random_b, percent=min_load)
    elif min_load > over and not unbounded:
        selected = max_b
        why = SimpleWhy("max-available", max_b or "", percent=min_load, threshold=over,
                        count=max_avail)
    else:
        why = SimpleWhy("least-loaded", selected, percent=min_load)
    if selected is not None:
        cursor = (cursor + 1) % 1000000
        r = rankings[selected]
        if bundle not in r.preallocated:
            rankings[selected] = r.with_preallocated(bundle, quota)
    return Placed(selected, rankings, cursor, why)


def weighted_random(cands: Sequence[tuple[int, str]], rankings: Mapping[str, Ranking],
                    cursor: int, rng: Random) -> Placed:
    """``WRRPlacementStrategy.findBrokerForPlacement``: a broker drawn with probability
    proportional to its rank (capacity × idle ratio²), in ``int`` arithmetic; any broker of rank
    0 when the ranks sum to nothing. Pulsar's ``Random`` is unseeded: lbctl draws from its own
    seeded generator. Nothing is preallocated."""
    tot = 0
    for k, _ in cands:
        tot = _int(tot + _int(k))
    if tot <= 0:
        # the i-th of the rank-0 brokers, i drawn among all candidates (Pulsar throws
        # IndexOutOfBoundsException when i passes them: no broker then)
        zero = [b for k, b in cands if k == 0]
        i = rng.randrange(len(cands))
        if i >= len(zero):
            return Placed(None, rankings, cursor, SimpleWhy("no-candidate"))
        return Placed(zero[i], rankings, cursor, SimpleWhy("weighted-random", zero[i], count=0))
    selector = rng.randrange(tot)
    so_far = 0
    for k, b in cands:
        so_far = _int(so_far + k)
        if selector < so_far:
            return Placed(b, rankings, cursor, SimpleWhy("weighted-random", b, count=tot))
    return Placed(None, rankings, cursor, SimpleWhy("no-candidate"))


def _int(x: int) -> int:
    """Java ``int`` wrap-around."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


# --- doLoadShedding ------------------------------------------------------------------------------
def above(local: LocalBrokerData, threshold: float) -> bool:
    """``isAboveLoadLevel``: bandwidth out, in, CPU or direct memory above (float compare)."""
    return any(u.percent > threshold for u in (local.bandwidthOut, local.bandwidthIn, local.cpu,
                                               local.directMemory))


def below(local: LocalBrokerData, threshold: float) -> bool:
    """``isBelowLoadLevel``: all four below."""
    return all(u.percent < threshold for u in (local.bandwidthOut, local.bandwidthIn, local.cpu,
                                               local.directMemory))


def bottleneck(local: LocalBrokerData) -> str:
    """``LoadReport.getBottleneckResourceType``: CPU unless memory, bandwidth in or out is
    strictly higher (in that order; direct memory is not a candidate)."""
    kind, top = "CPU", local.cpu.percent
    for name, u in (("Memory", local.memory), ("BandwidthIn", local.bandwidthIn),
                    ("BandwidthOut", local.bandwidthOut)):
        if u.percent > top:
            kind, top = name, u.percent
    return kind


def _by(kind: str) -> Callable[[NamespaceBundleStats, NamespaceBundleStats], int]:
    """``NamespaceBundleStats.compareBy…`` for a bottleneck (thresholds: 100 msg/s, 500 topics and
    connections, 1e5 bytes/s)."""
    def cmp_double(a: float, b: float, limit: float) -> int:
        return (a > b) - (a < b) if abs(a - b) > limit else 0

    if kind == "CPU":
        return lambda a, b: cmp_double(a.msgRateIn + a.msgRateOut, b.msgRateIn + b.msgRateOut, 100)
    if kind == "Memory":
        def conn(a: NamespaceBundleStats, b: NamespaceBundleStats) -> int:
            x = a.topics + a.consumerCount + a.producerCount
            y = b.topics + b.consumerCount + b.producerCount
            return (x > y) - (x < y) if abs(x - y) > 500 else 0
        return conn
    if kind == "BandwidthIn":
        return lambda a, b: cmp_double(a.msgThroughputIn, b.msgThroughputIn, 1e5)
    return lambda a, b: cmp_double(a.msgThroughputOut, b.msgThroughputOut, 1e5)


def sorted_bundles(local: LocalBrokerData, kind: str) -> list[str]:
    """``getSortedBundleStats(kind)``: the report's bundles put into a ``TreeMap`` ordered by
    ``NamespaceBundleStatsComparator`` (heaviest first; never equal)."""
    stats = local.lastStats
    by = _by(kind)
    tree: TreeMap[str] = TreeMap(lambda a, b: -1 if by(stats[a], stats[b]) > 0 else 1)
    return tree.put_all(copied_order(list(stats))).keys()


class Shed(Struct, frozen=True):
    """One overloaded broker's verdict: the bundle to unload (``None``: none) and why."""

    broker: str
    bundle: str | None
    why: SimpleWhy
    candidates: tuple[str, ...] = ()


def shed(reports: Mapping[str, LocalBrokerData], ranked: Ranked, settings: Settings,
         policies: ClusterPolicies, loads_topics: Callable[[str, bool], bool]
         ) -> tuple[list[Shed], dict[str, SimpleWhy]]:
    """``doLoadShedding``'s selection (module docstring): the bundles to unload, one per broker in
    ``currentLoadReports`` order, and every broker's verdict."""
    over = float(int(settings["loadBalancerBrokerOverloadedThresholdPercentage"]))
    comfort = float(int(settings["loadBalancerBrokerComfortLoadLevelPercentage"]))
    out: list[Shed] = []
    verdicts: dict[str, SimpleWhy] = {}
    for b in reports_order(list(reports)):
        local = reports[b]
        if not above(local, over):
            verdicts[b] = SimpleWhy("fine", b, percent=_top(local), threshold=over)
            continue
        kind = bottleneck(local)
        if not local.lastStats:
            verdicts[b] = SimpleWhy("no-bundles", b, kind, _top(local), over)
            continue
        order = sorted_bundles(local, kind)
        if len(order) == 1:
            verdicts[b] = SimpleWhy("sole-bundle", b, kind, _top(local), over, names=(order[0],))
            continue
        first = order[0]
        ns = namespace_of(first)
        cands = [x for _, x in final_candidates(ns, ns, ranked, policies, loads_topics)]
        roomy = tuple(x for x in cands if below(reports[x], comfort))
        if roomy:
            why = SimpleWhy("overloaded", b, kind, _top(local), over, len(order), (first, *roomy))
            out.append(Shed(b, first, why, tuple(cands)))
        else:
            why = SimpleWhy("no-room", b, kind, _top(local), comfort, len(order), (first,))
        verdicts[b] = why
    return out, verdicts


def _top(local: LocalBrokerData) -> float:
    """The highest of the four percentages ``isAboveLoadLevel`` reads."""
    return max(u.percent for u in (local.bandwidthOut, local.bandwidthIn, local.cpu,
                                   local.directMemory))


def unload_order(selected: Sequence[Shed]) -> list[Shed]:
    """``namespaceBundlesToBeUnloaded`` (a ``HashMap`` keyed by resource unit), walked."""
    by_unit = {unit(s.broker): s for s in selected}
    return [by_unit[u] for u in java_hash_order(by_unit)]
