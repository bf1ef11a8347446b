"""The refresh loop of `lbctl monitor-brokers`: live source → BrokerMonitor → screen.

One refresh is :func:`lbctl.monitor.live.live_refresh`; this module loops, paces and draws.

Kept apart from the command so that the command module stays a declaration of options.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import typer

from lbctl.cli.common import TABLE, OutputFormat, emit
from lbctl.monitor.brokers import BrokerMonitor, Refresh
from lbctl.monitor.live import live_refresh, snapshot_refresh_args
from lbctl.render.display import colour_wanted

_CLEAR = "\x1b[H\x1b[2J"


def show(refresh: Refresh, *, sort: str | None, summary: bool, output: OutputFormat,
         in_place: bool, color: bool, wide: bool = False) -> None:
    from lbctl.render.monitor import MonitorView

    if in_place:
        sys.stdout.write(_CLEAR)
    emit(MonitorView(refresh, sort, summary, color), output, wide=wide, no_color=not color)
    sys.stdout.flush()


def run_live(ctx: typer.Context, *, interval: float, refreshes: int | None, sort: str | None,
             summary: bool, output: OutputFormat, wide: bool = False,
             no_color: bool = False) -> None:
    from lbctl.cli.connection import is_terminal, open_client
    from lbctl.monitor.brokers import sort_rows
    from lbctl.sources.live import LiveSource

    sort_rows([], sort)  # a bad --sort fails before any request
    tty = is_terminal(sys.stdout)
    in_place = tty and output == TABLE and refreshes != 1
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
                     color=colour_wanted(sys.stdout, no_color=no_color), wide=wide)
                n += 1
                if refreshes is not None and n >= refreshes:
                    return
                time.sleep(max(0.0, interval - (time.monotonic() - started)))
        except KeyboardInterrupt:
            return  # the usual way to leave a monitor: not an error


def run_snapshots(files: Sequence[Path], *, sort: str | None, summary: bool,
                  output: OutputFormat, wide: bool = False, no_color: bool = False) -> None:
    from lbctl.sources.snapshot import read_snapshots

    mon = BrokerMonitor()
    refresh = None
    for st in read_snapshots(files):
        refresh = mon.update(*snapshot_refresh_args(st))
    assert refresh is not None
    show(refresh, sort=sort, summary=summary, output=output, in_place=False,
         color=colour_wanted(sys.stdout, no_color=no_color), wide=wide)
