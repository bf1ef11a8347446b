"""Words of ``TransferShedder`` (:mod:`lbctl.strategies.shedding.transfer`): the load conditions,
phase A, the cycle's outcome, each round and each top bundle it looked at."""

from __future__ import annotations

from lbctl.explain.words.base import text, words
from lbctl.strategies.shedding.transfer import StepWhy, TransferWhy


def _condition(w: TransferWhy) -> str | None:
    """The under/overloaded tests of the min and max broker, and the std test."""
    match w.code:
        case "no-data":
            return f"{w.broker} has no load data"
        case "under-load":
            return f"{w.broker}'s load {w.load:.4f} < avg {w.avg:.4f} × {w.factor:g}"
        case "under-absolute":
            return f"{w.broker}'s msgThroughputEMA {w.throughput:,.2f} B/s < 1"
        case "not-under-absolute":
            return (f"{w.broker} is not underloaded: load {w.load:.4f} >= avg×{w.factor:g} = "
                    f"{w.avg * w.factor:.4f} and throughput EMA {w.throughput:,.0f} >= 1 B/s")
        case "not-under-no-max":
            return f"{w.broker} is not underloaded (the max broker has no load data)"
        case "under-throughput":
            return (f"{w.broker}'s msgThroughputEMA {w.throughput:,.0f} B/s < "
                    f"{w.other}'s {w.other_throughput:,.0f} B/s × {w.factor:g}")
        case "not-under":
            return (f"{w.broker} is not underloaded: load {w.load:.4f} >= avg×{w.factor:g} = "
                    f"{w.avg * w.factor:.4f} and throughput EMA {w.throughput:,.0f} >= "
                    f"{w.other_throughput * w.factor:,.0f} B/s")
        case "over":
            return (f"{w.broker}'s load {w.load:.4f} > {w.threshold:g} and > avg + targetStd = "
                    f"{w.avg + w.target:.4f}")
        case "not-over":
            return (f"{w.broker} is not overloaded: load {w.load:.4f} vs threshold "
                    f"{w.threshold:g} and avg + targetStd {w.avg + w.target:.4f}")
        case "std-above":
            return f"std {w.std:.4f} > loadBalancerBrokerLoadTargetStd {w.target:g}"
    return None


def _phase_a(w: TransferWhy) -> str | None:
    match w.code:
        case "outdated":
            return (f"outdated: sampled {w.amount:,.0f} s ago > "
                    "loadBalancerBrokerLoadDataTTLInSeconds")
        case "cooling":
            return (f"cooling down: its load was sampled {w.amount / 1000:,.0f} s after its "
                    f"last unload, < loadBalanceSheddingDelayInSeconds ({w.count // 1000} s)")
        case "cooling-broker":
            return f"{w.broker} is {text(w.inner)}"
        case "all-outdated":
            return ("every broker's load data is older than "
                    f"loadBalancerBrokerLoadDataTTLInSeconds ({w.count} s)")
        case "no-brokers":
            return "there is no broker load data at all"
        case "missing-data":
            return f"available broker(s) without load data: {', '.join(w.names)}"
    return None


def _outcome(w: TransferWhy) -> str:
    match w.code:
        case "failed":
            return f"the shedding cycle failed: {w.detail}: {w.other}"
        case "no-registry":
            return "the broker registry could not be read"
        case "balanced":
            return (f"balanced: std {w.std:.4f} <= loadBalancerBrokerLoadTargetStd "
                    f"{w.target:g}; {text(w.inner)}; {text(w.then)}")
        case "held":
            return (f"the shedding condition held {w.count} time(s) in a row, not more than "
                    f"loadBalancerSheddingConditionHitCountThreshold ({int(w.threshold)})")
        case "none-moved-no-data":
            return "no bundle moved: a max or min broker had no load data or no top bundles"
        case "none-moved-few":
            return "no bundle moved: the max brokers had no bundle that could move"
        case "none-moved":
            return f"no bundle moved: {text(w.inner)}"
        case "decided":
            return f"{w.count} decision(s); loop ended: {text(w.inner)}"
        case "max-shed":
            return "loadBalancerMaxNumberOfBrokerSheddingPerCycle reached"
        case "indexes-met":
            return "no broker pair left (the min and max indexes met)"
        case "loop-balanced":
            return (f"balanced: std {w.std:.4f} <= target {w.target:g}, {text(w.inner)}, "
                    f"{text(w.then)}")
        case "no-top-bundles":
            return f"{w.broker} has no top-bundles load data"
        case "sole-top-bundle":
            return f"its sole top bundle {w.detail} is overloading {w.broker}"
        case "offloaded":
            return f"offloaded {w.amount:,.0f} B/s ≈ {w.load:.4f} load"
        case "nothing-movable":
            return "no top bundle of the broker could be moved"
    raise ValueError(f"no words for {w.code}")


@words.register
def transfer(w: TransferWhy) -> str:
    return _condition(w) or _phase_a(w) or _outcome(w)


@words.register
def step(w: StepWhy) -> str:
    match w.code:
        case "not-owner":
            return f"{w.broker} is not its owner"
        case "excluded-namespace":
            return "namespace in loadBalancerSheddingExcludedNamespaces"
        case "recently-unloaded":
            return "recently unloaded (grace period)"
        case "not-transferable":
            return f"not transferable to {w.broker}: {text(w.inner)}"
        case "last-one":
            return "only one top bundle left on the broker; it stays"
        case "zero-throughput":
            return "zero throughput"
        case "overshoot":
            return (f"moving it would offload {w.amount:,.0f} B/s > the target "
                    f"{w.target:,.0f} B/s"
                    + (" and no swap from the min broker balances it" if w.swapping else ""))
        case "moved":
            return (f"{w.amount:,.0f} of {w.target:,.0f} B/s marked to offload"
                    + (f"; swapped {w.swaps} bundle(s) ({w.swapped:,.0f} B/s) back from "
                       f"{w.broker}" if w.swaps else ""))
