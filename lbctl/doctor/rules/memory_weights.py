"""``memory-weights``: non-zero JVM heap or direct-memory weights.

JVM heap usage follows the garbage collector, not the traffic: Pulsar 3.0 stopped weighing it in
ThresholdShedder and LeastResourceUsageWithWeight (PR #19559), 4.0 made its weight 0 by default
(PR #22820); the extensible load manager still weighs it in ``weightedMaxEMA``. Direct memory is
held by Netty's pools whatever the load ("cannot accurately reflect the machine's load",
``ServiceConfiguration``): PR #21168 made its weight 0 by default from 3.1.1 — 3.0.x keeps 1.0,
so the default itself is the trap there. The defaults come from the release's profile.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context


@rule("memory-weights", Severity.WARNING,
      title="Non-zero JVM heap or direct-memory weight",
      source="PR #19559, PR #21168",
      why="heap and direct-memory usage follow the garbage collector and Netty's pools, not the "
          "traffic, so a weight on them sheds bundles that are not the cause (PR #19559, PR "
          "#21168).",
      fix="loadBalancerDirectMemoryResourceWeight=0 and loadBalancerMemoryResourceWeight=0")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    dm = "loadBalancerDirectMemoryResourceWeight"
    value = float(ctx.value(dm))
    if value > 0:
        default = " — the default of this release" if not ctx.is_set(dm) else ""
        yield r.finding(
            f"{ctx.shown(dm)}{default} on Pulsar {ctx.profile.version}",
            why="direct memory is held by Netty's pools whatever the load, so its weight lets "
                "memory that is merely reserved decide which broker is overloaded (PR #21168 "
                "set the default to 0 from 3.1.1; 3.0.x kept 1.0).",
            fix=ctx.set_fix(dm, 0.0), source="PR #21168", settings=(dm,))
    mem = "loadBalancerMemoryResourceWeight"
    value = float(ctx.value(mem))
    if value > 0:
        read = ctx.extensible or ctx.profile["weightedUsageWithMemory"]
        where = ("the extensible load manager's weighted load" if ctx.extensible
                 else f"ThresholdShedder and LeastResourceUsageWithWeight on Pulsar "
                      f"{ctx.profile.version}")
        yield r.finding(
            f"{ctx.shown(mem)}: " + (f"weighs JVM heap in {where}" if read else
                                     f"ignored by the modular strategies of Pulsar "
                                     f"{ctx.profile.version} (since 3.0), but deprecated"),
            severity=Severity.WARNING if read else Severity.INFO,
            why="JVM heap usage rises and falls with garbage collection, not with traffic (PR "
                "#19559 dropped it from the modular strategies in 3.0; PR #22820 made its weight "
                "0 by default in 4.0).",
            fix=ctx.set_fix(mem, 0.0), source="PR #19559, PR #22820", settings=(mem,))



