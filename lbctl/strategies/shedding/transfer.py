"""``extensions.scheduler.TransferShedder``: the extensible load manager's shedding strategy.

One call is one ``findBundlesForUnloading``:

A. **Load statistics** (``LoadStats.update``) over the load-data store, in its iteration order:
   skip outdated brokers (``now − updatedAt > loadBalancerBrokerLoadDataTTLInSeconds``), stop the
   whole cycle for a broker still cooling down (``updatedAt − lastUnload <
   loadBalanceSheddingDelayInSeconds``: Skip/CoolDown), then Skip/OutDatedData or Skip/NoBrokers
   when nothing is left, Skip/NoLoadData when an available broker has no data; otherwise the mean
   and population standard deviation of ``weightedMaxEMA``. The store is stable-sorted by load.
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
throughput are skipped on both sides (PR #23626; before it, they could move).

Quirks kept on purpose (see the shared reference §2.7): failed rounds keep the same min broker;
the swap gain only counts with ``loadBalancerDebugModeEnabled`` (``trafficMarkedToGain`` is updated
inside the debug branch); unload mode still checks the min broker's filters; outdated brokers stay
in the sorted list; one swap iterator per round. Ties in load keep the store's order.

The strategy is pure: everything it needs comes in a :class:`ShedderInput`, and every step is
recorded in the returned :class:`ShedResult` for ``explain``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

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
    Selection,
    SheddingDecision,
    ShedResult,
    Unload,
    UnloadDecision,
)
from lbctl.model.javaorder import concurrent_order, java_hash_order
from lbctl.model.loaddata import LoadData
from lbctl.strategies.registry import SHEDDING

NAME = "TransferShedder"
PACKAGE = "org.apache.pulsar.broker.loadbalance.extensions.scheduler"

#: (bundle, source, destination or None) -> (transferable, why not)
Transferable = Callable[[str, str, str | None], tuple[bool, str]]


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
        self.sq_sum -= mx * mx + mn * mn
        maxd = max(0.0, mx - amount)
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
        try:
            return _Run(ctx, hit_count).run()
        except Exception as e:  # Pulsar: any Throwable → Failure/Unknown
            return ShedResult((), (Label.FAILURE, Reason.UNKNOWN),
                              f"the shedding cycle failed: {type(e).__name__}: {e}",
                              hit_count, hit_count,
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
        self.initial_std = 0.0
        self.hit_gate = hit_count

    # --- predicates -------------------------------------------------------------------------------
    def underloaded(self, broker: str) -> tuple[bool, str]:
        data = self.ctx.store.get(broker)
        if data is None:
            return False, f"{broker} has no load data"
        m = min(0.5, max(0.0, self.target / 2.0))
        if data.weightedMaxEMA < self.stats.avg * m:
            return True, (f"{broker}'s load {data.weightedMaxEMA:.4f} < avg {self.stats.avg:.4f} × "
                          f"{m:g}")
        if self.conf.profile["transferUnderloadedRule"] == "absolute":  # before PR #22321
            if data.msgThroughputEMA < 1:
                return True, f"{broker}'s msgThroughputEMA {data.msgThroughputEMA:,.2f} B/s < 1"
            return False, (f"{broker} is not underloaded: load {data.weightedMaxEMA:.4f} >= "
                           f"avg×{m:g} = {self.stats.avg * m:.4f} and throughput EMA "
                           f"{data.msgThroughputEMA:,.0f} >= 1 B/s")
        mx = self.ctx.store.get(self.stats.peek_max())
        if mx is None:
            return False, f"{broker} is not underloaded (the max broker has no load data)"
        if data.msgThroughputEMA < mx.msgThroughputEMA * m:
            return True, (f"{broker}'s msgThroughputEMA {data.msgThroughputEMA:,.0f} B/s < "
                          f"{self.stats.peek_max()}'s {mx.msgThroughputEMA:,.0f} B/s × {m:g}")
        return False, (f"{broker} is not underloaded: load {data.weightedMaxEMA:.4f} >= "
                       f"avg×{m:g} = {self.stats.avg * m:.4f} and throughput EMA "
                       f"{data.msgThroughputEMA:,.0f} >= {mx.msgThroughputEMA * m:,.0f} B/s")

    def overloaded(self, broker: str) -> tuple[bool, str]:
        data = self.ctx.store.get(broker)
        if data is None:
            return False, f"{broker} has no load data"
        thr = int(self.conf["loadBalancerBrokerOverloadedThresholdPercentage"]) / 100.0
        load = data.weightedMaxEMA
        if load > thr and load > self.stats.avg + self.target:
            return True, (f"{broker}'s load {load:.4f} > {thr:g} and > avg + targetStd = "
                          f"{self.stats.avg + self.target:.4f}")
        return False, (f"{broker} is not overloaded: load {load:.4f} vs threshold {thr:g} and "
                       f"avg + targetStd {self.stats.avg + self.target:.4f}")

    # --- phase A ------------------------------------------------------------------------------------
    def load_stats(self) -> Reason | None:
        conf, ctx, st = self.conf, self.ctx, self.stats
        st.max_shed = int(conf["loadBalancerMaxNumberOfBrokerSheddingPerCycle"])
        ttl_ms = int(conf["loadBalancerBrokerLoadDataTTLInSeconds"]) * 1000
        delay_ms = int(conf["loadBalanceSheddingDelayInSeconds"]) * 1000
        reason: Reason | None = None
        total = sq = 0.0
        n = 0
        missing = dict.fromkeys(ctx.available or ())
        recently = ctx.recently_unloaded_brokers
        for broker, data in ctx.store.items():
            missing.pop(broker, None)
            if ctx.now - data.updatedAt > ttl_ms:
                age = (ctx.now - data.updatedAt) / 1000
                self.brokers.append(BrokerStat(broker, data.weightedMaxEMA, False,
                                               f"outdated: sampled {age:,.0f} s ago > "
                                               f"loadBalancerBrokerLoadDataTTLInSeconds"))
                reason = Reason.OUTDATED_DATA
                continue
            if broker in recently:
                elapsed = data.updatedAt - recently[broker]
                if elapsed < delay_ms:
                    self.brokers.append(BrokerStat(
                        broker, data.weightedMaxEMA, False,
                        f"cooling down: its load was sampled {elapsed / 1000:,.0f} s after its "
                        f"last unload, < loadBalanceSheddingDelayInSeconds "
                        f"({delay_ms // 1000} s)"))
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
    def result(self, skip: tuple[Label, Reason] | None, why: str, *, counted: bool,
               condition: Mapping[str, bool] | None = None, rounds: Sequence[Round] = (),
               stop: str = "") -> ShedResult:
        st = self.stats
        return ShedResult(
            tuple(self.decisions), skip, why, self.hit_before, self.hit, self.threshold,
            st.avg if counted else 0.0, self.initial_std if counted else 0.0, st.std,
            tuple(self.brokers), tuple(b for b, _ in st.sorted), dict(condition or {}),
            tuple(rounds), stop, tuple(self.expired), self.hit_gate)

    def run(self) -> ShedResult:
        ctx, conf, st = self.ctx, self.conf, self.stats
        if ctx.available is None:
            return self.result((Label.FAILURE, Reason.UNKNOWN),
                               "the broker registry could not be read", counted=False)
        st.sorted = sorted(ctx.store.items(), key=lambda e: e[1].weightedMaxEMA)  # stable
        st.max_idx = len(st.sorted) - 1
        st.min_idx = 0
        skip = self.load_stats()
        if skip is not None:
            return self.result((Label.SKIP, skip), self._phase_a_why(skip), counted=False)

        debug = bool(conf["loadBalancerDebugModeEnabled"])
        transfer = bool(conf["loadBalancerTransferEnabled"])
        under, why_under = self.underloaded(st.peek_min())
        over, why_over = self.overloaded(st.peek_max())
        condition = {"stdAboveTarget": st.std > self.target, "minUnderloaded": under,
                     "maxOverloaded": over}
        if st.std > self.target or under or over:
            self.hit += 1
        else:
            self.hit = 0
        self.hit_gate = self.hit
        if self.hit <= self.threshold:
            if self.hit == 0:
                why = (f"balanced: std {st.std:.4f} <= loadBalancerBrokerLoadTargetStd "
                       f"{self.target:g}; {why_under}; {why_over}")
            else:
                why = (f"the shedding condition held {self.hit} time(s) in a row, not more than "
                       f"loadBalancerSheddingConditionHitCountThreshold ({self.threshold})")
            return self.result((Label.SKIP, Reason.HIT_COUNT), why, counted=True,
                               condition=condition)

        rounds: list[Round] = []
        empty_data = few_bundles = 0
        stop = ""
        while True:
            if not st.has_transferable_brokers():
                stop = ("loadBalancerMaxNumberOfBrokerSheddingPerCycle reached"
                        if st.shed_count >= st.max_shed else
                        "no broker pair left (the min and max indexes met)")
                break
            if st.std > self.target:
                reason, why_reason = Reason.OVERLOADED, (
                    f"std {st.std:.4f} > loadBalancerBrokerLoadTargetStd {self.target:g}")
            else:
                under, why_under = self.underloaded(st.peek_min())
                if under:
                    reason, why_reason = Reason.UNDERLOADED, why_under
                else:
                    over, why_over = self.overloaded(st.peek_max())
                    if over:
                        reason, why_reason = Reason.OVERLOADED, why_over
                    else:
                        stop = (f"balanced: std {st.std:.4f} <= target {self.target:g}, "
                                f"{why_under}, {why_over}")
                        break
            rnd, outcome = self.one_round(reason, why_reason, transfer, debug)
            rounds.append(rnd)
            if outcome == "empty":
                empty_data += 1
            elif outcome == "few":
                few_bundles += 1

        if not self.decisions:
            if empty_data > 0:
                r = Reason.NO_LOAD_DATA
                why = "no bundle moved: a max or min broker had no load data or no top bundles"
            elif few_bundles > 0:
                r = Reason.NO_BUNDLES
                why = "no bundle moved: the max brokers had no bundle that could move"
            else:
                r = Reason.HIT_COUNT
                why = f"no bundle moved: {stop}"
            return self.result((Label.SKIP, r), why, counted=True, condition=condition,
                               rounds=rounds, stop=stop)
        self.hit = 0
        return self.result(None, f"{len(self.decisions)} decision(s); loop ended: {stop}",
                           counted=True, condition=condition, rounds=rounds, stop=stop)

    def _phase_a_why(self, reason: Reason) -> str:
        if reason is Reason.COOL_DOWN:
            b = self.brokers[-1]
            return f"{b.broker} is {b.why}"
        if reason is Reason.OUTDATED_DATA:
            return ("every broker's load data is older than loadBalancerBrokerLoadDataTTLInSeconds "
                    f"({int(self.conf['loadBalancerBrokerLoadDataTTLInSeconds'])} s)")
        if reason is Reason.NO_BROKERS:
            return "there is no broker load data at all"
        missing = ", ".join(getattr(self, "missing", []))
        return f"available broker(s) without load data: {missing}"

    def one_round(self, reason: Reason, why_reason: str, transfer: bool,
                  debug: bool) -> tuple[Round, str]:
        ctx, st = self.ctx, self.stats
        std_before = st.std
        max_b = st.sorted[st.max_idx][0]
        st.max_idx -= 1
        min_b = st.peek_min()
        max_d = ctx.store.get(max_b)
        min_d = ctx.store.get(min_b)

        def fail(outcome: str, why: str, kind: str, **kw: float | None) -> tuple[Round, str]:
            return Round(reason, why_reason, max_b, min_b, std_before, st.std, outcome, why,
                         **kw), kind  # type: ignore[arg-type]  # the optional float fields

        if max_d is None:
            return fail("no load data", f"{max_b} has no load data", "empty")
        if min_d is None:
            return fail("no load data", f"{min_b} has no load data", "empty")
        max_load, min_load = max_d.weightedMaxEMA, min_d.weightedMaxEMA
        offload = (max_load - min_load) / 2
        max_t, min_t = max_d.throughput, min_d.throughput
        offload_t = max_t * offload / max_load if max_load else math.nan
        nums = {"max_load": max_load, "min_load": min_load, "offload": offload,
                "offload_throughput": offload_t, "max_throughput": max_t, "min_throughput": min_t}
        tops = ctx.top_bundles.get(max_b)
        if not tops:
            return fail("no load data", f"{max_b} has no top-bundles load data", "empty", **nums)
        if len(tops) == 1:
            return fail("few bundles", f"its sole top bundle {tops[0].bundleName} is overloading "
                        f"{max_b}", "few", **nums)
        min_tops = ctx.top_bundles.get(min_b)
        min_iter = iter(min_tops) if min_tops is not None else None

        marked = gained = 0.0
        remaining = len(tops)
        skip_zero = bool(self.conf.profile["transferSkipsZeroThroughput"])  # PR #23626
        excluded = set(self.conf["loadBalancerSheddingExcludedNamespaces"])
        steps: list[BundleStep] = []
        for top in tops:
            bundle = top.bundleName
            bt = top.throughput
            if ctx.is_owner is not None and not ctx.is_owner(bundle, max_b):
                steps.append(BundleStep(bundle, bt, "skipped", f"{max_b} is not its owner"))
                continue
            if namespace_of(bundle) in excluded:
                steps.append(BundleStep(bundle, bt, "skipped",
                                        "namespace in loadBalancerSheddingExcludedNamespaces"))
                continue
            if bundle in ctx.recently_unloaded_bundles:
                steps.append(BundleStep(bundle, bt, "skipped", "recently unloaded (grace period)"))
                continue
            if ctx.transferable is not None:
                ok, why_not = ctx.transferable(bundle, max_b, min_b)
                if not ok:
                    steps.append(BundleStep(bundle, bt, "skipped",
                                            f"not transferable to {min_b}: {why_not}"))
                    continue
            if remaining <= 1:
                steps.append(BundleStep(bundle, bt, "stopped",
                                        "only one top bundle left on the broker; it stays"))
                break
            if bt == 0 and skip_zero:
                steps.append(BundleStep(bundle, bt, "skipped", "zero throughput"))
                continue
            swap = False
            swaps: list[Unload] = []
            swap_t = 0.0
            if marked - gained + bt > offload_t:
                if transfer and min_iter is not None:
                    max_new = max_t - marked + gained - bt
                    min_new = min_t + marked - gained + bt
                    for mb in min_iter:
                        if ctx.transferable is not None and not ctx.transferable(
                                mb.bundleName, min_b, max_b)[0]:
                            continue
                        mbt = mb.throughput
                        if mbt == 0 and skip_zero:
                            continue
                        if max_new + mbt < max_t and min_new - mbt < max_t:
                            swaps.append(Unload(min_b, mb.bundleName, max_b))
                            max_new += mbt
                            min_new -= mbt
                            swap_t += mbt
                            if min_new <= max_new and max_new < max_t * 0.75:
                                swap = True
                                break
                if not swap:
                    steps.append(BundleStep(
                        bundle, bt, "stopped",
                        f"moving it would offload {marked - gained + bt:,.0f} B/s > the target "
                        f"{offload_t:,.0f} B/s" + ("" if not transfer else
                                                   " and no swap from the min broker balances it")))
                    break
            if transfer:
                if swap:
                    for u in swaps:
                        self.decisions[UnloadDecision(u, Label.SUCCESS, reason)] = None
                    if debug:
                        gained += swap_t
                unload = Unload(max_b, bundle, min_b)
            else:
                unload = Unload(max_b, bundle, None)
            self.decisions[UnloadDecision(unload, Label.SUCCESS, reason)] = None
            marked += bt
            remaining -= 1
            why = (f"{marked - gained:,.0f} of {offload_t:,.0f} B/s marked to offload"
                   + (f"; swapped {len(swaps)} bundle(s) ({swap_t:,.0f} B/s) back from {min_b}"
                      if swap else ""))
            steps.append(BundleStep(bundle, bt, "moved", why, tuple(swaps) if swap else ()))

        if marked > 0:
            adj = (marked - gained) * max_load / max_t
            st.offload(max_load, min_load, adj)
            return Round(reason, why_reason, max_b, min_b, std_before, st.std, "offloaded",
                         f"offloaded {marked - gained:,.0f} B/s ≈ {adj:.4f} load",
                         marked=marked, gained=gained, adjusted_offload=adj,
                         bundles=tuple(steps), **nums), "ok"
        return Round(reason, why_reason, max_b, min_b, std_before, st.std, "nothing movable",
                     "no top bundle of the broker could be moved", bundles=tuple(steps),
                     **nums), "few"


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
        tops = {b: top_k_bundles(((x, bd.local.lastStats[x])
                                  for x in java_hash_order(bd.local.lastStats)), k, settings)
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
