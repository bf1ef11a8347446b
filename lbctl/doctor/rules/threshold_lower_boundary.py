"""``threshold-no-lower-boundary``: ThresholdShedder with history and no lower-boundary shedding.

ThresholdShedder sheds only a broker above the average + ``loadBalancerBrokerThresholdShedderPercentage``
of the history-smoothed usage (``loadBalancerHistoryResourcePercentage``). After a rolling
restart the broker restarted last is empty, and when nobody is above that line nothing ever moves
to it (PIP-220's [50, 50, 50, 50, 50, 0] case; PIP-364): ``lowerBoundarySheddingEnabled`` (PR
#17456, 2.11) also sheds when a broker is below the average − the threshold. Info for the
configuration alone; a warning when the state shows such a broker while nobody is above the line.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, listing, pct


@rule("threshold-no-lower-boundary", Severity.INFO,
      title="ThresholdShedder with history and no lower-boundary shedding: an idle broker stays idle",
      source="PIP-364, PR #17456, PIP-220",
      why="ThresholdShedder only sheds brokers above average + threshold, so after a rolling "
          "restart the broker restarted last can stay empty (PIP-220; lowerBoundarySheddingEnabled, "
          "PR #17456).",
      fix="lowerBoundarySheddingEnabled=true in broker.conf (restart), or AvgShedder")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    if ctx.extensible or ctx.shedder() != "ThresholdShedder":
        return
    history = float(ctx.value("loadBalancerHistoryResourcePercentage"))
    if history <= 0 or (ctx.value("lowerBoundarySheddingEnabled")
                        and ctx.profile["lowerBoundaryShedding"]):
        return
    keys = ("lowerBoundarySheddingEnabled", "loadBalancerHistoryResourcePercentage")
    fix = (ctx.set_fix("lowerBoundarySheddingEnabled", True)
           if ctx.profile["lowerBoundaryShedding"] else "upgrade to 2.11+ and set "
           "lowerBoundarySheddingEnabled=true, or shed with AvgShedder")
    usage = {b: 100 * ctx.settings.weighted_usage(local) for b, local in ctx.brokers.items()}
    head = (f"ThresholdShedder with {ctx.shown(keys[1])} and "
            f"{ctx.shown(keys[0])}")
    if len(usage) >= 2:
        mean = sum(usage.values()) / len(usage)
        thr = float(ctx.value("loadBalancerBrokerThresholdShedderPercentage"))
        low = [b for b, u in usage.items() if u < mean - thr]
        high = [b for b, u in usage.items() if u > mean + thr]
        if low and not high:
            yield r.finding(
                f"{head}: {listing([f'{b} at {pct(usage[b])}' for b in low])} below the average "
                f"{pct(mean)} − {thr:g}, and no broker above {pct(mean + thr)}: nothing will move "
                "load to them", severity=Severity.WARNING, fix=fix, brokers=low, settings=keys)
            return
    yield r.finding(head, fix=fix, settings=keys)
