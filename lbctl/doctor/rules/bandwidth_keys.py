"""``bandwidth-key-spelling``: the bandwidth weights under a spelling the release does not read.

Before 4.0 Pulsar only has the misspelt ``loadBalancerBandwith{In,Out}ResourceWeight``; a
correctly spelt key is an unknown field and is ignored. From 4.0 (PIP-357, PR #22824) the correct
spelling is read, and the misspelt one only when the correct one is left at 1.0
(``ServiceConfiguration.getLoadBalancerBandwidthInResourceWeight``). The release's variant is
``bandwidthKeys`` in :mod:`lbctl.versions`.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, plain

PAIRS = (("loadBalancerBandwidthInResourceWeight", "loadBalancerBandwithInResourceWeight"),
         ("loadBalancerBandwidthOutResourceWeight", "loadBalancerBandwithOutResourceWeight"))


@rule("bandwidth-key-spelling", Severity.WARNING,
      title="Bandwidth weights under a spelling the release does not read (PIP-357)",
      source="PIP-357 (PR #22824)",
      why="Pulsar before 4.0 reads only the misspelt loadBalancerBandwith…ResourceWeight keys, "
          "and 4.0 reads them only while the correct spelling is 1.0 (PIP-357).",
      fix="the spelling the release reads: loadBalancerBandwith…ResourceWeight before 4.0, "
          "loadBalancerBandwidth…ResourceWeight from 4.0")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    v = ctx.profile.version
    for good, bad in PAIRS:
        g, b = float(ctx.value(good)), float(ctx.value(bad))
        if ctx.profile["bandwidthKeys"] == "misspelt":
            if g != 1.0:
                yield r.finding(
                    f"{ctx.shown(good)} on Pulsar {v}, which only reads {bad} "
                    f"(= {plain(b)})",
                    fix=ctx.set_fix(bad, g), settings=(good, bad))
        elif b != 1.0 and g != 1.0 and b != g:
            yield r.finding(
                f"{ctx.shown(bad)} is ignored: {ctx.shown(good)} wins on Pulsar {v}",
                fix=f"remove {bad}; keep {good}={plain(g)}", settings=(good, bad))
        elif b != 1.0 and g == 1.0:
            yield r.finding(
                f"{ctx.shown(bad)} is the deprecated spelling (still read by Pulsar {v} while "
                f"{good} is 1.0)",
                severity=Severity.INFO, fix=f"{ctx.set_fix(good, b)}, and remove {bad}",
                settings=(good, bad))
