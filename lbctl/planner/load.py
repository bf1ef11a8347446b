"""The load the planner optimises: lbctl's load model (:mod:`lbctl.model.loadmodel`), per resource.

The planner predicts a broker's usage after moves with the model ``simulate`` runs on, so a plan
checked by ``lbctl simulate --strategy lbctl`` lands where the plan said:

* each bundle carries a **driver** per modelled resource — CPU work
  (``0.5 · msgRate / R0 + 0.5 · throughput / T0``), bytes in, bytes out — from its ``lastStats``;
* each broker's percentage of a resource moves by its own calibrated slope per unit of driver
  (``percent = base + slope · driver``): a moved bundle takes its driver away from the source, at
  the source's slope, and brings it to the destination, at the destination's — so a stronger host
  (a smaller slope) takes more traffic for the same usage, and a heterogeneous cluster is balanced
  on each broker's limiting resource, not on equal traffic. For a homogeneous cluster with no idle
  usage this is the estimate ``recommend`` prints as "usage after" (a broker's usage shared among
  its bundles in proportion to their traffic, a moved bundle carrying its share);
* the usage the goals look at is Pulsar's weighted max resource usage
  (``LocalBrokerData.getMaxResourceUsageWithWeight``, the load-balancer weights): the weighted CPU,
  bandwidth-in and bandwidth-out terms follow traffic; direct memory counts only when weighted, and
  then as reported (it does not follow traffic in the model, as in the simulator), like any
  resource whose limit is unknown.

A broker starts from its **reported** percentages — with a history, weighed against its own fit at
the traffic it carries (:meth:`LoadModel.now`: a report is one noisy sample, the fit averages many;
on one snapshot the fit reproduces the report) — and only the change is predicted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from types import MappingProxyType

from lbctl.config import Settings
from lbctl.model.cluster import ClusterState
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats, ResourceUsage, java_max
from lbctl.model.loadmodel import MODELLED, LoadModel
from lbctl.records import replace

#: the resources that follow traffic, in the order of every per-resource tuple here
RESOURCES = MODELLED
_ZERO = NamespaceBundleStats()
Vector = tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class BrokerTerms:
    """One broker's weighted usage as a function of the traffic it carries.

    ``now[r]`` is the weighted fraction of resource ``r`` now (``-inf`` when it does not count:
    weight 0 or no limit — then it is part of ``floor``), ``per_unit[r]`` the weighted fraction one
    unit of driver adds. ``floor`` is the largest weighted term that does not follow traffic.
    """

    name: str
    floor: float
    now: Vector
    per_unit: Vector

    def usage(self, delta: Sequence[float] = (0.0, 0.0, 0.0)) -> float:
        """The weighted max usage (fraction) after ``delta`` driver units arrive (or leave)."""
        u = self.floor
        for r in range(3):
            t = self.now[r]
            if t != -math.inf:
                t += self.per_unit[r] * delta[r]
                if t > u:
                    u = t
        return u

    def resource(self, r: int, delta: float = 0.0) -> float:
        """One weighted term after ``delta`` (``-inf`` when the resource does not count)."""
        t = self.now[r]
        return t if t == -math.inf else t + self.per_unit[r] * delta


@dataclass(frozen=True)
class LoadView:
    """Brokers with their usage terms, and every bundle with its owner, driver and figures.

    Bundles are parallel lists (a 200,000-bundle cluster makes no object per bundle).
    """

    brokers: tuple[str, ...]
    terms: tuple[BrokerTerms, ...]
    bundles: tuple[str, ...]
    owner: tuple[int, ...]
    drivers: tuple[Vector, ...]
    throughput: tuple[float, ...]
    msg_rate: tuple[float, ...]
    topics: tuple[int, ...]
    connections: tuple[int, ...]
    broker_topics: tuple[int, ...]
    weights: tuple[float, float, float, float]  # cpu, directMemory, bandwidthIn, bandwidthOut
    percents: tuple[Mapping[str, float], ...]  # each broker's reported resource percentages
    model: LoadModel
    driver_totals: Vector = (0.0, 0.0, 0.0)  # every bundle's drivers, summed

    def index(self) -> dict[str, int]:
        return {b: j for j, b in enumerate(self.brokers)}

    def usages(self) -> list[float]:
        return [t.usage() for t in self.terms]

    def after(self, moves: Iterable[tuple[int, int]]) -> list[list[float]]:
        """Each broker's driver change after ``moves`` (bundle index, destination index)."""
        delta = [[0.0, 0.0, 0.0] for _ in self.brokers]
        for i, dst in moves:
            src = self.owner[i]
            d = self.drivers[i]
            for r in range(3):
                delta[src][r] -= d[r]
                delta[dst][r] += d[r]
        return delta

    def usages_after(self, moves: Iterable[tuple[int, int]]) -> list[float]:
        delta = self.after(moves)
        return [t.usage(delta[j]) for j, t in enumerate(self.terms)]

    def resource_percents_after(self, moves: Iterable[tuple[int, int]]) -> list[dict[str, float]]:
        """Each broker's modelled resource percentages (unweighted) after ``moves``."""
        delta = self.after(moves)
        out = []
        for j, b in enumerate(self.brokers):
            pct = dict(self.percents[j])
            fits = self.model.fits.get(b, {})
            for r, res in enumerate(RESOURCES):
                fit = fits.get(res)
                if fit is not None:
                    pct[res] = pct[res] + fit.slope * delta[j][r]
            out.append(pct)
        return out


