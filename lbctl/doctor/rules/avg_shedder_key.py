"""``avg-shedder-key``: on the releases whose AvgShedder check compared the shedding strategy
with SimpleLoadManagerImpl's ``loadBalancerPlacementStrategy`` instead of
``loadBalancerLoadPlacementStrategy`` (3.0.6–3.0.7, 3.2.4, 3.3.1–3.3.2: PR #23156), AvgShedder
placement makes ``ModularLoadManagerImpl`` refuse to start unless that other key names
AvgShedder too; Pulsar then falls back to SimpleLoadManagerImpl. The releases come from
:mod:`lbctl.versions` (variant ``avgShedderBindKey``)."""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import IMPL, Context, short


@rule("avg-shedder-key", Severity.ERROR,
      title="AvgShedder placement on a release that checks the wrong key (PR #23156)",
      source="PR #23156",
      why="Pulsar 3.0.6–3.0.7, 3.2.4 and 3.3.1–3.3.2 compare the shedding strategy with "
          "loadBalancerPlacementStrategy, so ModularLoadManagerImpl refuses to start and the "
          "broker falls back to SimpleLoadManagerImpl (PR #23156).",
      fix="loadBalancerPlacementStrategy=" + IMPL + "AvgShedder as well, or upgrade to 3.0.8, "
          "3.3.3 or 4.0")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    if ctx.extensible or ctx.placement() != "AvgShedder":
        return
    if ctx.profile["avgShedderBindKey"] != "loadBalancerPlacementStrategy":
        return
    if short(ctx.value("loadBalancerPlacementStrategy")) == "AvgShedder":
        return
    yield r.finding(
        f"Pulsar {ctx.profile.version} with AvgShedder placement and "
        f"{ctx.shown('loadBalancerPlacementStrategy')}",
        fix=ctx.set_fix("loadBalancerPlacementStrategy", IMPL + "AvgShedder")
        + ", or upgrade to 3.0.8, 3.3.3 or 4.0",
        settings=("loadBalancerLoadPlacementStrategy", "loadBalancerPlacementStrategy"))
