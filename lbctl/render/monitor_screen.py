"""The full-screen view of an interactive ``monitor-brokers``: one refresh fitted to the terminal.

``pulsar-perf monitor-brokers`` reprints every broker's table per refresh, so on a terminal the
header and the overloaded broker's table scroll away. This view is drawn in place instead (the
CLI keeps it on the terminal's alternate screen and redraws it on each refresh, key and resize),
and chooses what fits ``width`` × ``height``, in this order:

1. a header line: the cluster, the refresh's time, brokers and how many are overloaded;
2. "Overall Broker Data" (one line per broker, sorted by the chosen key, and the TOTAL); when
   the brokers do not all fit, the first ones in sort order are kept and a line counts the rest;
3. with the lines left, the per-broker tables of the overloaded or unreachable brokers (in sort
   order), else of the first broker — each whole or not at all;
4. a key line at the bottom: ``q`` quits, ``s`` changes the sort key, ``r`` refreshes now.

Every line is cut to ``width``. Piped or with ``-o`` other than table, monitor-brokers prints
:class:`~lbctl.render.monitor.MonitorView` as before; this module is used on a terminal only.
"""

from __future__ import annotations

from lbctl.model.cluster import iso_time
from lbctl.monitor.brokers import BrokerRow, Refresh, sort_rows
from lbctl.render.display import Display, using
from lbctl.render.monitor import broker_block, cell_width, overall
from lbctl.render.names import BrokerNames
from lbctl.safe.text import name_safe

#: the keys ``s`` goes through, in order (numbers descending, names ascending)
SORT_CYCLE = ("weightedMax", "max", "cpu", "bundles", "latestMsgRate", "latestKB", "broker")


def next_sort(key: str | None) -> str:
    """The sort key after ``key`` in :data:`SORT_CYCLE` (None is the first; after an unknown
    one, the first)."""
    low = (key or SORT_CYCLE[0]).lower()
    i = next((k for k, name in enumerate(SORT_CYCLE) if name.lower() == low), -1)
    return SORT_CYCLE[(i + 1) % len(SORT_CYCLE)]


def _crop(line: str, width: int) -> str:
    """``line`` cut to ``width`` visible characters (colour codes kept, not counted)."""
    out, seen, k = [], 0, 0
    while k < len(line):
        if line[k] == "\x1b":
            end = line.find("m", k)
            end = len(line) - 1 if end < 0 else end
            out.append(line[k:end + 1])
            k = end + 1
            continue
        if seen >= width:
            break
        out.append(line[k])
        seen += 1
        k += 1
    text = "".join(out)
    return text + "\x1b[0m" if "\x1b[" in text and not text.endswith("\x1b[0m") else text


def _needs_a_look(r: BrokerRow) -> bool:
    return r.overloaded or r.state != "ok"


def screen(refresh: Refresh, *, sort: str | None, width: int, height: int,
           interval: float, color: bool = False, note: str = "") -> str:
    """The screen for ``refresh``: at most ``height`` lines of at most ``width`` columns."""
    with using(Display(width=width, color=color)):
        return _screen(refresh, sort, width, max(height, 6), interval, color, note)


def _head(refresh: Refresh, brokers: int, hot: int, width: int) -> str:
    """The header line, shortened to fit rather than cropped: the time without its milliseconds,
    then without ``at TIME``, then without the cluster's name. Cropped at 80 columns, the sandbox's header ended in
    ``(LOAD % >= 8`` — a threshold of 8 % to the reader, not 85 %."""
    what = f"{brokers} broker(s), {hot} overloaded (LOAD % >= {refresh.threshold:g}%{refresh.threshold_note})"
    when = iso_time(refresh.at)
    for head in (f"{name_safe(refresh.cluster)} at {when}: {what}",
                 f"{name_safe(refresh.cluster)} at {when[:19]}Z: {what}",
                 f"{name_safe(refresh.cluster)}: {what}", what):
        if len(head) <= width:
            break
    return head


def _screen(refresh: Refresh, sort: str | None, width: int, height: int, interval: float,
            color: bool, note: str) -> str:
    rows = sort_rows(list(refresh.rows), sort or SORT_CYCLE[0])
    names = BrokerNames.of([x.broker for x in rows])
    hot = sum(1 for r in rows if r.overloaded)
    head = _head(refresh, len(rows), hot, width)
    keys = (f"q quit  s sort: {sort or SORT_CYCLE[0]}  r refresh  every {interval:g} s"
            + (f"  {note}" if note else ""))
    room = height - 2  # the header and the key line
    shown = len(rows)
    table = overall(rows, refresh.total(), color=color, names=names).split("\n")
    while shown > 1 and len(table) + (shown < len(rows)) > room:
        shown = max(1, min(shown - 1, shown - (len(table) + 1 - room)))
        table = overall(rows[:shown], refresh.total(), color=color, names=names).split("\n")
    if shown < len(rows):
        table.append(f"… {len(rows) - shown} more broker(s) below these, sorted by "
                     f"{sort or SORT_CYCLE[0]} (TOTAL counts them)")
    body = table[:room]
    left = room - len(body)
    look = [r for r in rows if _needs_a_look(r)] or rows[:1]
    cell = cell_width(rows)
    for r in look:
        block = broker_block(r, color=color, averages=refresh.averages,
                             threshold=refresh.threshold, cell=cell, names=names).split("\n")
        if len(block) > left:  # whole or not at all; its title line parts it from above
            break
        body += block
        left -= len(block)
    lines = [head, *body] + [""] * max(0, left) + [keys]
    return "\n".join(_crop(line, width) for line in lines[:height])
