"""lbctl's load model: what a broker's resource usage becomes when its bundles change.

Pulsar measures usage; it never predicts it. A closed-loop simulation (:mod:`lbctl.simulate`) and
lbctl's planner (:mod:`lbctl.planner`) have to, so this is lbctl's own model, one for both, stated
here and in the README ("Simulation: the load model"):

* Three resources follow the traffic a broker carries; the others stay as reported:

  ==============  =====================================================================
  resource        driver (summed over the bundles the broker owns)
  ==============  =====================================================================
  cpu             ``0.5 · msgRate / R0 + 0.5 · throughput / T0`` — message rate and bytes
                  count half each, normalised by the starting snapshot's cluster totals
                  ``R0`` (msg/s in + out) and ``T0`` (bytes/s in + out)
  bandwidthIn     ``msgThroughputIn``
  bandwidthOut    ``msgThroughputOut``
  memory,         held at the reported value (JVM heap and direct memory do not track
  directMemory    traffic closely, and both weigh 0 by default)
  ==============  =====================================================================

* Each broker's percentage of a resource is ``base + slope · driver``, calibrated from the
  starting snapshot so that it reproduces every broker's reported percentage exactly:

  - ``base`` (usage with no traffic) is one figure per resource for the cluster: the intercept of
    a least-squares line through the brokers' (driver, percent) points, clamped to
    ``[0, lowest broker's percent]`` — or ``--idle-usage`` when given (also clamped);
  - a broker carrying traffic gets ``slope = (percent − base) / driver``: its own cost per unit of
    traffic, which keeps heterogeneous hosts heterogeneous (a strong host stays cheaper) — but
    never less than a tenth of the cluster's slope (:data:`MIN_SLOPE_SHARE`; its base is then
    lowered, to 0 at least, so that its report is still reproduced): a broker whose report sits
    at the fitted idle usage would otherwise carry any traffic for free;
  - a broker carrying nothing keeps its own reported percent as its base and takes the cluster's
    slope ``Σ(percent − base) / Σ driver``.

* Limits stay per broker (``limit`` is kept; ``usage = percent / 100 · limit``), so Pulsar's
  32-bit float percentage arithmetic applies to the simulated reports as to real ones. Resources
  with ``limit <= 0`` (reported as 0 %) stay so.

Brokers that appear later in a trace are calibrated the same way from their first report, against
the cluster's base and slope.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lbctl.model.cluster import ClusterState
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats, ResourceUsage
from lbctl.records import replace

#: resources whose usage follows the carried traffic
MODELLED = ("cpu", "bandwidthIn", "bandwidthOut")
#: a broker carrying traffic never costs less per unit of it than this share of the cluster's slope
MIN_SLOPE_SHARE = 0.1


@dataclass(frozen=True, slots=True)
class Fit:
    """``percent = base + slope · driver`` for one broker and one resource."""

    base: float
    slope: float

    def percent(self, driver: float) -> float:
        return self.base + self.slope * driver


@dataclass(frozen=True, slots=True)
class Drivers:
    """A broker's three traffic drivers (cpu work, bytes in, bytes out)."""

    cpu: float = 0.0
    bandwidthIn: float = 0.0
    bandwidthOut: float = 0.0

    def get(self, resource: str) -> float:
        value: float = getattr(self, resource)
        return value


