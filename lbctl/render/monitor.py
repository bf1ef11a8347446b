"""The screens of ``lbctl monitor-brokers``: BrokerMonitor's per-broker tables and overall table.

The layout follows ``pulsar-perf monitor-brokers`` (``BrokerMonitor``): fixed 14-character cells
framed as ``||label |v1 |v2 …||`` between ``=`` borders, values ``%.2f``, one view per load manager
(modular: SYSTEM, COUNT, LATEST, SHORT, LONG; extensible, as ``--extensions``: SYSTEM, COUNT with
only BUNDLE, LATEST; simple: COUNT, RAW SYSTEM, ALLOC SYSTEM, RAW MSG, ALLOC MSG); then "Overall
Broker Data" with one row per broker and a TOTAL. Unlike BrokerMonitor, every column holds what its
heading says (BrokerMonitor swaps LONG/S and KB/S in the per-broker rows and prints MAX % as a
fraction for modular brokers) — here MAX % is a percentage everywhere — and a LOAD % column shows
the usage the load manager compares (the weighted usage; ``weightedMaxEMA`` for extensible
brokers). SHORT and LONG are marked ``*`` when they are lbctl's own averages rather than the
leader's, with a note saying which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
from lbctl.units import number

CELL = 14
_RED, _BOLD, _DIM, _RESET = "\x1b[31m", "\x1b[1m", "\x1b[2m", "\x1b[0m"
_RATE_HEADS = ("MSG/S IN", "MSG/S OUT", "TOTAL", "KB/S IN", "KB/S OUT", "TOTAL")
_SYSTEM_HEADS = ("CPU %", "MEMORY %", "DIRECT %", "BW IN %", "BW OUT %", "MAX %")
_COUNT_HEADS = ("TOPIC", "BUNDLE", "PRODUCER", "CONSUMER", "BUNDLE +", "BUNDLE -")


def _cells(label: str, values: list[str]) -> str:
    return "||" + "|".join(v.ljust(CELL) for v in [label, *values]) + "||"


def _two(x: float | None) -> str:
    """pulsar-perf's cell: two decimals, no grouping (``%.2f``)."""
    return number(x, 2, grouped=False)


def _i(x: int | None) -> str:
    return "-" if x is None else str(x)


def _title(r: BrokerRow, threshold: float | None, color: bool) -> str:
    title = r.broker
    if r.view != MODULAR_VIEW:
        title += f"  ({r.view} load manager)"
    if r.overloaded:
        title += "  OVERLOADED"
        if r.weighted is not None and threshold is not None:
            what = "weightedMaxEMA" if r.view == EXTENSIBLE_VIEW else "weighted usage"
            title += f" ({what} {r.weighted:.2f}% {'>' if r.view == EXTENSIBLE_VIEW else '>='} " \
                     f"{threshold:g}%)"
    if r.state != "ok":
        title += f"  {r.state.upper()}: {r.error}"
    if color and (r.overloaded or r.state != "ok"):
        title = (_RED + _BOLD if r.overloaded else _DIM) + title + _RESET
    return title


def _rates(rates: Rates | None) -> list[str]:
    return [_two(v) for v in (rates.row() if rates else (None,) * 6)]


