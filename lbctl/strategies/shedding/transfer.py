"""``extensions.scheduler.TransferShedder``: the extensible load manager's shedding strategy.

One call is one ``findBundlesForUnloading``:

A. **Load statistics** (``LoadStats.update``) over the load-data store, in its iteration order:
   skip outdated brokers (``now − updatedAt > loadBalancerBrokerLoadDataTTLInSeconds``), stop the
   whole cycle for a broker still cooling down (``updatedAt − lastUnload <
   loadBalanceSheddingDelayInSeconds``: Skip/CoolDown), then Skip/OutDatedData or Skip/NoBrokers
   when nothing is left, Skip/NoLoadData when an available broker has no data; otherwise the mean
   and population standard deviation of ``weightedMaxEMA``. The store is stable-sorted by load
   with ``Comparator.comparingDouble`` (``LoadStats.setLoadDataStore``, TransferShedder at
   028ed6295a34): ``Double.compare``'s order, -0.0 before 0.0 and NaN after everything
   (:func:`~lbctl.model.javasort.double_compare_key`).
B. **Hit-count gate**: ``std > loadBalancerBrokerLoadTargetStd`` or the least loaded broker is
   underloaded or the most loaded overloaded → ``hitCount += 1``, else 0; shedding continues only
   when ``hitCount > loadBalancerSheddingConditionHitCountThreshold`` (Skip/HitCount otherwise).
   The count is this strategy's memory across cycles; it resets after a cycle that decided.
C. **Rounds**: pair the current max broker with the current min broker, offload half their load
   difference as throughput, smallest top bundles first, always leaving one top bundle; when the
   next bundle would overshoot, try swapping min-broker bundles back (transfer mode only). A round
   that moved something updates the std as if the load had moved and advances the min broker; at
   most ``loadBalancerMaxNumberOfBrokerSheddingPerCycle`` such rounds.

Version variants (:mod:`lbctl.versions`): the underloaded test compares the min broker's
``msgThroughputEMA`` with the max broker's (PR #22321; before it, with 1 B/s), and bundles without
throughput are skipped on both sides (PR #23626; before it, they could move) — the same PR keeps
them out of the top bundles a broker reports (``TopKBundles``, the ``topKSkipsZeroThroughput``
variant of :func:`~lbctl.model.brokerload.top_k_bundles`), so from then on a busy bundle beside
an idle one is a broker's sole top bundle and stays.

Java arithmetic is kept where Python's differs: divisions by a zero load or throughput give
infinities or NaN (:func:`_jdiv`), ``Math.max``/``Math.min`` keep NaN (:func:`_jmax`), and the
TTL and cool-down products and differences are ``long`` s (:func:`lbctl.model.javaint.int64`).

Quirks kept on purpose (see the shared reference §2.7): failed rounds keep the same min broker;
the swap gain only counts with ``loadBalancerDebugModeEnabled`` (``trafficMarkedToGain`` is updated
inside the debug branch); unload mode still checks the min broker's filters; outdated brokers stay
in the sorted list; one swap iterator per round. Ties in load keep the store's order.

The strategy is pure: everything it needs comes in a :class:`ShedderInput`, and every step is
recorded in the returned :class:`ShedResult` for ``explain``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from msgspec import Struct, field

from lbctl.config import WEIGHT_KEYS, Settings
from lbctl.model.brokerload import BrokerLoadData, TopBundle, from_local_broker_data, top_k_bundles
from lbctl.model.bundle import namespace_of
from lbctl.model.decision import (
    BrokerStat,
    BrokerVerdict,
    BundleStep,
    Label,
    Reason,
    Round,
    RoundOutcome,
    Selection,
    SheddingDecision,
    ShedResult,
    Unload,
    UnloadDecision,
    Why,
)
from lbctl.model.javaint import int64
from lbctl.model.javaorder import concurrent_order
from lbctl.model.javasort import double_compare_key
from lbctl.model.loaddata import LoadData
from lbctl.strategies.registry import SHEDDING
from lbctl.strategies.split.default_namespace_bundle_split_strategy import bundle_stats_walk

NAME = "TransferShedder"
PACKAGE = "org.apache.pulsar.broker.loadbalance.extensions.scheduler"

#: (bundle, source, destination or None) -> (transferable, why not)
Transferable = Callable[[str, str, str | None], tuple[bool, Why | None]]


#: TransferShedder's situations: the load conditions, phase A, the cycle's outcome, why the loop
#: ended and how a round ended.
Transfer = Literal[
    "no-data",  # broker
    "under-load",  # broker, load, avg, factor
    "under-absolute",  # broker, throughput (< 1 B/s, before PR #22321)
    "not-under-absolute",  # broker, load, avg, factor, throughput
    "not-under-no-max",  # broker: the max broker has no load data
    "under-throughput",  # broker, throughput, other, other_throughput, factor
    "not-under",  # broker, load, avg, factor, throughput, other_throughput
    "over",  # broker, load, threshold, avg, target
    "not-over",  # the same
    "std-above",  # std, target
    # phase A (BrokerStat.why)
    "outdated",  # amount: seconds since the sample
    "cooling",  # amount: ms since the last unload; count: the delay in ms
    # the cycle (ShedResult.why)
    "failed",  # detail: the exception's class; other: its message
    "no-registry",
    "cooling-broker",  # broker; inner: its phase A reason
    "all-outdated",  # count: the TTL in seconds
    "no-brokers",
    "missing-data",  # names
    "balanced",  # std, target; inner: the min broker's reason; then: the max's
    "held",  # count: the hit count; threshold
    "none-moved-no-data",
    "none-moved-few",
    "none-moved",  # inner: why the loop ended
    "decided",  # count; inner: why the loop ended
    # why the loop ended (ShedResult.stop)
    "max-shed",
    "indexes-met",
    "loop-balanced",  # std, target; inner, then: as BALANCED
    # a round (Round.why)
    "no-top-bundles",  # broker
    "sole-top-bundle",  # broker, detail: the bundle
    "offloaded",  # amount (B/s), load (the adjusted offload)
    "nothing-movable",
]


class TransferWhy(Why, frozen=True):
    """A reason of :data:`Transfer`, with its figures."""

    code: Transfer
    broker: str = ""
    other: str = ""
    load: float = 0.0
    avg: float = 0.0
    factor: float = 0.0
    throughput: float = 0.0
    other_throughput: float = 0.0
    threshold: float = 0.0
    target: float = 0.0
    std: float = 0.0
    amount: float = 0.0
    count: int = 0
    names: tuple[str, ...] = ()
    detail: str = ""
    inner: Why | None = None
    then: Why | None = None


#: What a round did with one top bundle of the max broker.
Step = Literal[
    "not-owner",  # broker: the max broker
    "excluded-namespace",
    "recently-unloaded",
    "not-transferable",  # broker: the min broker; inner: why not
    "last-one",  # one top bundle left: it stays
    "zero-throughput",
    "overshoot",  # amount, target; swapping: transfer mode
    "moved",  # amount, target; swaps, swapped (B/s) and broker: swapped back from
]


class StepWhy(Why, frozen=True):
    code: Step
    broker: str = ""
    amount: float = 0.0
    target: float = 0.0
    swapping: bool = False
    swaps: int = 0
    swapped: float = 0.0
    inner: Why | None = None


_EXCLUDED = StepWhy("excluded-namespace")
_RECENTLY = StepWhy("recently-unloaded")
_LAST_ONE = StepWhy("last-one")
_ZERO = StepWhy("zero-throughput")


class ShedderInput(Struct, frozen=True):
    """What ``findBundlesForUnloading`` reads: the two load-data stores, the broker registry, the
    recently unloaded bundles and brokers, and (when modelled) ownership and broker filters.

    ``store`` iterates in the order the table view does (Java hash order in the runner).
    ``available`` is ``None`` when the registry could not be read (Failure/Unknown).
    ``transferable`` ``None`` is Pulsar's unit-test mode (no PulsarService: always transferable).
    """

    settings: Settings
    now: int
    store: Mapping[str, BrokerLoadData]
    top_bundles: Mapping[str, Sequence[TopBundle]]
    available: Sequence[str] | None
    recently_unloaded_bundles: Mapping[str, int] = field(default_factory=dict)
    recently_unloaded_brokers: Mapping[str, int] = field(default_factory=dict)
    is_owner: Callable[[str, str], bool] | None = None
    transferable: Transferable | None = None


def _sqrt(x: float) -> float:
    """``Math.sqrt``: NaN for a negative argument."""
    return math.sqrt(x) if x >= 0 else math.nan


def _jdiv(a: float, b: float) -> float:
    """Java's ``a / b`` on doubles, IEEE 754: a zero divisor gives ±infinity (the signs of both
    operands, a zero's included) or NaN (0/0, NaN/0), never an exception. TransferShedder divides
    by a broker's load (the offload throughput) and by its throughput (the adjusted offload);
    either may be 0 while its top bundles carry traffic (they are separate stores)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _jmax(a: float, b: float) -> float:
    """``Math.max(double, double)``: NaN when either is NaN (Python's ``max`` keeps the first
    argument instead), 0.0 over -0.0."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0:
        return a if math.copysign(1.0, a) > 0 else b
    return a if a > b else b


def _jmin(a: float, b: float) -> float:
    """``Math.min(double, double)``: NaN when either is NaN, -0.0 under 0.0."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


