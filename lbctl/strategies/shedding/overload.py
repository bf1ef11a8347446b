"""``OverloadShedder``: shed every broker at or above the overload threshold.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.OverloadShedder`` with the PIP-358 change
(PR #22888): usage is the *weighted* max resource usage, like the other modular strategies.

Rules:

1. Usage of a broker is ``getMaxResourceUsageWithWeight`` of its latest report, weights
   ``loadBalancerCPUResourceWeight``, ``loadBalancerDirectMemoryResourceWeight`` and
   ``loadBalancerBandwidthIn/OutResourceWeight`` (so, with the defaults, direct memory does not
   count). No history: each cycle stands alone, and the strategy keeps no memory. Before Pulsar
   4.0 (PIP-358) it was the unweighted ``getMaxResourceUsage()`` (max of CPU, direct memory and
   bandwidth in/out): :meth:`lbctl.config.Settings.overload_usage` follows the version profile.
2. A broker whose usage is ``>= loadBalancerBrokerOverloadedThresholdPercentage / 100`` is
   overloaded (equality triggers, unlike placement's strict ``>``).
3. It should offload ``usage - threshold + 5 %`` of its message throughput
   (``msgThroughputIn + msgThroughputOut`` of its report). There is no minimum-throughput guard.
4. A broker with one bundle (or none) is never shed; otherwise the greedy selector
   (:mod:`lbctl.strategies.shedding._select`) picks its largest bundles by short-term throughput.

Ties: brokers are visited in ``load.brokers`` order (Java ``HashMap`` order); every overloaded
broker is shed independently, so broker order only orders the output. Bundles tie as in the greedy
selector.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Literal

from lbctl.config import WEIGHT_KEYS, Settings
from lbctl.model.decision import (
    BrokerVerdict,
    BundleCandidate,
    Label,
    Note,
    Reason,
    Selection,
    SheddingDecision,
    Why,
)
from lbctl.model.loaddata import LoadData
from lbctl.strategies.registry import SHEDDING
from lbctl.strategies.shedding._select import Offload, select_greedy

#: OverloadShedder.ADDITIONAL_THRESHOLD_PERCENT_MARGIN
ADDITIONAL_THRESHOLD_PERCENT_MARGIN = 0.05


#: OverloadShedder's situations: a broker's verdict or a cluster-level note.
Overload = Literal[
    "below",  # usage, percent
    "offload",  # usage, percent, fraction, throughput, need, offload, count, marked
    "note-no-brokers",
    "note-rule",  # percent
    "note-selected",  # count, names
    "note-not-shed",  # names, percent
    "note-none-reach",  # percent
]


class OverloadWhy(Why, frozen=True):
    """A reason of :data:`Overload`; ``percent`` is
    ``loadBalancerBrokerOverloadedThresholdPercentage`` as configured."""

    code: Overload
    usage: float = 0.0
    percent: float = 0.0
    fraction: float = 0.0
    throughput: float = 0.0
    need: float = 0.0
    offload: Offload = "shed"
    count: int = 0
    marked: float = 0.0
    names: tuple[str, ...] = ()


@SHEDDING.register("OverloadShedder", reads=(
    *WEIGHT_KEYS, "loadBalancerBrokerOverloadedThresholdPercentage"))
class OverloadShedder:
    """Pure port of ``OverloadShedder``; it keeps no state between cycles (memory is ``None``)."""

    name = "OverloadShedder"

    def initial_memory(self) -> None:
        return None

    def shed(
        self, load: LoadData, settings: Settings, memory: None
    ) -> tuple[SheddingDecision, None]:
        """``OverloadShedder.findBundlesForUnloading``: every broker at or above the threshold
        offloads its excess plus 5 %, at least one bundle."""
        percent = settings["loadBalancerBrokerOverloadedThresholdPercentage"]
        threshold = percent / 100.0
        notes: list[Note] = [OverloadWhy("note-rule" if load.brokers
                                         else "note-no-brokers", percent=percent)]
        verdicts: dict[str, BrokerVerdict] = {}
        selections: list[Selection] = []
        candidates: list[BundleCandidate] = []
        for broker in load.brokers:
            verdicts[broker] = _shed_broker(load, settings, broker, percent, selections,
                                            candidates)
        if selections:
            sources = tuple(dict.fromkeys(s.broker for s in selections))
            notes.append(OverloadWhy("note-selected", count=len(selections),
                                     names=sources))
        elif load.brokers:
            over = tuple(b for b, v in verdicts.items() if v.reason != Reason.BALANCED)
            notes.append(OverloadWhy("note-not-shed", percent=percent, names=over) if over
                         else OverloadWhy("note-none-reach", percent=percent))
        decision = SheddingDecision(
            strategy=self.name,
            selections=tuple(selections),
            brokers=MappingProxyType(verdicts),
            candidates=tuple(candidates),
            notes=tuple(notes),
            numbers=MappingProxyType({"threshold": threshold}),
        )
        return decision, None


def _shed_broker(load: LoadData, settings: Settings, broker: str, percent: float,
                 selections: list[Selection], candidates: list[BundleCandidate]
                 ) -> BrokerVerdict:
    """One broker of the ``forEach``: its usage against the threshold, the amount to offload,
    then the greedy selection when it has more than one bundle (appended to ``selections`` and
    ``candidates``)."""
    threshold = percent / 100.0
    data = load.brokers[broker]
    local = data.local
    usage = settings.overload_usage(local)
    throughput = local.msgThroughputIn + local.msgThroughputOut
    n_bundles = len(local.bundles)
    nums: dict[str, float] = {
        "usage": usage,
        "threshold": threshold,
        "throughput": throughput,
        "bundles": float(n_bundles),
    }

    def verdict(label: Label, reason: Reason, why: OverloadWhy) -> BrokerVerdict:
        return BrokerVerdict(broker, usage, None, label, reason, why, MappingProxyType(nums))

    if usage < threshold:
        return verdict(Label.SKIP, Reason.BALANCED, OverloadWhy("below", usage, percent))
    fraction = usage - threshold + ADDITIONAL_THRESHOLD_PERCENT_MARGIN
    need = throughput * fraction
    nums.update(offloadFraction=fraction, need=need)
    if n_bundles > 1:
        got = select_greedy(load, broker, data, need, Reason.OVERLOADED)
        selections.extend(got.selections)
        candidates.extend(got.candidates)
        nums["selected"] = got.marked
        if got.selections:
            return verdict(Label.SUCCESS, Reason.OVERLOADED, OverloadWhy(
                "offload", usage, percent, fraction, throughput, need, "shed",
                len(got.selections), got.marked))
        return verdict(Label.SKIP, Reason.NO_BUNDLES, OverloadWhy(
            "offload", usage, percent, fraction, throughput, need,
            "none-sheddable", n_bundles))
    return verdict(Label.SKIP, Reason.NO_BUNDLES, OverloadWhy(
        "offload", usage, percent, fraction, throughput, need,
        "one-bundle" if n_bundles == 1 else "no-bundles"))
