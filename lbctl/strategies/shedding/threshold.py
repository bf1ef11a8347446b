"""``ThresholdShedder``: shed brokers whose smoothed usage is well above the cluster average.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder`` (the master version with
lower-boundary shedding, weights as changed by PR #19559). Pulsar's default shedding strategy.

Rules, in Pulsar's order:

1. Usage of a broker is ``getMaxResourceUsageWithWeight`` of its report (4-argument form since
   Pulsar 3.0, PR #19559): ``loadBalancerCPUResourceWeight``,
   ``loadBalancerDirectMemoryResourceWeight``, ``loadBalancerBandwidthIn/OutResourceWeight``.
   Before 3.0 the 5-argument form also weighed JVM heap with ``loadBalancerMemoryResourceWeight``
   (:meth:`lbctl.config.Settings.weighted_usage` follows the version profile).
2. Each broker's usage is smoothed across cycles (the strategy instance's
   ``brokerAvgResourceUsage`` map, here the memory): the first sample is taken as is, later ones as
   ``old * H + (1 - H) * usage`` with ``H = loadBalancerHistoryResourcePercentage``. Entries of
   brokers that left are kept, as in Pulsar (no pruning).
3. The average is the mean of the smoothed usages of all brokers. If it is 0 nothing happens.
4. A broker whose smoothed usage is ``>= average + loadBalancerBrokerThresholdShedderPercentage``
   is overloaded. It should offload ``usage - average - threshold + 5 %`` of its message throughput
   (``msgThroughputIn + msgThroughputOut`` of its report).
5. If that is less than ``loadBalancerBundleUnloadMinThroughputThreshold`` MB/s, it is skipped.
6. A broker with one bundle (or none) is never shed; otherwise the greedy selector
   (:mod:`lbctl.strategies.shedding._select`) picks its largest bundles.
7. If nothing was selected and ``lowerBoundarySheddingEnabled``: the average is computed again —
   which smooths every broker's usage a *second* time in the same cycle, as Pulsar does — and, if
   some broker is below ``average - threshold``, the broker with the highest smoothed usage above
   ``average - threshold`` that has more than one bundle offloads ``throughput * threshold * 0.5``,
   unless that is below the minimum throughput of rule 5 (equality proceeds).

Ties: brokers are visited in ``load.brokers`` order (Java ``HashMap`` order); in rule 7 the first
broker with the highest usage wins. Bundles tie as in the greedy selector.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from lbctl.config import MB, USAGE_KEYS, Settings
from lbctl.model.decision import (
    BrokerVerdict,
    BundleCandidate,
    Label,
    Reason,
    Selection,
    SheddingDecision,
)
from lbctl.model.loaddata import LoadData
from lbctl.strategies.registry import SHEDDING
from lbctl.strategies.shedding._select import select_greedy
from lbctl.units import mb_s, pct

#: ThresholdShedder.ADDITIONAL_THRESHOLD_PERCENT_MARGIN
ADDITIONAL_THRESHOLD_PERCENT_MARGIN = 0.05
#: ThresholdShedder.LOWER_BOUNDARY_THRESHOLD_MARGIN
LOWER_BOUNDARY_THRESHOLD_MARGIN = 0.5

Memory = Mapping[str, float]


def _decision(
    verdicts: dict[str, BrokerVerdict],
    selections: Sequence[Selection],
    candidates: Sequence[BundleCandidate],
    notes: Sequence[str],
    numbers: Mapping[str, float],
) -> SheddingDecision:
    return SheddingDecision(
        strategy="ThresholdShedder",
        selections=tuple(selections),
        brokers=MappingProxyType(verdicts),
        candidates=tuple(candidates),
        notes=tuple(notes),
        numbers=MappingProxyType(dict(numbers)),
    )


def _smooth(
    load: LoadData, history: dict[str, float], usage: Mapping[str, float], h: float
) -> float:
    """``getBrokerAvgUsage``: update every broker's smoothed usage and return their mean."""
    total = 0.0
    count = 0
    for broker in load.brokers:
        old = history.get(broker)
        new = usage[broker] if old is None else old * h + (1 - h) * usage[broker]
        history[broker] = new
        total += new
        count += 1
    return total / count if count > 0 else 0.0


