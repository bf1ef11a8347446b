"""The ``observed`` section of a snapshot v1 (what the leader did until the next sample; see
:mod:`lbctl.model.observed`): validated into :class:`ObservedDecisions`, and written back.

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

from lbctl.model.cluster import iso_time
from lbctl.model.observed import ObservedDecisions, ObservedMove

if TYPE_CHECKING:
    from lbctl.sources.snapshot_schema import _Checker

KEY = "observed"
_COUNTS = (("unloadedBundles", "unloaded_bundles"), ("unloadedBrokers", "unloaded_brokers"),
           ("splitBundles", "split_bundles"))


def parse_observed(c: _Checker, raw: Any,
                   parse_time: Callable[[_Checker, str, object], int]) -> ObservedDecisions:
    """``parse_time`` reads ``until`` as the schema reads ``capturedAt``."""
    obj = c.obj(KEY, raw, "an object (what the leader did until the next sample)")
    if "until" not in obj:
        c.fail(f"{KEY}.until", "required key is missing (expected an RFC 3339 time or epoch "
                               "milliseconds)")
    until = parse_time(c, f"{KEY}.until", obj["until"])
    counts: dict[str, int | None] = {}
    for key, attr in _COUNTS:
        v = obj.get(key)
        counts[attr] = None if v is None else c.count(f"{KEY}.{key}", v, "long")
    breakdowns = {}
    for key in ("unloadBreakdown", "splitBreakdown"):
        raw_b = c.obj(f"{KEY}.{key}", obj.get(key, {}), "an object: label/reason → count")
        c.keys_are_strings(f"{KEY}.{key}", raw_b, "a label/reason")
        breakdowns[key] = MappingProxyType({k: c.count(f"{KEY}.{key}.{k}", v, "long")
                                            for k, v in raw_b.items()})
    moves = []
    raw_moves = obj.get("moves", [])
    if type(raw_moves) is not list:
        c.fail(f"{KEY}.moves", "expected a list of {bundle, from, to}", raw_moves)
    for i, m in enumerate(raw_moves):
        p = f"{KEY}.moves[{i}]"
        m = c.obj(p, m, "an object {bundle, from, to}")
        moves.append(ObservedMove(c.bundle_name(f"{p}.bundle", m.get("bundle")),
                                  c.string(f"{p}.from", m.get("from"), "a broker id"),
                                  c.string(f"{p}.to", m.get("to"), "a broker id")))
    splits = obj.get("splits", [])
    if type(splits) is not list:
        c.fail(f"{KEY}.splits", "expected a list of bundle names", splits)
    notes = obj.get("notes", [])
    if type(notes) is not list or any(type(n) is not str for n in notes):
        c.fail(f"{KEY}.notes", "expected a list of strings", notes)
    return ObservedDecisions(
        until=until, **counts,
        unload_breakdown=breakdowns["unloadBreakdown"],
        split_breakdown=breakdowns["splitBreakdown"], moves=tuple(moves),
        splits=tuple(c.bundle_name(f"{KEY}.splits[{i}]", s) for i, s in enumerate(splits)),
        notes=tuple(notes))


def observed_to_dict(o: ObservedDecisions) -> dict[str, Any]:
    out: dict[str, Any] = {"until": iso_time(o.until)}
    for key, attr in _COUNTS:
        v = getattr(o, attr)
        if v is not None:
            out[key] = v
    if o.unload_breakdown:
        out["unloadBreakdown"] = dict(o.unload_breakdown)
    if o.split_breakdown:
        out["splitBreakdown"] = dict(o.split_breakdown)
    if o.moves:
        out["moves"] = [{"bundle": m.bundle, "from": m.source, "to": m.destination}
                        for m in o.moves]
    if o.splits:
        out["splits"] = list(o.splits)
    if o.notes:
        out["notes"] = list(o.notes)
    return out
