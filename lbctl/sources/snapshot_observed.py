"""The ``observed`` section of a snapshot v1 (what the leader did until the next sample; see
:mod:`lbctl.model.observed`): its records (:class:`lbctl.model.wire.snapshot.Observed`) turned
into :class:`ObservedDecisions`, and back.

::

    "observed": {
      "until": "2026-03-01T10:01:00Z",           # the next sample (RFC 3339 or epoch ms)
      "unloadedBundles": 2, "unloadedBrokers": 1, "splitBundles": 0,   # counter increases
      "unloadBreakdown": {"Success/Overloaded": 2, "Skip/HitCount": 1},
      "splitBreakdown": {"Success/MsgRate": 1},
      "moves": [{"bundle": "t/ns/0x00000000_0x40000000", "from": "b1:8080", "to": "b2:8080"}],
      "splits": ["t/ns/0x40000000_0x80000000"],
      "notes": ["…"]
    }

Every key but ``until`` is optional. Errors name the JSON path, as the rest of the schema does.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from lbctl.model.cluster import iso_time
from lbctl.model.observed import ObservedDecisions, ObservedMove
from lbctl.model.wire import snapshot as w

if TYPE_CHECKING:
    from lbctl.sources.snapshot_schema import _Checker

KEY = "observed"
_COUNTS = (("unloadedBundles", "unloaded_bundles"), ("unloadedBrokers", "unloaded_brokers"),
           ("splitBundles", "split_bundles"))


def observed_from_wire(c: _Checker, raw: w.Observed,
                       parse_time: Callable[[_Checker, str, object], int]) -> ObservedDecisions:
    """``parse_time`` reads ``until`` as the schema reads ``capturedAt``."""
    until = parse_time(c, f"{KEY}.until", raw.until)
    counts: dict[str, int | None] = {}
    for key, attr in _COUNTS:
        v = getattr(raw, key)
        counts[attr] = None if v is UNSET else v
    moves: tuple[ObservedMove, ...] = ()
    if raw.moves is not UNSET:
        moves = tuple(ObservedMove(c.bundle_name(f"{KEY}.moves[{i}].bundle", m.bundle),
                                   m.source, m.destination) for i, m in enumerate(raw.moves))
    splits = () if raw.splits is UNSET else tuple(
        c.bundle_name(f"{KEY}.splits[{i}]", s) for i, s in enumerate(raw.splits))
    return ObservedDecisions(
        until=until, **counts,
        unload_breakdown=_breakdown(raw.unloadBreakdown),
        split_breakdown=_breakdown(raw.splitBreakdown), moves=moves, splits=splits,
        notes=() if raw.notes is UNSET else tuple(raw.notes))


def _breakdown(raw: Any) -> MappingProxyType[str, int]:
    return MappingProxyType({} if raw is UNSET else dict(raw))


def observed_to_wire(o: ObservedDecisions) -> w.Observed:
    return w.Observed(
        until=iso_time(o.until),
        **{key: UNSET if getattr(o, attr) is None else getattr(o, attr) for key, attr in _COUNTS},
        unloadBreakdown=dict(o.unload_breakdown) or UNSET,
        splitBreakdown=dict(o.split_breakdown) or UNSET,
        moves=[w.ObservedMove(m.bundle, m.source, m.destination) for m in o.moves] or UNSET,
        splits=list(o.splits) or UNSET, notes=list(o.notes) or UNSET)
