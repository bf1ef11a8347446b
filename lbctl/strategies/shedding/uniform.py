"""``UniformLoadShedder``: move load from the busiest broker when brokers differ too much.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.UniformLoadShedder`` (master, after PR #21906,
which removed the old ``+1000`` slack; no ``> 0`` traffic filter, which only an unmerged fork had).

Rules:

1. For every broker (``load.brokers`` order) take its report's message rate (``msgRateIn +
   msgRateOut``) and throughput (``msgThroughputIn + msgThroughputOut``). The maxima start at -1
   and the minima at ``Integer.MAX_VALUE``; a value replaces the current extreme only if strictly
   greater (smaller), so the *first* broker met wins a tie.
2. A minimum within ±1e-6 of zero is taken as 1.0.
3. The rate is uneven if ``loadBalancerMsgRateDifferenceShedderThreshold > 0`` and
   ``(max - min) * 100 / min`` exceeds it; the throughput is uneven if
   ``loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold > 0`` and ``max / min``
   exceeds it (a ratio, not a percentage). If neither, nothing happens.
4. Budgets are Java ``int``s: ``(int) ((max - min) * maxUnloadPercentage)`` for the rate and for
   the throughput — truncated toward zero, saturated at ±2^31-1.
5. The rate criterion has priority: if the rate is uneven only the busiest-by-rate broker is
   considered, with the rate budget and ``minUnloadMessage``; otherwise the busiest-by-throughput
   broker, with the throughput budget and ``minUnloadMessageThroughput``. There is no fallback from
   the rate branch to the throughput branch when the rate branch selects nothing.
6. That broker must own more than one bundle and the budget must be ``>= `` the minimum.
7. Its bundles in the shedding map that were not recently unloaded are valued by short-term rate
   (or throughput), sorted largest first (stable: ties keep the shedding map's Java order), and a
   bundle is selected when its value is ``<=`` the remaining budget; the budget then drops by the
   value truncated to ``int`` (``MutableInt.add(Number)``), with Java's 32-bit wrap-around.
   Zero-traffic bundles always fit. Larger bundles are skipped, smaller ones may still fit.
8. With ``maxUnloadBundleNumPerShedding != -1``, bundles after that many selections are skipped.

The strategy keeps no state between cycles (memory is ``None``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import MappingProxyType

from lbctl.config import Settings
from lbctl.model.decision import (
    BrokerVerdict,
    BundleCandidate,
    Label,
    Reason,
    Selection,
    SheddingDecision,
)
from lbctl.model.load import BundleData
from lbctl.model.loaddata import LoadData
from lbctl.strategies.registry import SHEDDING
from lbctl.strategies.shedding._select import (
    descending,
    shedding_candidates,
    short_term_rate,
    short_term_throughput,
    unranked_candidates,
)
from lbctl.units import mb_s, msg_s

INT_MAX = 2**31 - 1
INT_MIN = -(2**31)
#: UniformLoadShedder.EPS
EPS = 1e-6


def java_int(x: float) -> int:
    """Java's ``(int)`` cast of a double: NaN → 0, truncation toward zero, saturation."""
    if math.isnan(x):
        return 0
    if x >= INT_MAX:
        return INT_MAX
    if x <= INT_MIN:
        return INT_MIN
    return int(x)


def java_int_add(a: int, b: int) -> int:
    """``a + b`` on Java ``int``s (32-bit two's complement wrap-around)."""
    return (a + b + 2**31) % 2**32 - 2**31


@SHEDDING.register("UniformLoadShedder", reads=(
    "loadBalancerMsgRateDifferenceShedderThreshold",
    "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold",
    "maxUnloadBundleNumPerShedding", "maxUnloadPercentage", "minUnloadMessage",
    "minUnloadMessageThroughput"))
