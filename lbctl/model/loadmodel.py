"""lbctl's load model: what a broker's resource usage becomes when its bundles change.

Pulsar measures usage; it never predicts it. lbctl's planner (:mod:`lbctl.planner`), the "usage
after" of its plans and the simulator's reports (:mod:`lbctl.simulate`) have to, so this is lbctl's
own model, one for all of them, stated here and in ``docs/propose.md`` ("The load model"):

* Three resources follow the traffic a broker carries; the others stay as reported:

  ==============  =====================================================================
  resource        driver (summed over the bundles the broker owns)
  ==============  =====================================================================
  cpu             ``a · msgRate + c · throughput`` (msg/s in + out, bytes/s in + out):
                  a per-message and a per-byte cost, in Pulsar's CPU units (percent of
                  one core), fitted over the fleet
  bandwidthIn     ``msgThroughputIn``
  bandwidthOut    ``msgThroughputOut``
  memory,         held at the reported value (JVM heap and direct memory do not track
  directMemory    traffic closely)
  ==============  =====================================================================

* **Capacity from the reported limits.** Pulsar reports a usage and a limit per resource
  (``SystemResourceUsage``: CPU as percent of one core summed over cores, ``limit = 100 · cores``;
  bandwidth in Kbit/s against the NIC speed), so a broker's percentage is
  ``idle_b + m_b · k · driver / limit · 100``: the fleet's cost ``k`` per unit of driver, divided
  by the broker's own capacity, times the broker's own cost factor ``m_b`` (a host generation,
  firmware, neighbours) — a 32-core host takes four times an 8-core host's traffic for the same
  percentage before anything is learnt about it.
* **The fleet's costs** (``idle``, ``a``, ``c``; for bandwidth ``idle``, ``k``) come from a
  non-negative least-squares fit of every report's absolute usage on ``(limit, msgRate,
  throughput)`` — one report per broker for a snapshot, every report of a sequence for a history.
* **Each broker's fit** (``percent = base + slope · driver``):

  - **learnt** from its own history when it has :data:`MIN_POINTS` reports whose driver varied by
    :data:`MIN_SPREAD` of its mean: least squares shrunk toward its host class's slope (the
    class's cost and spread by empirical Bayes over its brokers' slopes) and
    (with :data:`MIN_IDLE_BROKERS` such brokers) its intercept toward the fleet's idle usage
    (:meth:`LoadModel._base_priors`, empirical Bayes), the slope kept within
    :data:`COST_RANGE` of its capacity prior; its **out-of-sample error** is the RMS error of a fit
    on its earlier reports predicting its latest quarter;
  - otherwise **from its latest report**: idle usage the fleet's (at most the broker's percent),
    the slope that reproduces the report (within :data:`COST_RANGE` of the prior), or for a broker
    carrying nothing its report as base and the prior slope — unless its CPU traffic is too small
    for its slope to be told from its idle usage (:func:`_identified`) and brokers of its host
    class (its reported CPU limit) show the class's cost in theirs: then it **borrows** that cost
    (:meth:`LoadModel._report_classes`, marked in its :class:`Quality`). With a history such a
    broker is **thin** when it has fewer than :data:`MIN_POINTS` reports (Cruise Control's
    ``min.valid.partition.ratio`` idea: too little data to act on) — unless it carries nothing,
    when its report is its idle usage and its limits its slope, or other brokers of its host
    class (its reported limit) have learnt the class's cost, which its slope then leans on with
    the class's spread as its error. A steady broker writes few reports (Pulsar's
    ``needBrokerDataUpdate``): kept thin, it took no bundle for most of a closed loop
    (``benchmarks/plans_on_hardware.py --loop-seeds 10``: within 3 cycles of a disturbance 21 ->
    27 of 40 at 12 brokers, 17 -> 24 at 30; bundles moved twice 138 -> 124 and 162 -> 166,
    worsening cycles 10 -> 14 and 24 -> 29; one-shot plans unchanged).

* **Refitted as reports arrive** (:meth:`LoadModel.observe`): a report a learnt fit misses by more
  than :data:`CONTRADICTION` standard deviations (and :data:`CONTRADICTION_POINTS` points) discards
  the broker's older reports — the host changed (a restart, a noisy neighbour) — and the broker is
  calibrated again from what follows.
* **Uncertainty**: per broker, the relative error of its slope (:class:`Quality`); the model's
  :meth:`~LoadModel.margin` (the error a plan must leave room for) is the 95th percentile of the
  learnt brokers' out-of-sample misses, pooled, else :data:`SNAPSHOT_MARGIN` for a calibration
  from one snapshot, which cannot measure its own error.

Limits stay per broker (``usage = percent / 100 · limit``), so Pulsar's 32-bit float percentage
arithmetic applies to the simulated reports as to real ones; resources with ``limit <= 0``
(reported as 0 %) stay so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from lbctl.model.cluster import ClusterState
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats, ResourceUsage
from lbctl.records import replace

#: resources whose usage follows the carried traffic
MODELLED = ("cpu", "bandwidthIn", "bandwidthOut")
#: a broker's own cost per unit of traffic stays within this factor of its capacity prior
COST_RANGE = 3.0
#: reports a broker needs before its own fit is learnt
MIN_POINTS = 6
#: ... and how much its driver must vary over them (share of its mean)
MIN_SPREAD = 0.10
#: reports kept per broker (the newest)
WINDOW = 240
#: a report further than this many standard deviations from a learnt fit contradicts it …
CONTRADICTION = 4.0
#: … when it is also this many points away
CONTRADICTION_POINTS = 3.0
#: the error a plan leaves room for when the model was calibrated on one snapshot (fraction)
SNAPSHOT_MARGIN = 0.02
#: the relative error of a predicted change of a broker's usage while fewer than half the brokers
#: have a fit of their own (:meth:`LoadModel.change_error`): the plans of a closed loop's first
#: cycles, made on one or two reports per broker, missed the brokers they moved by 8-17 points
#: against the 2 points of :data:`SNAPSHOT_MARGIN`, up to the whole change they predicted
EARLY_CHANGE_ERROR = 0.5
#: the least margin a learnt model is given (fraction): report noise, float32 rounding
LEAST_MARGIN = 0.005
#: the latest reports the fleet's costs are fitted on
FLEET_POINTS = 3000
#: a broker's own slope counts toward its class's prior when its standard error is below this
#: share of it
CLASS_EVIDENCE = 0.25
#: the least and most a class's brokers are taken to differ (relative sd of their costs)
CLASS_SPREAD = (0.05, 0.3)
#: how far a broker's cost may be from the fleet's when its class has learnt nothing (relative sd)
FLEET_SPREAD = 0.4
#: the least residual (points) a broker's line is taken to have: report noise
NOISE_FLOOR = 0.5
#: how much brokers of one host class are taken to differ in CPU cost per unit of the right
#: driver (relative sd) when the byte-to-message ratio is learnt (:func:`_byte_ratio`)
CLASS_COST_SD = 0.2
#: grid steps over the byte-to-message ratio's range before its golden-section search
RATIO_GRID = 60
#: a learnt ``log ratio`` this close to its search's range's edge was not identified (a tenth
#: of a grid step: the golden-section search's own resolution is far finer)
RATIO_EDGE = 0.02
#: the step (in ``log ratio``) of the score's second difference that gives the ratio's error
RATIO_STEP = 0.05
#: brokers with a line of their own the fleet needs before their idle usages are pooled
#: (:meth:`LoadModel._base_priors`)
MIN_IDLE_BROKERS = 3
#: the least and most the brokers' idle usages are taken to differ (sd, points of percent)
IDLE_SPREAD = (0.3, 50.0)
#: the least noise a report is taken to have (points of percent): float32 rounding
LEAST_NOISE = 0.05
#: golden-section steps for a pooled spread (a thousandth of its log range)
POOL_STEPS = 15
#: how far a host's idle usage may be from the fleet's (sd, points of percent) where no broker
#: has a line of its own to measure it by (:meth:`LoadModel._report_classes`): a few points of
#: its CPU (GC, ZooKeeper sessions, the JVM), which one report cannot tell from traffic
REPORT_IDLE_SD = 3.0


@dataclass(frozen=True, slots=True)
class Fit:
    """``percent = base + slope · driver`` for one broker and one resource."""

    base: float
    slope: float

    def percent(self, driver: float) -> float:
        return self.base + self.slope * driver


@dataclass(frozen=True, slots=True)
class Quality:
    """How far one broker's fit can be trusted (its weighted-max resource: CPU when modelled)."""

    points: int  # reports it was fitted on
    learnt: bool  # fitted on its own history (else on its latest report and the fleet's costs)
    error: float | None  # out-of-sample RMS error, points of percent (learnt fits only)
    slope_error: float  # relative uncertainty of its slope
    thin: bool = False  # a history was given but holds too little of this broker to act on
    borrowed: bool = False  # its slope is its host class's (its own report could not tell it)


