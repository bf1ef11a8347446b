"""``avg-shedder-unload-percentage``: AvgShedder with ``maxUnloadPercentage`` below 0.5.

AvgShedder moves ``maxUnloadPercentage`` of the message-rate gap between the two brokers of a
pair; PIP-364 and ``ServiceConfiguration``'s documentation recommend 0.5 ("so that it will
distribute the load evenly between the highest and lowest brokers"). The default, 0.2, is
UniformLoadShedder's: the pair stays 60 % as far apart and must build up its hit count again.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context

RECOMMENDED = 0.5


@rule("avg-shedder-unload-percentage", Severity.WARNING,
      title="AvgShedder moving less than half of a pair's gap (maxUnloadPercentage < 0.5)",
      source="PIP-364",
      why="AvgShedder moves maxUnloadPercentage of the gap between a pair of brokers; PIP-364 "
          "recommends 0.5, which evens the pair in one move.",
      fix="maxUnloadPercentage=0.5")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    if ctx.extensible or ctx.shedder() != "AvgShedder" or not ctx.profile["avgShedder"]:
        return
    key = "maxUnloadPercentage"
    value = float(ctx.value(key))
    if value < RECOMMENDED:
        left = 1 - 2 * value
        yield r.finding(
            f"AvgShedder with {ctx.shown(key)}: each move leaves {left:.0%} of the pair's gap",
            fix=ctx.set_fix(key, RECOMMENDED), settings=(key,))
