"""Words of ``ThresholdShedder`` (:mod:`lbctl.strategies.shedding.threshold`): each broker's
verdict against average + threshold, what lower-boundary shedding added, and the cluster notes."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.explain.words.select import shed_tail
from lbctl.strategies.shedding.threshold import (
    LOWER_BOUNDARY_THRESHOLD_MARGIN,
    Threshold,
    ThresholdWhy,
)
from lbctl.units import mb_s, pct

T = Threshold


def _usage(w: ThresholdWhy) -> str:
    return f"usage {pct(w.usage)} (smoothed {pct(w.smoothed)})"


def _over(w: ThresholdWhy) -> str:
    return (f"{_usage(w)} ≥ average {pct(w.average)} + threshold {w.percent}% "
            f"= {pct(w.trigger)}; it should offload {pct(w.fraction)} of its "
            f"{mb_s(w.throughput)} = {mb_s(w.need)}")


def _broker(w: ThresholdWhy) -> str | None:
    match w.code:
        case T.ZERO_AVERAGE:
            return f"{_usage(w)}: the cluster average is 0, nothing is shed"
        case T.BELOW_TRIGGER:
            return (f"{_usage(w)} is below average {pct(w.average)} + threshold {w.percent}% "
                    f"= {pct(w.trigger)}")
        case T.UNDER_MIN_THROUGHPUT:
            return (f"{_over(w)}, but needs {mb_s(w.need)} < "
                    f"loadBalancerBundleUnloadMinThroughputThreshold {w.min_mb:g} MB/s")
        case T.OFFLOAD:
            return _over(w) + shed_tail(w.offload, w.count, w.marked)
    return None


def _lower(w: ThresholdWhy) -> str | None:
    match w.code:
        case T.LOWER_UNDER_MIN:
            return (f"lower-boundary shedding would offload {mb_s(w.need)} < "
                    f"loadBalancerBundleUnloadMinThroughputThreshold {w.min_mb:g} MB/s")
        case T.LOWER_SHED:
            return (f"lower-boundary shedding (some broker is below {pct(w.trigger)}): "
                    f"{w.count} bundle(s) with {mb_s(w.marked)} selected")
        case T.LOWER_NONE:
            return "lower-boundary shedding found no bundle it may shed"
        case T.LOWER_BELOW:
            return (f"below the lower bound {pct(w.trigger)} (smoothed again: "
                    f"{pct(w.smoothed)}), which is what triggers lower-boundary shedding")
    return None


def _note(w: ThresholdWhy) -> str:
    match w.code:
        case T.NOTE_NO_BROKERS:
            return "no brokers: nothing to shed"
        case T.NOTE_AVERAGE:
            return (f"average smoothed usage of {w.count} brokers is {pct(w.average)}; "
                    f"a broker is shed at average + loadBalancerBrokerThresholdShedderPercentage "
                    f"{w.percent}% = {pct(w.trigger)} or more "
                    f"(history weight loadBalancerHistoryResourcePercentage {w.history})")
        case T.NOTE_ZERO_AVERAGE:
            return ("the average usage is 0, so ThresholdShedder stops here: nothing is shed "
                    "(not even by lower-boundary shedding)")
        case T.NOTE_SELECTED:
            return f"{w.count} bundle(s) selected from {', '.join(w.names)}"
        case T.NOTE_NOT_SHED:
            return (f"nothing selected: {', '.join(w.names)} reached {pct(w.trigger)} but "
                    "could not be shed (see each broker)")
        case T.NOTE_NONE_REACH:
            return f"nothing selected: no broker reaches {pct(w.trigger)}"
        case T.NOTE_LOWER_OFF:
            return "lowerBoundarySheddingEnabled is false: no lower-boundary shedding"
        case T.NOTE_LOWER_AVERAGE:
            return (f"lower-boundary shedding: average recomputed as {pct(w.average)} (Pulsar "
                    f"smooths every usage a second time this cycle); lower bound = average - "
                    f"{w.percent}% = {pct(w.trigger)}")
        case T.NOTE_LOWER_NO_BUSIEST:
            return (f"nothing selected: no broker with more than one bundle is above the lower "
                    f"bound {pct(w.trigger)}")
        case T.NOTE_LOWER_NONE_BELOW:
            return (f"nothing selected: no broker is below the lower bound {pct(w.trigger)} "
                    f"(the busiest, {w.broker}, is at {pct(w.smoothed)})")
        case T.NOTE_LOWER_PLAN:
            return (f"{', '.join(w.names)} below {pct(w.trigger)}; the busiest broker with more "
                    f"than one bundle is {w.broker} ({pct(w.smoothed)}), which should offload "
                    f"{w.percent}% x {LOWER_BOUNDARY_THRESHOLD_MARGIN} of {mb_s(w.throughput)} "
                    f"= {mb_s(w.need)}")
        case T.NOTE_LOWER_UNDER_MIN:
            return f"nothing selected: {mb_s(w.need)} is below the minimum {w.min_mb:g} MB/s"
        case T.NOTE_LOWER_NOTHING:
            return f"nothing selected: {w.broker} has no bundle that may be shed"
    raise ValueError(f"no words for {w.code}")


@words.register
def threshold(why: ThresholdWhy) -> str:
    said = _broker(why) or _lower(why) or _note(why)
    if why.then is not None:
        said = f"{said}; {threshold(why.then)}"
    return said
