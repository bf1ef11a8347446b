"""Words of ``OverloadShedder`` (:mod:`lbctl.strategies.shedding.overload`)."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.explain.words.select import shed_tail
from lbctl.strategies.shedding.overload import OverloadWhy
from lbctl.units import mb_s, pct


@words.register
def overload(w: OverloadWhy) -> str:
    match w.code:
        case "below":
            return (f"usage {pct(w.usage)} is below "
                    f"loadBalancerBrokerOverloadedThresholdPercentage {w.percent}%")
        case "offload":
            return (f"usage {pct(w.usage)} ≥ loadBalancerBrokerOverloadedThresholdPercentage "
                    f"{w.percent}%; it should offload {pct(w.fraction)} of its "
                    f"{mb_s(w.throughput)} = {mb_s(w.need)}"
                    + shed_tail(w.offload, w.count, w.marked))
        case "note-no-brokers":
            return "no brokers: nothing to shed"
        case "note-rule":
            return (f"a broker is shed when its weighted usage is ≥ "
                    f"loadBalancerBrokerOverloadedThresholdPercentage {w.percent}%; it then "
                    f"offloads (usage - {w.percent}% + 5%) of its throughput, at least one bundle")
        case "note-selected":
            return f"{w.count} bundle(s) selected from {', '.join(w.names)}"
        case "note-not-shed":
            return (f"nothing selected: {', '.join(w.names)} reached {w.percent}% but could not "
                    "be shed (see each broker)")
        case "note-none-reach":
            return f"nothing selected: no broker reaches {w.percent}%"