class _Stats:
    """``TransferShedder.LoadStats``."""

    def __init__(self) -> None:
        self.sq_sum = 0.0
        self.total = 0
        self.avg = 0.0
        self.std = 0.0
        self.sorted: list[tuple[str, BrokerLoadData]] = []
        self.max_idx = 0
        self.min_idx = 0
        self.shed_count = 0
        self.max_shed = 0

    def set(self, total_sum: float, sq_sum: float, total: int) -> None:
        self.sq_sum, self.total = sq_sum, total
        if total == 0:
            self.avg = self.std = 0.0
        else:
            self.avg = total_sum / total
            self.std = _sqrt(sq_sum / total - self.avg * self.avg)

    def offload(self, mx: float, mn: float, amount: float) -> None:
        """``LoadStats.offload``: the std as if ``amount`` of load had moved (``Math.max``
        keeps a NaN amount NaN, so is the std then, and the loop goes on by the other tests)."""
        self.sq_sum -= mx * mx + mn * mn
        maxd = _jmax(0.0, mx - amount)
        mind = mn + amount
        self.sq_sum += maxd * maxd + mind * mind
        self.std = math.sqrt(abs(self.sq_sum / self.total - self.avg * self.avg))
        self.shed_count += 1
        self.min_idx += 1

    def has_transferable_brokers(self) -> bool:
        return self.shed_count < self.max_shed and self.min_idx < self.max_idx

    def peek_min(self) -> str:
        return self.sorted[self.min_idx][0]

    def peek_max(self) -> str:
        return self.sorted[self.max_idx][0]