@SHEDDING.register("ThresholdShedder", reads=(
    *USAGE_KEYS, "loadBalancerBrokerThresholdShedderPercentage",
    "loadBalancerBundleUnloadMinThroughputThreshold", "loadBalancerHistoryResourcePercentage",
    "lowerBoundarySheddingEnabled"))
class ThresholdShedder:
    """Pure port of ``ThresholdShedder``; memory = broker → smoothed usage (fraction)."""

    name = "ThresholdShedder"

    def initial_memory(self) -> Memory:
        return MappingProxyType({})

    def shed(
        self, load: LoadData, settings: Settings, memory: Memory
    ) -> tuple[SheddingDecision, Memory]:
        thr_pct = settings["loadBalancerBrokerThresholdShedderPercentage"]
        threshold = thr_pct / 100.0
        min_mb = settings["loadBalancerBundleUnloadMinThroughputThreshold"]
        min_tp = min_mb * MB
        h = settings["loadBalancerHistoryResourcePercentage"]
        lower_enabled = settings["lowerBoundarySheddingEnabled"]
        # Settings.weighted_usage with its weights read once, not once per broker
        weights = settings.weights4()
        memory_weight = settings.weighted_usage_memory_weight()
        usage = {b: float(d.local.max_resource_usage_with_weight(
                     *weights, memory_weight=memory_weight))
                 for b, d in load.brokers.items()}
        history = dict(memory)
        avg = _smooth(load, history, usage, h)
        trigger = avg + threshold
        notes: list[str] = []
        numbers: dict[str, float] = {
            "average": avg,
            "threshold": threshold,
            "trigger": trigger,
            "minThroughput": min_tp,
            "historyPercentage": h,
        }

        def done(
            verdicts: dict[str, BrokerVerdict],
            selections: Sequence[Selection] = (),
            candidates: Sequence[BundleCandidate] = (),
        ) -> tuple[SheddingDecision, Memory]:
            decision = _decision(verdicts, selections, candidates, notes, numbers)
            return decision, MappingProxyType(history)

        if not load.brokers:
            notes.append("no brokers: nothing to shed")
            return done({})

        def base_numbers(broker: str) -> dict[str, float]:
            local = load.brokers[broker].local
            return {
                "usage": usage[broker],
                "smoothed": history[broker],
                "average": avg,
                "threshold": threshold,
                "trigger": trigger,
                "throughput": local.msgThroughputIn + local.msgThroughputOut,
                "bundles": float(len(local.bundles)),
            }

        avg_words, trigger_words = pct(avg), pct(trigger)  # said of every broker: once

        def usage_words(broker: str) -> str:
            return f"usage {pct(usage[broker])} (smoothed {pct(history[broker])})"

        notes.append(
            f"average smoothed usage of {len(load.brokers)} brokers is {pct(avg)}; "
            f"a broker is shed at average + loadBalancerBrokerThresholdShedderPercentage {thr_pct}% "
            f"= {pct(trigger)} or more "
            f"(history weight loadBalancerHistoryResourcePercentage {h})"
        )

        verdicts: dict[str, BrokerVerdict] = {}

        def put(
            broker: str, label: Label, reason: Reason, why: str, nums: dict[str, float]
        ) -> None:
            verdicts[broker] = BrokerVerdict(
                broker,
                usage[broker],
                history[broker],
                label,
                reason,
                why,
                MappingProxyType(nums),
            )

        if avg == 0:
            notes.append(
                "the average usage is 0, so ThresholdShedder stops here: nothing is shed "
                "(not even by lower-boundary shedding)"
            )
            for broker in load.brokers:
                put(
                    broker,
                    Label.SKIP,
                    Reason.BALANCED,
                    f"{usage_words(broker)}: the cluster average is 0, nothing is shed",
                    base_numbers(broker),
                )
            return done(verdicts)

        selections: list[Selection] = []
        candidates: list[BundleCandidate] = []
        for broker, data in load.brokers.items():
            local = data.local
            nums = base_numbers(broker)
            current = history[broker]
            if current < trigger:
                put(
                    broker,
                    Label.SKIP,
                    Reason.BALANCED,
                    f"{usage_words(broker)} is below average {avg_words} + threshold "
                    f"{thr_pct}% = {trigger_words}",
                    nums,
                )
                continue
            fraction = current - avg - threshold + ADDITIONAL_THRESHOLD_PERCENT_MARGIN
            throughput = local.msgThroughputIn + local.msgThroughputOut
            need = throughput * fraction
            nums.update(offloadFraction=fraction, need=need, minThroughput=min_tp)
            over = (
                f"{usage_words(broker)} ≥ average {avg_words} + threshold {thr_pct}% "
                f"= {trigger_words}; it should offload {pct(fraction)} of its "
                f"{mb_s(throughput)} = {mb_s(need)}"
            )
            if need < min_tp:
                put(
                    broker,
                    Label.SKIP,
                    Reason.OVERLOADED,
                    f"{over}, but needs {mb_s(need)} < "
                    f"loadBalancerBundleUnloadMinThroughputThreshold {min_mb:g} MB/s",
                    nums,
                )
                continue
            n_bundles = len(local.bundles)
            if n_bundles > 1:
                got = select_greedy(load, broker, data, need, Reason.OVERLOADED)
                selections.extend(got.selections)
                candidates.extend(got.candidates)
                nums["selected"] = got.marked
                if got.selections:
                    put(
                        broker,
                        Label.SUCCESS,
                        Reason.OVERLOADED,
                        f"{over}: {len(got.selections)} bundle(s) with "
                        f"{mb_s(got.marked)} selected",
                        nums,
                    )
                else:
                    put(
                        broker,
                        Label.SKIP,
                        Reason.NO_BUNDLES,
                        f"{over}, but none of its {n_bundles} bundles can be shed "
                        "(recently unloaded, system namespace or no bundle data)",
                        nums,
                    )
            elif n_bundles == 1:
                put(
                    broker,
                    Label.SKIP,
                    Reason.NO_BUNDLES,
                    f"{over}, but it has only 1 bundle: Pulsar never sheds a single-bundle broker",
                    nums,
                )
            else:
                put(
                    broker,
                    Label.SKIP,
                    Reason.NO_BUNDLES,
                    f"{over}, but it has no bundles",
                    nums,
                )

        if selections:
            sources = sorted({s.broker for s in selections}, key=list(load.brokers).index)
            notes.append(f"{len(selections)} bundle(s) selected from {', '.join(sources)}")
            return done(verdicts, tuple(selections), tuple(candidates))

        over_brokers = [b for b in load.brokers if history[b] >= trigger]
        if over_brokers:
            notes.append(
                f"nothing selected: {', '.join(over_brokers)} reached {pct(trigger)} but "
                "could not be shed (see each broker)"
            )
        else:
            notes.append(f"nothing selected: no broker reaches {pct(trigger)}")
        if not lower_enabled:
            notes.append("lowerBoundarySheddingEnabled is false: no lower-boundary shedding")
            return done(verdicts, (), candidates)

        chosen = _lower_boundary(
            load, settings, history, usage, verdicts, candidates, notes, numbers
        )
        return done(verdicts, chosen, candidates)


