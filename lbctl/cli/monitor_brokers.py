"""`lbctl monitor-brokers`: pulsar-perf monitor-brokers for every broker at once, over REST."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl.cli.common import Shown
from lbctl.cli.groups import grouped
from lbctl.cli.state import MonitorSnapshots


@grouped
def monitor_brokers(
    ctx: typer.Context,
    *,
    interval: Annotated[float, typer.Option(
        "--interval", "-i", metavar="SECONDS", min=0.1, max=86400.0,
        help="Seconds between refreshes (0.1 to 86400).")] = 10.0,
    once: Annotated[bool, typer.Option("--once", help="Print one refresh and exit.")] = False,
    count: Annotated[int | None, typer.Option(
        "--count", "-n", metavar="N", min=1, help="Stop after N refreshes.")] = None,
    sort: Annotated[str | None, typer.Option(
        "--sort", metavar="COLUMN", help="Sort brokers by a column: max, cpu, bundles, "
        "latestMsgRate, longMsgRate, … (numbers descending; default: weightedMax on the "
        "full-screen view, else the cluster's order).")] = None,
    summary: Annotated[bool, typer.Option(
        "--summary", help="Only the overall table, not one table per broker.")] = False,
    given: MonitorSnapshots,
    shown: Shown,
) -> None:
    """Show every broker's load like `pulsar-perf monitor-brokers`, refreshed in place.

    Per broker: SYSTEM (CPU, memory, direct memory, bandwidth in/out, max, in %), COUNT (topics,
    bundles, producers, consumers, bundle gains and losses) and LATEST / SHORT / LONG message rates
    and KB/s, then an overall table with a TOTAL. SHORT and LONG are averaged across refreshes with
    the leader's rule (10 and 1000 samples per bundle). Brokers at or above
    loadBalancerBrokerOverloadedThresholdPercentage are highlighted; a broker that stops answering
    stays on screen, marked stale with its error.

    \b
    Examples:
      lbctl --admin-url http://pulsar:8080 monitor-brokers
      lbctl monitor-brokers --once --sort max --summary
      lbctl monitor-brokers --once -o json
      lbctl monitor-brokers --snapshot examples/two-brokers-90-10.jsonl
    """
    from lbctl.cli.monitor_loop import run_live, run_snapshots
    from lbctl.cli.state import choose

    chosen = choose(ctx, given, topics=False, namespaces=False)
    if chosen.source.live:
        run_live(chosen, interval=interval, refreshes=1 if once else count, sort=sort,
                 summary=summary, shown=shown)
    else:
        run_snapshots(chosen, sort=sort, summary=summary, shown=shown)
