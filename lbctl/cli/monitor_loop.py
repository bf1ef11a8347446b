"""The refresh loop of `lbctl monitor-brokers`: live source → BrokerMonitor → screen.

Kept apart from the command so that the command module stays a declaration of options.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from lbctl.cli.common import OutputFormat, emit
from lbctl.monitor import BrokerMonitor, Refresh

_CLEAR = "\x1b[H\x1b[2J"
THRESHOLD = "loadBalancerBrokerOverloadedThresholdPercentage"


def threshold_of(config: Any) -> float:
    from lbctl.config import resolve
    from lbctl.sources.live import _lb_settings

    return float(resolve(_lb_settings(dict(config))[0])[THRESHOLD])


def parse_reports(cluster: str, reports: dict[str, Any]) -> dict[str, Any]:
    """Broker → ``LocalBrokerData`` (validated as a snapshot's brokers are), or its error text."""
    from lbctl.admin.errors import AdminError
    from lbctl.errors import SnapshotError
    from lbctl.sources.live import reconcile
    from lbctl.sources.snapshot_schema import parse_snapshot

    out: dict[str, Any] = {b: str(r) for b, r in reports.items() if isinstance(r, AdminError)}
    good = {b: r for b, r in reports.items() if not isinstance(r, AdminError)}
    reconcile(good, {})

    def parse(brokers: dict[str, Any]) -> dict[str, Any]:
        snap = {"format": "lbctl/snapshot@1", "cluster": cluster or "?", "capturedAt": 0,
                "brokers": brokers}
        return dict(parse_snapshot(snap, "load-report").brokers)

    try:
        out.update(parse(good))
    except SnapshotError:
        for b, r in good.items():  # find the malformed ones; keep the others
            try:
                out.update(parse({b: r}))
            except SnapshotError as e:
                out[b] = f"malformed load report: {str(e).split(': ', 1)[-1]}"
    return out


def live_refresh(src: Any, mon: BrokerMonitor, last_threshold: list[float]) -> Refresh:
    from lbctl.admin.errors import AdminError

    at = int(time.time() * 1000)
    try:
        d, raw_reports = src.discover_and_reports(list(mon.rows))
    except AdminError as e:
        if not mon.rows:
            raise
        brokers = list(mon.rows)
        return mon.update(brokers, dict.fromkeys(brokers, f"admin URL: {e}"), last_threshold[0], at)
    last_threshold[0] = threshold_of(d.config)
    reports = parse_reports(d.cluster, raw_reports)
    return mon.update(d.brokers, reports, last_threshold[0], at, d.cluster)


def show(refresh: Refresh, *, sort: str | None, summary: bool, output: OutputFormat,
         in_place: bool, color: bool) -> None:
    from lbctl.render.monitor import MonitorView

    if in_place:
        sys.stdout.write(_CLEAR)
    emit(MonitorView(refresh, sort, summary, color), output)
    sys.stdout.flush()


def run_live(ctx: typer.Context, *, interval: float, refreshes: int | None, sort: str | None,
             summary: bool, output: OutputFormat) -> None:
    from lbctl.cli.connection import is_terminal, open_client
    from lbctl.monitor import sort_rows
    from lbctl.sources.live import LiveSource

    sort_rows([], sort)  # a bad --sort fails before any request
    tty = is_terminal(sys.stdout)
    in_place = tty and output == OutputFormat.table and refreshes != 1
    n = 0
    with open_client(ctx) as client:
        src = LiveSource(client, topics=False, namespaces=False)
        mon = BrokerMonitor()
        threshold = [85.0]
        try:
            while True:
                started = time.monotonic()
                refresh = live_refresh(src, mon, threshold)
                show(refresh, sort=sort, summary=summary, output=output, in_place=in_place,
                     color=tty)
                n += 1
                if refreshes is not None and n >= refreshes:
                    return
                time.sleep(max(0.0, interval - (time.monotonic() - started)))
        except KeyboardInterrupt:
            return  # the usual way to leave a monitor: not an error


def run_snapshots(files: Sequence[Path], *, sort: str | None, summary: bool,
                  output: OutputFormat) -> None:
    from lbctl.cli.connection import is_terminal
    from lbctl.sources.snapshot import read_snapshots

    mon = BrokerMonitor()
    refresh = None
    for st in read_snapshots(files):
        refresh = mon.update(list(st.brokers), dict(st.brokers), threshold_of(st.config),
                             st.captured_at, st.cluster)
    assert refresh is not None
    show(refresh, sort=sort, summary=summary, output=output, in_place=False,
         color=is_terminal(sys.stdout))
