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

import sys
from typing import Annotated, Any

import msgspec
import orjson
from msgspec import UNSET, UnsetType

from lbctl.model.load import JavaIntCount, JavaRate, NamespaceBundleStats

__all__ = ["CheckedStats", "fast_load"]

#: the ``lastStats`` key and the name older brokers used
_STATS_KEYS = frozenset({"lastStats", "bundleStats"})
_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_BROKERS = msgspec.json.Decoder(dict[str, dict[str, msgspec.Raw]])
_STATS = msgspec.json.Decoder(dict[str, NamespaceBundleStats])

#: a resource usage or limit: any finite double (``ResourceUsage.reset()`` writes -1)
_Finite = Annotated[float, msgspec.Meta(ge=-sys.float_info.max, le=sys.float_info.max)]
#: ``lastUpdate``: epoch milliseconds up to 9999-12-31T23:59:59.999Z
_EpochMs = Annotated[int, msgspec.Meta(ge=0, le=253402300799999)]
_Names = list[str] | UnsetType


class _Usage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """``ResourceUsage`` as a report has it; any other key: the document is read otherwise."""

    usage: _Finite = 0.0
    limit: _Finite = 0.0


_NoUsage = _Usage | UnsetType
_Rate = JavaRate | UnsetType
_Count = JavaIntCount | UnsetType
_Stats = dict[str, NamespaceBundleStats] | UnsetType


class _Report(msgspec.Struct, forbid_unknown_fields=True):
    """A broker report (``LocalBrokerData``) with exactly the keys the snapshot reader reads,
    each of the type that reader accepts: decoded in one pass, its values are those the reader
    would take from the ``orjson`` document after its checks. A key the reader ignores (which
    msgspec would skip without checking it is valid JSON text) makes the decode fail, and the
    report is split the slower way."""

    cpu: _NoUsage = UNSET
    memory: _NoUsage = UNSET
    directMemory: _NoUsage = UNSET
    bandwidthIn: _NoUsage = UNSET
    bandwidthOut: _NoUsage = UNSET
    msgThroughputIn: _Rate = UNSET
    msgThroughputOut: _Rate = UNSET
    msgRateIn: _Rate = UNSET
    msgRateOut: _Rate = UNSET
    numTopics: _Count = UNSET
    numBundles: _Count = UNSET
    numConsumers: _Count = UNSET
    numProducers: _Count = UNSET
    bundles: _Names = UNSET
    lastBundleGains: _Names = UNSET
    lastBundleLosses: _Names = UNSET
    lastStats: _Stats = UNSET
    bundleStats: _Stats = UNSET
    lastUpdate: _EpochMs | UnsetType = UNSET
    brokerVersionString: str | None | UnsetType = UNSET
    loadManagerClassName: str | None | UnsetType = UNSET
    persistentTopicsEnabled: bool | UnsetType = UNSET
    nonPersistentTopicsEnabled: bool | UnsetType = UNSET


_REPORTS = msgspec.json.Decoder(dict[str, _Report])
_REPORT_FIELDS = _Report.__struct_fields__


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
            doc[key] = _typed_reports(raw)
            if doc[key] is not None:
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


def _typed_reports(raw: msgspec.Raw) -> dict[str, Any] | None:
    """The ``brokers`` map decoded in one typed pass (:class:`_Report`) and given back as the
    reader's dictionaries (only the keys present); ``None`` when msgspec refuses it."""
    try:
        reports = _REPORTS.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    fields, unset, usage, stats_keys = _REPORT_FIELDS, UNSET, _Usage, _STATS_KEYS
    brokers: dict[str, Any] = {}
    for bid, report in reports.items():
        out: dict[str, Any] = {}
        for k, v in zip(fields, msgspec.structs.astuple(report), strict=True):
            if v is unset:
                continue
            if type(v) is usage:
                out[k] = {"usage": v.usage, "limit": v.limit}
            elif k in stats_keys:
                out[k] = CheckedStats(v)
            else:
                out[k] = v
        brokers[bid] = out
    return brokers
