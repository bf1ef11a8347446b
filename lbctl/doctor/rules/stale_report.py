"""``stale-load-report``: a broker whose load report is older than it may be.

A modular broker rewrites its report whenever a figure moved by
``loadBalancerReportUpdateThresholdPercentage`` and at least every
``loadBalancerReportUpdateMaxIntervalMinutes`` (``ModularLoadManagerImpl.needBrokerDataUpdate``):
a report older than three such intervals means the broker stopped reporting, and the leader
decides on old data. Three, not one: the rewrite is checked on its own schedule, so a healthy
broker's report is routinely a little past one interval; ``lbctl watch``'s ``report-stale`` uses
the same bound. On the
extensible load manager ``loadBalancerBrokerLoadDataTTLInSeconds`` is the limit: TransferShedder
skips the cycle on older data (``Skip/OutDatedData``, PIP-192). Reports without a ``lastUpdate``
are not judged. With ``loadBalancerEnabled=false`` no modular broker schedules its periodic
``LoadReportUpdaterTask`` (``PulsarService.startLoadManagementService``), so the reports age by
design: the finding says so and names that setting instead of a broken broker.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, listing

#: rewrites a modular broker's report may miss before it is stale (``lbctl watch``'s
#: ``report-stale`` uses the same figure)
MISSED_WRITES = 3


def age_text(ms: int) -> str:
    s = ms / 1000
    return f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s"


@rule("stale-load-report", Severity.WARNING,
      title="A broker's load report older than the reporting interval allows",
      source="ModularLoadManagerImpl.needBrokerDataUpdate, PIP-192",
      why="a broker reports at least every loadBalancerReportUpdateMaxIntervalMinutes, so an "
          "older report means it stopped and the leader balances on its old load "
          "(ModularLoadManagerImpl.needBrokerDataUpdate).",
      fix="check the broker's load manager (its logs, pulsar-admin broker-stats load-report)")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    now = ctx.state.captured_at
    fix: str | None = None
    keys: tuple[str, ...]
    if ctx.extensible:
        key = "loadBalancerBrokerLoadDataTTLInSeconds"
        limit_ms = int(ctx.value(key)) * 1000
        stamps = {b: p.data.updatedAt for b, p in ctx.state.broker_load_data.items()}
        keys = (key,)
        why = ("TransferShedder skips the whole cycle while a broker's load data is older than "
               "loadBalancerBrokerLoadDataTTLInSeconds (Skip/OutDatedData, PIP-192).")
    else:
        key = "loadBalancerReportUpdateMaxIntervalMinutes"
        limit_ms = MISSED_WRITES * int(ctx.value(key)) * 60_000
        keys = (key,)
        stamps = {b: local.lastUpdate for b, local in ctx.brokers.items()}
        why = r.why
        if ctx.value("loadBalancerEnabled") is False:
            why = ("with loadBalancerEnabled=false no broker schedules its periodic load report "
                   "(PulsarService, LoadReportUpdaterTask), so every report ages and the leader "
                   "places bundles on old load.")
            fix = ctx.set_fix("loadBalancerEnabled", True)
            keys = (key, "loadBalancerEnabled")
    stale = {b: now - t for b, t in stamps.items() if t > 0 and now - t > limit_ms}
    if stale:
        yield r.finding(
            f"{len(stale)} broker(s) with a load report older than "
            + (f"{MISSED_WRITES} × " if not ctx.extensible else "") + f"{ctx.shown(key)}: "
            + listing([f"{b} ({age_text(a)} old)" for b, a in
                       sorted(stale.items(), key=lambda x: -x[1])]),
            why=why, fix=fix, brokers=list(stale), settings=keys)
