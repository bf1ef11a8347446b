"""The screens of ``lbctl monitor-brokers``: BrokerMonitor's per-broker tables and overall table.

The layout follows ``pulsar-perf monitor-brokers`` (``BrokerMonitor``): fixed 14-character cells
framed as ``||label |v1 |v2 …||`` between ``=`` borders, values ``%.2f``; then "Overall Broker
Data" with one row per broker and a TOTAL. Unlike BrokerMonitor, every column holds what its
heading says (BrokerMonitor swaps LONG/S and KB/S in the per-broker rows and prints MAX % as a
fraction for modular brokers) — here MAX % is a percentage everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lbctl.model.cluster import iso_time
from lbctl.monitor.brokers import BrokerRow, Refresh, sort_rows
from lbctl.units import number

CELL = 14
_RED, _BOLD, _DIM, _RESET = "\x1b[31m", "\x1b[1m", "\x1b[2m", "\x1b[0m"
_RATE_HEADS = ("MSG/S IN", "MSG/S OUT", "TOTAL", "KB/S IN", "KB/S OUT", "TOTAL")


def _cells(label: str, values: list[str]) -> str:
    return "||" + "|".join(v.ljust(CELL) for v in [label, *values]) + "||"


def _two(x: float | None) -> str:
    """pulsar-perf's cell: two decimals, no grouping (``%.2f``)."""
    return number(x, 2, grouped=False)


def _i(x: int | None) -> str:
    return "-" if x is None else str(x)


def broker_block(r: BrokerRow, *, color: bool = False) -> str:
    """One broker's framed table (five label rows, each followed by its values)."""
    width = 2 + 7 * (CELL + 1) + 1
    title = r.broker
    if r.overloaded:
        title += "  OVERLOADED"
    if r.state != "ok":
        title += f"  {r.state.upper()}: {r.error}"
    if color and (r.overloaded or r.state != "ok"):
        title = (_RED + _BOLD if r.overloaded else _DIM) + title + _RESET
    lines = [title, "=" * width,
             _cells("SYSTEM", ["CPU %", "MEMORY %", "DIRECT %", "BW IN %", "BW OUT %", "MAX %"]),
             _cells("", [_two(r.cpu), _two(r.memory), _two(r.direct), _two(r.bw_in), _two(r.bw_out), _two(r.max)]),
             _cells("COUNT", ["TOPIC", "BUNDLE", "PRODUCER", "CONSUMER", "BUNDLE +", "BUNDLE -"]),
             _cells("", [_i(r.topics), _i(r.bundles), _i(r.producers), _i(r.consumers), _i(r.gains),
                         _i(r.losses)])]
    for label, rates in (("LATEST", r.latest), ("SHORT", r.short), ("LONG", r.long)):
        lines.append(_cells(label, list(_RATE_HEADS)))
        lines.append(_cells("", [_two(v) for v in (rates.row() if rates else (None,) * 6)]))
    lines.append("=" * width)
    return "\n".join(lines)


def overall(rows: list[BrokerRow], total: BrokerRow, *, color: bool = False) -> str:
    """"Overall Broker Data": BROKER, BUNDLE, MSG/S, LONG/S, KB/S, MAX % and a TOTAL row."""
    bw = max([len("BROKER"), len("TOTAL"), *(len(r.broker) for r in rows)]) + 2
    head = f"{'BROKER':<{bw}}{'BUNDLE':>10}{'MSG/S':>14}{'LONG/S':>14}{'KB/S':>14}{'MAX %':>10}  STATE"
    out = ["Overall Broker Data", head, "*" * len(head)]
    for r in [*rows, total]:
        msg = r.latest.row()[2] if r.latest else None
        long_ = r.long.row()[2] if r.long else None
        kb = r.latest.row()[5] if r.latest else None
        state = "" if r is total else ("overloaded" if r.overloaded else "")
        if r.state != "ok":
            state = f"{r.state}: {r.error}"
        line = (f"{r.broker:<{bw}}{_i(r.bundles):>10}{_two(msg):>14}{_two(long_):>14}{_two(kb):>14}"
                f"{_two(r.max):>10}  {state}").rstrip()
        if r is total:
            out.append("*" * len(head))
        if color and (r.overloaded or r.state != "ok") and r is not total:
            line = (_RED + _BOLD if r.overloaded else _DIM) + line + _RESET
        out.append(line)
    return "\n".join(out)


@dataclass
class MonitorView:
    """A :class:`~lbctl.monitor.brokers.Refresh` as table text, records or data."""

    refresh: Refresh
    sort: str | None = None
    summary: bool = False
    color: bool = False

    def _rows(self) -> list[BrokerRow]:
        return sort_rows(list(self.refresh.rows), self.sort)

    def to_data(self) -> Any:
        r = self.refresh
        return {"cluster": r.cluster, "at": iso_time(r.at), "overloadedThresholdPercentage": r.threshold,
                "brokers": [x.record() for x in self._rows()], "total": r.total().record()}

    def to_rows(self) -> list[dict[str, Any]]:
        return [x.record() for x in self._rows()] + [self.refresh.total().record()]

    def to_text(self) -> str:
        r = self.refresh
        rows = self._rows()
        head = (f"{r.cluster} at {iso_time(r.at)}: {len(rows)} broker(s), overloaded at MAX % >= "
                f"{r.threshold:g} (loadBalancerBrokerOverloadedThresholdPercentage)")
        parts = [head, ""]
        if not self.summary:
            parts += [broker_block(x, color=self.color) + "\n" for x in rows]
        parts.append(overall(rows, r.total(), color=self.color))
        return "\n".join(parts)