@dataclass(frozen=True, slots=True)
class Drivers:
    """A broker's three traffic drivers (cpu work, bytes in, bytes out)."""

    cpu: float = 0.0
    bandwidthIn: float = 0.0
    bandwidthOut: float = 0.0

    def get(self, resource: str) -> float:
        value: float = getattr(self, resource)
        return value


@dataclass(frozen=True, slots=True)
class _Point:
    """One report of one broker: when, the traffic it carried, and each resource's figures."""

    at: int
    msgs: float
    tin: float
    tout: float
    percent: tuple[float, float, float]  # per MODELLED resource (nan: no limit)
    limit: tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class _Pooled:
    """What the brokers' lines say together: idle usage ~ N(``base``, ``spread``²) (points) and
    a report's noise, a share ``noise`` of its figure."""

    base: float
    spread: float
    noise: float


class LoadModel:
    """Per broker fits of the traffic-driven resources, learnt from one snapshot or a history."""

    def __init__(self, rate_weight: float, throughput_weight: float,
                 cluster: Mapping[str, Fit]):
        self.rate_weight = rate_weight  # CPU units per msg/s (in + out)
        self.throughput_weight = throughput_weight  # CPU units per byte/s (in + out)
        #: per resource: the fleet's idle usage (percent) and cost ``k`` per unit of driver
        #: (the resource's usage units; a broker's prior slope is ``100 · k / limit``)
        self.cluster = dict(cluster)
        self.fits: dict[str, dict[str, Fit]] = {}
        self.quality: dict[str, Quality] = {}
        self.history = False  # fitted over a sequence (thin brokers are marked)
        self._points: dict[str, list[_Point]] = {}
        self._sigma = 1.0  # the fleet fit's RMS residual (points)
        self._misses: dict[str, list[float]] = {}  # learnt brokers' out-of-sample misses
        self._relative: dict[str, list[float]] = {}  # ... each a share of the usage it missed
        #: per (resource index, limit): a host class's cost per unit of driver and its spread
        self._classes: dict[tuple[int, float], tuple[float, float]] = {}
        #: ... those whose spread was measured (enough learnt brokers), not taken as the widest
        self._measured: set[tuple[int, float]] = set()
        #: per (resource index, limit): a host class's cost and relative error from its loaded
        #: brokers' latest reports, for a broker whose own report cannot tell its slope
        #: (:meth:`_report_classes`)
        self._borrow: dict[tuple[int, float], tuple[float, float]] = {}
        #: per (broker, resource index): its fit's usage at its latest report, the weight of
        #: the report against it and the report's driver (:meth:`now`)
        self._now: dict[tuple[str, int], tuple[float, float, float]] = {}
        #: per resource index: the brokers' idle usage (mean and sd, points) and the reports'
        #: relative noise, pooled over the brokers' own lines (:meth:`_base_priors`)
        self._bases: dict[int, _Pooled] = {}

    # --- drivers ------------------------------------------------------------------------------
    def drivers(self, stats: Iterable[NamespaceBundleStats]) -> Drivers:
        cpu = tin = tout = 0.0
        wr, wt = self.rate_weight, self.throughput_weight
        for s in stats:
            tin += s.msgThroughputIn
            tout += s.msgThroughputOut
            cpu += wr * (s.msgRateIn + s.msgRateOut) + wt * (s.msgThroughputIn + s.msgThroughputOut)
        return Drivers(cpu, tin, tout)

    def _series(self, pts: Sequence[_Point], r: int) -> tuple[list[float], list[float]]:
        """A broker's drivers and percents of resource ``r`` over its reports with a limit."""
        xs: list[float] = []
        ys: list[float] = []
        for p in pts:
            if p.limit[r] > 0:
                xs.append(self._driver(p, r))
                ys.append(p.percent[r])
        return xs, ys

    def _driver(self, p: _Point, r: int) -> float:
        if r == 0:
            return self.rate_weight * p.msgs + self.throughput_weight * (p.tin + p.tout)
        return p.tin if r == 1 else p.tout

    # --- calibration -------------------------------------------------------------------------
    @classmethod
    def calibrate(
        cls,
        state: ClusterState,
        carried: Mapping[str, Iterable[NamespaceBundleStats]],
        idle_usage: float | None = None,
    ) -> LoadModel:
        """Fit the model to one snapshot: ``carried[broker]`` is the stats of the bundles it owns.

        ``idle_usage`` (percent) replaces the fleet's fitted idle usage of every resource."""
        points = {b: [_point(rep, list(carried.get(b, ())))] for b, rep in state.brokers.items()}
        return cls._fitted(points, idle_usage, history=False)

    @classmethod
    def learn(cls, states: Sequence[ClusterState], idle_usage: float | None = None) -> LoadModel:
        """Fit the model over a sequence of snapshots (a ``.jsonl``, Prometheus or the watcher's
        history): every broker's distinct reports (by ``lastUpdate``) are its points."""
        points: dict[str, list[_Point]] = {}
        for st in states:
            for b, rep in st.brokers.items():
                mine = points.setdefault(b, [])
                p = _point(rep, list(rep.lastStats.values()))
                if mine and mine[-1].at == p.at and p.at:
                    mine[-1] = p
                else:
                    mine.append(p)
        return cls._fitted({b: ps[-WINDOW:] for b, ps in points.items()}, idle_usage,
                           history=len(states) > 1)

    @classmethod
    def _fitted(cls, points: dict[str, list[_Point]], idle_usage: float | None,
                history: bool) -> LoadModel:
        model = cls(0.0, 0.0, {})
        model.history = history
        model._idle_usage = idle_usage
        model._points = points
        model._refit()
        return model

    _idle_usage: float | None = None
    #: the standard error of the learnt byte-to-message ratio's log (:func:`_byte_ratio`):
    #: infinite when the histories did not identify it (a calibration, thin data, no history)
    ratio_error: float = math.inf

    def _refit(self) -> None:
        """The fleet's costs over the latest :data:`FLEET_POINTS` reports, then every broker."""
        every = sorted((p for ps in self._points.values() for p in ps),
                       key=lambda p: -p.at)[:FLEET_POINTS]
        cpu_points = [p for p in every if p.limit[0] > 0]
        cpu_idle, a, c, sigma = _fleet_cpu(cpu_points)
        learnt = _byte_ratio([[p for p in ps if p.limit[0] > 0] for ps in self._points.values()])
        self.ratio_error = math.inf
        if learnt is not None:  # the brokers' own histories say what a byte costs against a message
            ratio, self.ratio_error = learnt
            cpu_idle, a, c, sigma = _fleet_cpu(cpu_points, ratio)
        self.rate_weight, self.throughput_weight = a, c
        self._sigma = sigma
        for r, res in enumerate(MODELLED):
            if r == 0:
                idle, k = cpu_idle, 1.0
            else:
                idle, k = _fleet_one([(p.limit[r], self._driver(p, r), p.percent[r])
                                      for p in every if p.limit[r] > 0])
            if self._idle_usage is not None:  # never above a broker's reported percent
                idle = min([self._idle_usage] + [p.percent[r] for p in every if p.limit[r] > 0])
            self.cluster[res] = Fit(idle, k)
        series = {b: [self._series(ps, r) for r in range(len(MODELLED))]
                  for b, ps in self._points.items()}
        lines = self._lines(series)
        self._base_priors(lines)
        self._class_priors(lines)
        self._report_classes()
        for b in self._points:
            self._fit_broker(b, series[b])

    def add_broker(self, broker: str, report: LocalBrokerData,
                   stats: Iterable[NamespaceBundleStats]) -> None:
        """Calibrate a broker the model has not seen from its report and the bundles it
        carries in it."""
        self._points[broker] = [_point(report, list(stats))]
        self._fit_broker(broker)

    def observe(self, state: ClusterState) -> list[str]:
        """Take the reports of ``state`` that are new (a later ``lastUpdate``) into each broker's
        history and refit it; returns the brokers whose learnt fit a report contradicted (their
        older reports are discarded)."""
        contradicted = []
        new = False
        for b, rep in state.brokers.items():
            mine = self._points.setdefault(b, [])
            p = _point(rep, list(rep.lastStats.values()))
            if mine and p.at <= mine[-1].at:
                continue
            q = self.quality.get(b)
            if q is not None and q.learnt and self._contradicts(b, p):
                contradicted.append(b)
                mine.clear()
            mine.append(p)
            del mine[:-WINDOW]
            new = True
        if new:
            self.history = True
            self._refit()
        return contradicted

    def _contradicts(self, b: str, p: _Point) -> bool:
        q = self.quality[b]
        fit = self.fits[b].get("cpu")
        if fit is None or math.isnan(p.percent[0]):
            return False
        miss = abs(fit.percent(self._driver(p, 0)) - p.percent[0])
        sd = q.error if q.error is not None else self._sigma
        return miss > max(CONTRADICTION * sd, CONTRADICTION_POINTS)

    def _fit_broker(self, b: str,
                    series: Sequence[tuple[list[float], list[float]]] | None = None) -> None:
        """Fit one broker (``series``: its drivers and percents per resource, when known)."""
        pts = self._points[b]
        self._misses.pop(b, None)
        self._relative.pop(b, None)
        for r in range(len(MODELLED)):
            self._now.pop((b, r), None)
        last = pts[-1]
        fits: dict[str, Fit] = {}
        quality: Quality | None = None
        borrowed = False
        for r, res in enumerate(MODELLED):
            if not last.limit[r] > 0:
                continue
            fleet = self.cluster.get(res, Fit(0.0, 0.0))
            prior, spread = self._class_prior(r, last.limit[r], fleet.slope)
            pooled = self._bases.get(r)
            xs, ys = series[r] if series is not None else self._series(pts, r)
            learnt = _learnable(xs)
            err: float | None = None
            if learnt:
                fit, err, rel = _learn(xs, ys, prior, spread, pooled)
                if r == 0:
                    misses = _holdout(xs, ys, prior, spread, pooled)
                    self._misses[b] = misses
                    self._relative[b] = [m / max(abs(y), 1.0)
                                         for m, y in zip(misses, ys[-len(misses):], strict=True)]
            elif len(xs) > 1 and _spread(xs) or (r, last.limit[r]) in self._classes:
                # a line through what little it has, its slope its class's unless its own
                # reports say otherwise (a report alone cannot tell idle usage from traffic)
                # (toward the fleet's idle usage only when its class's spread was measured: with
                # one equation, a spread that is a guess — the widest, with fewer than
                # MIN_IDLE_BROKERS learnt brokers — would be outweighed by the idle usage's)
                fit, rel = _shrunk(xs, ys, prior, spread,
                                   pooled if (r, last.limit[r]) in self._measured else None)
            else:
                fit, rel = _from_report(xs[-1], ys[-1], fleet.base, prior, self._sigma)
                peers = self._borrow.get((r, last.limit[r]))
                if peers is not None and _borrows(xs[-1], ys[-1], fleet.base,
                                                  100.0 * peers[0] / last.limit[r]):
                    fit, rel = _borrowed(xs[-1], ys[-1], fleet.base, 100.0 * peers[0]
                                         / last.limit[r], peers[1])
                    borrowed = borrowed or quality is None
            fits[res] = fit
            self._now[(b, r)] = (*_anchor(xs, ys, fit), xs[-1])
            if quality is None:  # thin: few reports while carrying traffic (an empty broker's
                # report is its idle usage; a steady one's many reports pin its operating point)
                quality = Quality(len(xs), learnt, err, rel, self.history and len(xs) < MIN_POINTS
                                  and any(x > 0 for x in xs)
                                  and (r, last.limit[r]) not in self._classes, borrowed)
        self.fits[b] = fits
        self.quality[b] = quality or Quality(len(pts), False, None, 0.0, self.history)

    def _lines(self, series: Mapping[str, Sequence[tuple[list[float], list[float]]]]) -> list[
            list[tuple[list[float], list[float], float]]]:
        """Per resource, the series (drivers, percents, latest limit) of every broker whose own
        history has a line (:func:`_learnable`); ``series``: every broker's, per resource."""
        lines: list[list[tuple[list[float], list[float], float]]] = []
        for r in range(len(MODELLED)):
            lines.append([])
            for b, ps in self._points.items():
                xs, ys = series[b][r]
                if _learnable(xs):
                    lines[r].append((xs, ys, ps[-1].limit[r]))
        return lines

    def _class_priors(self, lines: Sequence[Sequence[tuple[list[float], list[float],
                                                            float]]]) -> None:
        """Per resource and reported limit (a host class: 8, 16, 32 cores; a NIC speed), the
        cost per unit of driver its brokers' own histories show and how much the brokers of the
        class differ (relative sd): the prior every broker of the class is shrunk toward.

        Empirical Bayes, like the idle usage (:meth:`_base_priors`, computed first): each
        broker's slope — its line shrunk toward the fleet's idle usage when there is one, else
        its own least squares — and the slope's variance; the class's cost and spread those
        make likeliest (:func:`_pool_normal`), so a broker whose slope is poorly known counts
        less, and the spread is the brokers' own, not their estimates' noise. The median and
        median absolute deviation it replaces took every slope as exact: with a dozen reports
        the spread of 2-4 brokers came out at its floor (5 %) where the hosts differ by ~9 %
        (measured on ``benchmarks/plans_on_hardware.py``'s clusters, seeds 101-160: in band
        51 -> 53 of 60 with 12 brokers, p95 error 3.6 -> 3.2 points; with 30 brokers, 20
        seeds, 14 -> 15 and 2.55 -> 2.35; with 5, 52 -> 50 and 5.3 -> 5.5, within the
        seeds' noise). One broker cannot show how its class differs: the widest spread."""
        self._classes = {}
        self._measured = set()
        for r, mine in enumerate(lines):
            est: dict[float, list[tuple[float, float]]] = {}
            pooled = self._bases.get(r)
            for xs, ys, limit in mine:
                if pooled is not None:
                    fit, rel = _posterior(xs, ys, 0.0, 0.0, pooled)
                    slope, se = fit.slope, rel * fit.slope
                else:
                    slope, se = _slope(xs, ys)
                if slope > 0 and se < CLASS_EVIDENCE * slope:
                    est.setdefault(limit, []).append((slope * limit / 100,
                                                      (se * limit / 100) ** 2))
            for limit, ks in est.items():
                if len(ks) >= 2:
                    mid = _median([k for k, _ in ks])
                    mid, tau = _pool_normal(ks, CLASS_SPREAD[0] * mid, CLASS_SPREAD[1] * mid)
                    spread = tau / mid
                else:
                    mid, spread = ks[0][0], CLASS_SPREAD[1]
                if len(ks) >= MIN_IDLE_BROKERS:
                    self._measured.add((r, limit))
                self._classes[(r, limit)] = (mid, min(max(spread, CLASS_SPREAD[0]),
                                                      CLASS_SPREAD[1]))

    def _report_classes(self) -> None:
        """Per reported CPU limit (a host class) without a cost learnt from histories
        (:meth:`_class_priors`), the cost its brokers' latest reports show — those whose traffic
        is large enough for their slope to be told from idle usage (:func:`_identified`) — and
        its relative error (CPU only: a NIC's idle traffic is nil next to a broker's, so one
        report tells a bandwidth slope): the estimates pooled like the classes'
        (:func:`_pool_normal`), each with its variance from :data:`REPORT_IDLE_SD` over its
        traffic.

        Why: a report is ``idle + slope · traffic``; from one report a broker carrying little
        traffic cannot tell its slope from its idle usage — a nearly idle 16-core broker came
        out at 0.035 per unit where its loaded class mates were at 0.07-0.10, and the closed
        loop's first plan sent it 14 bundles (predicted 38 %, true 82 %), corrected over the
        next cycles (``benchmarks/plans_on_hardware.py --loops 12,30 --loop-seeds 10``). Brokers
        reporting the same limits are the same hardware: such a broker borrows its class's
        cost (:func:`_borrowed`), and keeps its own (highly uncertain) where it has no peer."""
        self._borrow = {}
        for r in range(1):  # CPU: bytes in and out carry no idle usage to speak of
            fleet = self.cluster.get(MODELLED[r], Fit(0.0, 0.0))
            est: dict[float, list[tuple[float, float]]] = {}
            for ps in self._points.values():
                p = ps[-1]
                limit = p.limit[r]
                if not limit > 0 or (r, limit) in self._classes:
                    continue
                x, pct = self._driver(p, r), p.percent[r]
                if _identified(x, pct, fleet.base):  # its fit as its own (:func:`_from_report`)
                    slope = _from_report(x, pct, fleet.base, 100.0 * fleet.slope / limit,
                                         self._sigma)[0].slope
                    est.setdefault(limit, []).append((slope * limit / 100,
                                                      (REPORT_IDLE_SD / x * limit / 100) ** 2))
            for limit, ks in est.items():
                if len(ks) >= 2:
                    mid = _median([k for k, _ in ks])
                    mid, tau = _pool_normal(ks, CLASS_SPREAD[0] * mid, CLASS_SPREAD[1] * mid)
                else:
                    mid, tau = ks[0][0], CLASS_SPREAD[1] * ks[0][0]
                # the class's cost is known to its mean's error; a broker of it differs by tau
                var = tau * tau + 1.0 / sum(1.0 / (v + tau * tau) for _, v in ks)
                self._borrow[(r, limit)] = (mid, min(1.0, math.sqrt(var) / mid))

    def _base_priors(self, lines: Sequence[Sequence[tuple[list[float], list[float],
                                                           float]]]) -> None:
        """Per resource, what the brokers' own lines say of idle usage across the fleet: each
        broker's least-squares intercept (reports weighted by the pooled relative noise) and its
        variance, and the mean and spread of the true intercepts that make those likeliest
        (empirical Bayes: each estimate ~ N(mean, spread² + its variance), the spread by maximum
        likelihood). Every broker's line is then shrunk toward it (:func:`_shrunk`).

        Why: a broker's slope from a dozen reports whose traffic varied by a fifth is uncertain
        by 3-5 % at 2 % report noise, because its intercept and slope trade off; where its line
        meets zero traffic is known far better from the fleet (idle usage is a few points on
        every host) — a 150 % broker shedding to 50 % is then predicted from its level, not
        from its slope alone. The pool is not a class's: idle usage is a share of the host's
        cores whatever their number. Needs :data:`MIN_IDLE_BROKERS` brokers with a line (``lines``:
        per resource, each such broker's drivers and percents)."""
        self._bases = {}
        for r, mine in enumerate(lines):
            if len(mine) < MIN_IDLE_BROKERS:
                continue
            pooled = _pool_intercepts([(xs, ys) for xs, ys, _ in mine])
            if pooled is not None:
                self._bases[r] = pooled

    def _class_prior(self, r: int, limit: float, fleet_k: float) -> tuple[float, float]:
        """A broker's prior slope (percent per unit of driver) and its relative spread: its
        class's when the class has learnt brokers, else the fleet's with a wide spread."""
        k, spread = self._classes.get((r, limit), (fleet_k, FLEET_SPREAD))
        return 100.0 * k / limit, spread

    def now(self, broker: str, resource: str, reported: float,
            driver: float | None = None) -> float:
        """The broker's usage of ``resource`` now (percent): its report, weighed against what
        its own fit says at the traffic it carries in proportion to how precise each is (a
        report is one noisy sample; a fit over many reports averages the noise out). A broker
        calibrated on one report is its report.

        ``driver``: the traffic the report carries when it is not the one the broker wrote (a
        report the planner moved bundles in or out of, :func:`lbctl.planner.load.with_moves`):
        the fit is then read at that traffic too, so the change counts whole. Read at the
        written report's traffic, the fit pulled a moved broker back toward where it was by
        the fit's weight (a learnt broker's report weighs about a tenth: a move of 20 points
        counted 2)."""
        r = MODELLED.index(resource)
        a = self._now.get((broker, r))
        if a is None or math.isnan(reported):
            return reported
        predicted, weight, x = a
        if driver is not None and weight < 1.0 and abs(driver - x) > 1e-9 * max(1.0, abs(x)):
            predicted += self.fits[broker][resource].slope * (driver - x)
        return weight * reported + (1.0 - weight) * predicted

    def leans(self, broker: str) -> bool:
        """Whether :meth:`now` weighs ``broker``'s report against its fit (a fit of enough
        reports), so a report changed by the planner needs its traffic (``driver``)."""
        return any(a[1] < 1.0 for r in range(len(MODELLED))
                   if (a := self._now.get((broker, r))) is not None)

    def __contains__(self, broker: object) -> bool:
        return broker in self.fits

    # --- uncertainty --------------------------------------------------------------------------
    def margin(self, level: float | None = None) -> float:
        """The error (fraction of usage) a plan must leave room for: the 95th percentile of the
        learnt brokers' out-of-sample misses (every broker's latest quarter predicted by a fit on
        its earlier reports, pooled), else :data:`SNAPSHOT_MARGIN`.

        With ``level`` (a fraction: the usage the plan brings brokers to) the misses are taken
        as shares of the usage they missed, times ``level``: report noise and a wrong slope both
        grow with usage, so a broker missed by 3 points at 150 % is missed by about 1 at 50 %."""
        if level is not None and self._relative:
            rel = sorted(m for ms in self._relative.values() for m in ms)
            return max(LEAST_MARGIN, _p95(rel) * level)
        misses = sorted(m for ms in self._misses.values() for m in ms)
        if not misses:
            return SNAPSHOT_MARGIN
        return max(LEAST_MARGIN, _p95(misses) / 100)

    def held_out_error(self, broker: str) -> float | None:
        """How far ``broker``'s line missed the reports it was not fitted on, as a share of the
        usage it missed (the RMS of its latest quarter's misses by a fit on its earlier reports:
        the same held-out check :meth:`margin` pools); ``None`` for a broker not learnt from its
        own history, whose line was never checked so."""
        rel = self._relative.get(broker)
        if not rel:
            return None
        return math.sqrt(sum(m * m for m in rel) / len(rel))

    def change_error(self, broker: str) -> float:
        """The relative error of a predicted change of ``broker``'s usage (a share of the
        change): :data:`EARLY_CHANGE_ERROR` while fewer than half the brokers have a fit of their
        own, else none beyond :meth:`margin` (measured on the learnt fits' out-of-sample misses,
        which include the traffic moved). :meth:`margin` alone is an error at a level
        (report noise, a wrong line at the usage reported): it does not grow with how far a plan
        moves a broker, yet a cost calibrated on one report is off in proportion to the traffic
        moved (``benchmarks/plans_on_hardware.py`` loops, seeds 1-10: the plans of cycles 2-8
        were worse than no moves 7 times in 36, later plans 3 in 103)."""
        if broker in self.quality and 2 * sum(1 for x in self.quality.values()
                                              if x.learnt) < len(self.quality):
            return EARLY_CHANGE_ERROR
        return 0.0

    def thin(self) -> list[str]:
        """Brokers with too little history to act on: only once most brokers have a learnt fit
        (before that the model is a calibration on the latest reports, with its margin, and no
        broker is singled out)."""
        learnt = sum(1 for q in self.quality.values() if q.learnt)
        if 2 * learnt < len(self.quality):
            return []
        return [b for b, q in self.quality.items() if q.thin]

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

    def along(self, broker: str, report: LocalBrokerData, factor: float) -> LocalBrokerData:
        """``report`` as it would read with every bundle's traffic times ``factor`` (message and
        byte rates; counts unchanged): each fitted resource moves by its slope times the change
        of its driver, the others stay as reported. A report not rewritten for a while carried
        along the traffic's trend (:mod:`lbctl.planner.cycle`), as :func:`lbctl.planner.load.
        with_moves` carries it along a move: the model's own figures, never taken as data."""
        fits = self.fits.get(broker)
        if not fits or factor == 1.0:
            return report
        stats = {x: st.part(1.0, factor, factor) for x, st in report.lastStats.items()}
        before = self.drivers(report.lastStats.values())
        after = self.drivers(stats.values())
        changes: dict[str, ResourceUsage] = {}
        for res, fit in fits.items():
            usage: ResourceUsage = getattr(report, res)
            if usage.limit <= 0:
                continue
            pct = usage.percent + fit.slope * (after.get(res) - before.get(res))
            changes[res] = ResourceUsage(pct / 100 * usage.limit, usage.limit)
        return replace(report.with_stats(stats), **changes)

    def describe(self) -> dict[str, object]:
        """The calibration, for JSON output: the fleet's costs and every broker's fit."""
        return {
            "cpuDriver": {"perMsgRate": self.rate_weight, "perThroughput": self.throughput_weight},
            "cluster": {r: {"base": f.base, "slope": f.slope} for r, f in self.cluster.items()},
            "brokers": {b: {r: {"base": f.base, "slope": f.slope} for r, f in fits.items()}
                        for b, fits in self.fits.items()},
        }