class TransferShedder:
    """The strategy; its only memory is the shedding-condition hit count."""

    name = NAME

    def find_bundles_for_unloading(self, ctx: ShedderInput, hit_count: int = 0) -> ShedResult:
        """One cycle. Pulsar catches any Throwable of the cycle (Failure/Unknown, no decision)
        but keeps ``unloadConditionHitCount`` as far as the cycle got: a throw after the
        hit-count gate leaves the count it set (TransferShedder at 028ed6295a34)."""
        run: _Run | None = None
        try:
            run = _Run(ctx, hit_count)
            return run.run()
        except Exception as e:  # Pulsar: any Throwable → Failure/Unknown
            return ShedResult((), (Label.FAILURE, Reason.UNKNOWN),
                              TransferWhy("failed", other=str(e),
                                          detail=type(e).__name__),
                              hit_count, hit_count if run is None else run.hit,
                              int(ctx.settings["loadBalancerSheddingConditionHitCountThreshold"]),
                              0.0, 0.0, 0.0)


class _Run:
    def __init__(self, ctx: ShedderInput, hit_count: int):
        self.ctx = ctx
        self.conf = ctx.settings
        self.hit_before = hit_count
        self.hit = hit_count
        self.stats = _Stats()
        self.decisions: dict[UnloadDecision, None] = {}
        self.threshold = int(self.conf["loadBalancerSheddingConditionHitCountThreshold"])
        self.target = float(self.conf["loadBalancerBrokerLoadTargetStd"])
        self.brokers: list[BrokerStat] = []
        self.expired: list[str] = []
        self.missing: list[str] = []
        self.initial_std = 0.0
        self.hit_gate = hit_count

    # --- predicates -------------------------------------------------------------------------------
    def underloaded(self, broker: str) -> tuple[bool, TransferWhy]:
        data = self.ctx.store.get(broker)
        if data is None:
            return False, TransferWhy("no-data", broker)
        m = _jmin(0.5, _jmax(0.0, self.target / 2.0))
        avg = self.stats.avg
        if data.weightedMaxEMA < avg * m:
            return True, TransferWhy("under-load", broker, load=data.weightedMaxEMA,
                                     avg=avg, factor=m)
        tp = data.msgThroughputEMA
        if self.conf.profile["transferUnderloadedRule"] == "absolute":  # before PR #22321
            if tp < 1:
                return True, TransferWhy("under-absolute", broker, throughput=tp)
            return False, TransferWhy("not-under-absolute", broker,
                                      load=data.weightedMaxEMA, avg=avg, factor=m,
                                      throughput=tp)
        max_broker = self.stats.peek_max()
        mx = self.ctx.store.get(max_broker)
        if mx is None:
            return False, TransferWhy("not-under-no-max", broker)
        code: Transfer = "under-throughput" if tp < mx.msgThroughputEMA * m else "not-under"
        return code == "under-throughput", TransferWhy(
            code, broker, max_broker, data.weightedMaxEMA, avg, m, tp, mx.msgThroughputEMA)

    def overloaded(self, broker: str) -> tuple[bool, TransferWhy]:
        data = self.ctx.store.get(broker)
        if data is None:
            return False, TransferWhy("no-data", broker)
        thr = int(self.conf["loadBalancerBrokerOverloadedThresholdPercentage"]) / 100.0
        load = data.weightedMaxEMA
        over = load > thr and load > self.stats.avg + self.target
        return over, TransferWhy("over" if over else "not-over", broker, load=load,
                                 threshold=thr, avg=self.stats.avg, target=self.target)

    # --- phase A ------------------------------------------------------------------------------------
    def load_stats(self) -> Reason | None:
        conf, ctx, st = self.conf, self.ctx, self.stats
        st.max_shed = int(conf["loadBalancerMaxNumberOfBrokerSheddingPerCycle"])
        ttl_ms = int64(int(conf["loadBalancerBrokerLoadDataTTLInSeconds"]) * 1000)
        delay_ms = int64(int(conf["loadBalanceSheddingDelayInSeconds"]) * 1000)
        reason: Reason | None = None
        total = sq = 0.0
        n = 0
        missing = dict.fromkeys(ctx.available or ())
        recently = ctx.recently_unloaded_brokers
        for broker, data in ctx.store.items():
            missing.pop(broker, None)
            age = int64(ctx.now - data.updatedAt)
            if age > ttl_ms:
                self.brokers.append(BrokerStat(broker, data.weightedMaxEMA, False, TransferWhy(
                    "outdated", amount=age / 1000)))
                reason = Reason.OUTDATED_DATA
                continue
            if broker in recently:
                elapsed = int64(data.updatedAt - recently[broker])
                if elapsed < delay_ms:
                    self.brokers.append(BrokerStat(broker, data.weightedMaxEMA, False, TransferWhy(
                        "cooling", amount=elapsed, count=delay_ms)))
                    st.set(0.0, 0.0, 0)
                    return Reason.COOL_DOWN
                self.expired.append(broker)
            load = data.weightedMaxEMA
            total += load
            sq += load * load
            n += 1
            self.brokers.append(BrokerStat(broker, load, True))
        if n == 0:
            st.set(0.0, 0.0, 0)
            return reason or Reason.NO_BROKERS
        if missing:
            st.set(0.0, 0.0, 0)
            self.missing = list(missing)
            return Reason.NO_LOAD_DATA
        st.set(total, sq, n)
        self.initial_std = st.std
        return None

    # --- the cycle ----------------------------------------------------------------------------------
    def result(self, skip: tuple[Label, Reason] | None, why: TransferWhy, *, counted: bool,
               condition: Mapping[str, bool] | None = None, rounds: Sequence[Round] = (),
               stop: TransferWhy | None = None) -> ShedResult:
        st = self.stats
        return ShedResult(
            tuple(self.decisions), skip, why, self.hit_before, self.hit, self.threshold,
            st.avg if counted else 0.0, self.initial_std if counted else 0.0, st.std,
            tuple(self.brokers), tuple(b for b, _ in st.sorted), dict(condition or {}),
            tuple(rounds), stop, tuple(self.expired), self.hit_gate)

    def run(self) -> ShedResult:
        """``TransferShedder.findBundlesForUnloading``: the registry, the load statistics
        (phase A), the hit-count gate (phase B), then the max/min rounds (phase C)."""
        ctx, st = self.ctx, self.stats
        if ctx.available is None:
            return self.result((Label.FAILURE, Reason.UNKNOWN),
                               TransferWhy("no-registry"), counted=False)
        # LoadStats.setLoadDataStore: List.sort(Comparator.comparingDouble(weightedMaxEMA)),
        # i.e. Double.compare — -0.0 before 0.0, NaN last — stable over the store's order
        st.sorted = sorted(ctx.store.items(),
                           key=lambda e: double_compare_key(e[1].weightedMaxEMA))
        st.max_idx = len(st.sorted) - 1
        st.min_idx = 0
        skip = self.load_stats()
        if skip is not None:
            return self.result((Label.SKIP, skip), self._phase_a_why(skip), counted=False)
        self.debug = bool(self.conf["loadBalancerDebugModeEnabled"])
        self.transfer = bool(self.conf["loadBalancerTransferEnabled"])
        condition = self.hit_count_gate()
        if self.hit <= self.threshold:
            why = (TransferWhy("held", count=self.hit, threshold=self.threshold)
                   if self.hit else
                   TransferWhy("balanced", std=st.std, target=self.target,
                               inner=self.why_under, then=self.why_over))
            return self.result((Label.SKIP, Reason.HIT_COUNT), why, counted=True,
                               condition=condition)
        rounds, stop, kinds = self.rounds()
        if not self.decisions:
            if "no load data" in kinds:
                r, why = Reason.NO_LOAD_DATA, TransferWhy("none-moved-no-data")
            elif kinds & {"few bundles", "nothing movable"}:
                r, why = Reason.NO_BUNDLES, TransferWhy("none-moved-few")
            else:
                r, why = Reason.HIT_COUNT, TransferWhy("none-moved", inner=stop)
            return self.result((Label.SKIP, r), why, counted=True, condition=condition,
                               rounds=rounds, stop=stop)
        self.hit = 0
        return self.result(None, TransferWhy("decided", count=len(self.decisions),
                                             inner=stop),
                           counted=True, condition=condition, rounds=rounds, stop=stop)

    def hit_count_gate(self) -> dict[str, bool]:
        """Phase B: the shedding condition counted across cycles."""
        st = self.stats
        under, self.why_under = self.underloaded(st.peek_min())
        over, self.why_over = self.overloaded(st.peek_max())
        condition = {"stdAboveTarget": st.std > self.target, "minUnderloaded": under,
                     "maxOverloaded": over}
        self.hit = self.hit + 1 if st.std > self.target or under or over else 0
        self.hit_gate = self.hit
        return condition

    def rounds(self) -> tuple[list[Round], TransferWhy, set[RoundOutcome]]:
        """Phase C: pair the max broker with the min broker while the cluster is unbalanced,
        at most ``loadBalancerMaxNumberOfBrokerSheddingPerCycle`` rounds that moved load."""
        st = self.stats
        rounds: list[Round] = []
        while True:
            if not st.has_transferable_brokers():
                stop = TransferWhy("max-shed" if st.shed_count >= st.max_shed
                                   else "indexes-met")
                break
            cause = self._round_cause()
            if isinstance(cause, TransferWhy):
                stop = cause
                break
            rounds.append(self.one_round(*cause, self.transfer, self.debug))
        return rounds, stop, {r.outcome for r in rounds}

    def _round_cause(self) -> tuple[Reason, TransferWhy] | TransferWhy:
        """Why the next round runs (its reason and why), or why the loop stops (balanced)."""
        st = self.stats
        if st.std > self.target:
            return Reason.OVERLOADED, TransferWhy("std-above", std=st.std,
                                                  target=self.target)
        under, why_under = self.underloaded(st.peek_min())
        if under:
            return Reason.UNDERLOADED, why_under
        over, why_over = self.overloaded(st.peek_max())
        if over:
            return Reason.OVERLOADED, why_over
        return TransferWhy("loop-balanced", std=st.std, target=self.target,
                           inner=why_under, then=why_over)

    def _phase_a_why(self, reason: Reason) -> TransferWhy:
        if reason is Reason.COOL_DOWN:
            b = self.brokers[-1]
            return TransferWhy("cooling-broker", b.broker, inner=b.why)
        if reason is Reason.OUTDATED_DATA:
            return TransferWhy("all-outdated",
                               count=int(self.conf["loadBalancerBrokerLoadDataTTLInSeconds"]))
        if reason is Reason.NO_BROKERS:
            return TransferWhy("no-brokers")
        return TransferWhy("missing-data", names=tuple(self.missing))

    def one_round(self, reason: Reason, why_reason: TransferWhy, transfer: bool,
                  debug: bool) -> Round:
        """One max/min pairing: half the load difference as throughput off the max broker,
        its top bundles walked smallest first (:class:`_Walk`); a round that moved something
        updates the standard deviation as if the load had moved."""
        ctx, st = self.ctx, self.stats
        std_before = st.std
        max_b = st.sorted[st.max_idx][0]
        st.max_idx -= 1
        min_b = st.peek_min()
        max_d = ctx.store.get(max_b)
        min_d = ctx.store.get(min_b)

        def ended(outcome: RoundOutcome, why: TransferWhy, **kw: Any) -> Round:
            return Round(reason, why_reason, max_b, min_b, std_before, st.std, outcome, why,
                         **kw)

        if max_d is None or min_d is None:
            return ended("no load data",
                         TransferWhy("no-data", max_b if max_d is None else min_b))
        max_load, min_load = max_d.weightedMaxEMA, min_d.weightedMaxEMA
        offload = (max_load - min_load) / 2
        max_t, min_t = max_d.throughput, min_d.throughput
        offload_t = _jdiv(max_t * offload, max_load)
        nums = {"max_load": max_load, "min_load": min_load, "offload": offload,
                "offload_throughput": offload_t, "max_throughput": max_t, "min_throughput": min_t}
        tops = ctx.top_bundles.get(max_b)
        if not tops:
            return ended("no load data",
                         TransferWhy("no-top-bundles", max_b), **nums)
        if len(tops) == 1:
            return ended("few bundles", TransferWhy(
                "sole-top-bundle", max_b, detail=tops[0].bundleName), **nums)
        walk = _Walk(self, reason, max_b, min_b, max_t, min_t, offload_t, transfer, debug)
        walk.run(tops)
        if walk.marked > 0:
            adj = _jdiv((walk.marked - walk.gained) * max_load, max_t)
            st.offload(max_load, min_load, adj)
            return ended("offloaded", TransferWhy(
                "offloaded", amount=walk.marked - walk.gained, load=adj),
                marked=walk.marked, gained=walk.gained, adjusted_offload=adj,
                bundles=tuple(walk.steps), **nums)
        return ended("nothing movable", TransferWhy("nothing-movable"),
                     bundles=tuple(walk.steps), **nums)


