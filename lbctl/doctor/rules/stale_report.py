"""``stale-load-report``: a broker whose load report is older than it may be.

A modular broker rewrites its report whenever a figure moved by
``loadBalancerReportUpdateThresholdPercentage`` and at least every
``loadBalancerReportUpdateMaxIntervalMinutes`` (``ModularLoadManagerImpl.needBrokerDataUpdate``):
a report older than three such intervals means the broker stopped reporting, and the leader
decides on old data. Three, not one: the rewrite is checked on its own schedule, so a healthy
broker's report is routinely a little past one interval; ``lbctl watch``'s ``report-stale`` uses
the same bound. ``SimpleLoadManagerImpl.writeLoadReportOnZookeeper`` rewrites on the same
maximum interval. Reports without a ``lastUpdate`` are not judged.

On the extensible load manager ``loadBalancerBrokerLoadDataTTLInSeconds`` is the limit, computed
as TransferShedder does (``LoadStats.update``, TransferShedder at 028ed6295a34): the TTL times
1000 and the data's age (the capture's time less ``updatedAt``; a missing ``updatedAt`` is the
capture's time, as the cycle reads it) are Java ``long`` s, so a TTL whose product overflows
wraps (``Long.MAX_VALUE`` seconds is -1000 ms: every broker is outdated), and the finding says
so. An outdated broker is left out of the cycle — its load counts in neither the average nor
the spread, and it is neither a source nor a transfer's destination — while the others are balanced;
TransferShedder skips the whole cycle (``Skip/OutDatedData``, PIP-192) only when no broker in
the store is left. The finding says which of the two it is. With ``loadBalancerEnabled=false`` no modular broker schedules its periodic
``LoadReportUpdaterTask`` (``PulsarService.startLoadManagementService``), so the reports age by
design: the finding says so and names that setting instead of a broken broker.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, listing
from lbctl.model.javaint import int64  # LoadStats.update's long arithmetic

#: rewrites a modular broker's report may miss before it is stale (``lbctl watch``'s
#: ``report-stale`` uses the same figure)
MISSED_WRITES = 3


def age_text(ms: int) -> str:
    s = ms / 1000
    return f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s"


@rule("stale-load-report", Severity.WARNING,
      title="A broker's load report older than the reporting interval allows",
      source="ModularLoadManagerImpl.needBrokerDataUpdate, TransferShedder (LoadStats.update, "
             "PIP-192)",
      why="a broker reports at least every loadBalancerReportUpdateMaxIntervalMinutes, so an "
          "older report means it stopped and the leader balances on its old load "
          "(ModularLoadManagerImpl.needBrokerDataUpdate).",
      fix="check the broker's load manager (its logs, `pulsar-admin broker-stats load-report`)")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    if ctx.extensible:
        yield from _extensible(ctx, r)
        return
    now = ctx.state.captured_at
    fix: str | None = None
    key = "loadBalancerReportUpdateMaxIntervalMinutes"
    limit_ms = MISSED_WRITES * int(ctx.value(key)) * 60_000
    keys: tuple[str, ...] = (key,)
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
            f"{len(stale)} broker(s) with a load report older than {MISSED_WRITES} × "
            f"{ctx.shown(key)}: "
            + listing([f"{b} ({age_text(a)} old)" for b, a in
                       sorted(stale.items(), key=lambda x: -x[1])]),
            why=why, fix=fix, brokers=list(stale), settings=keys)


#: the extensible rule's TTL key
TTL_KEY = "loadBalancerBrokerLoadDataTTLInSeconds"


def _extensible(ctx: Context, r: Rule) -> Iterator[Finding]:
    """TransferShedder's outdated brokers (module docstring): every broker of the load-data store
    whose data's age, in Java ``long`` arithmetic, exceeds the TTL in ms, itself a ``long``."""
    now = ctx.state.captured_at
    seconds = int(ctx.value(TTL_KEY))
    ttl_ms = int64(seconds * 1000)
    store = ctx.state.broker_load_data
    ages = {b: int64(now - (p.data.updatedAt or now)) for b, p in store.items()}
    stale = {b: a for b, a in ages.items() if a > ttl_ms}
    if not stale:
        return
    wrapped = ""
    if ttl_ms != seconds * 1000:
        wrapped = (f"{TTL_KEY} × 1000 overflows Java's long in LoadStats.update: the TTL is "
                   f"{ttl_ms} ms, ")
    if len(stale) == len(ages):
        why = (f"{wrapped}every broker's load data is older than {TTL_KEY}: TransferShedder "
               "leaves each out of the cycle (LoadStats.update), and with no broker left it "
               "skips the whole cycle (Skip/OutDatedData, PIP-192): nothing is balanced.")
    else:
        why = (f"{wrapped}TransferShedder leaves a broker whose load data is older than "
               f"{TTL_KEY} out of the cycle (LoadStats.update): its load counts in neither the "
               "average nor the spread, and it is neither a source nor a transfer's "
               "destination; the other "
               f"{len(ages) - len(stale)} broker(s) are balanced without it (the cycle is "
               "skipped, Skip/OutDatedData, only when every broker is outdated).")
    yield r.finding(
        f"{len(stale)} of {len(ages)} broker(s) with load data older than {ctx.shown(TTL_KEY)}: "
        + listing([f"{b} ({_age(a)} old)" for b, a in sorted(stale.items(), key=lambda x: -x[1])]),
        why=why, brokers=list(stale), settings=(TTL_KEY,))


def _age(ms: int) -> str:
    """:func:`age_text`, or the signed milliseconds of an age that is no age (data stamped after
    the capture, judged only under a TTL that wrapped below zero)."""
    return age_text(ms) if ms >= 0 else f"{ms} ms"
