"""The refresh loop of `lbctl monitor-brokers`: live source → BrokerMonitor → screen.

One refresh is :func:`lbctl.monitor.live.live_refresh`; this module loops, paces and draws.

Kept apart from the command so that the command module stays a declaration of options.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from lbctl.cli.common import TABLE, OutputFormat, Shown, emit
from lbctl.monitor.brokers import BrokerMonitor, Refresh
from lbctl.monitor.live import live_refresh, snapshot_refresh_args
from lbctl.render.display import colour_wanted

if TYPE_CHECKING:
    from lbctl.cli.state import Chosen

__all__ = ["live_refresh", "run_live", "run_snapshots", "show"]

_CLEAR = "\x1b[H\x1b[2J"


def show(refresh: Refresh, *, sort: str | None, summary: bool, output: OutputFormat,
         in_place: bool, color: bool, wide: bool = False) -> None:
    from lbctl.render.monitor import MonitorView

    if in_place:
        sys.stdout.write(_CLEAR)
    emit(MonitorView(refresh, sort, summary, color), output, wide=wide, no_color=not color)
    sys.stdout.flush()


def run_live(chosen: Chosen, *, interval: float, refreshes: int | None, sort: str | None,
             summary: bool, shown: Shown) -> None:
    """Refresh from the live cluster (one reader, its client open) until ``refreshes``."""
    from lbctl.cli.connection import is_terminal
    from lbctl.monitor.brokers import sort_rows

    sort_rows([], sort)  # a bad --sort fails before any request
    tty = is_terminal(sys.stdout)
    in_place = tty and shown.output == TABLE and refreshes != 1
    n = 0
    with chosen.session() as src:
        mon = BrokerMonitor()
        threshold = [85.0]
        try:
            while True:
                started = time.monotonic()
                refresh = live_refresh(src, mon, threshold)
                show(refresh, sort=sort, summary=summary, output=shown.output,
                     in_place=in_place, color=colour_wanted(sys.stdout, no_color=shown.no_color),
                     wide=shown.wide)
                n += 1
                if refreshes is not None and n >= refreshes:
                    return
                time.sleep(max(0.0, interval - (time.monotonic() - started)))
        except KeyboardInterrupt:
            return  # the usual way to leave a monitor: not an error


def run_snapshots(chosen: Chosen, *, sort: str | None, summary: bool, shown: Shown) -> None:
    """Snapshot files replayed as refreshes; the last one shown."""
    mon = BrokerMonitor()
    refresh = None
    for st in chosen.read().states:
        refresh = mon.update(*snapshot_refresh_args(st))
    assert refresh is not None
    show(refresh, sort=sort, summary=summary, output=shown.output, in_place=False,
         color=colour_wanted(sys.stdout, no_color=shown.no_color), wide=shown.wide)
