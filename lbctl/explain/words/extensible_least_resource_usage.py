"""Words of the extensible ``LeastResourceUsageWithWeight``
(:mod:`lbctl.strategies.placement.extensible_least_resource_usage`)."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.strategies.placement.extensible_least_resource_usage import LookupWhy


@words.register
def lookup(w: LookupWhy) -> str:
    match w.code:
        case "no-candidates":
            return "no candidate broker"
        case "below":
            return (f"{w.count} broker(s) at least {w.threshold:g} below the average load "
                    f"{w.average:.4f}")
        case "all":
            return "no broker is clearly below the average: all candidates are equally good"
