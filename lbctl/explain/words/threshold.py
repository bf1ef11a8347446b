"""Words of ``ThresholdShedder`` (:mod:`lbctl.strategies.shedding.threshold`): each broker's
verdict against average + threshold, what lower-boundary shedding added, and the cluster notes."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.explain.words.select import shed_tail
from lbctl.strategies.shedding.threshold import (
    LOWER_BOUNDARY_THRESHOLD_MARGIN,
    ThresholdWhy,
)
from lbctl.units import mb_s, pct


def _usage(w: ThresholdWhy) -> str:
    return f"usage {pct(w.usage)} (smoothed {pct(w.smoothed)})"


def _over(w: ThresholdWhy) -> str:
    return (f"{_usage(w)} ≥ average {pct(w.average)} + threshold {w.percent}% "
            f"= {pct(w.trigger)}; it should offload {pct(w.fraction)} of its "
            f"{mb_s(w.throughput)} = {mb_s(w.need)}")


def _broker(w: ThresholdWhy) -> str | None:
    match w.code:
        case "zero-average":
            return f"{_usage(w)}: the cluster average is 0, nothing is shed"
        case "below-trigger":
            return (f"{_usage(w)} is below average {pct(w.average)} + threshold {w.percent}% "
                    f"= {pct(w.trigger)}")
        case "under-min-throughput":
            return (f"{_over(w)}, but needs {mb_s(w.need)} < "
                    f"loadBalancerBundleUnloadMinThroughputThreshold {w.min_mb:g} MB/s")
        case "offload":
            return _over(w) + shed_tail(w.offload, w.count, w.marked)
    return None


def _lower(w: ThresholdWhy) -> str | None:
    match w.code:
        case "lower-under-min":
            return (f"lower-boundary shedding would offload {mb_s(w.need)} < "
                    f"loadBalancerBundleUnloadMinThroughputThreshold {w.min_mb:g} MB/s")
        case "lower-shed":
            return (f"lower-boundary shedding (some broker is below {pct(w.trigger)}): "
                    f"{w.count} bundle(s) with {mb_s(w.marked)} selected")
        case "lower-none":
            return "lower-boundary shedding found no bundle it may shed"
        case "lower-below":
            return (f"below the lower bound {pct(w.trigger)} "
                    f"({'smoothed again' if w.again else 'smoothed'}: {pct(w.smoothed)}), which "
                    "is what triggers lower-boundary shedding")
    return None


def _note(w: ThresholdWhy) -> str:
    match w.code:
        case "note-no-brokers":
            return "no brokers: nothing to shed"
        case "note-average":
            return (f"average smoothed usage of {w.count} brokers is {pct(w.average)}; "
                    f"a broker is shed at average + loadBalancerBrokerThresholdShedderPercentage "
                    f"{w.percent}% = {pct(w.trigger)} or more "
                    f"(history weight loadBalancerHistoryResourcePercentage {w.history})")
        case "note-zero-average":
            return ("the average usage is 0, so ThresholdShedder stops here: nothing is shed "
                    "(not even by lower-boundary shedding)")
        case "note-selected":
            return f"{w.count} bundle(s) selected from {', '.join(w.names)}"
        case "note-not-shed":
            return (f"nothing selected: {', '.join(w.names)} reached {pct(w.trigger)} but "
                    "could not be shed (see each broker)")
        case "note-none-reach":
            return f"nothing selected: no broker reaches {pct(w.trigger)}"
        case "note-lower-off":
            return "lowerBoundarySheddingEnabled is false: no lower-boundary shedding"
        case "note-lower-average":
            said = (f"average recomputed as {pct(w.average)} (Pulsar before 4.1 smooths every "
                    "usage a second time this cycle)" if w.again else
                    f"the cycle's average {pct(w.average)} (Pulsar 4.1+, PR #24064)")
            return (f"lower-boundary shedding: {said}; lower bound = average - "
                    f"{w.percent}% = {pct(w.trigger)}")
        case "note-lower-no-busiest":
            return (f"nothing selected: no broker with more than one bundle is above the lower "
                    f"bound {pct(w.trigger)}")
        case "note-lower-none-below":
            return (f"nothing selected: no broker is below the lower bound {pct(w.trigger)} "
                    f"(the busiest, {w.broker}, is at {pct(w.smoothed)})")
        case "note-lower-plan":
            return (f"{', '.join(w.names)} below {pct(w.trigger)}; the busiest broker with more "
                    f"than one bundle is {w.broker} ({pct(w.smoothed)}), which should offload "
                    f"{w.percent}% x {LOWER_BOUNDARY_THRESHOLD_MARGIN} of {mb_s(w.throughput)} "
                    f"= {mb_s(w.need)}")
        case "note-lower-under-min":
            return f"nothing selected: {mb_s(w.need)} is below the minimum {w.min_mb:g} MB/s"
        case "note-lower-nothing":
            return f"nothing selected: {w.broker} has no bundle that may be shed"
    raise ValueError(f"no words for {w.code}")


@words.register
def threshold(why: ThresholdWhy) -> str:
    said = _broker(why) or _lower(why) or _note(why)
    if why.then is not None:
        said = f"{said}; {threshold(why.then)}"
    return said
