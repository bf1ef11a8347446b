"""The screens of ``lbctl monitor-brokers``: BrokerMonitor's per-broker tables and overall table.

The layout follows ``pulsar-perf monitor-brokers`` (``BrokerMonitor``): cells framed as
``||label |v1 |v2 …||`` between ``=`` borders, values ``%.2f``; then "Overall Broker Data" with
one row per broker and a TOTAL. BrokerMonitor's cells are 14 characters (108 columns); here they
narrow to fit the terminal (10 at 80 columns) but never below their widest value, and ``--wide``
keeps pulsar-perf's 14. Unlike BrokerMonitor, every column holds what its heading says
(BrokerMonitor swaps LONG/S and KB/S in the per-broker rows and prints MAX % as a fraction for
modular brokers) — here MAX % is a percentage everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.model.cluster import iso_time
from lbctl.monitor.brokers import BrokerRow, Refresh, sort_rows
from lbctl.render import table
from lbctl.render.display import current, paint
from lbctl.render.names import BrokerNames
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.units import number

CELL = 14  # pulsar-perf's cell width (--wide)
MIN_CELL = 9  # "MSG/S OUT" and "BUNDLE +" fit
_RATE_HEADS = ("MSG/S IN", "MSG/S OUT", "TOTAL", "KB/S IN", "KB/S OUT", "TOTAL")
_LABELS = ("SYSTEM", "COUNT", "LATEST", "SHORT", "LONG", "CPU %", "MEMORY %", "DIRECT %",
           "BW IN %", "BW OUT %", "MAX %", "TOPIC", "BUNDLE", "PRODUCER", "CONSUMER", "BUNDLE +",
           "BUNDLE -", *_RATE_HEADS)

_RATE_COLS = [(label + name, kind, f"{label.upper()} {what}") for label in ("latest", "short", "long")
              for name, kind, what in (
                  ("MsgRateIn", "number", "message rate in, msg/s"),
                  ("MsgRateOut", "number", "message rate out, msg/s"),
                  ("MsgRate", "number", "message rate in + out, msg/s"),
                  ("KBIn", "number", "throughput in, KB/s (1024 bytes)"),
                  ("KBOut", "number", "throughput out, KB/s"),
                  ("KB", "number", "throughput in + out, KB/s"))]
MONITOR_SCHEMA = Schema("monitor-brokers", "broker per refresh, then a TOTAL row (broker TOTAL)", (
    col("cluster", "string", "the cluster"),
    col("at", "time", "when the refresh was taken"),
    col("broker", "string", "the broker id, or TOTAL"),
    col("state", "string", "ok, stale (kept from an earlier refresh) or unreachable"),
    col("error", "string", "why it is stale or unreachable"),
    col("cpu", "number", "CPU usage, percent"),
    col("memory", "number", "JVM heap usage, percent"),
    col("direct", "number", "direct memory usage, percent"),
    col("bwIn", "number", "inbound bandwidth usage, percent"),
    col("bwOut", "number", "outbound bandwidth usage, percent"),
    col("max", "number", "max resource usage (heap excluded, as Pulsar), percent"),
    col("overloaded", "boolean", "max >= loadBalancerBrokerOverloadedThresholdPercentage"),
    col("topics", "integer", "topics"),
    col("bundles", "integer", "bundles"),
    col("producers", "integer", "producers"),
    col("consumers", "integer", "consumers"),
    col("bundleGains", "integer", "bundles gained since the previous report"),
    col("bundleLosses", "integer", "bundles lost since the previous report"),
    *(col(n, k, a) for n, k, a in _RATE_COLS),
    col("samples", "integer", "reports averaged into SHORT and LONG"),
    col("lastUpdate", "integer", "the report's lastUpdate, epoch milliseconds"),
))


def cell_width(rows: list[BrokerRow]) -> int:
    """pulsar-perf's 14 with --wide; else as narrow as the display needs, never below the widest
    value (so a column never runs into the next)."""
    if current().wide:
        return CELL
    values = [len(x) for r in rows for x in _values(r)]
    need = max([len(x) for x in _LABELS] + values) + 1
    limit = current().limit or 0
    fit = (limit - 3) // 7 - 1
    return max(need, MIN_CELL + 1, min(CELL, fit))


def _cells(label: str, values: list[str], cell: int = CELL) -> str:
    return "||" + "|".join(v.ljust(cell) for v in [label, *values]) + "||"


def _two(x: float | None) -> str:
    """pulsar-perf's cell: two decimals, no grouping (``%.2f``)."""
    return number(x, 2, grouped=False)


