"""The screens of ``lbctl monitor-brokers``: BrokerMonitor's per-broker tables and overall table.

The layout follows ``pulsar-perf monitor-brokers`` (``BrokerMonitor``): cells framed as
``||label |v1 |v2 …||`` between ``=`` borders, values ``%.2f``, one view per load manager (modular:
SYSTEM, COUNT, LATEST, SHORT, LONG; extensible, as ``--extensions``: SYSTEM, COUNT with only
BUNDLE, LATEST; simple: COUNT, RAW SYSTEM, ALLOC SYSTEM, RAW MSG, ALLOC MSG); then "Overall Broker
Data" with one row per broker and a TOTAL. BrokerMonitor's cells are 14 characters (108 columns);
here they narrow to fit the terminal (10 at 80 columns) but never below their widest value, and
``--wide`` keeps pulsar-perf's 14. Unlike BrokerMonitor, every column holds what its heading says
(BrokerMonitor swaps LONG/S and KB/S in the per-broker rows and prints MAX % as a fraction for
modular brokers) — here MAX % is a percentage everywhere — and a LOAD % column shows the usage the
load manager compares (the weighted usage; ``weightedMaxEMA`` for extensible brokers). SHORT and
LONG are marked ``*`` when they are lbctl's own averages rather than the leader's, with a note
saying which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.model.cluster import iso_time
from lbctl.monitor.brokers import (
    EXTENSIBLE_VIEW,
    LEADER,
    MODULAR_VIEW,
    SIMPLE_VIEW,
    BrokerRow,
    Rates,
    Refresh,
    sort_rows,
)
from lbctl.render import table
from lbctl.render.display import current, paint
from lbctl.render.names import BrokerNames
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.safe.text import name_safe
from lbctl.units import number

CELL = 14  # pulsar-perf's cell width (--wide)
MIN_CELL = 9  # "MSG/S OUT" and "BUNDLE +" fit
_RATE_HEADS = ("MSG/S IN", "MSG/S OUT", "TOTAL", "KB/S IN", "KB/S OUT", "TOTAL")
_SYSTEM_HEADS = ("CPU %", "MEMORY %", "DIRECT %", "BW IN %", "BW OUT %", "MAX %")
_COUNT_HEADS = ("TOPIC", "BUNDLE", "PRODUCER", "CONSUMER", "BUNDLE +", "BUNDLE -")
_HEADS = (*_SYSTEM_HEADS, *_COUNT_HEADS, *_RATE_HEADS)
_LABELS = ("SYSTEM", "COUNT", "LATEST", "SHORT*", "LONG*", *_HEADS)
_SIMPLE_LABELS = ("RAW SYSTEM", "ALLOC SYSTEM", "RAW MSG", "ALLOC MSG")

_RATE_NAMES = (("MsgRateIn", "message rate in, msg/s"), ("MsgRateOut", "message rate out, msg/s"),
               ("MsgRate", "message rate in + out, msg/s"),
               ("KBIn", "throughput in, KB/s (1024 bytes)"), ("KBOut", "throughput out, KB/s"),
               ("KB", "throughput in + out, KB/s"))
_RATE_COLS = [(label + name, f"{what}: {about}")
              for label, what in (("latest", "LATEST"), ("short", "SHORT"), ("long", "LONG"),
                                  ("alloc", "ALLOC MSG (simple load manager)"))
              for name, about in _RATE_NAMES]
MONITOR_SCHEMA = Schema("monitor-brokers", "broker per refresh, then a TOTAL row (broker TOTAL)", (
    col("cluster", "string", "the cluster"),
    col("at", "time", "when the refresh was taken"),
    col("broker", "string", "the broker id, or TOTAL"),
    col("state", "string", "ok, stale (kept from an earlier refresh) or unreachable"),
    col("error", "string", "why it is stale or unreachable"),
    col("view", "string", "the broker's load manager view: modular, extensible or simple"),
    col("cpu", "number", "CPU usage, percent"),
    col("memory", "number", "JVM heap usage, percent"),
    col("direct", "number", "direct memory usage, percent"),
    col("bwIn", "number", "inbound bandwidth usage, percent"),
    col("bwOut", "number", "outbound bandwidth usage, percent"),
    col("max", "number", "max resource usage (heap excluded, as Pulsar), percent"),
    col("weightedMax", "number", "the usage the load manager compares (LOAD %): the weighted max "
        "usage, or weightedMaxEMA for extensible brokers, percent"),
    col("overloaded", "boolean", "weightedMax at or over loadBalancerBrokerOverloadedThreshold"
        "Percentage (over it, extensible; the report's own flag, simple)"),
    col("topics", "integer", "topics"),
    col("bundles", "integer", "bundles"),
    col("producers", "integer", "producers"),
    col("consumers", "integer", "consumers"),
    col("bundleGains", "integer", "bundles gained since the previous report"),
    col("bundleLosses", "integer", "bundles lost since the previous report"),
    *(col(n, "number", a) for n, a in _RATE_COLS),
    *(col(n, "number", f"ALLOC SYSTEM (simple load manager): {h}")
      for n, h in zip(("allocCpu", "allocMemory", "allocDirect", "allocBwIn", "allocBwOut",
                       "allocMax"), _SYSTEM_HEADS, strict=True)),
    col("samples", "integer", "reports averaged into SHORT and LONG"),
    col("lastUpdate", "integer", "the report's lastUpdate, epoch milliseconds"),
))


def _cells(label: str, values: list[str], cell: int = CELL) -> str:
    return "||" + "|".join(v.ljust(cell) for v in [label, *values]) + "||"


def _two(x: float | None) -> str:
    """pulsar-perf's cell: two decimals, no grouping (``%.2f``)."""
    return number(x, 2, grouped=False)


