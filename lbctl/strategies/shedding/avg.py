"""AvgShedder (PIP-364): pair the most and least loaded brokers and even out each pair.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.AvgShedder``, which is both a
``LoadSheddingStrategy`` and a ``ModularLoadManagerStrategy``: it decides which bundles leave a
busy broker *and* where they go. lbctl registers the two halves separately, under the same name:
:class:`AvgShedder` in ``SHEDDING`` and :class:`AvgShedderPlacement` in ``PLACEMENT``.

Shedding, one cycle (``findBundlesForUnloading``):

1. Score every broker: the weighted max resource usage ``getMaxResourceUsageWithWeight`` (4-argument
   form) × 100, so 0‥100 (more when a resource is over its limit). Weights:
   ``loadBalancerCPUResourceWeight``, ``loadBalancerDirectMemoryResourceWeight``,
   ``loadBalancerBandwidthIn/OutResourceWeight`` (with the deprecated ``…Bandwith…`` fallback).
2. Sort brokers by score, ascending, with a *stable* sort (current master:
   ``Comparator.comparingDouble``); equal scores keep the order of the broker→score ``HashMap``.
   (Releases up to 4.1 compared ``(int)(s1 - s2)``, so scores less than 1.0 apart tied; lbctl
   follows master.)
3. Pair the ends: lowest with highest, second lowest with second highest…; with an odd number of
   brokers the middle one is paired with itself (gap 0).
4. For each pair, ``gap = score(high) - score(low)``:
   ``gap < loadBalancerAvgShedderLowThreshold`` → both brokers' hit counts are dropped;
   otherwise the pair is kept and both brokers' *low* hit count goes up by one, and their *high*
   hit count goes up too if ``gap >= loadBalancerAvgShedderHighThreshold`` (else it is dropped).
   The counters live in the strategy between cycles (lbctl's ``memory``).
5. No pair kept → every hit count is cleared and nothing is unloaded.
6. A kept pair sheds only when one of its brokers has a high hit count
   ``>= loadBalancerAvgShedderHitCountHighThreshold`` or a low hit count
   ``>= loadBalancerAvgShedderHitCountLowThreshold``; then both brokers' counts are dropped.
7. Amount: ``(rate(high) - rate(low)) * maxUnloadPercentage`` (rates are the brokers' reported
   ``msgRateIn + msgRateOut``); if that is ``> minUnloadMessage`` the pair moves message rate,
   else if the same for throughput is ``> minUnloadMessageThroughput`` it moves throughput, else
   nothing moves.
8. Bundles of the high broker (``LocalBrokerData.bundles``) that are in the shedding bundle data
   (system namespaces excluded) and not recently unloaded, valued by their short-term rate (or
   throughput), are taken in descending order: a bundle is selected when ``0 < v <= left``, and
   ``left -= v``. A sole bundle is shed too (Pulsar only logs a warning).

Each selection carries ``destination`` = the pair's low broker: that is AvgShedder's plan, which
its placement half (:class:`AvgShedderPlacement`) honours.

Ties: brokers are scored in Java ``HashMap`` order of their names (the score map is a ``HashMap``)
and the stable sort keeps that order for equal scores. Bundles are iterated in the order of
``LoadData.getBundleDataForLoadShedding()``, a ``HashMap`` built by ``Collectors.toMap`` (one put
at a time), then stably sorted by value, so equal values keep that ``HashMap`` order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from random import Random
from types import MappingProxyType
from typing import Any

from msgspec import Struct, field

from lbctl.config import WEIGHT_KEYS, Settings
from lbctl.model.decision import (
    BrokerVerdict,
    BundleCandidate,
    Label,
    PlacementDecision,
    Reason,
    Selection,
    SheddingDecision,
)
from lbctl.model.javaorder import java_hash_order
from lbctl.model.load import BundleData
from lbctl.model.loaddata import LoadData
from lbctl.strategies.registry import PLACEMENT, SHEDDING
from lbctl.units import short

NAME = "AvgShedder"
MB = 1024 * 1024

_EMPTY_COUNTS: Mapping[str, int] = MappingProxyType({})
#: one instance sheds and places (``AvgShedder`` implements both interfaces in Pulsar)
READS = (*WEIGHT_KEYS, "loadBalancerAvgShedderHighThreshold",
         "loadBalancerAvgShedderHitCountHighThreshold", "loadBalancerAvgShedderHitCountLowThreshold",
         "loadBalancerAvgShedderLowThreshold", "maxUnloadPercentage", "minUnloadMessage",
         "minUnloadMessageThroughput")


class AvgShedderMemory(Struct, frozen=True):
    """The hit counters AvgShedder keeps between cycles (``brokerHitCountForHigh/Low``)."""

    hit_high: Mapping[str, int] = field(default_factory=lambda: _EMPTY_COUNTS)
    hit_low: Mapping[str, int] = field(default_factory=lambda: _EMPTY_COUNTS)


class _Pair(Struct, frozen=True):
    low: str
    high: str
    gap: float
    kept: bool  # gap >= low threshold
    high_gap: bool  # gap >= high threshold


def _double_key(x: float) -> tuple[bool, float, float]:
    """Sort key with ``Double.compare`` semantics: -0.0 before 0.0, NaN after everything."""
    if math.isnan(x):
        return (True, 0.0, 0.0)
    return (False, x, math.copysign(1.0, x))


def _inc(counts: dict[str, int], broker: str) -> None:
    counts[broker] = counts.get(broker, 0) + 1


def scores_of(load: LoadData, settings: Settings) -> dict[str, float]:
    """Rule 1: weighted max usage × 100 per broker, in the score ``HashMap``'s order."""
    weights = settings.weights4()
    return {
        b: load.brokers[b].local.max_resource_usage_with_weight(*weights) * 100
        for b in java_hash_order(load.brokers)
    }


