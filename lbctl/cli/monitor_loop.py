"""The refresh loop of `lbctl monitor-brokers`: live source → BrokerMonitor → screen.

One refresh is :func:`lbctl.monitor.live.live_refresh`; this module loops, paces and draws.

On a terminal, with the table format and no ``--once``/``--count``, the screen is full-screen and
refreshed in place (Rich's ``Live`` on the alternate screen, :mod:`lbctl.render.monitor_screen`
choosing what fits): ``q`` quits, ``s`` changes the sort key, ``r`` refreshes now, and a resized
terminal is redrawn at its new size within a fifth of a second. Keys are read from stdin in
cbreak mode (restored on exit). Anywhere else — piped, ``-o json``, ``--count`` — each refresh is
printed as before.

Kept apart from the command so that the command module stays a declaration of options.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from lbctl.cli.common import TABLE, OutputFormat, Shown, emit
from lbctl.monitor.brokers import BrokerMonitor, Refresh
from lbctl.monitor.live import live_refresh, prepare, snapshot_refresh_args
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
    if in_place and refreshes is None and not summary:
        with chosen.session() as src:
            prepare(src)
            full_screen(src, interval=interval, sort=sort,
                        color=colour_wanted(sys.stdout, no_color=shown.no_color))
        return
    n = 0
    with chosen.session() as src:
        prepare(src)  # start-up, not the first refresh's (lbctl.monitor.live.prepare)
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


Key = Callable[[float], str | None]


@contextmanager
def keys() -> Iterator[Key]:
    """A reader of single keys from stdin (cbreak mode while the block runs), waiting at most
    the given seconds; without a terminal on stdin it only waits."""
    from lbctl.cli.connection import is_terminal

    if not is_terminal(sys.stdin):
        def wait(timeout: float) -> str | None:
            time.sleep(max(0.0, timeout))
            return None

        yield wait
        return
    import os
    import select
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)

    def read(timeout: float) -> str | None:
        ready, _, _ = select.select([fd], [], [], max(0.0, timeout))
        return os.read(fd, 1).decode(errors="ignore") if ready else None

    try:
        yield read
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def full_screen(src: Any, *, interval: float, sort: str | None, color: bool,
                tick: float = 0.2) -> None:
    """The interactive screen (module docstring) until ``q`` or Ctrl-C."""
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from lbctl.render.monitor_screen import next_sort, screen

    console = Console(highlight=False, soft_wrap=False)
    mon = BrokerMonitor()
    threshold = [85.0]
    refresh: Refresh | None = None
    due = 0.0
    size: Any = None
    key_sort = sort
    try:
        with keys() as read, Live(console=console, screen=True, auto_refresh=False,
                                  redirect_stdout=False, redirect_stderr=False) as live:
            while True:
                dirty = False
                if time.monotonic() >= due:
                    refresh = live_refresh(src, mon, threshold)
                    due = time.monotonic() + interval
                    dirty = True
                if console.size != size:
                    size, dirty = console.size, True
                if dirty and refresh is not None:
                    text = screen(refresh, sort=key_sort, width=size.width, height=size.height,
                                  interval=interval, color=color)
                    live.update(Text.from_ansi(text, no_wrap=True, overflow="crop"),
                                refresh=True)
                key = read(min(tick, max(0.0, due - time.monotonic())))
                if key in ("q", "Q"):
                    return
                if key in ("s", "S"):
                    key_sort, size = next_sort(key_sort), None  # None: redraw
                elif key in ("r", "R"):
                    due = 0.0
    except KeyboardInterrupt:
        return  # the usual way to leave a monitor: not an error
