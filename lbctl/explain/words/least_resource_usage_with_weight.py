"""Words of the modular ``LeastResourceUsageWithWeight``
(:mod:`lbctl.strategies.placement.least_resource_usage_with_weight`)."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.strategies.placement.least_resource_usage_with_weight import WeightedWhy
from lbctl.units import pct


def _listed(names: tuple[str, ...], usages: tuple[float, ...]) -> str:
    return ", ".join(f"{c} ({pct(u)})" for c, u in zip(names, usages, strict=True))


@words.register
def weighted(w: WeightedWhy) -> str:
    if w.code == "no-candidates":
        return "no candidate brokers"
    parts = [f"mean smoothed usage of the candidates {pct(w.mean)}"]
    if w.code == "all":
        parts.append(
            f"no candidate is {w.diff * 100:g}% below it (all overloaded, as Pulsar puts it): "
            f"uniform random pick among all [{', '.join(w.best)}] → {w.pick}")
    else:
        parts.append(f"at least {w.diff * 100:g}% below it: {_listed(w.best, w.best_usage)}"
                     + (f" → random pick {w.pick}" if len(w.best) > 1 else f" → {w.pick}"))
    if w.resets:
        parts.append("history reset (no bundles or zero message rate, e.g. restarted): "
                     f"{', '.join(w.resets)}")
    if w.over:
        parts.append(f"above the overload threshold {w.overload * 100:g}% (Pulsar only logs it): "
                     + _listed(w.over, w.over_usage))
    if w.missing:
        parts.append(f"no load data (counted as 100%): {', '.join(w.missing)}")
    return "; ".join(parts)