@SHEDDING.register(NAME, reads=READS)
class AvgShedder:
    """The shedding half of ``AvgShedder`` (see the module docstring for the rules)."""

    name = NAME

    def initial_memory(self) -> AvgShedderMemory:
        return AvgShedderMemory()

    def shed(
        self, load: LoadData, settings: Settings, memory: Any
    ) -> tuple[SheddingDecision, AvgShedderMemory]:
        mem = memory if isinstance(memory, AvgShedderMemory) else AvgShedderMemory()
        min_tp = float(settings["minUnloadMessageThroughput"])
        min_msg = float(settings["minUnloadMessage"])
        max_pct = float(settings["maxUnloadPercentage"])
        low_t = float(settings["loadBalancerAvgShedderLowThreshold"])
        high_t = float(settings["loadBalancerAvgShedderHighThreshold"])
        hit_high_t = int(settings["loadBalancerAvgShedderHitCountHighThreshold"])
        hit_low_t = int(settings["loadBalancerAvgShedderHitCountLowThreshold"])
        thresholds = {
            "low_threshold": low_t,
            "high_threshold": high_t,
            "hit_count_high_threshold": float(hit_high_t),
            "hit_count_low_threshold": float(hit_low_t),
        }

        if not load.brokers:
            decision = SheddingDecision(
                NAME,
                notes=(f"{Reason.NO_BROKERS}: no broker load data, nothing to pair.",),
                numbers=MappingProxyType({"pairs": 0.0, **thresholds}),
            )
            return decision, mem

        # Rules 1-2: scores and the stable ascending order.
        scores = scores_of(load, settings)
        order = sorted(scores, key=lambda b: _double_key(scores[b]))
        rank = {b: i for i, b in enumerate(order)}

        # Rules 3-4: pair the ends and update the hit counters.
        hit_high = dict(mem.hit_high)
        hit_low = dict(mem.hit_low)
        steps: list[_Pair] = []
        i, j = 0, len(order) - 1
        while i <= j:
            lo, hi = order[i], order[j]
            gap = scores[hi] - scores[lo]
            if gap < low_t:
                for b in (hi, lo):
                    hit_high.pop(b, None)
                    hit_low.pop(b, None)
                steps.append(_Pair(lo, hi, gap, kept=False, high_gap=False))
            else:
                # Quirk: a middle broker paired with itself (only when the low threshold is <= 0)
                # is counted twice, as in Pulsar.
                _inc(hit_low, lo)
                _inc(hit_low, hi)
                if gap < high_t:
                    hit_high.pop(hi, None)
                    hit_high.pop(lo, None)
                    steps.append(_Pair(lo, hi, gap, kept=True, high_gap=False))
                else:
                    _inc(hit_high, lo)
                    _inc(hit_high, hi)
                    steps.append(_Pair(lo, hi, gap, kept=True, high_gap=True))
            i += 1
            j -= 1

        verdicts: dict[str, BrokerVerdict] = {}
        selections: list[Selection] = []
        candidates: list[BundleCandidate] = []
        notes: list[str] = []

        def base_numbers(b: str, pair: _Pair) -> dict[str, float]:
            return {
                "score": scores[b],
                "rank": float(rank[b]),
                "gap": pair.gap,
                **thresholds,
            }

        def fmt_counts(hh: int, hl: int) -> str:
            return f"high hit count {hh}/{hit_high_t}, low hit count {hl}/{hit_low_t}"

        def pair_text(b: str, pair: _Pair) -> str:
            other = pair.high if b == pair.low else pair.low
            if pair.low == pair.high:
                head = f"middle broker, paired with itself: gap {pair.gap:.1f}"
            else:
                head = f"paired with {other}: gap {pair.gap:.1f}"
            if not pair.kept:
                return f"{head} < low threshold {short(low_t)}"
            if pair.high_gap:
                return f"{head} ≥ high threshold {short(high_t)}"
            return f"{head} ≥ low threshold {short(low_t)} (< high threshold {short(high_t)})"

        def verdict(b: str, pair: _Pair, label: Label, reason: Reason, why: str,
                    hits: tuple[int, int] = (0, 0), **extra: float) -> BrokerVerdict:
            # AvgShedder keeps no smoothed figure: its score (usage × 100) goes in numbers.
            return BrokerVerdict(
                broker=b, usage=scores[b] / 100, score=None, label=label, reason=reason, why=why,
                numbers=MappingProxyType({**base_numbers(b, pair), "hit_high": float(hits[0]),
                                          "hit_low": float(hits[1]), **extra}),
            )

        kept = [p for p in steps if p.kept]

        # Rule 5: no pair kept.
        if not kept:
            for pair in steps:
                for b in dict.fromkeys((pair.low, pair.high)):
                    verdicts[b] = verdict(b, pair, Label.SKIP, Reason.BALANCED,
                                          f"{pair_text(b, pair)}; hit counts cleared")
            notes.append(
                f"{Reason.BALANCED}: no pair of brokers is {short(low_t)} or more points apart "
                f"(loadBalancerAvgShedderLowThreshold); all hit counts cleared."
            )
            decision = SheddingDecision(
                NAME,
                brokers=MappingProxyType({b: verdicts[b] for b in order}),
                notes=tuple(notes),
                numbers=MappingProxyType({"pairs": 0.0, **thresholds}),
            )
            return decision, AvgShedderMemory()

        for pair in steps:
            lo, hi = pair.low, pair.high
            if not pair.kept:
                for b in dict.fromkeys((lo, hi)):
                    verdicts[b] = verdict(b, pair, Label.SKIP, Reason.BALANCED,
                                          f"{pair_text(b, pair)}; hit counts reset")
                continue

            # Rule 6: the hit-count gate (absent counters count as 0).
            counts = {b: (hit_high.get(b, 0), hit_low.get(b, 0)) for b in (lo, hi)}
            triggered = any(
                hh >= hit_high_t or hl >= hit_low_t for hh, hl in counts.values()
            )
            if not triggered:
                for b in dict.fromkeys((lo, hi)):
                    verdicts[b] = verdict(
                        b, pair, Label.SKIP, Reason.HIT_COUNT,
                        f"{pair_text(b, pair)}; {fmt_counts(*counts[b])} — not yet", counts[b])
                notes.append(
                    f"{Reason.HIT_COUNT}: pair {lo} (score {scores[lo]:.1f}) ↔ {hi} "
                    f"(score {scores[hi]:.1f}), gap {pair.gap:.1f}: "
                    + "; ".join(f"{b} {fmt_counts(*counts[b])}" for b in dict.fromkeys((lo, hi)))
                    + " — below both hit-count thresholds, not shedding yet."
                )
                continue

            for b in (lo, hi):
                hit_high.pop(b, None)
                hit_low.pop(b, None)
            gate = "; ".join(
                f"{b} {fmt_counts(*counts[b])}" for b in dict.fromkeys((lo, hi))
            )

            # Rule 7: how much to move.
            lo_local, hi_local = load.brokers[lo].local, load.brokers[hi].local
            need_rate = (hi_local.msg_rate - lo_local.msg_rate) * max_pct
            need_tp = (hi_local.throughput - lo_local.throughput) * max_pct
            amounts = {"need_msg_rate": need_rate, "need_throughput": need_tp}
            if need_rate > min_msg:
                by_rate, left = True, need_rate
                plan = (
                    f"moves message rate: ({hi_local.msg_rate:.1f} - {lo_local.msg_rate:.1f}) "
                    f"× {short(max_pct)} = {need_rate:.1f} msg/s > minUnloadMessage {short(min_msg)}"
                )
            elif need_tp > min_tp:
                by_rate, left = False, need_tp
                plan = (
                    f"moves throughput: ({hi_local.throughput / MB:.2f} - "
                    f"{lo_local.throughput / MB:.2f}) MB/s × {short(max_pct)} = "
                    f"{need_tp / MB:.2f} MB/s > minUnloadMessageThroughput "
                    f"{min_tp / MB:.2f} MB/s"
                )
            else:
                why = (
                    f"{pair_text(hi, pair)}; {gate} → due, but the traffic gap is too small: "
                    f"{need_rate:.1f} msg/s ≤ minUnloadMessage {short(min_msg)} and "
                    f"{need_tp / MB:.2f} MB/s ≤ minUnloadMessageThroughput {min_tp / MB:.2f} MB/s"
                )
                for b in dict.fromkeys((lo, hi)):
                    verdicts[b] = verdict(
                        b, pair, Label.SKIP, Reason.BALANCED,
                        why if b == hi else f"{pair_text(b, pair)}; {gate} → due, "
                        f"but the traffic gap is too small to move anything",
                        counts[b], **amounts)
                notes.append(f"{Reason.BALANCED}: pair {lo} ↔ {hi}: {why}.")
                continue

            # Rule 8: pick bundles from the high broker.
            chosen = self._select(load, hi, lo, by_rate, left, candidates)
            selections.extend(chosen)
            unit = "msg/s" if by_rate else "MB/s"
            moved = sum(s.msg_rate if by_rate else s.throughput for s in chosen)
            moved_txt = f"{moved:.1f} msg/s" if by_rate else f"{moved / MB:.2f} MB/s"
            sole = " (its sole bundle: Pulsar warns but sheds it)" if (
                len(hi_local.bundles) == 1 and chosen
            ) else ""
            if chosen:
                hi_label, hi_reason = Label.SUCCESS, Reason.OVERLOADED
                hi_why = (
                    f"{pair_text(hi, pair)}; {gate} → shed, counts reset; {plan}; "
                    f"{len(chosen)} bundle(s) ({moved_txt}) go to {lo}{sole}"
                )
                lo_label, lo_reason = Label.SUCCESS, Reason.UNDERLOADED
                lo_why = (
                    f"{pair_text(lo, pair)}; {gate} → receives {len(chosen)} bundle(s) "
                    f"({moved_txt}) from {hi}"
                )
            else:
                hi_label, hi_reason = Label.SKIP, Reason.NO_BUNDLES
                hi_why = (
                    f"{pair_text(hi, pair)}; {gate} → shed, counts reset; {plan}; but no "
                    f"bundle has 0 < {unit} ≤ the amount (or all were unloaded recently)"
                )
                lo_label, lo_reason = Label.SKIP, Reason.NO_BUNDLES
                lo_why = f"{pair_text(lo, pair)}; {gate} → due, but {hi} has no bundle that fits"
                notes.append(f"{Reason.NO_BUNDLES}: pair {lo} ↔ {hi}: {hi_why}.")
            for b, label, reason, why in (
                (lo, lo_label, lo_reason, lo_why),
                (hi, hi_label, hi_reason, hi_why),
            ):
                verdicts[b] = verdict(b, pair, label, reason, why, counts[b], **amounts,
                                      selected=float(len(chosen)))

        decision = SheddingDecision(
            NAME,
            selections=tuple(selections),
            brokers=MappingProxyType({b: verdicts[b] for b in order}),
            candidates=tuple(candidates),
            notes=tuple(notes),
            numbers=MappingProxyType({"pairs": float(len(kept)), **thresholds}),
        )
        return decision, AvgShedderMemory(
            MappingProxyType(hit_high), MappingProxyType(hit_low)
        )

    @staticmethod
    def _select(
        load: LoadData,
        high: str,
        low: str,
        by_rate: bool,
        left: float,
        out: list[BundleCandidate],
    ) -> list[Selection]:
        """Rule 8: ``0 < v <= left``, largest first; ``left`` shrinks with every pick."""
        data = load.bundle_data
        owned = [b for b in load.brokers[high].local.bundles if load.is_sheddable(b)]
        # getBundleDataForLoadShedding() iteration order (Collectors.toMap from the CHM).
        ordered = load.shedding_order(owned, lambda b: (
            data[b].shortTermData.msg_rate if by_rate else data[b].shortTermData.throughput))
        values: list[tuple[str, float, BundleData]] = []
        for b in ordered:
            d = data[b]
            if b in load.recently_unloaded:
                st = d.shortTermData
                v = st.msg_rate if by_rate else st.throughput
                out.append(BundleCandidate(high, b, v, False, "unloaded recently (grace period)"))
                continue
            st = d.shortTermData
            values.append((b, st.msg_rate if by_rate else st.throughput, d))
        # Java sorts descending with Double.compare(e2, e1), stably: negate the key (reversing
        # the list would also reverse the order of equal values).
        values.sort(key=lambda t: _neg_key(t[1]))
        chosen: list[Selection] = []
        unit = "msg/s" if by_rate else "B/s"
        for b, v, d in values:
            if v > 0 and v <= left:
                st = d.shortTermData
                chosen.append(
                    Selection(high, b, Reason.OVERLOADED, st.msg_rate, st.throughput, low)
                )
                out.append(
                    BundleCandidate(high, b, v, True, f"{v:.1f} {unit} ≤ {left:.1f} left → {low}")
                )
                left -= v
            elif not v > 0:
                out.append(BundleCandidate(high, b, v, False, "no traffic: never moved"))
            else:
                out.append(BundleCandidate(high, b, v, False, f"{v:.1f} {unit} > {left:.1f} left"))
        return chosen