def canonical(state: ClusterState) -> ClusterState:
    """``state`` with its brokers, each broker's bundles and the topics in name order.

    The planner numbers brokers and bundles in the order it reads them, and every tie (two
    bundles of one cost, two equally loaded destinations, two equal-cost optima of the exact
    model) goes to the lower number; reading them in name order makes the plan a function of the
    cluster, not of how the file happened to list it. A state already in order is returned as is
    (one pass over the names)."""
    names = list(state.brokers)
    ordered = names == sorted(names) and list(state.topics) == sorted(state.topics) and all(
        _in_order(rep.lastStats) and _in_order(rep.bundles) for rep in state.brokers.values())
    if ordered:
        return state
    reports = {b: replace(state.brokers[b], bundles=tuple(sorted(state.brokers[b].bundles)),
                          lastStats=MappingProxyType(dict(sorted(
                              state.brokers[b].lastStats.items()))))
               for b in sorted(names)}
    return replace(state, brokers=MappingProxyType(reports),
                   topics=MappingProxyType(dict(sorted(state.topics.items()))))


def _in_order(names: Iterable[str]) -> bool:
    prev = ""
    for x in names:
        if x < prev:
            return False
        prev = x
    return True


def carried(state: ClusterState) -> tuple[dict[str, str], dict[str, NamespaceBundleStats]]:
    """Bundle → owner and bundle → stats, as the simulator reads a snapshot: a broker owns the
    bundles of its ``lastStats`` and ``bundles`` (the first broker to list one), a bundle listed
    without stats carries nothing."""
    stats: dict[str, NamespaceBundleStats] = {}
    owner: dict[str, str] = {}
    for rep in state.brokers.values():
        for x in rep.bundles:
            stats.setdefault(x, _ZERO)
        stats.update(rep.lastStats)
    for broker, rep in state.brokers.items():
        for x in (*rep.lastStats, *rep.bundles):
            owner.setdefault(x, broker)
    return owner, stats


def calibrate(state: ClusterState, idle_usage: float | None = None) -> LoadModel:
    """The simulator's calibration of ``state`` (:meth:`LoadModel.calibrate`)."""
    return LoadModel.calibrate(state, _by_broker(state, *carried(state)), idle_usage)


def _by_broker(state: ClusterState, owner: Mapping[str, str],
               stats: Mapping[str, NamespaceBundleStats]) -> dict[str, list[NamespaceBundleStats]]:
    by_broker: dict[str, list[NamespaceBundleStats]] = {b: [] for b in state.brokers}
    for x, b in owner.items():
        by_broker[b].append(stats[x])
    return by_broker


def build(state: ClusterState, settings: Settings, model: LoadModel | None = None) -> LoadView:
    """The planner's view of ``state``: ``model`` (default: calibrated on ``state``) gives each
    broker's slopes; brokers the model does not know are calibrated from their report."""
    owner_of, stats = carried(state)
    carried_by = _by_broker(state, owner_of, stats)
    if model is None:
        model = LoadModel.calibrate(state, carried_by)
    weights = settings.weights4()
    wcpu, wdm, win, wout = weights
    res_weight = (wcpu, win, wout)
    brokers = tuple(state.brokers)
    index = {b: j for j, b in enumerate(brokers)}

    names = tuple(owner_of)
    drivers, tps, rates, topics, conns, totals = _columns(
        [stats[x] for x in names], model.rate_weight, model.throughput_weight)
    owner = tuple(index[owner_of[x]] for x in names)

    for b, rep in state.brokers.items():
        if b not in model:
            model.add_broker(b, rep, carried_by[b])
    terms = []
    percents = []
    broker_topics = []
    for b, rep in state.brokers.items():
        fits = model.fits[b]
        pct = percents_now(model, b, rep)
        percents.append(pct)
        fixed = [pct["directMemory"] * wdm]
        now = [-math.inf, -math.inf, -math.inf]
        per_unit = [0.0, 0.0, 0.0]
        for r, res in enumerate(RESOURCES):
            fit = fits.get(res)
            if fit is None or res_weight[r] <= 0:
                fixed.append(pct[res] * res_weight[r])
            else:
                now[r] = pct[res] * res_weight[r] / 100
                per_unit[r] = fit.slope * res_weight[r] / 100
        floor = java_max(*fixed) / 100
        terms.append(BrokerTerms(b, floor, (now[0], now[1], now[2]),
                                 (per_unit[0], per_unit[1], per_unit[2])))
        broker_topics.append(rep.numTopics or sum(s.topics for s in carried_by[b]))
    return LoadView(brokers, tuple(terms), names, owner, drivers, tps, rates, topics, conns,
                    tuple(broker_topics), weights, tuple(percents), model, totals)