def _i(x: int | None) -> str:
    return "-" if x is None else str(x)


def _rates(rates: Rates | None) -> list[str]:
    return [_two(v) for v in (rates.row() if rates else (None,) * 6)]


def _system(r: BrokerRow) -> list[str]:
    return [_two(r.cpu), _two(r.memory), _two(r.direct), _two(r.bw_in), _two(r.bw_out),
            _two(r.max)]


def _count(r: BrokerRow) -> list[str]:
    return [_i(r.topics), _i(r.bundles), _i(r.producers), _i(r.consumers), _i(r.gains),
            _i(r.losses)]


def _values(r: BrokerRow) -> list[str]:
    """Every value a broker's block shows (for the cell width)."""
    out = _system(r) + _count(r)
    for rates in (r.latest, r.short, r.long, r.alloc_msg):
        out += _rates(rates)
    out += [_two(v) for v in (r.alloc or ())]
    return out


def cell_width(rows: list[BrokerRow]) -> int:
    """pulsar-perf's 14 with --wide; else as narrow as the display needs, never below the widest
    value: a value may fill its cell, the ``|`` after it keeps it from the next (as a 14-character
    value fills BrokerMonitor's ``%-14s``), and a heading keeps a space after it. At 80 columns a
    value of ten characters (a broker's 1 GB/s and more in KB/s, ``1078928.83``, as the sandbox's
    hot broker carries) then fits; with a space after every value it took 87 columns, and the
    table format's 80-column fitting broke each framed line in two."""
    if current().wide:
        return CELL
    values = [len(x) for r in rows for x in _values(r)]
    labels = _LABELS + (_SIMPLE_LABELS if any(r.view == SIMPLE_VIEW for r in rows) else ())
    need = max([len(x) + 1 for x in labels] + values)
    limit = current().limit or 0
    fit = (limit - 3) // 7 - 1
    return max(need, MIN_CELL + 1, min(CELL, fit))


def _title(r: BrokerRow, threshold: float | None, names: BrokerNames) -> str:
    title = names(r.broker)
    if r.view != MODULAR_VIEW:
        title += f"  ({r.view} load manager)"
    if r.overloaded:
        title += "  OVERLOADED"
        if r.weighted is not None and threshold is not None:
            what = "weightedMaxEMA" if r.view == EXTENSIBLE_VIEW else "weighted usage"
            title += f" ({what} {r.weighted:.2f}% {'>' if r.view == EXTENSIBLE_VIEW else '>='} " \
                     f"{threshold:g}%)"
    if r.state != "ok":
        title += f"  {r.state.upper()}: {names.text(r.error or '')}"
    return wrap_prose(title)


def broker_block(r: BrokerRow, *, color: bool = False, averages: str = LEADER,
                 threshold: float | None = None, cell: int = CELL,
                 names: BrokerNames | None = None) -> str:
    """One broker's framed table, in the view of its load manager (module docstring)."""
    names = names or BrokerNames()
    width = 2 + 7 * (cell + 1) + 1
    title = _title(r, threshold, names)
    if color and (r.overloaded or r.state != "ok"):
        title = paint(title, "failure" if r.overloaded else "dim")
    system, count = _system(r), _count(r)
    lines = [title, "=" * width]

    def row(label: str, heads: tuple[str, ...], values: list[str]) -> None:
        lines.extend([_cells(label, list(heads), cell), _cells("", values, cell)])

    if r.view == SIMPLE_VIEW:
        alloc = [("" if v is None and i == 2 else _two(v))
                 for i, v in enumerate(r.alloc or (None,) * 6)]
        row("COUNT", _COUNT_HEADS, count)
        row("RAW SYSTEM", _SYSTEM_HEADS, system)
        row("ALLOC SYSTEM", _SYSTEM_HEADS, alloc)
        row("RAW MSG", _RATE_HEADS, _rates(r.latest))
        row("ALLOC MSG", _RATE_HEADS, _rates(r.alloc_msg))
    elif r.view == EXTENSIBLE_VIEW:
        row("SYSTEM", _SYSTEM_HEADS, system)
        row("COUNT", _COUNT_HEADS, ["", _i(r.bundles), "", "", "", ""])
        row("LATEST", _RATE_HEADS, _rates(r.latest))
    else:
        mark = "" if averages == LEADER else "*"
        row("SYSTEM", _SYSTEM_HEADS, system)
        row("COUNT", _COUNT_HEADS, count)
        for label, rates in (("LATEST", r.latest), ("SHORT" + mark, r.short),
                             ("LONG" + mark, r.long)):
            row(label, _RATE_HEADS, _rates(rates))
    lines.append("=" * width)
    return "\n".join(lines)


