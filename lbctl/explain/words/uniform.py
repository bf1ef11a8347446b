"""Words of ``UniformLoadShedder`` (:mod:`lbctl.strategies.shedding.uniform`)."""

from __future__ import annotations

from collections.abc import Callable

from lbctl.explain.words.base import words
from lbctl.strategies.shedding.uniform import UniformPickWhy, UniformWhy
from lbctl.units import mb_s, msg_s


def _fmt(by_rate: bool) -> Callable[[float], str]:
    return msg_s if by_rate else mb_s


def _metric(by_rate: bool) -> str:
    return "msg rate" if by_rate else "throughput"


def _min_key(by_rate: bool) -> str:
    return "minUnloadMessage" if by_rate else "minUnloadMessageThroughput"


def _verdict(w: UniformWhy) -> str | None:
    figures = f"msg rate {msg_s(w.rate)}, throughput {mb_s(w.throughput)}"
    metric, fmt = _metric(w.by_rate), _fmt(w.by_rate)
    match w.code:
        case "balanced":
            return f"{figures}: brokers are within both thresholds, nothing is shed"
        case "lowest":
            return (f"{figures}: lowest {metric}; Pulsar only notes it as underloaded, "
                    "placement chooses where the shed bundles go")
        case "not-highest":
            return f"{figures}: not the broker with the highest {metric} ({w.broker})"
        case "few-bundles":
            return (f"{figures}: highest {metric}, but it has {w.count} bundle(s): "
                    "Pulsar never sheds a single-bundle broker")
        case "budget-low":
            return (f"{figures}: highest {metric}, but the budget {fmt(w.budget)} < "
                    f"{_min_key(w.by_rate)} {w.minimum}")
        case "shed":
            return (f"{figures}: highest {metric}; {w.count} bundle(s) selected "
                    f"within the budget {fmt(w.budget)}")
        case "none-fits":
            return f"{figures}: highest {metric}, but no bundle fits the budget {fmt(w.budget)}"
    return None


def _criterion_words(w: UniformWhy) -> str:
    """A threshold against the figure: disabled, exceeded (>) or not (≤)."""
    if w.code == "note-rates":
        key = "loadBalancerMsgRateDifferenceShedderThreshold"
        if w.threshold <= 0:
            return f"disabled ({key} ≤ 0)"
        return f"{'>' if w.exceeded else '≤'} {key} {w.threshold:g}%"
    key = "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold"
    if w.threshold <= 0:
        return f"disabled ({key} ≤ 0)"
    return f"{'>' if w.exceeded else '≤'} {key} {w.threshold:g}"


def _note(w: UniformWhy) -> str:
    match w.code:
        case "note-no-brokers":
            return "no brokers: nothing to shed"
        case "note-rates":
            return (f"msg rate: highest {w.broker} {msg_s(w.high)}, lowest {w.other} "
                    f"{msg_s(w.low)}; difference (max - min) / min = {w.figure:.1f}% "
                    f"{_criterion_words(w)}")
        case "note-throughputs":
            return (f"throughput: highest {w.broker} {mb_s(w.high)}, lowest {w.other} "
                    f"{mb_s(w.low)}; ratio max / min = {w.figure:.2f} {_criterion_words(w)}")
        case "note-zero-min":
            return "a lowest figure of (almost) 0 counts as 1 in the comparison"
        case "note-uniform":
            return "nothing selected: the load is uniform enough by both criteria"
        case "note-uneven" if w.by_rate:
            return (f"msg rate is uneven: shedding from {w.broker}, the broker with the highest "
                    f"msg rate; budget (int)(({msg_s(w.high)} - {msg_s(w.low)}) x "
                    f"maxUnloadPercentage {w.max_pct:g}) = {w.budget} msg/s"
                    + (" (the throughput criterion is not looked at)" if w.also else ""))
        case "note-uneven":
            return (f"throughput is uneven: shedding from {w.broker}, the broker with the "
                    f"highest throughput; budget (int)(({mb_s(w.high)} - {mb_s(w.low)}) x "
                    f"maxUnloadPercentage {w.max_pct:g}) = {w.budget} bytes/s")
        case "note-no-source":
            return f"nothing selected: no broker has a {_metric(w.by_rate)} above -1"
        case "note-few-bundles":
            return f"nothing selected: {w.broker} has {w.count} bundle(s)"
        case "note-budget-low":
            return f"nothing selected: budget {w.budget} < {_min_key(w.by_rate)} {w.minimum}"
        case "note-shed":
            return f"{w.count} bundle(s) selected from {w.broker}"
        case "note-none-fits":
            return f"nothing selected: no bundle of {w.broker} fits the budget {w.budget}"
    raise ValueError(f"no words for {w.code}")


@words.register
def uniform(w: UniformWhy) -> str:
    return _verdict(w) or _note(w)


@words.register
def uniform_pick(w: UniformPickWhy) -> str:
    fmt = _fmt(w.by_rate)
    match w.code:
        case "limit":
            return f"limit reached: maxUnloadBundleNumPerShedding {w.limit}"
        case "fits":
            return f"fits the remaining budget {fmt(w.remaining)}; {fmt(w.left)} left"
        case "too-large":
            return f"too large: {fmt(w.value)} > remaining budget {fmt(w.remaining)}"
