"""``setting-out-of-range``: a setting whose value is outside the range in which it means something.

``ServiceConfiguration`` declares no ``minValue``/``maxValue`` on the load-balancer fields, so
Pulsar starts with any number of the field's Java type; :class:`lbctl.config.Range` records, per
setting, the range in which Pulsar's load-balancer code does what the setting says (a percentage
compared with a usage in %, a fraction of a gap, a weight, a delay or an age). A value outside it
is an error: the behaviour it gets is not the one its name promises. Also caught: AvgShedder's low
threshold above its high one (PIP-364: the pair is chosen by ``high``, the hit count by ``low``).
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.config import SETTINGS
from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, plain


@rule("setting-out-of-range", Severity.ERROR,
      title="A setting outside the range in which Pulsar's code gives it its meaning",
      source="ServiceConfiguration (load balancer fields)",
      why="Pulsar accepts any number for these fields, but outside the range the load balancer "
          "does something else than the setting says.",
      fix="a value inside the setting's range (docs/settings.md lists them)")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    for s in SETTINGS:
        if s.valid is None:
            continue
        value = ctx.value(s.name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if s.valid.contains(float(value)):
            continue
        default = ctx.default(s.name)
        yield r.finding(
            f"{ctx.shown(s.name)} is outside {s.valid}",
            why=f"{s.name} is {s.valid.why}: outside {s.valid} the load balancer does not do "
                "what the setting says (ServiceConfiguration declares no bound, so Pulsar "
                "starts anyway).",
            fix=ctx.set_fix(s.name, default) + f" (the default), or a value in {s.valid}",
            settings=(s.name,))
    if ctx.extensible or ctx.shedder() != "AvgShedder":
        return
    low, high = "loadBalancerAvgShedderLowThreshold", "loadBalancerAvgShedderHighThreshold"
    if float(ctx.value(low)) > float(ctx.value(high)):
        yield r.finding(
            f"{ctx.shown(low)} above {ctx.shown(high)}",
            why="AvgShedder waits loadBalancerAvgShedderHitCountLowThreshold cycles for a gap "
                "above the low threshold and the (shorter) high hit count above the high one; "
                "with low above high the first case never happens (PIP-364).",
            fix=f"{low} below {high} (defaults {plain(ctx.default(low))} and "
                f"{plain(ctx.default(high))})",
            source="PIP-364", settings=(low, high))
