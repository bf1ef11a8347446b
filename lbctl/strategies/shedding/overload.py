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

from lbctl.config import WEIGHT_KEYS, Settings
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

#: OverloadShedder.ADDITIONAL_THRESHOLD_PERCENT_MARGIN
ADDITIONAL_THRESHOLD_PERCENT_MARGIN = 0.05


def _verdict(
    broker: str, usage: float, nums: dict[str, float], label: Label, reason: Reason, why: str
) -> BrokerVerdict:
    return BrokerVerdict(broker, usage, None, label, reason, why, MappingProxyType(dict(nums)))


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
        thr_pct = settings["loadBalancerBrokerOverloadedThresholdPercentage"]
        threshold = thr_pct / 100.0
        notes: list[str] = []
        verdicts: dict[str, BrokerVerdict] = {}
        selections: list[Selection] = []
        candidates: list[BundleCandidate] = []

        if not load.brokers:
            notes.append("no brokers: nothing to shed")
        else:
            notes.append(
                f"a broker is shed when its weighted usage is ≥ "
                f"loadBalancerBrokerOverloadedThresholdPercentage {thr_pct}%; it then offloads "
                f"(usage - {thr_pct}% + 5%) of its throughput, at least one bundle"
            )

        for broker, data in load.brokers.items():
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

            if usage < threshold:
                verdicts[broker] = _verdict(
                    broker,
                    usage,
                    nums,
                    Label.SKIP,
                    Reason.BALANCED,
                    f"usage {pct(usage)} is below "
                    f"loadBalancerBrokerOverloadedThresholdPercentage {thr_pct}%",
                )
                continue
            fraction = usage - threshold + ADDITIONAL_THRESHOLD_PERCENT_MARGIN
            need = throughput * fraction
            nums.update(offloadFraction=fraction, need=need)
            over = (
                f"usage {pct(usage)} ≥ loadBalancerBrokerOverloadedThresholdPercentage "
                f"{thr_pct}%; it should offload {pct(fraction)} of its {mb_s(throughput)} "
                f"= {mb_s(need)}"
            )
            if n_bundles > 1:
                got = select_greedy(load, broker, data, need, Reason.OVERLOADED)
                selections.extend(got.selections)
                candidates.extend(got.candidates)
                nums["selected"] = got.marked
                if got.selections:
                    verdicts[broker] = _verdict(
                        broker,
                        usage,
                        nums,
                        Label.SUCCESS,
                        Reason.OVERLOADED,
                        f"{over}: {len(got.selections)} bundle(s) with "
                        f"{mb_s(got.marked)} selected",
                    )
                else:
                    verdicts[broker] = _verdict(
                        broker,
                        usage,
                        nums,
                        Label.SKIP,
                        Reason.NO_BUNDLES,
                        f"{over}, but none of its {n_bundles} bundles can be shed "
                        "(recently unloaded, system namespace or no bundle data)",
                    )
            elif n_bundles == 1:
                verdicts[broker] = _verdict(
                    broker,
                    usage,
                    nums,
                    Label.SKIP,
                    Reason.NO_BUNDLES,
                    f"{over}, but it has only 1 bundle: Pulsar never sheds a single-bundle broker",
                )
            else:
                verdicts[broker] = _verdict(
                    broker,
                    usage,
                    nums,
                    Label.SKIP,
                    Reason.NO_BUNDLES,
                    f"{over}, but it has no bundles",
                )

        if selections:
            sources = list(dict.fromkeys(s.broker for s in selections))
            notes.append(f"{len(selections)} bundle(s) selected from {', '.join(sources)}")
        elif load.brokers:
            over_brokers = [b for b, v in verdicts.items() if v.reason != Reason.BALANCED]
            if over_brokers:
                notes.append(
                    f"nothing selected: {', '.join(over_brokers)} reached {thr_pct}% but could not be shed "
                    "(see each broker)"
                )
            else:
                notes.append(f"nothing selected: no broker reaches {thr_pct}%")

        decision = SheddingDecision(
            strategy=self.name,
            selections=tuple(selections),
            brokers=MappingProxyType(verdicts),
            candidates=tuple(candidates),
            notes=tuple(notes),
            numbers=MappingProxyType({"threshold": threshold}),
        )
        return decision, None
