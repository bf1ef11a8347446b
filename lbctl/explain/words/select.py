"""Words of the shared bundle selection (:mod:`lbctl.strategies.shedding._select`): why a bundle
of a shed broker was never ranked, and what the greedy loop of ``ThresholdShedder`` /
``OverloadShedder`` did with each ranked one."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.strategies.shedding._select import GreedyWhy, Offload, UnrankedWhy
from lbctl.units import mb_s

_UNRANKED = {
    "recently-unloaded": "recently unloaded (within loadBalancerSheddingGracePeriodMinutes)",
    "split-away": "split in this cycle: its bundle data is gone until the next update",
    "system-namespace": "system namespace (pulsar/system, heartbeat or SLA monitor): never "
                               "shed",
    "no-bundle-data": "no bundle data: Pulsar only ranks bundles it has BundleData for",
}


@words.register
def unranked(why: UnrankedWhy) -> str:
    return _UNRANKED[why.code]


@words.register
def greedy(why: GreedyWhy) -> str:
    match why.code:
        case "largest":
            return (f"largest eligible bundle ({mb_s(why.value)}): "
                    "at least one bundle is always selected")
        case "below-amount":
            return f"selected: {mb_s(why.marked)} so far < {mb_s(why.amount)} needed"
        case "enough":
            return f"not needed: {mb_s(why.marked)} already selected ≥ {mb_s(why.amount)}"


def shed_tail(offload: Offload, count: int, marked: float) -> str:
    """How an overloaded broker's selection ended, after the amount it should offload (the same
    words for ``ThresholdShedder`` and ``OverloadShedder``): ``count`` bundles with ``marked``
    bytes/s selected, or none of its ``count`` bundles eligible…"""
    match offload:
        case "shed":
            return f": {count} bundle(s) with {mb_s(marked)} selected"
        case "none-sheddable":
            return (f", but none of its {count} bundles can be shed "
                    "(recently unloaded, system namespace or no bundle data)")
        case "one-bundle":
            return ", but it has only 1 bundle: Pulsar never sheds a single-bundle broker"
        case "no-bundles":
            return ", but it has no bundles"