def _lower_boundary(
    load: LoadData,
    settings: Settings,
    history: dict[str, float],
    usage: Mapping[str, float],
    verdicts: dict[str, BrokerVerdict],
    candidates: list[BundleCandidate],
    notes: list[str],
    numbers: dict[str, float],
) -> tuple[Selection, ...]:
    """``tryLowerBoundaryShedding`` (rule 7 of the module docstring).

    Updates ``history`` (second smoothing), ``verdicts``, ``candidates``, ``notes`` and ``numbers``
    in place and returns the selections.
    """
    thr_pct = settings["loadBalancerBrokerThresholdShedderPercentage"]
    threshold = thr_pct / 100.0
    min_mb = settings["loadBalancerBundleUnloadMinThroughputThreshold"]
    min_tp = min_mb * MB
    h = settings["loadBalancerHistoryResourcePercentage"]

    # Pulsar calls getBrokerAvgUsage() again: every smoothed usage takes the sample twice.
    avg2 = _smooth(load, history, usage, h)
    lower = avg2 - threshold
    numbers.update(lowerBoundaryAverage=avg2, lowerBound=lower)

    max_usage = lower
    max_broker: str | None = None
    below: list[str] = []
    for broker, data in load.brokers.items():
        current = history[broker]
        # strict >: the first broker with the highest usage wins a tie
        if current > max_usage and len(data.local.bundles) > 1:
            max_usage = current
            max_broker = broker
        if current < lower:
            below.append(broker)

    notes.append(
        f"lower-boundary shedding: average recomputed as {pct(avg2)} (Pulsar smooths "
        f"every usage a second time this cycle); lower bound = average - {thr_pct}% "
        f"= {pct(lower)}"
    )

    def annotate(
        broker: str, label: Label, reason: Reason, extra: str, more: Mapping[str, float]
    ) -> None:
        # the score stays the first-pass smoothed usage; the second one goes to the numbers
        old = verdicts[broker]
        nums = dict(old.numbers)
        nums.update(more, smoothedTwice=history[broker], lowerBound=lower)
        verdicts[broker] = BrokerVerdict(
            broker,
            old.usage,
            old.score,
            label,
            reason,
            f"{old.why}; {extra}",
            MappingProxyType(nums),
        )

    if max_broker is None:
        notes.append(
            f"nothing selected: no broker with more than one bundle is above the lower "
            f"bound {pct(lower)}"
        )
        return ()
    if not below:
        notes.append(
            f"nothing selected: no broker is below the lower bound {pct(lower)} "
            f"(the busiest, {max_broker}, is at {pct(max_usage)})"
        )
        return ()

    local = load.brokers[max_broker].local
    throughput = local.msgThroughputIn + local.msgThroughputOut
    need = throughput * threshold * LOWER_BOUNDARY_THRESHOLD_MARGIN
    more = {"lowerBoundaryNeed": need, "minThroughput": min_tp}
    notes.append(
        f"{', '.join(below)} below {pct(lower)}; the busiest broker with more than one "
        f"bundle is {max_broker} ({pct(max_usage)}), which should offload "
        f"{thr_pct}% x {LOWER_BOUNDARY_THRESHOLD_MARGIN} of {mb_s(throughput)} = {mb_s(need)}"
    )
    if min_tp > need:  # strict: exactly the minimum proceeds
        annotate(
            max_broker,
            Label.SKIP,
            Reason.UNDERLOADED,
            f"lower-boundary shedding would offload {mb_s(need)} < "
            f"loadBalancerBundleUnloadMinThroughputThreshold {min_mb:g} MB/s",
            more,
        )
        notes.append(f"nothing selected: {mb_s(need)} is below the minimum {min_mb:g} MB/s")
        return ()

    got = select_greedy(load, max_broker, load.brokers[max_broker], need, Reason.UNDERLOADED)
    candidates.extend(got.candidates)
    more["selected"] = got.marked
    if got.selections:
        annotate(
            max_broker,
            Label.SUCCESS,
            Reason.UNDERLOADED,
            f"lower-boundary shedding (some broker is below {pct(lower)}): "
            f"{len(got.selections)} bundle(s) with {mb_s(got.marked)} selected",
            more,
        )
        notes.append(f"{len(got.selections)} bundle(s) selected from {max_broker}")
    else:
        annotate(
            max_broker,
            Label.SKIP,
            Reason.NO_BUNDLES,
            "lower-boundary shedding found no bundle it may shed",
            more,
        )
        notes.append(f"nothing selected: {max_broker} has no bundle that may be shed")
    for broker in below:
        annotate(
            broker,
            Label.SKIP,
            Reason.UNDERLOADED,
            f"below the lower bound {pct(lower)} (smoothed again: "
            f"{pct(history[broker])}), which is what triggers lower-boundary shedding",
            {},
        )
    return got.selections
