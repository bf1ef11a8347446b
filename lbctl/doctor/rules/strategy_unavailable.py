"""``strategy-unavailable``: a strategy or feature the modelled Pulsar release does not have
(:mod:`lbctl.versions`): AvgShedder before 3.0.6 / 3.2.4 / 3.3.1 (``ModularLoadManagerImpl``
falls back to OverloadShedder for shedding and LeastLongTermMessageRate for placement),
lower-boundary shedding before 2.11 (PR #17456), the extensible load manager before 3.0
(PIP-192), ``flow_or_qps_equally_divide`` before 3.0 (PIP-169)."""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import EXTENSIBLE_CLASS, Context, short


@rule("strategy-unavailable", Severity.ERROR,
      title="A strategy or feature the Pulsar release does not have",
      source="PIP-364 (AvgShedder), PR #17456, PIP-192, PIP-169",
      why="Pulsar replaces a strategy class it does not have (AvgShedder → OverloadShedder and "
          "LeastLongTermMessageRate) and ignores settings it does not know.",
      fix="upgrade, or configure what the release has")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    p = ctx.profile
    v = p.version
    if not ctx.extensible and not p["avgShedder"]:
        for key in ("loadBalancerLoadSheddingStrategy", "loadBalancerLoadPlacementStrategy"):
            if short(ctx.value(key)) == "AvgShedder":
                instead = ("OverloadShedder" if key == "loadBalancerLoadSheddingStrategy"
                           else "LeastLongTermMessageRate")
                yield r.finding(
                    f"{ctx.shown(key)} on Pulsar {v}, which has no AvgShedder",
                    why=f"AvgShedder came in 3.0.6, 3.2.4, 3.3.1 and 4.0 (PIP-364); Pulsar {v} "
                        f"cannot load the class and uses {instead} instead "
                        "(ModularLoadManagerImpl).",
                    fix="upgrade to a release with AvgShedder, or choose a strategy this one has",
                    source="PIP-364, PRs #22949 / #23053", settings=(key,))
    if ctx.value("lowerBoundarySheddingEnabled") and not p["lowerBoundaryShedding"]:
        yield r.finding(
            f"{ctx.shown('lowerBoundarySheddingEnabled')} on Pulsar {v}",
            severity=Severity.WARNING,
            why="lower-boundary shedding came in 2.11 (PR #17456); this release ignores the "
                "setting, so an idle broker still gets nothing.",
            fix="upgrade to 2.11 or later", source="PR #17456",
            settings=("lowerBoundarySheddingEnabled",))
    lm = ctx.value("loadManagerClassName")
    if (ctx.extensible or lm == EXTENSIBLE_CLASS) and not p["extensible"]:
        yield r.finding(
            f"the extensible load manager ({short(lm)}) on Pulsar {v}",
            why="the extensible load manager (PIP-192) and TransferShedder (PIP-220) came in "
                "3.0; the broker cannot load the class.",
            fix="upgrade to 3.0 or later, or keep ModularLoadManagerImpl",
            source="PIP-192", settings=("loadManagerClassName",))
    algo = ctx.value("defaultNamespaceBundleSplitAlgorithm")
    if algo == "flow_or_qps_equally_divide" and not p["flowOrQps"]:
        yield r.finding(
            f"{ctx.shown('defaultNamespaceBundleSplitAlgorithm')} on Pulsar {v}",
            severity=Severity.WARNING,
            why="flow_or_qps_equally_divide came in 3.0 (PIP-169); before, an unknown algorithm "
                "name falls back to range_equally_divide.",
            fix="defaultNamespaceBundleSplitAlgorithm=range_equally_divide, or upgrade to 3.0",
            source="PIP-169", settings=("defaultNamespaceBundleSplitAlgorithm",))
