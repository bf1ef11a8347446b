"""``usage-over-100``: a resource reported above 100 % of its limit.

The load balancer expects every usage on a 0–100 % scale; a usage above its limit comes from a
mis-scaled report (a CPU limit counted on fewer cores than the broker uses, a NIC speed too low).
PR #16937 made ThresholdShedder and LeastResourceUsageWithWeight skip such figures; releases
without it let the figure dominate the weighted max. Reported with the figure and the resource.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, listing, pct


@rule("usage-over-100", Severity.WARNING,
      title="A resource usage reported above 100 % (a mis-scaled report)",
      source="PR #16937",
      why="the load balancer expects usages on a 0–100 % scale, and a mis-scaled one either "
          "dominates the weighted max or is skipped altogether (PR #16937).",
      fix="fix the broker's limits: CPU cores visible to the JVM (container quota), "
          "loadBalancerOverrideBrokerNicSpeedGbps for bandwidth, -XX:MaxDirectMemorySize")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    over: list[str] = []
    brokers: list[str] = []
    for b, local in ctx.brokers.items():
        bad = [f"{name} {pct(p)}" for name, p in local.resource_percents().items() if p > 100]
        if bad:
            over.append(f"{b}: {', '.join(bad)}")
            brokers.append(b)
    if over:
        yield r.finding(f"{len(over)} broker(s) report usage above 100 %: {listing(over, 3)}",
                        brokers=brokers)
