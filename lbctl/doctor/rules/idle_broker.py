"""``idle-broker``: a broker owning no bundle while others carry more than the average.

A broker that restarts gives up its bundles and gets new ones only when something unloads them;
ThresholdShedder (without lower-boundary shedding), OverloadShedder and a cluster below every
threshold leave it empty indefinitely (#12160; PIP-364's rolling-restart case). Pulsar's own
namespaces (``pulsar/…``: heartbeat, SLA monitor) do not count as bundles here: every broker owns
its heartbeat bundle. Reported when the cluster has at least one user bundle per broker, so an
even spread would give the idle broker some.
"""

from __future__ import annotations

from collections.abc import Iterator
from shlex import quote

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, listing


@rule("idle-broker", Severity.WARNING,
      title="A broker with no bundle while others are above the average",
      source="#12160, PIP-364",
      why="a restarted broker only gets bundles when something unloads them, and with every "
          "broker under the shedding thresholds nothing does, so it stays idle (#12160).",
      fix="`lbctl rebalance-after BROKER -o json > fill.json`, then `lbctl apply fill.json --yes` "
          "(moves bundles onto the idle broker, paced); lowerBoundarySheddingEnabled=true "
          "(ThresholdShedder) or AvgShedder keep it from recurring")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    n = len(ctx.brokers)
    if n < 2:
        return
    counts = {b: len(ctx.user_bundles(b)) for b in ctx.brokers}
    total = sum(counts.values())
    idle = [b for b, c in counts.items() if c == 0]
    if not idle or total < n:
        return
    mean = total / n
    busy = sorted((b for b, c in counts.items() if c > mean), key=lambda b: -counts[b])
    if not busy:
        return
    yield r.finding(
        f"{len(idle)} of {n} brokers own no bundle ({listing(idle)}) while "
        f"{listing([f'{b} owns {counts[b]}' for b in busy], 3)} (average {mean:.1f} per broker)",
        fix=fix_for(idle, live=ctx.live, snapshot=ctx.last_snapshot()), brokers=idle + busy)


def fix_for(idle: list[str], *, live: bool, snapshot: str = "SNAPSHOT") -> str:
    """The lbctl commands that fill the idle brokers, one after the other: ``rebalance-after``'s
    plan, applied (paced by ``apply --concurrency/--interval``); offline, its preview first."""
    first = quote(idle[0])
    steps = [f"`lbctl rebalance-after {first} -o json > fill.json`, then "
             "`lbctl apply fill.json --yes`"]
    if not live:
        steps.insert(0, f"preview with `lbctl rebalance-after {first} --snapshot {snapshot}`")
    more = f" (then the same for {listing(idle[1:])})" if len(idle) > 1 else ""
    return ("; ".join(steps) + more + "; lowerBoundarySheddingEnabled=true (ThresholdShedder) "
            "or AvgShedder keep it from recurring")