def _state_style(text: str) -> str | None:
    if text.startswith("overloaded"):
        return "failure"
    return "dim" if text else None


#: the overall table's columns left out to fit, the first first; never STATE or LOAD %
OVERALL_GIVES_WAY = ("LONG/S", "MAX %", "KB/S")


def overall(rows: list[BrokerRow], total: BrokerRow, *, color: bool = False,
            names: BrokerNames | None = None) -> str:
    """"Overall Broker Data": BROKER, BUNDLE, MSG/S, LONG/S, KB/S, MAX %, then LOAD % (the usage
    the load manager compares), STATE and a TOTAL row. LONG/S is the long-term rate (modular), the
    allocated rate (simple; KB/S then the allocated bandwidth, as BrokerMonitor), blank otherwise."""
    names = names or BrokerNames()
    table_rows = []
    for r in [*rows, total]:
        if r.view == SIMPLE_VIEW:
            long_ = r.alloc_msg.row()[2] if r.alloc_msg else None
            kb = r.alloc_msg.row()[5] if r.alloc_msg else None
        else:
            long_ = r.long.row()[2] if r.long else None
            kb = r.latest.row()[5] if r.latest else None
        state = "" if r is total else ("overloaded" if r.overloaded else "")
        if r.state != "ok":
            state = f"{r.state}: {names.text(r.error or '')}"
        table_rows.append({
            "BROKER": "TOTAL" if r is total else names(r.broker),
            "BUNDLE": _i(r.bundles),
            "MSG/S": _two(r.latest.row()[2] if r.latest else None),
            "LONG/S": _two(long_),
            "KB/S": _two(kb),
            "MAX %": _two(r.max),
            "LOAD %": _two(r.weighted),
            "STATE": state,
        })
    # with every column the table took 84 columns at 80 and turned into records, eight lines a
    # broker (the full-screen view at 80x24 showed one broker of three). What gives way is what
    # another column already says: LONG/S (the long-term average of MSG/S), then MAX % (the
    # unweighted usage; LOAD % is the one compared), then KB/S. STATE, the one word an operator
    # scans for ("overloaded"), never does (walk18: it used to go first).
    return "Overall Broker Data\n" + table(table_rows,
                                            styles={"STATE": _state_style} if color else None,
                                            optional=OVERALL_GIVES_WAY)


@dataclass
class MonitorView:
    """A :class:`~lbctl.monitor.brokers.Refresh` as table text, records or data."""

    refresh: Refresh
    sort: str | None = None
    summary: bool = False
    color: bool = False
    schema: ClassVar[Schema] = MONITOR_SCHEMA

    def _rows(self) -> list[BrokerRow]:
        return sort_rows(list(self.refresh.rows), self.sort)

    def to_data(self) -> Any:
        r = self.refresh
        return {"cluster": r.cluster, "at": iso_time(r.at),
                "overloadedThresholdPercentage": r.threshold,
                "averages": {"source": r.averages, "note": r.averages_note},
                "brokers": [x.record() for x in self._rows()], "total": r.total().record()}

    def to_rows(self) -> list[dict[str, Any]]:
        r = self.refresh
        where = {"cluster": r.cluster, "at": iso_time(r.at)}
        return [{**where, **x.record()} for x in [*self._rows(), r.total()]]

    def to_text(self) -> str:
        r = self.refresh
        rows = self._rows()
        names = BrokerNames.of([x.broker for x in rows], wide=current().wide)
        color = self.color and current().color
        views = r.views
        rules = []
        if MODULAR_VIEW in views or not views:
            rules.append(f"weighted usage >= {r.threshold:g}%")
        if EXTENSIBLE_VIEW in views:
            rules.append(f"weightedMaxEMA > {r.threshold:g}%")
        if SIMPLE_VIEW in views:
            rules.append("the simple load manager's own overLoaded")
        parts = [wrap_prose(
            f"{name_safe(r.cluster)} at {iso_time(r.at)}: {len(rows)} broker(s), overloaded at "
            f"{' / '.join(rules)} (loadBalancerBrokerOverloadedThresholdPercentage"
            f"{r.threshold_note}; LOAD % is "
            "the usage the load manager compares)")]
        if MODULAR_VIEW in views and not self.summary:
            # the note explains the SHORT/LONG rows of the per-broker blocks, which --summary
            # leaves out (its one table has no starred column)
            mark = "" if r.averages == LEADER else "*"
            parts.append(wrap_prose(f"{mark}SHORT/LONG: {r.averages_note}."))
        parts.append("")
        if not self.summary:
            cell = cell_width(rows)
            parts += [broker_block(x, color=color, averages=r.averages, threshold=r.threshold,
                                   cell=cell, names=names) + "\n" for x in rows]
        parts.append(overall(rows, r.total(), color=color, names=names))
        note = names.note()
        if note:
            parts += ["", wrap_prose(note)]
        return "\n".join(parts)