def percents_now(model: LoadModel, broker: str, rep: LocalBrokerData) -> dict[str, float]:
    """A broker's resource percentages on the load model's estimate of now
    (:meth:`LoadModel.now` for each modelled resource: a report is one noisy sample), the
    figures a plan is made on."""
    pct = rep.resource_percents()
    d = model.drivers(rep.lastStats.values()) if model.leans(broker) else None
    for res in model.fits.get(broker, {}):
        pct[res] = model.now(broker, res, pct[res], None if d is None else d.get(res))
    return pct


def _columns(stats: Sequence[NamespaceBundleStats], wr: float, wt: float) -> tuple[
        tuple[Vector, ...], tuple[float, ...], tuple[float, ...], tuple[int, ...],
        tuple[int, ...], Vector]:
    """Per bundle: drivers, throughput, message rate, topics, connections (columns computed
    with numpy: a 200,000-bundle cluster is one pass over the stats), and the driver totals."""
    import numpy as np

    if not stats:
        return (), (), (), (), (), (0.0, 0.0, 0.0)
    get = attrgetter("msgRateIn", "msgRateOut", "msgThroughputIn", "msgThroughputOut",
                     "topics", "producerCount", "consumerCount")
    a = np.array([get(s) for s in stats], dtype=float)
    rate = a[:, 0] + a[:, 1]
    tp = a[:, 2] + a[:, 3]
    cpu = wr * rate + wt * tp
    drivers = tuple(zip(cpu.tolist(), a[:, 2].tolist(), a[:, 3].tolist(), strict=True))
    totals = (float(cpu.sum()), float(a[:, 2].sum()), float(a[:, 3].sum()))
    return (drivers, tuple(tp.tolist()), tuple(rate.tolist()),
            tuple(int(t) for t in a[:, 4].tolist()),
            tuple(int(c) for c in (a[:, 5] + a[:, 6]).tolist()), totals)


def with_moves(state: ClusterState, model: LoadModel,
               moves: Sequence[tuple[str, str, str]]) -> ClusterState:
    """``state`` as it will be once ``moves`` (bundle, source, destination) are carried out, by
    the planner's load model: a source that still reports a moved bundle loses it (its stats and,
    per resource, its slope times the bundle's driver), a destination that does not report it
    yet gains it. Reports already showing a move are left alone."""
    if not moves:
        return state
    stats_of: dict[str, NamespaceBundleStats] = {}
    for rep in state.brokers.values():
        stats_of.update(rep.lastStats)
    out: dict[str, dict[str, NamespaceBundleStats]] = {}
    for x, src, dst in moves:
        st = stats_of.get(x, _ZERO)
        if src in state.brokers and x in state.brokers[src].lastStats:
            out.setdefault(src, dict(state.brokers[src].lastStats)).pop(x, None)
        if dst in state.brokers and x not in state.brokers[dst].lastStats:
            out.setdefault(dst, dict(state.brokers[dst].lastStats))[x] = st
    reports = dict(state.brokers)
    for b, stats in out.items():
        old = state.brokers[b]
        new = old.with_stats(stats)
        before = model.drivers(old.lastStats.values())
        after = model.drivers(stats.values())
        changes: dict[str, ResourceUsage] = {}
        fits = model.fits.get(b, {})
        for res in RESOURCES:
            fit = fits.get(res)
            usage: ResourceUsage = getattr(old, res)
            if fit is None or usage.limit <= 0:
                continue
            pct = usage.percent + fit.slope * (after.get(res) - before.get(res))
            changes[res] = ResourceUsage(pct / 100 * usage.limit, usage.limit)
        reports[b] = replace(new, **changes)
    return replace(state, brokers=MappingProxyType(reports))
