"""The fast reader of a large JSON snapshot: a msgspec decode that validates bundle stats in C.

A large snapshot is almost all ``lastStats``: hundreds of thousands of ``NamespaceBundleStats``.
Here the document is split by msgspec without building it (the top level and each broker report
as raw JSON slices), every broker's ``lastStats`` is decoded straight into
:class:`~lbctl.model.load.NamespaceBundleStats` values — the Java field types checked during the
decode (:data:`~lbctl.model.load.JavaRate` and the counts) — and the small rest of each report
with orjson, as the ordinary reader would. The result has the shape ``orjson.loads`` gives, but
for the decoded ``lastStats`` maps, marked :class:`CheckedStats` so that
:mod:`lbctl.sources.snapshot_schema` skips their per-bundle checks.

Nothing here reports an error: whatever msgspec refuses (not JSON, not UTF-8, a wrong type, a
value out of range, an object where a map is expected…) makes :func:`fast_load` return ``None``
and the caller reads the document the ordinary way, which names the file, the JSON path and what
was expected in lbctl's one-line message. The two readers accept the same documents and produce
the same values (a JSON integer read as a double is correctly rounded by both).
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from lbctl.model.load import NamespaceBundleStats

__all__ = ["CheckedStats", "fast_load"]

#: the ``lastStats`` key and the name older brokers used
_STATS_KEYS = frozenset({"lastStats", "bundleStats"})
_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_BROKERS = msgspec.json.Decoder(dict[str, dict[str, msgspec.Raw]])
_STATS = msgspec.json.Decoder(dict[str, NamespaceBundleStats])


class CheckedStats(dict[str, NamespaceBundleStats]):
    """A ``lastStats`` map already decoded and validated (each value a NamespaceBundleStats)."""

    __slots__ = ()


def fast_load(data: bytes) -> dict[str, Any] | None:
    """The decoded snapshot document, its ``lastStats`` maps validated; ``None`` when msgspec
    refuses anything (the caller then reads the document the ordinary way, for its message)."""
    try:
        top = _TOP.decode(data)
        doc: dict[str, Any] = {}
        for key, raw in top.items():
            if key != "brokers":
                doc[key] = orjson.loads(bytes(raw))
                continue
            brokers: dict[str, Any] = {}
            for bid, report in _BROKERS.decode(raw).items():
                brokers[bid] = {
                    k: (CheckedStats(_STATS.decode(v)) if k in _STATS_KEYS
                        else orjson.loads(bytes(v)))
                    for k, v in report.items()
                }
            doc[key] = brokers
    except (msgspec.DecodeError, msgspec.ValidationError, orjson.JSONDecodeError):
        return None
    return doc