def _i(x: int | None) -> str:
    return "-" if x is None else str(x)


def _values(r: BrokerRow) -> list[str]:
    out = [_two(r.cpu), _two(r.memory), _two(r.direct), _two(r.bw_in), _two(r.bw_out),
           _two(r.max), _i(r.topics), _i(r.bundles), _i(r.producers), _i(r.consumers),
           _i(r.gains), _i(r.losses)]
    for rates in (r.latest, r.short, r.long):
        out += [_two(v) for v in (rates.row() if rates else (None,) * 6)]
    return out


def broker_block(r: BrokerRow, *, color: bool = False, cell: int = CELL,
                 names: BrokerNames | None = None) -> str:
    """One broker's framed table (five label rows, each followed by its values)."""
    names = names or BrokerNames()
    width = 2 + 7 * (cell + 1) + 1
    title = names(r.broker)
    if r.overloaded:
        title += "  OVERLOADED"
    if r.state != "ok":
        title += f"  {r.state.upper()}: {names.text(r.error or '')}"
    title = wrap_prose(title)
    if color and (r.overloaded or r.state != "ok"):
        title = paint(title, "failure" if r.overloaded else "dim")
    v = _values(r)
    lines = [title, "=" * width,
             _cells("SYSTEM", ["CPU %", "MEMORY %", "DIRECT %", "BW IN %", "BW OUT %", "MAX %"],
                    cell),
             _cells("", v[0:6], cell),
             _cells("COUNT", ["TOPIC", "BUNDLE", "PRODUCER", "CONSUMER", "BUNDLE +", "BUNDLE -"],
                    cell),
             _cells("", v[6:12], cell)]
    for k, label in enumerate(("LATEST", "SHORT", "LONG")):
        lines.append(_cells(label, list(_RATE_HEADS), cell))
        lines.append(_cells("", v[12 + 6 * k: 18 + 6 * k], cell))
    lines.append("=" * width)
    return "\n".join(lines)


def _state_style(text: str) -> str | None:
    if text.startswith("overloaded"):
        return "failure"
    return "dim" if text else None


def overall(rows: list[BrokerRow], total: BrokerRow, *, color: bool = False,
            names: BrokerNames | None = None) -> str:
    """"Overall Broker Data": BROKER, BUNDLE, MSG/S, LONG/S, KB/S, MAX %, STATE and a TOTAL row."""
    names = names or BrokerNames()
    table_rows = []
    for r in [*rows, total]:
        state = "" if r is total else ("overloaded" if r.overloaded else "")
        if r.state != "ok":
            state = f"{r.state}: {names.text(r.error or '')}"
        table_rows.append({
            "BROKER": "TOTAL" if r is total else names(r.broker),
            "BUNDLE": _i(r.bundles),
            "MSG/S": _two(r.latest.row()[2] if r.latest else None),
            "LONG/S": _two(r.long.row()[2] if r.long else None),
            "KB/S": _two(r.latest.row()[5] if r.latest else None),
            "MAX %": _two(r.max),
            "STATE": state,
        })
    return "Overall Broker Data\n" + table(table_rows,
                                            styles={"STATE": _state_style} if color else None)


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
        return {"cluster": r.cluster, "at": iso_time(r.at), "overloadedThresholdPercentage": r.threshold,
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
        head = wrap_prose(f"{r.cluster} at {iso_time(r.at)}: {len(rows)} broker(s), overloaded "
                          f"at MAX % >= {r.threshold:g} "
                          "(loadBalancerBrokerOverloadedThresholdPercentage)")
        parts = [head, ""]
        if not self.summary:
            cell = cell_width(rows)
            parts += [broker_block(x, color=color, cell=cell, names=names) + "\n" for x in rows]
        parts.append(overall(rows, r.total(), color=color, names=names))
        note = names.note()
        if note:
            parts += ["", wrap_prose(note)]
        return "\n".join(parts)