class LoadModel:
    """Calibrated per broker from a snapshot; turns carried bundle stats into a load report."""

    def __init__(self, rate_weight: float, throughput_weight: float,
                 cluster: Mapping[str, Fit]):
        self.rate_weight = rate_weight
        self.throughput_weight = throughput_weight
        self.cluster = dict(cluster)  # per resource: cluster base and slope
        self.fits: dict[str, dict[str, Fit]] = {}

    # --- drivers ------------------------------------------------------------------------------
    def drivers(self, stats: Iterable[NamespaceBundleStats]) -> Drivers:
        cpu = tin = tout = 0.0
        wr, wt = self.rate_weight, self.throughput_weight
        for s in stats:
            tin += s.msgThroughputIn
            tout += s.msgThroughputOut
            cpu += wr * (s.msgRateIn + s.msgRateOut) + wt * (s.msgThroughputIn + s.msgThroughputOut)
        return Drivers(cpu, tin, tout)

    # --- calibration -------------------------------------------------------------------------
    @classmethod
    def calibrate(
        cls,
        state: ClusterState,
        carried: Mapping[str, Iterable[NamespaceBundleStats]],
        idle_usage: float | None = None,
    ) -> LoadModel:
        """Fit the model to ``state``: ``carried[broker]`` is the stats of the bundles it owns.

        ``idle_usage`` (percent) replaces the fitted base of every resource when given.
        """
        all_stats = [s for b in state.brokers for s in carried.get(b, ())]
        r0 = sum(s.msgRateIn + s.msgRateOut for s in all_stats)
        t0 = sum(s.msgThroughputIn + s.msgThroughputOut for s in all_stats)
        if r0 > 0 and t0 > 0:
            wr, wt = 0.5 / r0, 0.5 / t0
        elif r0 > 0:
            wr, wt = 1.0 / r0, 0.0
        elif t0 > 0:
            wr, wt = 0.0, 1.0 / t0
        else:
            wr = wt = 0.0
        model = cls(wr, wt, {})
        drivers = {b: model.drivers(carried.get(b, ())) for b in state.brokers}
        for res in MODELLED:
            points = [(drivers[b].get(res), getattr(rep, res).percent)
                      for b, rep in state.brokers.items() if getattr(rep, res).limit > 0]
            model.cluster[res] = _cluster_fit(points, idle_usage)
        for broker, report in state.brokers.items():
            model.add_broker(broker, report, drivers[broker])
        return model

    def add_broker(self, broker: str, report: LocalBrokerData, drivers: Drivers) -> None:
        """Calibrate one broker from its report and the traffic it carries in it."""
        fits: dict[str, Fit] = {}
        for res in MODELLED:
            usage: ResourceUsage = getattr(report, res)
            if usage.limit <= 0:
                continue
            pct = usage.percent
            x = drivers.get(res)
            cluster = self.cluster.get(res, Fit(0.0, 0.0))
            if x > 0:
                base = min(max(cluster.base, 0.0), pct) if pct >= 0 else pct
                slope = (pct - base) / x
                least = MIN_SLOPE_SHARE * cluster.slope
                if slope < least and pct > 0:
                    # at (or just above) the idle usage while carrying traffic: not free; take a
                    # share of the cluster's slope and lower the base to reproduce the report
                    slope = min(least, pct / x)
                    base = pct - slope * x
                fits[res] = Fit(base, slope)
            else:
                fits[res] = Fit(pct, cluster.slope)
        self.fits[broker] = fits

    def __contains__(self, broker: object) -> bool:
        return broker in self.fits

    # --- prediction ---------------------------------------------------------------------------
    def percents(self, broker: str, drivers: Drivers) -> dict[str, float]:
        """Modelled percentages of the traffic-driven resources of ``broker``."""
        return {res: fit.percent(drivers.get(res)) for res, fit in self.fits[broker].items()}

    def report(
        self, broker: str, previous: LocalBrokerData, stats: Mapping[str, NamespaceBundleStats]
    ) -> LocalBrokerData:
        """The report ``broker`` would compute now, carrying ``stats``.

        Aggregates, ``bundles`` and gains/losses come from ``LocalBrokerData.update`` semantics
        (relative to ``previous``, the last report written); resource usages from the model, with
        each resource's limit unchanged. ``lastUpdate`` is left to the report-update rule.
        """
        new = previous.with_stats(stats)
        pct = self.percents(broker, self.drivers(stats.values()))
        changes: dict[str, ResourceUsage] = {}
        for res, p in pct.items():
            limit = getattr(previous, res).limit
            changes[res] = ResourceUsage(p / 100.0 * limit, limit)
        return replace(new, **changes) if changes else new

    def describe(self) -> dict[str, object]:
        """The calibration, for JSON output: cluster base/slope and every broker's fit."""
        return {
            "cpuDriver": {"perMsgRate": self.rate_weight, "perThroughput": self.throughput_weight},
            "cluster": {r: {"base": f.base, "slope": f.slope} for r, f in self.cluster.items()},
            "brokers": {b: {r: {"base": f.base, "slope": f.slope} for r, f in fits.items()}
                        for b, fits in self.fits.items()},
        }


def _cluster_fit(points: list[tuple[float, float]], idle_usage: float | None) -> Fit:
    """Cluster base (least-squares intercept or ``idle_usage``, clamped to ``[0, min percent]``)
    and slope (``Σ(percent − base) / Σ driver`` over brokers carrying traffic)."""
    if not points:
        return Fit(0.0, 0.0)
    lowest = min(p for _, p in points)
    if idle_usage is not None:
        base = idle_usage
    else:
        xs = [x for x, _ in points]
        n = len(points)
        mx = sum(xs) / n
        sxx = sum((x - mx) ** 2 for x in xs)
        if sxx > 0:
            my = sum(p for _, p in points) / n
            slope = sum((x - mx) * (p - my) for x, p in points) / sxx
            base = my - slope * mx
        else:
            base = 0.0
    base = min(max(base, 0.0), max(lowest, 0.0))
    loaded = [(x, p) for x, p in points if x > 0]
    total = sum(x for x, _ in loaded)
    slope = sum(p - base for _, p in loaded) / total if total > 0 else 0.0
    return Fit(base, max(slope, 0.0))