def _figures(rep: LocalBrokerData) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    pct = []
    lim = []
    for res in MODELLED:
        u: ResourceUsage = getattr(rep, res)
        lim.append(u.limit)
        pct.append(u.percent if u.limit > 0 else math.nan)
    return (pct[0], pct[1], pct[2]), (lim[0], lim[1], lim[2])


def _point(rep: LocalBrokerData, stats: Sequence[NamespaceBundleStats]) -> _Point:
    msgs = tin = tout = 0.0
    for s in stats:
        msgs += s.msgRateIn + s.msgRateOut
        tin += s.msgThroughputIn
        tout += s.msgThroughputOut
    return _Point(rep.lastUpdate, msgs, tin, tout, *_figures(rep))


def _norm(values: Sequence[float]) -> float:
    """The Euclidean norm of a column; ``inf`` when a square passes the float range (a report of
    ~1e308 reaches the model: ``x ** 2`` raises, where the sum is simply past fitting — the column
    then scales to zero and drops out of the fit)."""
    try:
        return math.sqrt(sum(v ** 2 for v in values))
    except OverflowError:
        return math.inf


def _nnls(rows: Sequence[Sequence[float]], ys: Sequence[float]) -> tuple[list[float], float]:
    """Non-negative least squares for a handful of columns: every subset of columns solved by
    the normal equations (scaled), the best one with no negative coefficient. Returns the
    coefficients and the sum of squared residuals."""
    ncol = len(rows[0]) if rows else 0
    scale = [_norm([r[k] for r in rows]) or 1.0 for k in range(ncol)]
    best: tuple[list[float], float] = ([0.0] * ncol, sum(y * y for y in ys))
    for size in range(1, ncol + 1):
        for cols in combinations(range(ncol), size):
            x = [[r[k] / scale[k] for k in cols] for r in rows]
            coef = _solve([[sum(xi[p] * xi[q] for xi in x) for q in range(size)]
                           for p in range(size)],
                          [sum(xi[p] * y for xi, y in zip(x, ys, strict=True))
                           for p in range(size)])
            if coef is None or any(v < 0 for v in coef):
                continue
            sse = sum((y - sum(cv * xv for cv, xv in zip(coef, xi, strict=True))) ** 2
                      for xi, y in zip(x, ys, strict=True))
            if sse < best[1] - 1e-12 * (1 + best[1]):
                out = [0.0] * ncol
                for k, cv in zip(cols, coef, strict=True):
                    out[k] = cv / scale[k]
                best = (out, sse)
    return best


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None when (nearly) singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-10:
            return None
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                for k in range(col, n + 1):
                    m[r][k] -= f * m[col][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def _byte_ratio(histories: Sequence[Sequence[_Point]]) -> tuple[float, float] | None:
    """The cost of a byte/s against a message/s (``c / a``) that best explains every broker's
    own history with a line of its own (``percent = base_b + slope_b · (msgs + ratio · bytes)``):
    a fleet-wide fit would mix it up with the brokers' different hardware. Each broker's residuals
    are taken relative to its mean usage (weighted least squares: report noise is a share of the
    figure) — unweighted, the busiest brokers' noise decided the ratio, off by 30 % at the median
    on ``benchmarks/plans_on_hardware.py``'s clusters, 11 % weighted.

    Brokers of one host class (one reported CPU limit) should then cost about the same per unit
    of that driver: a wrong ratio makes a byte-heavy broker's cost differ from a message-heavy
    one's. Each broker's cost's spread within its class (log, against :data:`CLASS_COST_SD`) is
    weighed with its residuals (against the pooled relative noise at the ratio the residuals
    alone give): the histories' mixes vary little, the brokers' mixes much. Measured on the
    benchmark's clusters (20 each, seeds 9-28): the ratio's miss at p90 went from x2.4 to x1.8
    with 12 brokers and x1.6 to x1.5 with 30 (median x1.27 to x1.25, x1.19 to x1.14); with 5
    brokers (one or two of a class) no change.

    Where fewer than two of a class's brokers have a mix that changed, the class term also
    counts its brokers whose mix held and that have a line of their own (:data:`MIN_POINTS`
    reports, traffic varied by :data:`MIN_SPREAD`): a steady mix says nothing of the ratio in
    the broker's residuals, but its cost per unit of the driver still depends on it. In small
    fleets many brokers carry a few namespaces that peak together, so their mix holds: with 5
    brokers (seeds 1-30) the residuals had two brokers or fewer in 7 clusters, where the ratio
    was off by x4 or came from the fleet-wide least squares (x45, or 0: bytes free). Counted,
    the x4 became x2.3, three of those four clusters got a ratio within x2.2 (one stays at the
    search's floor: its brokers' mixes are too alike to tell), the p90 miss went from x2.35 to
    x2.29 (the first figure without those four), and the one-shot plans' prediction error with
    5 brokers from 5.3 to 4.5 points at p95 (seeds 1-20). Counted in every class, they moved the ratio of larger fleets, where the brokers
    whose mix changed already tell it, for nothing: 120 brokers, in band 16 -> 14 of 20, bytes
    x1.79 -> x1.83 of the lower bound. Weighing each broker's cost by its slope's precision (a
    restricted likelihood of its class's costs) did no better with 5 brokers (4.4 points).

    A grid then a golden-section search on ``log ratio``, over each broker's moment sums (a
    step costs one pass over the brokers, not their reports); ``None`` when the histories cannot
    tell: fewer than two brokers whose mix of messages and bytes changed (one broker's history
    alone misses by x3 either way, measured) unless one does and a host class has two brokers
    with a line. Where nothing tells it the search ends at its lowest ratio (bytes free), as
    the fleet-wide least squares does (its per-byte cost 0) when no ratio is given.

    Returns the ratio and the standard error of its log (:func:`_log_error`; infinite when the
    ratio is not identified)."""
    lined = []
    for h in histories:
        if len(h) >= MIN_POINTS:
            varies = _mix_varies(h)
            if varies or _learnable([p.msgs for p in h]):
                lined.append((_moments(h), varies))
    usable = [m for m, varies in lined if varies]
    varied: dict[float, int] = {}  # per host class, its brokers whose mix changed
    for m in usable:
        varied[m[7]] = varied.get(m[7], 0) + 1
    # a broker whose mix held speaks for its class only where fewer than two of the class's
    # brokers' mixes changed (two or more tell the class's costs at any ratio by themselves)
    lined = [(m, varies) for m, varies in lined if varies or varied.get(m[7], 0) < 2]
    classes: dict[float, int] = {}
    for m, _ in lined:
        classes[m[7]] = classes.get(m[7], 0) + 1
    if len(usable) < 2 and not (usable and max(classes.values(), default=0) >= 2):
        return None

    def terms(log_ratio: float) -> tuple[float, float]:
        ratio = math.exp(log_ratio)
        total = 0.0
        costs: dict[float, list[float]] = {}
        for (smm, smt, stt, smy, sty, syy, my, limit, _), varies in lined:
            sxx = smm + 2 * ratio * smt + ratio * ratio * stt
            sxy = smy + ratio * sty
            resid = max(0.0, syy - (sxy * sxy / sxx if sxx > 0 else 0.0))
            # relative residuals: a report's noise grows with its level (a busy 8-core host
            # is off by points where an idle one is off by tenths), so each broker's misses
            # count against its own usage, not the busiest brokers' alone
            if varies:
                total += resid / max(my, 1.0) ** 2
            # every broker with a line of its own says what its class costs per unit of the
            # driver, whether or not its own mix changed: its line is the same at any ratio,
            # its cost per unit of ``msgs + ratio · bytes`` is not
            if sxx > 0 and sxy > 0:
                costs.setdefault(limit, []).append(math.log(sxy / sxx * limit))
        spread = 0.0
        for ks in costs.values():
            mean = sum(ks) / len(ks)
            spread += sum((k - mean) ** 2 for k in ks)
        return total, spread

    lo, hi = math.log(1e-7), math.log(1e-1)  # a byte costs 1e-7 .. 1e-1 of a message
    alone = _golden(lambda x: terms(x)[0], lo, hi, 40)
    noise = max(terms(alone)[0] / sum(u[-1] - 2 for u in usable), 1e-12)

    def score(log_ratio: float) -> float:
        resid, spread = terms(log_ratio)
        return resid / noise + spread / CLASS_COST_SD ** 2

    step = (hi - lo) / RATIO_GRID
    best = min((lo + i * step for i in range(RATIO_GRID + 1)), key=score)
    if score(alone) <= score(best):
        best = alone
    x = _golden(score, max(lo, best - step), min(hi, best + step), 30)
    return math.exp(x), _log_error(score, x, lo, hi)


def _log_error(score: Callable[[float], float], x: float, lo: float, hi: float) -> float:
    """The standard error of the learnt ``log ratio`` ``x``, from the curvature of
    :func:`_byte_ratio`'s score there (the score is a sum of squared standardised misses, twice
    a negative log-likelihood, so its variance is ``2 / score''``: a Laplace approximation).
    Infinite where the ratio is not identified: the search ended within :data:`RATIO_EDGE` of
    its range's edge (nothing told it; bytes free, or bytes all), or the score is flat or
    curved the wrong way there.

    Checked against the hosts' own ratio (a truth the score never saw): on
    ``benchmarks/plans_on_hardware.py``'s clusters (seeds 1-20 with 5 brokers, 1-10 with 12,
    1-8 with 30) every miss was within 1.8 errors (root mean square 0.6-0.9 errors: on the safe
    side), the errors 0.2-1.4 with 5 brokers, 0.16-0.7 with 12, 0.12-0.3 with 30; the one
    cluster whose ratio ended at the search's floor (5 brokers, seed 15: x1200 off) was the one
    said not identified."""
    if x - lo < RATIO_EDGE or hi - x < RATIO_EDGE:
        return math.inf
    h = RATIO_STEP
    curve = (score(x + h) - 2 * score(x) + score(x - h)) / (h * h)
    return math.sqrt(2 / curve) if curve > 0 else math.inf


def _moments(h: Sequence[_Point]) -> tuple[float, float, float, float, float, float, float,
                                           float, int]:
    """A broker's centred sums of messages, bytes and CPU percent (mm, mt, tt, my, ty, yy),
    its mean percent, its CPU limit and its reports: its line on ``msgs + ratio · bytes`` for
    any ratio."""
    n = len(h)
    ms = [p.msgs for p in h]
    ts = [p.tin + p.tout for p in h]
    ys = [p.percent[0] for p in h]
    mm, mt, my = sum(ms) / n, sum(ts) / n, sum(ys) / n
    dm = [v - mm for v in ms]
    dt = [v - mt for v in ts]
    dy = [v - my for v in ys]
    return (sum(a * a for a in dm), sum(a * b for a, b in zip(dm, dt, strict=True)),
            sum(b * b for b in dt), sum(a * c for a, c in zip(dm, dy, strict=True)),
            sum(b * c for b, c in zip(dt, dy, strict=True)), sum(c * c for c in dy), my,
            h[-1].limit[0], n)


def _golden(f: Callable[[float], float], lo: float, hi: float, steps: int) -> float:
    """The minimum of ``f`` on ``[lo, hi]`` by golden-section search (``steps`` narrowings)."""
    g = (math.sqrt(5) - 1) / 2
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(steps):
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = f(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = f(x2)
    return (lo + hi) / 2


def _mix_varies(h: Sequence[_Point]) -> bool:
    """Whether a broker's bytes per message changed over its history (by 5 % or more)."""
    sizes = [(p.tin + p.tout) / p.msgs for p in h if p.msgs > 0]
    return len(sizes) >= MIN_POINTS and max(sizes) >= 1.05 * min(sizes)


def _fleet_cpu(points: Sequence[_Point],
               ratio: float | None = None) -> tuple[float, float, float, float]:
    """The fleet's CPU idle usage (percent), per-message and per-byte costs (CPU units), and
    the RMS residual of the fit (points): absolute usage on (limit, msg/s, bytes/s), or with a
    known byte-to-message ``ratio`` on (limit, msg/s + ratio · bytes/s)."""
    if not points:
        return 0.0, 0.0, 0.0, 1.0
    if ratio is not None:
        rows1 = [(p.limit[0] / 100, p.msgs + ratio * (p.tin + p.tout)) for p in points]
        used1 = [p.percent[0] * p.limit[0] / 100 for p in points]
        (idle1, k), _ = _nnls(rows1, used1)
        if k > 0:
            idle1 = min(idle1, min(p.percent[0] for p in points))
            return idle1, k, k * ratio, _rms(points, idle1, k, k * ratio)
    rows = [(p.limit[0] / 100, p.msgs, p.tin + p.tout) for p in points]
    used = [p.percent[0] * p.limit[0] / 100 for p in points]
    (idle, a, c), _ = _nnls(rows, used) if len(points) >= 3 else ((0.0, 0.0, 0.0), 0.0)
    if a == 0 and c == 0:  # too few reports, or collinear: a half-and-half driver, one cost
        r0 = sum(p.msgs for p in points)
        t0 = sum(p.tin + p.tout for p in points)
        wr = 0.5 / r0 if r0 > 0 and t0 > 0 else (1.0 / r0 if r0 > 0 else 0.0)
        wt = 0.5 / t0 if r0 > 0 and t0 > 0 else (1.0 / t0 if t0 > 0 else 0.0)
        idle, k = _fleet_one([(p.limit[0], wr * p.msgs + wt * (p.tin + p.tout), p.percent[0])
                              for p in points])
        a, c = wr * k, wt * k
        return idle, a, c, _rms(points, idle, a, c)
    idle_pct = min(idle, min(p.percent[0] for p in points))
    return idle_pct, a, c, _rms(points, idle_pct, a, c)


def _rms(points: Sequence[_Point], idle: float, a: float, c: float) -> float:
    res = [p.percent[0] - idle - 100 * (a * p.msgs + c * (p.tin + p.tout)) / p.limit[0]
           for p in points]
    return max(1.0, math.sqrt(sum(r * r for r in res) / len(res)))


def _fleet_one(points: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """(limit, driver, percent) points: the fleet's idle percent and cost per unit of driver
    (usage units), clamped so that no broker is below the idle usage."""
    if not points:
        return 0.0, 0.0
    rows = [(lim / 100, x) for lim, x, _ in points]
    used = [pct * lim / 100 for lim, _, pct in points]
    if len(points) >= 2:
        (idle, k), _ = _nnls(rows, used)
    else:
        idle, k = 0.0, 0.0
    lowest = min(pct for _, _, pct in points)
    idle = min(idle, max(lowest, 0.0))
    if k <= 0:
        total = sum(x for _, x, _ in points)
        k = sum(max(0.0, pct - idle) * lim / 100 for lim, _, pct in points) / total \
            if total > 0 else 0.0
    return idle, k


def _learnable(xs: Sequence[float]) -> bool:
    return len(xs) >= MIN_POINTS and _spread(xs)


def _spread(xs: Sequence[float]) -> bool:
    mean = sum(xs) / len(xs)
    return mean > 0 and (max(xs) - min(xs)) >= MIN_SPREAD * mean


def _p95(xs: Sequence[float]) -> float:
    return xs[min(len(xs) - 1, math.ceil(0.95 * len(xs)) - 1)]


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _slope(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """The least-squares slope of ``ys`` on ``xs`` and its standard error (the residual's sd
    taken as at least :data:`NOISE_FLOOR` points: two reports leave no residual to measure)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx <= 0:
        return 0.0, math.inf
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    sse = sum((y - my - slope * (x - mx)) ** 2 for x, y in zip(xs, ys, strict=True))
    resid = max(NOISE_FLOOR, math.sqrt(sse / max(1, n - 2)))
    return slope, resid / math.sqrt(sxx)


def _shrunk(xs: Sequence[float], ys: Sequence[float], prior: float,
            spread: float, pooled: _Pooled | None = None) -> tuple[Fit, float]:
    """A broker's line over its reports, its slope a precision-weighted mean of its own
    least-squares slope and its class's prior (``prior`` ± ``spread`` of it): a broker whose
    traffic barely varied keeps its class's cost, one with a long varied history its own. The
    line goes through the mean of its reports; returns it and the slope's relative error.

    With the fleet's idle usage (``pooled``) the line is the posterior of both its intercept
    (prior: the fleet's idle usage and spread) and its slope (the class's), each report weighted
    by its noise (a share of its figure): :func:`_posterior`. The slope's relative error is then
    still the one without the idle usage: the posterior's assumes the driver's byte-to-message
    ratio right, and a moved set whose mix is not the broker's usual one is off by more
    (measured: a broker keeping a third of its bundles, its change's miss against the
    posterior's error, median x3.4, within 2 errors 27 % of brokers; against this one x0.76,
    82 %) — the robust repair (``lbctl.planner.propose``) leaves room by it."""
    if pooled is not None:
        fit, rel = _posterior(xs, ys, prior, spread, pooled)
        return fit, max(rel, _shrunk(xs, ys, prior, spread)[1])
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    own, se = _slope(xs, ys)
    if prior > 0:
        tau = spread * prior
        wp, wo = 1.0 / (tau * tau), (0.0 if math.isinf(se) else 1.0 / (se * se))
        slope = (wp * prior + wo * own) / (wp + wo)
        slope = min(max(slope, prior / COST_RANGE), prior * COST_RANGE)
        sd = 1.0 / math.sqrt(wp + wo)
    else:
        slope, sd = max(own, 0.0), se
    rel = min(1.0, sd / slope) if slope > 0 else 1.0
    return Fit(my - slope * mx, slope), rel


def _posterior(xs: Sequence[float], ys: Sequence[float], prior: float, spread: float,
               pooled: _Pooled) -> tuple[Fit, float]:
    """The line ``base + slope · x`` minimising the reports' squared misses (each against its
    noise) plus the priors' (the fleet's idle usage for ``base``, the class's ``prior`` ±
    ``spread`` of it for ``slope``): a 2 × 2 linear system. Returns it and the slope's relative
    error (its posterior sd). The slope stays within :data:`COST_RANGE` of the prior."""
    s0 = s1 = s2 = t0 = t1 = 0.0
    for x, y in zip(xs, ys, strict=True):
        w = 1.0 / max(pooled.noise * abs(y), LEAST_NOISE) ** 2
        s0 += w
        s1 += w * x
        s2 += w * x * x
        t0 += w * y
        t1 += w * x * y
    wb = 1.0 / pooled.spread ** 2
    s0 += wb
    t0 += wb * pooled.base
    if prior > 0:
        ws = 1.0 / (spread * prior) ** 2
        s2 += ws
        t1 += ws * prior
    det = s0 * s2 - s1 * s1
    if det <= 0:
        return Fit(pooled.base, max(prior, 0.0)), 1.0
    base = (t0 * s2 - s1 * t1) / det
    slope = (s0 * t1 - s1 * t0) / det
    sd = math.sqrt(s0 / det)
    if prior > 0 and not prior / COST_RANGE <= slope <= prior * COST_RANGE:
        slope = min(max(slope, prior / COST_RANGE), prior * COST_RANGE)
        base = (t0 - s1 * slope) / s0  # the intercept given the slope
    elif prior <= 0 and slope < 0:
        slope = 0.0
        base = t0 / s0
    rel = min(1.0, sd / slope) if slope > 0 else 1.0
    return Fit(base, slope), rel


def _pool_intercepts(lines: Sequence[tuple[Sequence[float], Sequence[float]]]) -> _Pooled | None:
    """The fleet's idle usage from its brokers' lines (``(xs, ys)`` each, driver and percent):
    the reports' relative noise pooled over every line's residuals; each line's intercept by
    least squares weighted by that noise, with its variance; the mean and spread of the true
    intercepts by maximum likelihood (a golden-section search on the log of the spread, the mean
    the precision-weighted one for a given spread). ``None`` when no line has a residual."""
    fits = []
    sq = 0.0
    dof = 0
    for xs, ys in lines:
        n = len(xs)
        mx, my = sum(xs) / n, sum(ys) / n
        sxx = sxy = 0.0
        for x, y in zip(xs, ys, strict=True):
            sxx += (x - mx) ** 2
            sxy += (x - mx) * (y - my)
        if sxx <= 0 or my <= 0:
            continue
        slope = sxy / sxx
        for x, y in zip(xs, ys, strict=True):
            sq += ((y - my - slope * (x - mx)) / max(abs(y), LEAST_NOISE)) ** 2
        dof += n - 2
        fits.append((xs, ys))
    if dof <= 0 or len(fits) < MIN_IDLE_BROKERS:
        return None
    noise = math.sqrt(sq / dof)
    est = []
    for xs, ys in fits:
        s0 = s1 = s2 = t0 = t1 = 0.0  # weighted moments: the line's normal equations
        for x, y in zip(xs, ys, strict=True):
            w = 1.0 / max(noise * abs(y), LEAST_NOISE) ** 2
            s0 += w
            s1 += w * x
            s2 += w * x * x
            t0 += w * y
            t1 += w * x * y
        det = s0 * s2 - s1 * s1
        if det <= 0:
            continue
        est.append(((t0 * s2 - s1 * t1) / det, s2 / det))  # the intercept and its variance
    if len(est) < MIN_IDLE_BROKERS:
        return None

    mu, tau = _pool_normal(est, IDLE_SPREAD[0], IDLE_SPREAD[1])
    return _Pooled(mu, tau, noise)


def _pool_normal(est: Sequence[tuple[float, float]], lo: float,
                 hi: float) -> tuple[float, float]:
    """Estimates ``(value, variance)`` of quantities drawn from one normal: its mean and sd
    (within ``[lo, hi]``) by maximum likelihood — each estimate ~ N(mean, sd² + its variance);
    a golden-section search on the log of the sd, the mean the precision-weighted one for it."""

    def mean(tau2: float) -> float:
        ws = [1.0 / (v + tau2) for _, v in est]
        return sum(w * b for w, (b, _) in zip(ws, est, strict=True)) / sum(ws)

    def minus_log_likelihood(log_tau: float) -> float:
        tau2 = math.exp(2 * log_tau)
        mu = mean(tau2)
        return sum(math.log(v + tau2) + (b - mu) ** 2 / (v + tau2) for b, v in est)

    tau = math.exp(_golden(minus_log_likelihood, math.log(lo), math.log(hi), POOL_STEPS))
    return mean(tau * tau), tau


def _anchor(xs: Sequence[float], ys: Sequence[float], fit: Fit) -> tuple[float, float]:
    """What ``fit`` says of the latest report's traffic, and the weight the report itself gets
    against it: the fit's variance there (``1/n`` plus the leverage of the report) against a
    report's own (the fit's residual variance), so a report far from the others or a short
    history leans on the report. Fewer than :data:`MIN_POINTS` reports: the report alone
    (three reports of a drifting broker are no fit to overrule the latest with)."""
    n = len(xs)
    x = xs[-1]
    if n < MIN_POINTS:
        return fit.percent(x), 1.0
    mx = sum(xs) / n
    sxx = sum((v - mx) ** 2 for v in xs)
    lev = 1.0 / n + ((x - mx) ** 2 / sxx if sxx > 0 else 0.0)
    return fit.percent(x), lev / (lev + 1.0)


def _holdout(xs: Sequence[float], ys: Sequence[float], prior: float,
             spread: float, pooled: _Pooled | None = None) -> list[float]:
    """How far a fit on a broker's earlier reports misses its latest quarter (points)."""
    h = max(2, len(xs) // 4)
    ex, ey = (xs[:-h], ys[:-h]) if _learnable(xs[:-h]) else (xs, ys)
    early = (_posterior(ex, ey, prior, spread, pooled)[0] if pooled is not None
             else _shrunk(ex, ey, prior, spread)[0])
    return [abs(early.percent(x) - y) for x, y in zip(xs[-h:], ys[-h:], strict=True)]


def _learn(xs: Sequence[float], ys: Sequence[float], prior: float,
           spread: float, pooled: _Pooled | None = None) -> tuple[Fit, float, float]:
    """A broker's own fit over its history (shrunk toward its class, and toward the fleet's
    idle usage when ``pooled``), its out-of-sample RMS error (the latest quarter predicted by a
    fit on the rest) and the relative error of its slope."""
    fit, rel = _shrunk(xs, ys, prior, spread, pooled)
    misses = _holdout(xs, ys, prior, spread, pooled)
    err = math.sqrt(sum(m * m for m in misses) / len(misses))
    return fit, err, rel


def _identified(x: float, pct: float, idle: float) -> bool:
    """Whether one report tells a broker's slope: its traffic's share of its usage (above the
    fleet's idle usage) is at least ``1 /`` :data:`CLASS_EVIDENCE` times what its own idle usage
    may be off by (:data:`REPORT_IDLE_SD`), so the slope is known to within that share."""
    if x <= 0 or math.isnan(pct):
        return False
    return pct - min(max(idle, 0.0), pct) >= REPORT_IDLE_SD / CLASS_EVIDENCE


def _borrows(x: float, pct: float, idle: float, prior: float) -> bool:
    """Whether a broker takes its host class's slope ``prior``: its report cannot tell its own
    (:func:`_identified`) and does not contradict the class's — the class's line through the
    report leaves an idle usage of at least zero (a broker reporting less than its class's cost
    of its traffic is not like its class: it keeps its own slope). A broker carrying nothing
    keeps the fleet's cost over its limit (its report is its idle usage: a plan's first bundles
    there are what tells its slope)."""
    return x > 0 and not math.isnan(pct) and not _identified(x, pct, idle) and pct - prior * x >= 0


def _borrowed(x: float, pct: float, idle: float, prior: float,
              prior_rel: float) -> tuple[Fit, float]:
    """A broker's fit from a report that cannot tell its slope (:func:`_identified`), its host
    class's slope ``prior`` (relative error ``prior_rel``) at hand: the precision-weighted mean
    of its own slope (its error :data:`REPORT_IDLE_SD` over its traffic) and the class's, the
    line through its report (its idle usage not below zero: :func:`_borrows`)."""
    own = (pct - min(max(idle, 0.0), pct)) / x
    w_own = (x / REPORT_IDLE_SD) ** 2
    w_prior = 1.0 / (prior_rel * prior) ** 2
    slope = (w_own * own + w_prior * prior) / (w_own + w_prior)
    rel = min(1.0, 1.0 / math.sqrt(w_own + w_prior) / slope) if slope > 0 else 1.0
    return Fit(pct - slope * x, slope), rel


def _from_report(x: float, pct: float, idle: float, prior: float,
                 sigma: float) -> tuple[Fit, float]:
    """A broker's fit from one report: the fleet's idle usage (no more than its percent), the
    slope reproducing the report within :data:`COST_RANGE` of the prior; the relative error of
    that slope, from the fleet fit's residual."""
    if x <= 0 or math.isnan(pct):
        return Fit(0.0 if math.isnan(pct) else pct, prior), 1.0
    base = min(max(idle, 0.0), pct) if pct >= 0 else pct
    slope = (pct - base) / x
    if prior > 0 and not prior / COST_RANGE <= slope <= prior * COST_RANGE:
        slope = min(max(slope, prior / COST_RANGE), prior * COST_RANGE)
        base = max(0.0, pct - slope * x)
    traffic = max(pct - base, 1.0)
    return Fit(base, slope), min(1.0, sigma / traffic)
