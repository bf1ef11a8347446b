"""Words of the split algorithms (:mod:`lbctl.strategies.split`): how each came to its
boundaries, or to none."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.model.bundle import format_position
from lbctl.strategies.split.base import MB, BoundaryWhy


def _positions(positions: tuple[int, ...]) -> str:
    return ", ".join(format_position(p) for p in positions)


def _dropped(w: BoundaryWhy) -> str:
    return (f"; dropped {_positions(w.dropped)} (not strictly inside {w.range})" if w.dropped
            else "")


@words.register
def boundary(w: BoundaryWhy) -> str:
    match w.code:
        case "middle":
            return (f"the middle of the hash range: {format_position(w.lower)} + "
                    f"({format_position(w.upper)} - {format_position(w.lower)}) / 2 = "
                    f"{format_position(w.middle)}")
        case "few-topics":
            return f"the bundle has {w.count} topic(s); at least 2 are needed to split"
        case "topic-middle":
            return (f"{w.count} topics; between the middle hashes {format_position(w.start)} and "
                    f"{format_position(w.end)}: {format_position(w.middle)} ({w.below} below, "
                    f"{w.count - w.below} above)")
        case "none-inside":
            return f"no split position is strictly inside {w.range}{_dropped(w)}"
        case "inside":
            return (f"{len(w.positions)} position(s) inside {w.range}: "
                    f"{_positions(w.positions)}{_dropped(w)}")
        case "few-with-traffic":
            return (f"{w.with_traffic} of the bundle's {w.count} topics have stats and traffic; "
                    "at least 2 are needed")
        case "below-limits":
            return (f"the bundle's {w.rate:,.1f} msg/s and {w.throughput / MB:,.1f} MB/s are "
                    f"below {w.percentage}% of the limits ({w.max_rate * (1 + w.margin):,.1f} "
                    f"msg/s, {w.max_tp * (1 + w.margin) / MB:,.1f} MB/s)")
    head = (f"{w.rate:,.1f} msg/s and {w.throughput / MB:,.1f} MB/s over {w.with_traffic} "
            f"topics; a piece ends before the topic that would take it over {w.max_rate:,} msg/s "
            f"or {w.max_mb:,} MB/s")
    if w.code == "no-cut":
        return head + ": no cut needed"
    n = len(w.positions)
    return (head + f": {n} boundar{'y' if n == 1 else 'ies'} ({_positions(w.positions)}), "
            "each a midpoint + 1")