class _Walk:
    """The max broker's top bundles in one round, smallest first: each is skipped (not owned,
    excluded namespace, recently unloaded, not transferable, no throughput), moved, or stops
    the walk (the last one stays; moving it would overshoot the target and no swap from the
    min broker balances it)."""

    def __init__(self, run: _Run, reason: Reason, max_b: str, min_b: str, max_t: float,
                 min_t: float, offload_t: float, transfer: bool, debug: bool) -> None:
        self.run_ = run
        self.ctx = run.ctx
        self.reason = reason
        self.max_b, self.min_b = max_b, min_b
        self.max_t, self.min_t = max_t, min_t
        self.offload_t = offload_t
        self.transfer, self.debug = transfer, debug
        self.marked = self.gained = 0.0
        self.steps: list[BundleStep] = []
        self.skip_zero = bool(run.conf.profile["transferSkipsZeroThroughput"])  # PR #23626
        self.excluded = set(run.conf["loadBalancerSheddingExcludedNamespaces"])
        min_tops = self.ctx.top_bundles.get(min_b)
        #: one swap iterator per round, as in Pulsar
        self.min_iter: Iterator[TopBundle] | None = (
            iter(min_tops) if min_tops is not None else None)

    def run(self, tops: Sequence[TopBundle]) -> None:
        remaining = len(tops)
        for top in tops:
            skipped = self._skipped(top)
            if skipped is not None:
                self.steps.append(BundleStep(top.bundleName, top.throughput, "skipped",
                                             skipped))
                continue
            if remaining <= 1:
                self.steps.append(BundleStep(top.bundleName, top.throughput,
                                             "stopped", _LAST_ONE))
                break
            if top.throughput == 0 and self.skip_zero:
                self.steps.append(BundleStep(top.bundleName, top.throughput, "skipped",
                                             _ZERO))
                continue
            if not self._move(top):
                break
            remaining -= 1

    def _skipped(self, top: TopBundle) -> StepWhy | None:
        """Why a top bundle may not move at all (``None``: it may)."""
        ctx, bundle = self.ctx, top.bundleName
        if ctx.is_owner is not None and not ctx.is_owner(bundle, self.max_b):
            return StepWhy("not-owner", self.max_b)
        if namespace_of(bundle) in self.excluded:
            return _EXCLUDED
        if bundle in ctx.recently_unloaded_bundles:
            return _RECENTLY
        if ctx.transferable is not None:
            ok, why_not = ctx.transferable(bundle, self.max_b, self.min_b)
            if not ok:
                return StepWhy("not-transferable", self.min_b, inner=why_not)
        return None

    def _move(self, top: TopBundle) -> bool:
        """Move ``top`` (with the swaps that balance it, in transfer mode), or stop the walk
        (``False``) when it would overshoot the target."""
        bt = top.throughput
        swaps: list[Unload] = []
        swap_t = 0.0
        swap = False
        if self.marked - self.gained + bt > self.offload_t:
            swap, swaps, swap_t = self._swaps(bt) if self.transfer else (False, [], 0.0)
            if not swap:
                self.steps.append(BundleStep(top.bundleName, bt, "stopped", StepWhy(
                    "overshoot", amount=self.marked - self.gained + bt, target=self.offload_t,
                    swapping=self.transfer)))
                return False
        decisions = self.run_.decisions
        if self.transfer:
            if swap:
                for u in swaps:
                    decisions[UnloadDecision(u, Label.SUCCESS, self.reason)] = None
                if self.debug:
                    self.gained += swap_t
            unload = Unload(self.max_b, top.bundleName, self.min_b)
        else:
            unload = Unload(self.max_b, top.bundleName, None)
        decisions[UnloadDecision(unload, Label.SUCCESS, self.reason)] = None
        self.marked += bt
        why = StepWhy("moved", self.min_b, self.marked - self.gained, self.offload_t,
                      swaps=len(swaps) if swap else 0, swapped=swap_t if swap else 0.0)
        self.steps.append(BundleStep(top.bundleName, bt, "moved", why,
                                     tuple(swaps) if swap else ()))
        return True

    def _swaps(self, bt: float) -> tuple[bool, list[Unload], float]:
        """Bundles of the min broker that, moved back, balance moving ``bt`` (transfer mode):
        whether such a set was found, the swaps tried, and their throughput."""
        if self.min_iter is None:
            return False, [], 0.0
        ctx, skip_zero = self.ctx, self.skip_zero
        max_t = self.max_t
        max_new = max_t - self.marked + self.gained - bt
        min_new = self.min_t + self.marked - self.gained + bt
        swaps: list[Unload] = []
        swap_t = 0.0
        for mb in self.min_iter:
            if ctx.transferable is not None and not ctx.transferable(
                    mb.bundleName, self.min_b, self.max_b)[0]:
                continue
            mbt = mb.throughput
            if mbt == 0 and skip_zero:
                continue
            if max_new + mbt < max_t and min_new - mbt < max_t:
                swaps.append(Unload(self.min_b, mb.bundleName, self.max_b))
                max_new += mbt
                min_new -= mbt
                swap_t += mbt
                if min_new <= max_new and max_new < max_t * 0.75:
                    return True, swaps, swap_t
        return False, swaps, swap_t


