"""Words of ``LeastLongTermMessageRate``
(:mod:`lbctl.strategies.placement.least_long_term_message_rate`): the pick, and the candidates
scored +inf."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.strategies.placement.least_long_term_message_rate import LeastWhy
from lbctl.units import pct_whole

#: the +inf notes of a candidate set (by identity: one tuple per set, shared by every placement
#: over it) joined, so that a cycle placing many bundles over a few sets joins each set's
#: hundreds of notes once
_JOINED: dict[int, tuple[tuple[LeastWhy, ...], str]] = {}


def _notes(notes: tuple[LeastWhy, ...]) -> str:
    hit = _JOINED.get(id(notes))
    if hit is not None and hit[0] is notes:
        return hit[1]
    if len(_JOINED) >= 256:
        _JOINED.clear()
    joined = "; ".join(map(least, notes))
    _JOINED[id(notes)] = (notes, joined)
    return joined


@words.register
def least(w: LeastWhy) -> str:
    match w.code:
        case "no-candidates":
            return "no candidate brokers"
        case "no-load-data":
            return f"{w.broker} has no load data → +inf"
        case "overloaded":
            return (f"{w.broker} is overloaded (usage {pct_whole(w.usage)} > "
                    f"{pct_whole(w.threshold)}) → +inf")
        case "all-overloaded":
            said = ("every candidate is overloaded: uniform random pick among all of them"
                    f" [{', '.join(w.best)}] → {w.pick}")
        case "lowest":
            said = f"{w.pick} has the lowest long-term message rate {w.score:.1f} msg/s"
        case "tie":
            said = (f"{', '.join(w.best)} tie at the lowest long-term message rate "
                    f"{w.score:.1f} msg/s: uniform random pick → {w.pick}")
    return f"{said}; {_notes(w.notes)}" if w.notes else said
