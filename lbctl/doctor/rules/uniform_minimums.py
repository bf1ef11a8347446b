"""``uniform-minimums``: UniformLoadShedder minimums the cluster's traffic can never reach.

UniformLoadShedder budgets ``(int) ((max - min) · maxUnloadPercentage)`` of the message rate
(or the throughput) between the busiest and the least busy broker, and sheds nothing when the
budget is below ``minUnloadMessage`` (or ``minUnloadMessageThroughput``). The gap is at most the
cluster's total (all traffic on one broker): when even that falls short on both figures,
shedding can never fire (issue #21299; the minimums came with PR #13915). When only the current
gap falls short, it is reported as info.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context
from lbctl.units import mb_s, msg_s


@rule("uniform-minimums", Severity.WARNING,
      title="UniformLoadShedder minimums above what the cluster's traffic can reach",
      source="#21299, PR #13915",
      why="UniformLoadShedder sheds nothing while (max − min) × maxUnloadPercentage stays below "
          "minUnloadMessage and minUnloadMessageThroughput (#21299).",
      fix="minUnloadMessage and minUnloadMessageThroughput below the cluster's traffic × "
          "maxUnloadPercentage")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    if ctx.extensible or ctx.shedder() != "UniformLoadShedder" or len(ctx.brokers) < 2:
        return
    p = float(ctx.value("maxUnloadPercentage"))
    min_msg, min_tp = int(ctx.value("minUnloadMessage")), int(ctx.value("minUnloadMessageThroughput"))
    rates = [b.msgRateIn + b.msgRateOut for b in ctx.brokers.values()]
    tps = [b.msgThroughputIn + b.msgThroughputOut for b in ctx.brokers.values()]
    keys = ("minUnloadMessage", "minUnloadMessageThroughput", "maxUnloadPercentage")
    total_r, total_t = sum(rates), sum(tps)
    if total_r * p < min_msg and total_t * p < min_tp:
        yield r.finding(
            f"the whole cluster carries {msg_s(total_r)} and {mb_s(total_t)}; × "
            f"maxUnloadPercentage {p} that is {msg_s(total_r * p)} and {mb_s(total_t * p)}, "
            f"below minUnloadMessage {min_msg} msg/s and minUnloadMessageThroughput "
            f"{mb_s(min_tp)}: shedding can never fire",
            fix=(f"{ctx.set_fix('minUnloadMessage', max(1, int(total_r * p / 10)))} and "
                 f"{ctx.set_fix('minUnloadMessageThroughput', max(1, int(total_t * p / 10)))}"
                 " (a tenth of what moving the whole traffic would budget)"),
            settings=keys)
        return
    gap_r, gap_t = (max(rates) - min(rates)) * p, (max(tps) - min(tps)) * p
    if gap_r < min_msg and gap_t < min_tp:
        yield r.finding(
            f"today's gap between the busiest and the least busy broker budgets "
            f"{msg_s(gap_r)} and {mb_s(gap_t)}, below the minimums ({min_msg} msg/s, "
            f"{mb_s(min_tp)}): UniformLoadShedder cannot act on this state",
            severity=Severity.INFO, settings=keys)
