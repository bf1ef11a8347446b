"""Words of ``AvgShedder`` (:mod:`lbctl.strategies.shedding.avg`): its pairs, hit-count gate and
amounts, the bundles it moves, and where its placement half puts a bundle."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.model.decision import Reason
from lbctl.strategies.shedding.avg import (
    MB,
    Amount,
    AvgPickWhy,
    AvgWhy,
    Gate,
    Pair,
    PlacedWhy,
)
from lbctl.units import short


def _pair(b: str, pair: Pair) -> str:
    other = pair.high if b == pair.low else pair.low
    if pair.low == pair.high:
        head = f"middle broker, paired with itself: gap {pair.gap:.1f}"
    else:
        head = f"paired with {other}: gap {pair.gap:.1f}"
    if not pair.kept:
        return f"{head} < low threshold {short(pair.low_threshold)}"
    if pair.high_gap:
        return f"{head} ≥ high threshold {short(pair.high_threshold)}"
    return (f"{head} ≥ low threshold {short(pair.low_threshold)} "
            f"(< high threshold {short(pair.high_threshold)})")


def _counts(gate: Gate, hh: int, hl: int) -> str:
    return f"high hit count {hh}/{gate.hit_high}, low hit count {hl}/{gate.hit_low}"


def _gate(gate: Gate) -> str:
    return "; ".join(f"{b} {_counts(gate, hh, hl)}" for b, hh, hl in gate.counts)


def _own(gate: Gate, broker: str) -> str:
    return next(_counts(gate, hh, hl) for b, hh, hl in gate.counts if b == broker)


def _plan(a: Amount) -> str:
    if a.by_rate:
        return (f"moves message rate: ({a.high_rate:.1f} - {a.low_rate:.1f}) × {short(a.max_pct)}"
                f" = {a.need_rate:.1f} msg/s > minUnloadMessage {short(a.min_msg)}")
    return (f"moves throughput: ({a.high_tp / MB:.2f} - {a.low_tp / MB:.2f}) MB/s × "
            f"{short(a.max_pct)} = {a.need_tp / MB:.2f} MB/s > minUnloadMessageThroughput "
            f"{a.min_tp / MB:.2f} MB/s")


def _moved(a: Amount, moved: float) -> str:
    return f"{moved:.1f} msg/s" if a.by_rate else f"{moved / MB:.2f} MB/s"


def _small(w: AvgWhy, pair: Pair, gate: Gate, a: Amount) -> str:
    return (f"{_pair(pair.high, pair)}; {_gate(gate)} → due, but the traffic gap is too small: "
            f"{a.need_rate:.1f} msg/s ≤ minUnloadMessage {short(a.min_msg)} and "
            f"{a.need_tp / MB:.2f} MB/s ≤ minUnloadMessageThroughput {a.min_tp / MB:.2f} MB/s")


def _no_fit(pair: Pair, gate: Gate, a: Amount) -> str:
    unit = "msg/s" if a.by_rate else "MB/s"
    return (f"{_pair(pair.high, pair)}; {_gate(gate)} → shed, counts reset; {_plan(a)}; but no "
            f"bundle has 0 < {unit} ≤ the amount (or all were unloaded recently)")


def _due(w: AvgWhy, pair: Pair, gate: Gate, a: Amount) -> str:
    """A pair whose hit count is due: too small, shed, or nothing fits."""
    match w.code:
        case "small-high":
            return _small(w, pair, gate, a)
        case "small-low":
            return (f"{_pair(w.broker, pair)}; {_gate(gate)} → due, but the traffic gap is too "
                    "small to move anything")
        case "shed-high":
            sole = " (its sole bundle: Pulsar warns but sheds it)" if w.sole else ""
            return (f"{_pair(pair.high, pair)}; {_gate(gate)} → shed, counts reset; {_plan(a)}; "
                    f"{w.count} bundle(s) ({_moved(a, w.moved)}) go to {pair.low}{sole}")
        case "shed-low":
            return (f"{_pair(pair.low, pair)}; {_gate(gate)} → receives {w.count} bundle(s) "
                    f"({_moved(a, w.moved)}) from {pair.high}")
        case "no-fit-high":
            return _no_fit(pair, gate, a)
        case "no-fit-low":
            return (f"{_pair(pair.low, pair)}; {_gate(gate)} → due, but {pair.high} has no "
                    "bundle that fits")
        case "note-small":
            return f"{Reason.BALANCED}: pair {pair.low} ↔ {pair.high}: {_small(w, pair, gate, a)}."
        case "note-no-fit":
            return f"{Reason.NO_BUNDLES}: pair {pair.low} ↔ {pair.high}: {_no_fit(pair, gate, a)}."
    raise ValueError(f"no words for {w.code}")


@words.register
def avg(w: AvgWhy) -> str:
    match w.code:
        case "note-no-brokers":
            return f"{Reason.NO_BROKERS}: no broker load data, nothing to pair."
        case "note-no-pair":
            return (f"{Reason.BALANCED}: no pair of brokers is {short(w.threshold)} or more points "
                    f"apart (loadBalancerAvgShedderLowThreshold); all hit counts cleared.")
        case "note-sort-failed":
            return (f"{Reason.UNKNOWN}: sorting the brokers by (int) (score1 - "
                    "score2) threw IllegalArgumentException (\"Comparison method violates its "
                    "general contract!\": scores less than a point apart compare equal, and that "
                    "is not transitive); Pulsar's LoadSheddingTask logs \"Error during the load "
                    "shedding\" and unloads nothing this cycle; hit counts unchanged (compared "
                    "as doubles from 4.0.8 and 4.1.2, PR #24954).")
        case "sort-failed":
            return ("the broker sort threw (Comparison method violates its general contract!): "
                    "the shedding cycle failed, hit counts unchanged")
    pair = w.pair
    assert pair is not None  # every other reason is about a pair
    match w.code:
        case "cleared":
            return f"{_pair(w.broker, pair)}; hit counts cleared"
        case "reset":
            return f"{_pair(w.broker, pair)}; hit counts reset"
    gate = w.gate
    assert gate is not None  # the pair was kept
    match w.code:
        case "not-yet":
            return f"{_pair(w.broker, pair)}; {_own(gate, w.broker)} — not yet"
        case "note-not-yet":
            return (f"{Reason.HIT_COUNT}: pair {pair.low} (score {pair.low_score:.1f}) ↔ "
                    f"{pair.high} (score {pair.high_score:.1f}), gap {pair.gap:.1f}: "
                    + _gate(gate) + " — below both hit-count thresholds, not shedding yet.")
    assert w.amount is not None  # the pair was due
    return _due(w, pair, gate, w.amount)


@words.register
def avg_pick(w: AvgPickWhy) -> str:
    unit = "msg/s" if w.by_rate else "B/s"
    match w.code:
        case "recently":
            return "unloaded recently (grace period)"
        case "taken":
            return f"{w.value:.1f} {unit} ≤ {w.left:.1f} left → {w.low}"
        case "no-traffic":
            return "no traffic: never moved"
        case "too-big":
            return f"{w.value:.1f} {unit} > {w.left:.1f} left"


@words.register
def placed(w: PlacedWhy) -> str:
    match w.code:
        case "planned":
            return (f"AvgShedder planned {w.bundle} for {w.target} when it shed it (the low "
                    f"broker of its pair) and {w.target} is a candidate")
        case "remembered":
            return (f"AvgShedder answers with {w.target}, the pick it stored for {w.bundle} at "
                    "the first ask of this unload (its bundle → broker map), and "
                    f"{w.target} is a candidate")
        case "kept":
            return (f"AvgShedder answers with {w.target}, the broker its bundle → broker map kept "
                    f"for {w.bundle} from an earlier unload attempt (releases before PR #26246 "
                    f"never empty it), and {w.target} is a candidate")
        case "no-candidates":
            return "no candidate brokers"
    cause = ("no AvgShedder plan for this bundle in this unload attempt"
             if w.code == "no-plan" else
             f"the planned broker {w.target} is not a candidate (shut down or filtered)")
    return (f"{cause}: uniform random pick among the candidates sorted by name "
            f"[{', '.join(w.names)}] → {w.pick}")