# --- TransferShedder in the SHEDDING registry, behind the modular shedding protocol ---------------
# ``recommend``/``explain`` send an extensible snapshot, or ``--strategy TransferShedder``, to the
# extensible load manager (:mod:`lbctl.loadmanager.extensible`), which is the faithful path. This
# adapter exists so that code driving the modular cycle with a strategy from the registry (the
# simulator, ``compare``) also gets TransferShedder's decisions: it derives ``BrokerLoadData`` from
# each modular report exactly as the extensible cycle does (:func:`from_local_broker_data`, EMAs
# carried in the strategy memory), and returns TransferShedder's decisions as selections whose
# destination is the shedder's own (transfer mode).


class _Memory(Struct, frozen=True):
    hit_count: int = 0
    loads: dict[str, BrokerLoadData] = field(default_factory=dict)


class TransferShedderAdapter:
    name = NAME

    def initial_memory(self) -> Any:
        return _Memory()

    def shed(self, load: LoadData, settings: Settings, memory: Any
             ) -> tuple[SheddingDecision, Any]:
        mem = memory if isinstance(memory, _Memory) else _Memory()
        store: dict[str, BrokerLoadData] = {}
        for b, bd in load.brokers.items():
            sample = from_local_broker_data(bd.local, settings, load.now)
            prev = mem.loads.get(b)
            store[b] = (prev.update_from(sample, settings)
                        if prev is not None and sample.updatedAt > prev.updatedAt
                        else prev or sample)
        store = {b: store[b] for b in concurrent_order(store)}
        k = int(settings["loadBalancerMaxNumberOfBundlesInBundleLoadReport"])
        # TopBundleLoadDataReporter walks PulsarStats.bundleStats, the ConcurrentHashMap a
        # report's lastStats is the JSON walk of: the report's own order, as the extensible
        # cycle's derived top bundles and the split walk take it (bundle_stats_walk)
        tops = {b: top_k_bundles(bundle_stats_walk(bd.local.lastStats, iterated=True), k,
                                 settings)
                for b, bd in load.brokers.items()}
        ctx = ShedderInput(settings, load.now, store, tops, list(load.brokers),
                           dict(load.recently_unloaded))
        res = TransferShedder().find_bundles_for_unloading(ctx, mem.hit_count)
        selections = []
        verdicts: dict[str, BrokerVerdict] = {}
        for d in res.decisions:
            top = next((t for t in tops.get(d.unload.source, ())
                        if t.bundleName == d.unload.bundle), None)
            reason = Reason(str(d.reason))
            selections.append(Selection(
                d.unload.source, d.unload.bundle, reason,
                top.stats.msgRateIn + top.stats.msgRateOut if top else 0.0,
                top.throughput if top else 0.0, d.unload.destination))
            verdicts[d.unload.source] = BrokerVerdict(
                d.unload.source, store[d.unload.source].weightedMaxEMA,
                store[d.unload.source].weightedMaxEMA, Label.SUCCESS, reason)
        notes = (res.why,)
        decision = SheddingDecision(NAME, tuple(selections), verdicts, (), notes,
                                    {"avg": res.avg, "std": res.std, "hitCount": res.hit_count})
        return decision, _Memory(res.hit_count, store)


SHEDDING.register(NAME, PACKAGE, reads=(
    *WEIGHT_KEYS, "loadBalancerMemoryResourceWeight", "loadBalanceSheddingDelayInSeconds",
    "loadBalancerBrokerLoadDataTTLInSeconds", "loadBalancerBrokerLoadTargetStd",
    "loadBalancerBrokerOverloadedThresholdPercentage", "loadBalancerDebugModeEnabled",
    "loadBalancerHistoryResourcePercentage", "loadBalancerMaxNumberOfBrokerSheddingPerCycle",
    "loadBalancerMaxNumberOfBundlesInBundleLoadReport",
    "loadBalancerSheddingBundlesWithPoliciesEnabled",
    "loadBalancerSheddingConditionHitCountThreshold", "loadBalancerSheddingExcludedNamespaces",
    "loadBalancerTransferEnabled"))(TransferShedderAdapter)