def broker_block(r: BrokerRow, *, color: bool = False, averages: str = LEADER,
                 threshold: float | None = None) -> str:
    """One broker's framed table, in the view of its load manager (module docstring)."""
    width = 2 + 7 * (CELL + 1) + 1
    system = [_two(r.cpu), _two(r.memory), _two(r.direct), _two(r.bw_in), _two(r.bw_out),
              _two(r.max)]
    count = [_i(r.topics), _i(r.bundles), _i(r.producers), _i(r.consumers), _i(r.gains),
             _i(r.losses)]
    lines = [_title(r, threshold, color), "=" * width]
    if r.view == SIMPLE_VIEW:
        alloc = [("" if v is None and i == 2 else _two(v)) for i, v in enumerate(r.alloc or (None,) * 6)]
        lines += [_cells("COUNT", list(_COUNT_HEADS)), _cells("", count),
                  _cells("RAW SYSTEM", list(_SYSTEM_HEADS)), _cells("", system),
                  _cells("ALLOC SYSTEM", list(_SYSTEM_HEADS)), _cells("", alloc),
                  _cells("RAW MSG", list(_RATE_HEADS)), _cells("", _rates(r.latest)),
                  _cells("ALLOC MSG", list(_RATE_HEADS)), _cells("", _rates(r.alloc_msg))]
    elif r.view == EXTENSIBLE_VIEW:
        lines += [_cells("SYSTEM", list(_SYSTEM_HEADS)), _cells("", system),
                  _cells("COUNT", list(_COUNT_HEADS)), _cells("", ["", _i(r.bundles), "", "", "", ""]),
                  _cells("LATEST", list(_RATE_HEADS)), _cells("", _rates(r.latest))]
    else:
        mark = "" if averages == LEADER else "*"
        lines += [_cells("SYSTEM", list(_SYSTEM_HEADS)), _cells("", system),
                  _cells("COUNT", list(_COUNT_HEADS)), _cells("", count)]
        for label, rates in (("LATEST", r.latest), ("SHORT" + mark, r.short),
                             ("LONG" + mark, r.long)):
            lines.append(_cells(label, list(_RATE_HEADS)))
            lines.append(_cells("", _rates(rates)))
    lines.append("=" * width)
    return "\n".join(lines)


def overall(rows: list[BrokerRow], total: BrokerRow, *, color: bool = False) -> str:
    """"Overall Broker Data": BROKER, BUNDLE, MSG/S, LONG/S, KB/S, MAX %, then LOAD % (the usage
    the load manager compares) and a TOTAL row. LONG/S is the long-term rate (modular), the
    allocated rate (simple; KB/S then the allocated bandwidth, as BrokerMonitor), blank otherwise."""
    bw = max([len("BROKER"), len("TOTAL"), *(len(r.broker) for r in rows)]) + 2
    head = (f"{'BROKER':<{bw}}{'BUNDLE':>10}{'MSG/S':>14}{'LONG/S':>14}{'KB/S':>14}{'MAX %':>10}"
            f"{'LOAD %':>10}  STATE")
    out = ["Overall Broker Data", head, "*" * len(head)]
    for r in [*rows, total]:
        msg = r.latest.row()[2] if r.latest else None
        if r.view == SIMPLE_VIEW:
            long_ = r.alloc_msg.row()[2] if r.alloc_msg else None
            kb = r.alloc_msg.row()[5] if r.alloc_msg else None
        else:
            long_ = r.long.row()[2] if r.long else None
            kb = r.latest.row()[5] if r.latest else None
        state = "" if r is total else ("overloaded" if r.overloaded else "")
        if r.state != "ok":
            state = f"{r.state}: {r.error}"
        line = (f"{r.broker:<{bw}}{_i(r.bundles):>10}{_two(msg):>14}{_two(long_):>14}{_two(kb):>14}"
                f"{_two(r.max):>10}{_two(r.weighted):>10}  {state}").rstrip()
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
                "averages": {"source": r.averages, "note": r.averages_note},
                "brokers": [x.record() for x in self._rows()], "total": r.total().record()}

    def to_rows(self) -> list[dict[str, Any]]:
        return [x.record() for x in self._rows()] + [self.refresh.total().record()]

    def to_text(self) -> str:
        r = self.refresh
        rows = self._rows()
        views = r.views
        rules = []
        if MODULAR_VIEW in views or not views:
            rules.append(f"weighted usage >= {r.threshold:g}%")
        if EXTENSIBLE_VIEW in views:
            rules.append(f"weightedMaxEMA > {r.threshold:g}%")
        if SIMPLE_VIEW in views:
            rules.append("the simple load manager's own overLoaded")
        head = (f"{r.cluster} at {iso_time(r.at)}: {len(rows)} broker(s), overloaded at "
                f"{' / '.join(rules)} (loadBalancerBrokerOverloadedThresholdPercentage; LOAD % is "
                "the usage the load manager compares)")
        parts = [head]
        if MODULAR_VIEW in views:
            mark = "" if r.averages == LEADER else "*"
            parts.append(f"{mark}SHORT/LONG: {r.averages_note}.")
        parts.append("")
        if not self.summary:
            parts += [broker_block(x, color=self.color, averages=r.averages,
                                   threshold=r.threshold) + "\n" for x in rows]
        parts.append(overall(rows, r.total(), color=self.color))
        return "\n".join(parts)
