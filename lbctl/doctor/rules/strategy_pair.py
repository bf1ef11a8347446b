"""``shedder-placement-mismatch``: a shedding strategy paired with a placement strategy that works
against it (modular load manager only).

* ThresholdShedder sheds by resource usage while LeastLongTermMessageRate places by message rate:
  what is shed from a hot broker can land on another hot one (PIP-181, issue #16274; PIP-364's
  comparison of the pairs) — warning;
* AvgShedder shedding without AvgShedder placement loses the destination AvgShedder planned for
  each pair (PIP-364) — warning;
* AvgShedder placement without AvgShedder shedding: ``ModularLoadManagerImpl.initialize`` refuses
  to start (one instance serves both) — error.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import IMPL, Context

AVG = IMPL + "AvgShedder"
LRUWW = IMPL + "LeastResourceUsageWithWeight"


@rule("shedder-placement-mismatch", Severity.WARNING,
      title="A shedding strategy paired with a placement strategy that works against it",
      source="PIP-181 (#16274), PIP-364",
      why="ThresholdShedder sheds by resource usage but LeastLongTermMessageRate places by "
          "message rate, so a shed bundle can land on another hot broker (PIP-181, PIP-364).",
      fix="loadBalancerLoadPlacementStrategy=" + LRUWW + ", or AvgShedder for both "
          "(preview: `lbctl compare SNAPSHOT --strategy ThresholdShedder "
          "--strategy ThresholdShedder:LeastResourceUsageWithWeight`)")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    if ctx.extensible:
        return
    shed, place = ctx.shedder(), ctx.placement()
    keys = ("loadBalancerLoadSheddingStrategy", "loadBalancerLoadPlacementStrategy")
    if shed == "ThresholdShedder" and place == "LeastLongTermMessageRate":
        yield r.finding(
            f"shedding with ThresholdShedder and placing with LeastLongTermMessageRate "
            f"({ctx.shown(keys[0])}; {ctx.shown(keys[1])})",
            fix=(f"{ctx.set_fix(keys[1], LRUWW)}; preview the pair first: "
                 + ctx.compare_fix("ThresholdShedder",
                                   "ThresholdShedder:LeastResourceUsageWithWeight")),
            settings=keys)
    elif shed == "AvgShedder" and place != "AvgShedder" and ctx.profile["avgShedder"]:
        yield r.finding(
            f"shedding with AvgShedder but placing with {place} ({ctx.shown(keys[1])})",
            why="AvgShedder plans a destination for each pair it balances and only its own "
                "placement uses it; another placement sends the bundle elsewhere (PIP-364).",
            fix=ctx.set_fix(keys[1], AVG), source="PIP-364", settings=keys)
    elif place == "AvgShedder" and shed != "AvgShedder" and ctx.profile["avgShedder"]:
        yield r.finding(
            f"placing with AvgShedder but shedding with {shed} ({ctx.shown(keys[0])})",
            severity=Severity.ERROR,
            why="ModularLoadManagerImpl refuses AvgShedder as placement unless it is also the "
                "shedding strategy (one instance serves both; PIP-364).",
            fix=ctx.set_fix(keys[0], AVG), source="PIP-364, ModularLoadManagerImpl.initialize",
            settings=keys)