class UniformLoadShedder:
    """Pure port of ``UniformLoadShedder``; memory is ``None``."""

    name = "UniformLoadShedder"

    def initial_memory(self) -> None:
        return None

    def shed(
        self, load: LoadData, settings: Settings, memory: None
    ) -> tuple[SheddingDecision, None]:
        rate_thr = settings["loadBalancerMsgRateDifferenceShedderThreshold"]
        tp_mult = settings["loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold"]
        max_pct = settings["maxUnloadPercentage"]
        min_msg = settings["minUnloadMessage"]
        min_tp = settings["minUnloadMessageThroughput"]
        limit = settings["maxUnloadBundleNumPerShedding"]

        rates: dict[str, float] = {}
        tps: dict[str, float] = {}
        max_r = max_t = -1.0
        min_r = min_t = float(INT_MAX)
        over_r: str | None = None
        over_t: str | None = None
        under_r: str | None = None
        under_t: str | None = None
        for broker, data in load.brokers.items():
            r = rates[broker] = data.local.msgRateIn + data.local.msgRateOut
            t = tps[broker] = data.local.msgThroughputIn + data.local.msgThroughputOut
            # strict comparisons: the first broker met keeps a tie
            if r > max_r:
                over_r, max_r = broker, r
            if t > max_t:
                over_t, max_t = broker, t
            if r < min_r:
                under_r, min_r = broker, r
            if t < min_t:
                under_t, min_t = broker, t

        raw_min_r, raw_min_t = min_r, min_t
        if -EPS <= min_r <= EPS:
            min_r = 1.0
        if -EPS <= min_t <= EPS:
            min_t = 1.0
        rate_diff = (max_r - min_r) * 100 / min_r
        tp_ratio = max_t / min_t
        rate_ex = rate_thr > 0 and rate_diff > rate_thr
        tp_ex = tp_mult > 0 and tp_ratio > tp_mult
        req_r = java_int((max_r - min_r) * max_pct)
        req_t = java_int((max_t - min_t) * max_pct)

        numbers = {
            "maxMsgRate": max_r,
            "minMsgRate": min_r,
            "maxThroughput": max_t,
            "minThroughput": min_t,
            "msgRateDifferencePercentage": rate_diff,
            "msgThroughputDifferenceRate": tp_ratio,
            "msgRateRequired": float(req_r),
            "msgThroughputRequired": float(req_t),
        }
        notes: list[str] = []
        if not load.brokers:
            notes.append("no brokers: nothing to shed")
        else:
            rate_words = (
                "disabled (loadBalancerMsgRateDifferenceShedderThreshold ≤ 0)"
                if rate_thr <= 0
                else f"{'>' if rate_ex else '≤'} loadBalancerMsgRateDifferenceShedderThreshold "
                f"{rate_thr:g}%"
            )
            tp_words = (
                "disabled (loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold ≤ 0)"
                if tp_mult <= 0
                else f"{'>' if tp_ex else '≤'} "
                f"loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold {tp_mult:g}"
            )
            notes.append(
                f"msg rate: highest {over_r} {msg_s(max_r)}, lowest {under_r} "
                f"{msg_s(raw_min_r)}; difference (max - min) / min = {rate_diff:.1f}% "
                f"{rate_words}"
            )
            notes.append(
                f"throughput: highest {over_t} {mb_s(max_t)}, lowest {under_t} "
                f"{mb_s(raw_min_t)}; ratio max / min = {tp_ratio:.2f} {tp_words}"
            )
            if raw_min_r != min_r or raw_min_t != min_t:
                notes.append("a lowest figure of (almost) 0 counts as 1 in the comparison")

        verdicts: dict[str, BrokerVerdict] = {}

        def put(broker: str, label: Label, reason: Reason, why: str, **more: float) -> None:
            nums = {"msgRate": rates[broker], "throughput": tps[broker], **more}
            verdicts[broker] = BrokerVerdict(
                broker, None, None, label, reason, why, MappingProxyType(nums)
            )

        def figures(broker: str) -> str:
            return f"msg rate {msg_s(rates[broker])}, throughput {mb_s(tps[broker])}"

        selections: list[Selection] = []
        candidates: list[BundleCandidate] = []

        def finish() -> tuple[SheddingDecision, None]:
            decision = SheddingDecision(
                strategy=self.name,
                selections=tuple(selections),
                # verdicts in load.brokers order, whatever order they were decided in
                brokers=MappingProxyType({b: verdicts[b] for b in load.brokers}),
                candidates=tuple(candidates),
                notes=tuple(notes),
                numbers=MappingProxyType(numbers),
            )
            return decision, None

        if not (rate_ex or tp_ex):
            if load.brokers:
                notes.append("nothing selected: the load is uniform enough by both criteria")
            for broker in load.brokers:
                put(
                    broker,
                    Label.SKIP,
                    Reason.BALANCED,
                    f"{figures(broker)}: brokers are within both thresholds, nothing is shed",
                )
            return finish()

        # The msg-rate criterion has priority over the throughput one.
        if rate_ex:
            source, budget, minimum, dest = over_r, req_r, min_msg, under_r
            metric, min_key = "msg rate", "minUnloadMessage"
            value_of = short_term_rate
            fmt: Callable[[float], str] = msg_s
            notes.append(
                f"msg rate is uneven: shedding from {source}, the broker with the highest msg "
                f"rate; budget (int)(({msg_s(max_r)} - {msg_s(min_r)}) x "
                f"maxUnloadPercentage {max_pct:g}) = {budget} msg/s"
                + (" (the throughput criterion is not looked at)" if tp_ex else "")
            )
        else:
            source, budget, minimum, dest = over_t, req_t, min_tp, under_t
            metric, min_key = "throughput", "minUnloadMessageThroughput"
            value_of = short_term_throughput
            fmt = mb_s
            notes.append(
                f"throughput is uneven: shedding from {source}, the broker with the highest "
                f"throughput; budget (int)(({mb_s(max_t)} - {mb_s(min_t)}) x "
                f"maxUnloadPercentage {max_pct:g}) = {budget} bytes/s"
            )

        for broker in load.brokers:
            if broker == source:
                continue
            if broker == dest:
                put(
                    broker,
                    Label.SKIP,
                    Reason.UNDERLOADED,
                    f"{figures(broker)}: lowest {metric}; Pulsar only notes it as underloaded, "
                    "placement chooses where the shed bundles go",
                )
            else:
                put(
                    broker,
                    Label.SKIP,
                    Reason.BALANCED,
                    f"{figures(broker)}: not the broker with the highest {metric} ({source})",
                )

        if source is None:  # every figure below -1: Pulsar would fail on a null broker name
            notes.append(f"nothing selected: no broker has a {metric} above -1")
            return finish()

        n_bundles = len(load.brokers[source].local.bundles)
        if n_bundles <= 1:
            put(
                source,
                Label.SKIP,
                Reason.NO_BUNDLES,
                f"{figures(source)}: highest {metric}, but it has {n_bundles} bundle(s): "
                "Pulsar never sheds a single-bundle broker",
                budget=float(budget),
            )
            notes.append(f"nothing selected: {source} has {n_bundles} bundle(s)")
            return finish()
        if budget < minimum:
            put(
                source,
                Label.SKIP,
                Reason.OVERLOADED,
                f"{figures(source)}: highest {metric}, but the budget {fmt(budget)} < "
                f"{min_key} {minimum}",
                budget=float(budget),
            )
            notes.append(f"nothing selected: budget {budget} < {min_key} {minimum}")
            return finish()

        remaining = self._select(load, source, budget, limit, value_of, fmt, selections, candidates)
        if selections:
            put(
                source,
                Label.SUCCESS,
                Reason.OVERLOADED,
                f"{figures(source)}: highest {metric}; {len(selections)} bundle(s) selected "
                f"within the budget {fmt(budget)}",
                budget=float(budget),
                remaining=float(remaining),
            )
            notes.append(f"{len(selections)} bundle(s) selected from {source}")
        else:
            put(
                source,
                Label.SKIP,
                Reason.NO_BUNDLES,
                f"{figures(source)}: highest {metric}, but no bundle fits the budget {fmt(budget)}",
                budget=float(budget),
                remaining=float(remaining),
            )
            notes.append(f"nothing selected: no bundle of {source} fits the budget {budget}")
        return finish()

    @staticmethod
    def _select(
        load: LoadData,
        source: str,
        budget: int,
        limit: int,
        value_of: Callable[[BundleData], float],
        fmt: Callable[[float], str],
        selections: list[Selection],
        candidates: list[BundleCandidate],
    ) -> int:
        """Rules 7 and 8; appends to ``selections`` and ``candidates``, returns the budget left."""
        table = load.bundle_data
        owned = load.brokers[source].local.bundles
        ranked = [(b, value_of(table[b])) for b in shedding_candidates(
            load, owned, lambda b: value_of(table[b]))]
        ranked.sort(key=lambda item: descending(item[1]))  # stable, like Java's Stream.sorted
        remaining = budget
        for bundle, value in ranked:
            if bundle in load.recently_unloaded:
                why = "recently unloaded (within loadBalancerSheddingGracePeriodMinutes)"
                candidates.append(BundleCandidate(source, bundle, value, False, why))
                continue
            if limit != -1 and len(selections) >= limit:
                why = f"limit reached: maxUnloadBundleNumPerShedding {limit}"
                candidates.append(BundleCandidate(source, bundle, value, False, why))
                continue
            if value <= remaining:
                left = java_int_add(remaining, java_int(-value))
                why = f"fits the remaining budget {fmt(remaining)}; {fmt(left)} left"
                remaining = left
                data = table[bundle]
                selections.append(
                    Selection(
                        source,
                        bundle,
                        Reason.OVERLOADED,
                        short_term_rate(data),
                        short_term_throughput(data),
                    )
                )
                candidates.append(BundleCandidate(source, bundle, value, True, why))
            else:
                why = f"too large: {fmt(value)} > remaining budget {fmt(remaining)}"
                candidates.append(BundleCandidate(source, bundle, value, False, why))
        candidates.extend(unranked_candidates(load, source, owned))
        return remaining