def _neg_key(x: float) -> tuple[bool, float, float]:
    """Descending ``Double.compare`` order as an ascending key: NaN first, then large to small."""
    if math.isnan(x):
        return (False, 0.0, 0.0)
    return (True, -x, -math.copysign(1.0, x))


def _java_string_key(s: str) -> bytes:
    """``String.compareTo`` order (UTF-16 code units), for ``Collections.sort`` of names."""
    return s.encode("utf-16-be")


@PLACEMENT.register(NAME, reads=READS)
class AvgShedderPlacement:
    """The placement half of ``AvgShedder`` (``selectBroker``).

    1. If the shedder planned a destination for this bundle in the current unload attempt
       (``planned[bundle]``, the ``destination`` of its selections) and that broker is a
       candidate, it is the answer.
    2. Otherwise (cluster starting, the bundle was not shed by AvgShedder, or the planned broker
       is gone) Pulsar sorts the candidates by name and indexes them with the CRC-32 of the text
       of a random ``int``, which is a uniform random pick; lbctl picks
       ``rng.randrange(len(candidates))`` from the sorted list (``--seed``).

    Newest master keys the plan by bundle name and scopes it to one unload attempt
    (``onUnloadAttemptCompleted`` clears it); ``planned`` is exactly that per-attempt plan, so this
    half keeps no memory of its own. (Pulsar 4.x keyed the plan by ``BundleData`` object and kept
    random picks too; lbctl follows master.)
    """

    name = NAME

    def initial_memory(self) -> None:
        return None

    def select(
        self,
        candidates: Sequence[str],
        bundle: str,
        data: BundleData,
        load: LoadData,
        settings: Settings,
        memory: Any,
        rng: Random,
        planned: Mapping[str, str],
    ) -> tuple[PlacementDecision, Any]:
        cands = tuple(candidates)
        weights = settings.weights4()
        scores = {
            c: load.brokers[c].local.max_resource_usage_with_weight(*weights) * 100
            for c in cands
            if c in load.brokers
        }
        target = planned.get(bundle)
        if target is not None and target in cands:
            why = (
                f"AvgShedder planned {bundle} for {target} when it shed it (the low broker of "
                f"its pair) and {target} is a candidate"
            )
            return PlacementDecision(
                NAME, bundle, target, cands, MappingProxyType(scores), (target,), why
            ), memory
        if not cands:
            return PlacementDecision(
                NAME, bundle, None, cands, why="no candidate brokers"
            ), memory
        ordered = tuple(sorted(cands, key=_java_string_key))
        pick = ordered[rng.randrange(len(ordered))]
        if target is None:
            cause = "no AvgShedder plan for this bundle in this unload attempt"
        else:
            cause = f"the planned broker {target} is not a candidate (shut down or filtered)"
        why = (
            f"{cause}: uniform random pick among the candidates sorted by name "
            f"[{', '.join(ordered)}] → {pick}"
        )
        return PlacementDecision(
            NAME, bundle, pick, cands, MappingProxyType(scores), ordered, why
        ), memory

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> Any:
        return memory
