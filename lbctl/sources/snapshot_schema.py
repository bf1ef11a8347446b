"""Snapshot v1 ↔ :class:`~lbctl.model.cluster.ClusterState`: the one reader and the one writer.

The format is declared once, in :mod:`lbctl.model.wire.snapshot`: every field's Java type, its
range and the words an error uses. Reading is a ``msgspec`` decode into those records — straight
from JSON bytes (:func:`decode_snapshot`) or from decoded JSON/YAML values (:func:`parse_snapshot`)
— which checks every type and range in C, then the rules a type cannot express, here:

* Bundle names: ``tenant/namespace/0xLLLLLLLL_0xUUUUUUUU`` exactly as
  :meth:`lbctl.model.bundle.BundleName.parse` accepts them (8 lower-case hex digits,
  lower < upper), validated once per distinct namespace and range.
* A bundle has one owner: listing it in two brokers' ``lastStats``/``bundles`` is an error. When
  ``namespaces`` gives a namespace's boundaries (strictly ascending from 0x00000000 to 0xffffffff),
  every owned bundle of that namespace must be one of its ranges; without them, owned bundles of
  one namespace must not overlap.
* Missing aggregates of a broker report (``msgRateIn``, ``msgRateOut``, ``msgThroughputIn``,
  ``msgThroughputOut``, ``numTopics``, ``numConsumers``, ``numProducers``, ``numBundles``,
  ``bundles``) default to what ``LocalBrokerData.update(systemResourceUsage, bundleStats)``
  computes from the report's ``lastStats`` (left-to-right sums, in the file's order; Pulsar sums
  in its ``HashMap`` order, so a hand-made file without aggregates may differ from a real report
  in the last bits). ``numBundles`` falls back to ``len(bundles)`` for a report without
  ``lastStats``. Values present are kept as given, even when they disagree with ``lastStats``.
* Settings lbctl knows are parsed as :func:`lbctl.config.resolve` parses them; the times are RFC
  3339 (an offset required) or epoch milliseconds; the placement sections' regular expressions,
  topic names and broker lists are checked as ``docs/snapshot-policies.md`` says.

Every violation raises :class:`lbctl.errors.SnapshotFormatError` naming the file, the JSON path
(``brokers["b1:8080"].lastStats["t/ns/0x…"].msgRateIn``) and what was expected: a failed decode
is explained from the declarations (:mod:`lbctl.model.wire.problems`), the rules here say their
own. Writing (:func:`snapshot_to_dict`) builds the same records from a state.

Speed: a decoded ``lastStats`` map is used as it is (its values are the model's
``NamespaceBundleStats``); the per-bundle work here is set arithmetic over names, in C.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Annotated, Any, NoReturn

import msgspec
from msgspec import UNSET

from lbctl.config import SETTINGS_BY_NAME
from lbctl.errors import ConfigError, SnapshotFormatError
from lbctl.model.brokerload import BrokerLoadData, PublishedLoad, PublishedTopBundles, TopBundle
from lbctl.model.bundle import (
    SYSTEM_PREFIXES,
    BundleName,
    BundleNameError,
    format_position,
    validate_boundaries,
)
from lbctl.model.cluster import ClusterState, NameIndex, iso_time
from lbctl.model.load import (
    BundleData,
    LocalBrokerData,
    NamespaceBundleStats,
    ResourceUsage,
    TimeAverageMessageData,
)
from lbctl.model.wire import snapshot as w
from lbctl.model.wire.java import MAX_EPOCH_MS
from lbctl.model.wire.paths import key_path, show
from lbctl.model.wire.snapshot import FORMAT, RECONSTRUCTED

__all__ = [
    "FORMAT",
    "RECONSTRUCTED",
    "LearnedNames",
    "convert",
    "decode_snapshot",
    "key_path",
    "parse_broker_load_data",
    "parse_snapshot",
    "parse_top_bundles",
    "show",
    "snapshot_to_dict",
    "snapshot_to_wire",
    "state_from_wire",
]

_MISSING: Any = object()
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NO_USAGE = ResourceUsage()
_DECODER = msgspec.json.Decoder(w.Snapshot)

#: the whole of what ``BundleName.parse`` accepts, as one expression (fast path; errors re-parse)
_BUNDLE_RE = re.compile(r"[^/]+/[^/]+(?:/[^/]+)?/0x([0-9a-f]{8})_0x([0-9a-f]{8})")
_RFC3339_RE = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]+))?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_TOPIC_RE = re.compile(w.TOPIC_PATTERN)
#: length of ``/0xLLLLLLLL_0xUUUUUUUU``, the part of a bundle name after its namespace
_RANGE_TAIL = 22
#: a bundle name's namespace part and its range tail (``name[:-22]``, ``name[-22:]``) in C
_HEAD = operator.itemgetter(slice(None, -_RANGE_TAIL))
_TAIL = operator.itemgetter(slice(-_RANGE_TAIL, None))


# --------------------------------------------------------------------------------------------
# error reporting
# --------------------------------------------------------------------------------------------
class _Checker:
    """Builds error messages for one snapshot object: the file and a JSON path prefix."""

    __slots__ = ("file", "prefix")

    def __init__(self, file: str, prefix: str = ""):
        self.file = file
        self.prefix = prefix

    def path(self, path: str) -> str:
        if not self.prefix:
            return path
        if not path:
            return self.prefix
        return self.prefix + path if path.startswith("[") else f"{self.prefix}.{path}"

    def fail(self, path: str, expected: str, got: object = _MISSING) -> NoReturn:
        message = expected if got is _MISSING else f"{expected}, got {show(got)}"
        raise SnapshotFormatError(self.file, self.path(path), message)

    def bundle_name(self, path: str, name: str) -> str:
        """A full bundle name; the message is ``BundleName.parse``'s reason."""
        m = _BUNDLE_RE.fullmatch(name)
        if m is not None and m[1] < m[2]:
            return name
        try:
            BundleName.parse(name)
        except BundleNameError as e:
            reason = str(e).removeprefix(f"bad bundle name {name!r}: ")
            self.fail(path, f"expected a valid bundle name: {_one_line(reason)}")
        self.fail(path, "expected a bundle name tenant/namespace/0xLLLLLLLL_0xUUUUUUUU", name)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def convert(value: object, tp: Any, file: str, path: str = "") -> Any:
    """``value`` (decoded JSON/YAML) as the declared type ``tp``, or the one-line error naming
    ``file`` and the JSON path (``path`` is where ``value`` sits in its document)."""
    try:
        return msgspec.convert(value, tp)
    except msgspec.ValidationError as e:
        raise _refusal(_Checker(file), value, tp, path, e) from None


def _refusal(c: _Checker, value: object, tp: Any, path: str,
             e: msgspec.ValidationError) -> SnapshotFormatError:
    from lbctl.model.wire.problems import first_problem  # the error path only

    problem = first_problem(value, tp, path)
    if problem is None:  # the declarations' walk and msgspec disagree: msgspec's own words
        where, _, what = str(e).rpartition(" - at `")
        return SnapshotFormatError(c.file, c.path(path), f"{_one_line(where or what)}")
    return SnapshotFormatError(c.file, c.path(problem.path), problem.message)


# --------------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------------
def decode_snapshot(data: bytes) -> w.Snapshot | None:
    """A JSON document decoded straight into the snapshot records (types and ranges checked in
    C), or ``None`` when anything does not fit or is not JSON (the caller then decodes it as JSON
    values, whose errors say what is wrong). Text that is not UTF-8 is ``None`` too."""
    try:
        doc = _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
        return None
    if not data.isascii():  # msgspec skips unknown values without decoding their text
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return doc


def parse_snapshot(obj: object, file: str, path_prefix: str = "") -> ClusterState:
    """Validate a decoded snapshot v1 object (JSON/YAML values) and build the
    :class:`ClusterState` it describes.

    ``file`` names the source in error messages (``x.jsonl:3`` for a line of a sequence);
    ``path_prefix`` is put in front of every JSON path (for snapshots nested in a larger document).
    """
    c = _Checker(file, path_prefix)
    obj = _yaml_instants(c, obj)
    try:
        doc = msgspec.convert(obj, w.Document)
    except msgspec.ValidationError as e:
        raise _refusal(c, obj, w.Document, "", e) from None
    return _state(c, doc)


def state_from_wire(doc: w.Snapshot, file: str, path_prefix: str = "", *,
                    learned: LearnedNames | None = None) -> ClusterState:
    """The :class:`ClusterState` of decoded snapshot records, after the rules a type cannot
    express (the module docstring); ``file`` and ``path_prefix`` as for :func:`parse_snapshot`.
    ``learned``: the bundle-name parts the snapshots before this one in a sequence were found
    to be made of, valid, and where this one's are added (:class:`LearnedNames`)."""
    return _state(_Checker(file, path_prefix), doc, learned)


def _yaml_instants(c: _Checker, obj: object) -> object:
    """YAML reads an unquoted time as a ``datetime``: one with an offset is the instant it names
    (``capturedAt``, ``observed.until``), one without is refused."""
    if type(obj) is not dict:
        return obj
    out = obj
    if isinstance(obj.get("capturedAt"), datetime):
        out = {**obj, "capturedAt": parse_captured_at(c, "capturedAt", obj["capturedAt"])}
    observed = obj.get("observed")
    if type(observed) is dict and isinstance(observed.get("until"), datetime):
        until = parse_captured_at(c, "observed.until", observed["until"])
        out = {**out, "observed": {**observed, "until": until}}
    return out


def _state(c: _Checker, doc: w.Snapshot, learned: LearnedNames | None = None) -> ClusterState:
    captured_at = parse_captured_at(c, "capturedAt", doc.capturedAt)
    config = _config(c, doc.config)
    dynamic = {} if doc.dynamicConfig is UNSET else _config(c, doc.dynamicConfig, "dynamicConfig")
    namespaces = _namespaces(c, doc.namespaces)
    names = _brokers(c, doc.brokers, namespaces, learned)
    brokers = names.brokers
    bundle_data = None if doc.bundleData is UNSET else _bundle_data(c, doc.bundleData)
    placement = _placement(c, doc, brokers)
    topics: Mapping[str, w.TopicStats] = {} if doc.topics is UNSET else doc.topics
    return ClusterState(
        cluster=doc.cluster,
        captured_at=captured_at,
        brokers=brokers,
        load_manager=doc.loadManager,
        config=MappingProxyType(config),
        dynamic_config=MappingProxyType(dynamic),
        bundle_data=bundle_data,
        namespaces=MappingProxyType({ns: b for ns, (b, _) in namespaces.items()}),
        topics=MappingProxyType(topics),
        recently_unloaded=MappingProxyType(_recently_unloaded(c, doc.recentlyUnloaded)),
        broker_load_data=MappingProxyType(
            {} if doc.brokerLoadData is UNSET
            else {b: _published_load(p) for b, p in doc.brokerLoadData.items()}),
        top_bundles_load_data=MappingProxyType(
            {} if doc.topBundlesLoadData is UNSET
            else {b: _top_bundles(c, f"topBundlesLoadData{key_path(b)}", p)
                  for b, p in doc.topBundlesLoadData.items()}),
        recently_unloaded_brokers=MappingProxyType(
            {} if doc.recentlyUnloadedBrokers is UNSET else dict(doc.recentlyUnloadedBrokers)),
        source=c.file,
        observed=_observed(c, doc.observed),
        resource_quotas=None if doc.resourceQuotas is UNSET else doc.resourceQuotas,
        names=names,
        **placement,
    )


def parse_captured_at(c: _Checker, path: str, value: object) -> int:
    """RFC 3339 text (an offset is required; fractions beyond milliseconds are truncated) or an
    integer of epoch milliseconds (range-checked by its declaration). YAML turns unquoted times
    into ``datetime`` objects: those are accepted when they carry an offset."""
    if type(value) is int:
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            c.fail(path, "expected an RFC 3339 time with a UTC offset (Z or +hh:mm)", value)
        return _to_epoch_ms(c, path, value, value.microsecond // 1000)
    if type(value) is not str:
        c.fail(path, "expected an RFC 3339 time (string) or epoch milliseconds (integer)", value)
    m = _RFC3339_RE.fullmatch(value)
    if m is None:
        c.fail(path, "expected an RFC 3339 time like 2026-11-21T22:00:00Z", value)
    date, clock, frac, offset = m.groups()
    tz = "+00:00" if offset in ("Z", "z") else offset
    try:
        dt = datetime.fromisoformat(f"{date}T{clock}{tz}")
    except ValueError:
        c.fail(path, "expected a valid RFC 3339 date and time", value)
    millis = int((frac or "0")[:3].ljust(3, "0"))
    return _to_epoch_ms(c, path, dt, millis, value)


def _to_epoch_ms(c: _Checker, path: str, dt: datetime, millis: int, raw: object = None) -> int:
    try:
        whole = dt.replace(microsecond=0) - _EPOCH
    except OverflowError:
        c.fail(path, "expected a time between 1970 and 9999", raw if raw is not None else dt)
    ms = whole // timedelta(milliseconds=1) + millis
    if not 0 <= ms <= MAX_EPOCH_MS:
        c.fail(path, "expected a time between 1970 and 9999", raw if raw is not None else dt)
    return ms


def _config(c: _Checker, config: Mapping[str, Any], section: str = "config") -> dict[str, Any]:
    """Broker settings (``config``, or ``dynamicConfig``): those lbctl knows are parsed with the
    same rules as :func:`lbctl.config.resolve`, so that a bad value is reported here with its JSON
    path; the raw values are kept as given."""
    for key, value in config.items():
        setting = SETTINGS_BY_NAME.get(key)
        if setting is not None and value is not None:
            try:
                setting.parse(value)
            except ConfigError as e:
                reason = str(e).split(": ", 1)[-1]
                c.fail(f"{section}.{key}", _one_line(reason))
    return dict(config)


_Namespaces = dict[str, tuple[tuple[int, ...], frozenset[str]]]


def _namespaces(c: _Checker, raw: Mapping[str, w.BundlesData] | Any) -> _Namespaces:
    """``namespaces``: ``tenant/ns`` → ``BundlesData``. Returns boundaries and the set of range
    tails (``/0x…_0x…``) of each namespace, for the overlap check of owned bundles."""
    if raw is UNSET:
        return {}
    out: _Namespaces = {}
    # namespaces mostly share a few boundary lists (every namespace created with N bundles has the
    # same ones): each distinct list is validated and turned into range tails once
    seen: dict[tuple[str, ...], tuple[tuple[int, ...], frozenset[str]]] = {}
    for ns, data in raw.items():
        path = f"namespaces{key_path(ns)}"
        key = tuple(data.boundaries)
        parsed = seen.get(key)
        if parsed is None:
            parsed = seen[key] = _boundaries(c, f"{path}.boundaries", data.boundaries)
        num = data.numBundles
        if num is not UNSET and num != len(parsed[0]) - 1:
            c.fail(f"{path}.numBundles",
                   f"expected {len(parsed[0]) - 1} (one less than the number of boundaries)", num)
        out[ns] = parsed
    return out


def _boundaries(c: _Checker, path: str, raw: list[str]) -> tuple[tuple[int, ...], frozenset[str]]:
    """Hex boundaries, strictly ascending from 0x00000000 to 0xffffffff; returns them as ints and
    the tails ``/0x…_0x…`` of their ranges."""
    bounds = [int(b, 16) for b in raw]
    problem = validate_boundaries(bounds)
    if problem is not None:
        c.fail(path, f"expected {problem}")
    text = [format_position(b) for b in bounds]
    tails = frozenset(f"/{a}_{b}" for a, b in zip(text, text[1:], strict=False))
    return tuple(bounds), tails


# --------------------------------------------------------------------------------------------
# brokers: the hot path
# --------------------------------------------------------------------------------------------
def _brokers(c: _Checker, raw: Mapping[str, w.LocalBrokerData],
             namespaces: _Namespaces, learned: LearnedNames | None = None) -> NameIndex:
    """Every broker's report, checked, as the :class:`NameIndex` of them (its ``brokers`` are
    the state's, by identity): the number of distinct bundles the one-owner check counts, and
    the system namespaces' bundles, counted for the brokers whose namespaces (which the name
    check collects) include one."""
    brokers: dict[str, LocalBrokerData] = {}
    system: dict[str, int] = {}
    stats: dict[str, Mapping[str, NamespaceBundleStats]] = {}
    # the owned names: those with stats in one table of every report's stats (the cycle takes
    # it as its bundle map instead of merging the reports again: NameIndex.owned), the names
    # only a ``bundles`` list gives apart (usually none)
    owned: dict[str, NamespaceBundleStats] = {}
    listed: set[str] = set()
    names_ok = _NameCache(namespaces, learned)
    # NameIndex.one_each: each namespace one string (not one slice per name: 80 MB at 1M)
    one_each: dict[str, tuple[str, ...]] = {}
    shared: dict[str, str] = {}
    for bid, data in raw.items():
        local, stats_key, extra, heads, own = _broker(c, bid, data, names_ok)
        stats[bid] = own
        if len(heads) == len(own):
            one_each[bid] = tuple(map(shared.setdefault, heads, heads))
        if not heads.isdisjoint(names_ok.system):  # rare: a broker of a system namespace
            _count_system(local.lastStats, system)
        # a bundle has one owner: a C-speed size test, a Python scan only to name the culprit
        # (``extra`` excludes the stats' keys and a report's lists hold no repeats)
        before = len(owned)
        owned.update(own)
        clash = len(owned) != before + len(own) or (listed and not listed.isdisjoint(own))
        if not clash and extra:
            before = len(listed)
            listed.update(extra)
            clash = len(listed) != before + len(extra) or any(map(owned.__contains__, extra))
        if clash:
            dup, other = next(
                (n, other)
                for names in (local.lastStats, extra)
                for n in names
                for other, theirs in brokers.items()
                if n in theirs.lastStats or n in theirs.bundles
            )
            c.fail(
                _bundle_path(bid, stats_key, local, dup),
                "expected a bundle to have one owner, it is also listed by broker "
                + json.dumps(other, ensure_ascii=False),
            )
        brokers[bid] = local
    _check_disjoint(c, brokers, owned.keys() | listed if listed else owned, namespaces,
                    names_ok.tails)
    return NameIndex(MappingProxyType(brokers), len(owned) + len(listed), MappingProxyType(system),
                     MappingProxyType(stats), owned, MappingProxyType(one_each))


def _count_system(stats: Iterable[str], into: dict[str, int]) -> None:
    """Add the bundles of each namespace with a system prefix among ``stats`` (valid names)."""
    for name in stats:
        if name.startswith(SYSTEM_PREFIXES):
            ns = name[:-_RANGE_TAIL]
            into[ns] = into.get(ns, 0) + 1


def _check_disjoint(c: _Checker, brokers: Mapping[str, LocalBrokerData], owned: Collection[str],
                    namespaces: Mapping[str, Any], tails: Iterable[str] = ()) -> None:
    """Owned bundles of a namespace without ``namespaces`` boundaries must not overlap: a
    namespace's bundles partition its hash range (``NamespaceBundles``), so two that overlap
    cannot both exist. (With boundaries, each must be one of their ranges: checked per name.)

    ``tails``: every range (``/0xLLLLLLLL_0xUUUUUUUU``) the names use. When those ranges are
    pairwise disjoint (every namespace split alike), so are any two distinct bundles of one
    namespace: nothing more to check. Else at C speed over all names
    (:func:`_disjoint_at_c_speed`); only when that cannot tell, name by name, which also finds
    the pair to report."""
    used = sorted(tails)
    if all(map(str.__le__, [t[-10:] for t in used], [t[-21:-11] for t in used[1:]])):
        return
    if _disjoint_at_c_speed(owned):
        return
    by_ns: dict[str, list[tuple[int, int, str]]] = {}
    for name in owned:
        ns = name[:-_RANGE_TAIL]
        if ns in namespaces:
            continue
        tail = name[-_RANGE_TAIL + 1 :]
        by_ns.setdefault(ns, []).append((int(tail[2:10], 16), int(tail[13:21], 16), name))
    for ranges in by_ns.values():
        if len(ranges) < 2:
            continue
        ranges.sort()
        for (_, hi, prev), (lo, _, name) in zip(ranges, ranges[1:], strict=False):
            if lo < hi:
                bid = next(b for b, d in brokers.items() if name in d.lastStats or name in d.bundles)
                stats_key = "lastStats" if name in brokers[bid].lastStats else "bundles"
                c.fail(_bundle_path(bid, stats_key, brokers[bid], name),
                       f"expected bundles of one namespace not to overlap: range "
                       f"{name[-_RANGE_TAIL + 1 :]} overlaps {prev[-_RANGE_TAIL + 1 :]}")


def _disjoint_at_c_speed(owned: Collection[str]) -> bool:
    """True when no two owned bundles of one namespace overlap (whatever the boundaries).

    Names are valid here, so a name is its namespace and a fixed-width tail
    ``/0xLLLLLLLL_0xUUUUUUUU`` of lower-case hex digits: sorting the names sorts each namespace's
    ranges by (lower, upper) as strings compare, and ranges overlap only if some range starts
    before the upper bound of the one sorted just before it. That holds when each namespace's
    names are contiguous in the sorted list, which is checked too (a three-part namespace can
    extend a two-part one's name); ``False`` means "look name by name"."""
    if len(owned) < 2:
        return True
    names = sorted(owned)
    cut = -_RANGE_TAIL
    ns = [n[:cut] for n in names]
    same = list(map(str.__eq__, ns, ns[1:]))
    if same.count(False) + 1 != len(set(ns)):
        return False  # a namespace's names are not contiguous
    uppers = [n[-10:] for n in names]
    lowers = [n[-21:-11] for n in names]
    return not any(map(operator.and_, same, map(str.__gt__, uppers, lowers[1:])))


def _bundle_path(bid: str, stats_key: str, local: LocalBrokerData, name: str) -> str:
    base = f"brokers{key_path(bid)}"
    if name in local.lastStats:
        return f"{base}.{stats_key}{key_path(name)}"
    return f"{base}.bundles[{local.bundles.index(name)}]"


class LearnedNames:
    """The namespace parts and range tails of bundle names found valid, carried from one
    snapshot of a sequence to the next (:func:`state_from_wire`'s ``learned``): a name made of
    a known namespace and a known range is valid whatever snapshot it is in (the grammar is the
    two parts side by side), so the regular expression runs once per distinct part over the whole
    sequence rather than once per snapshot. Boundaries are not carried: each snapshot's
    ``namespaces`` section is its own. A history rebuilt from Prometheus, which has no
    ``namespaces`` section, otherwise learns every range again in every snapshot."""

    __slots__ = ("ns", "tails")

    def __init__(self) -> None:
        #: valid namespaces (their boundaries, if any, are each snapshot's)
        self.ns: dict[str, None] = {}
        #: valid ``/0xLLLLLLLL_0xUUUUUUUU`` tails
        self.tails: dict[str, None] = {}


class _NameCache:
    """Validates bundle names in bulk, and checks owned bundles against namespace boundaries.

    The bundle-name grammar is ``namespace + "/0xLLLLLLLL_0xUUUUUUUU"`` where the tail has a fixed
    length, so a name is valid when its namespace part and its tail have each been seen valid
    before: the regular expression runs once per distinct namespace or range, not per bundle
    (nor per snapshot, with a :class:`LearnedNames` carried along a sequence).
    A namespace with boundaries maps to the set of its range tails: an owned bundle whose tail is
    not among them overlaps the boundaries.
    """

    __slots__ = ("bounded", "learned", "ns", "system", "tails")

    def __init__(self, namespaces: Mapping[str, tuple[tuple[int, ...], frozenset[str]]],
                 learned: LearnedNames | None = None):
        #: where what this snapshot's names teach is kept (a fresh one: nothing carried)
        self.learned = learned = LearnedNames() if learned is None else learned
        #: valid namespace → the tails of its ranges when ``namespaces`` gives them, else None
        self.ns: dict[str, frozenset[str] | None] = dict(learned.ns)
        self.ns.update({n: t for n, (_, t) in namespaces.items()})
        #: the namespaces with boundaries (learned ones never have any)
        self.bounded = frozenset(namespaces)
        #: the valid namespaces with a system prefix (``SYSTEM_PREFIXES``)
        self.system = {n for n in self.ns if n.startswith(SYSTEM_PREFIXES)}
        #: valid tails (shared with ``learned``: a valid tail is valid in any snapshot); with
        #: tails carried from earlier snapshots, :func:`_check_disjoint`'s shortcut sees a
        #: superset of this snapshot's ranges, which can only send it the longer, exact way
        self.tails: dict[str, None] = learned.tails
        for _, tails in namespaces.values():
            self.tails.update(dict.fromkeys(tails))

    def check(self, c: _Checker, names: Iterable[str], path_of: Callable[[str], str], *,
              owned: bool = True) -> set[str]:
        """Raise for the first invalid name, or (``owned``) the first that overlaps boundaries;
        returns the names' namespaces (valid once nothing was raised: a valid name is its
        namespace and a 22-character range).

        First, with set comprehensions over all the names: when every namespace part is a known
        one without boundaries and every range a known one, there is nothing to do (the loop
        below would do nothing for any of them); otherwise the loop runs over the names it has
        work for, in order."""
        ns_ok, tails_ok, unseen, cut = self.ns, self.tails, _MISSING, -_RANGE_TAIL
        heads = set(map(_HEAD, names))  # map over C slicers: no Python frame per name
        tails = set(map(_TAIL, names))
        if (tails_ok.keys() >= tails and ns_ok.keys() >= heads
                and (not self.bounded or heads.isdisjoint(self.bounded))):
            return heads
        for name in [n for n in names
                     if ns_ok.get(n[:cut], unseen) is not None or n[cut:] not in tails_ok]:
            tail = name[cut:]
            allowed = ns_ok.get(name[:cut], unseen)
            if allowed is None:  # a valid namespace without boundaries
                if tail not in tails_ok:
                    self._learn(c, name, path_of)
            elif allowed is unseen or tail not in allowed:
                self._learn(c, name, path_of)
                if owned:
                    self._check_overlap(c, name, path_of)
        return heads

    def _learn(self, c: _Checker, name: str, path_of: Callable[[str], str]) -> None:
        m = _BUNDLE_RE.fullmatch(name)
        if m is None or m[1] >= m[2]:  # the path is built only to report
            c.bundle_name(path_of(name), name)
        ns = name[:-_RANGE_TAIL]
        self.ns.setdefault(ns, None)
        self.learned.ns[ns] = None
        if ns.startswith(SYSTEM_PREFIXES):
            self.system.add(ns)
        self.tails[name[-_RANGE_TAIL:]] = None

    def _check_overlap(self, c: _Checker, name: str, path_of: Callable[[str], str]) -> None:
        ns = name[:-_RANGE_TAIL]
        allowed = self.ns.get(ns)
        if allowed is not None and name[-_RANGE_TAIL:] not in allowed:
            c.fail(
                path_of(name),
                f"expected one of the bundle ranges of namespaces{key_path(ns)}, "
                f"range {name[-_RANGE_TAIL + 1 :]} overlaps its boundaries",
            )


def _resource(r: w.ResourceUsage) -> ResourceUsage:
    return _NO_USAGE if r.usage == 0.0 and r.limit == 0.0 else ResourceUsage(r.usage, r.limit)


def _broker(c: _Checker, bid: str, data: w.LocalBrokerData, names_ok: _NameCache
            ) -> tuple[LocalBrokerData, str, tuple[str, ...], set[str],
                       dict[str, NamespaceBundleStats]]:
    """One ``LocalBrokerData``; also returns the key its stats came from, the bundles the
    report lists in ``bundles`` without stats, its stats' namespaces and the dict its
    ``lastStats`` shows."""
    def at(suffix: str = "") -> str:  # a JSON path in this report, built only to report
        return f"brokers{key_path(bid)}{suffix}"

    stats_key = "lastStats"
    stats: dict[str, NamespaceBundleStats]
    if data.lastStats is not UNSET:
        stats, has_stats = data.lastStats, True
    elif data.bundleStats is not UNSET:  # the name older brokers used
        stats_key, has_stats = "bundleStats", True
        stats = convert(data.bundleStats, w.StatsMap, c.file, c.path(at(".bundleStats")))
    else:
        stats, has_stats = {}, False
    heads = names_ok.check(c, stats, lambda n: at(f".{stats_key}{key_path(n)}"))

    if data.bundles is UNSET:
        bundles: tuple[str, ...] = tuple(stats)
        extra: tuple[str, ...] = ()
    else:
        bundles, extra = _name_list(c, lambda: at(".bundles"), data.bundles, names_ok,
                                    owned=True, known=stats)
    gains = _name_list(c, lambda: at(".lastBundleGains"), data.lastBundleGains, names_ok)[0]
    losses = _name_list(c, lambda: at(".lastBundleLosses"), data.lastBundleLosses, names_ok)[0]
    values = stats.values()
    version = data.brokerVersionString
    nested = data.systemResourceUsage

    def usage(name: str) -> ResourceUsage:
        part = UNSET if nested is UNSET else getattr(nested, name)
        return _resource(getattr(data, name) if part is UNSET else part)
    lm_class = data.loadManagerClassName
    local = LocalBrokerData(
        usage("cpu"), usage("memory"), usage("directMemory"), usage("bandwidthIn"),
        usage("bandwidthOut"),
        msgThroughputIn=_or_sum(data.msgThroughputIn, values, "msgThroughputIn"),
        msgThroughputOut=_or_sum(data.msgThroughputOut, values, "msgThroughputOut"),
        msgRateIn=_or_sum(data.msgRateIn, values, "msgRateIn"),
        msgRateOut=_or_sum(data.msgRateOut, values, "msgRateOut"),
        numTopics=_or_sum(data.numTopics, values, "topics", 0),
        numBundles=(data.numBundles if data.numBundles is not UNSET
                    else len(stats) if has_stats else len(bundles)),
        numConsumers=_or_sum(data.numConsumers, values, "consumerCount", 0),
        numProducers=_or_sum(data.numProducers, values, "producerCount", 0),
        bundles=bundles,
        lastBundleGains=gains,
        lastBundleLosses=losses,
        lastStats=MappingProxyType(stats),
        lastUpdate=(data.timestamp if data.lastUpdate == 0 and data.timestamp is not UNSET
                    else data.lastUpdate),
        brokerVersionString=None if version is UNSET else version,
        loadManagerClassName=None if lm_class is UNSET else lm_class,
        persistentTopicsEnabled=data.persistentTopicsEnabled,
        nonPersistentTopicsEnabled=data.nonPersistentTopicsEnabled,
    )
    return local, stats_key, extra, heads, stats


def _or_sum(value: Any, stats: Iterable[NamespaceBundleStats], field: str,
            start: Any = 0.0) -> Any:
    """``value`` as reported, else ``LocalBrokerData.update``'s sum of ``field`` over the stats:
    ``total += x`` left to right, as Java does (``sum()`` of floats is compensated from Python
    3.12 on, which would not reproduce Java's rounding)."""
    if value is not UNSET:
        return value
    total = start
    for s in stats:
        total += getattr(s, field)
    return total


def _name_list(c: _Checker, where: Callable[[], str], raw: list[str], names_ok: _NameCache, *,
               owned: bool = False, known: Mapping[str, Any] | None = None
               ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A JSON array of distinct bundle names (Pulsar serialises a ``Set<String>``); returns the
    names and those of them not in ``known``.

    Names also in ``known`` (the report's ``lastStats``, already checked) are not checked again:
    a broker's ``bundles`` normally equals its ``lastStats`` keys, often in the same order (then
    one tuple comparison tells). ``where`` gives the array's JSON path, built only to report.
    """
    names = tuple(raw)
    if known is not None and len(names) == len(known) and names == tuple(known):
        return names, ()  # the keys of ``known``: valid and distinct
    distinct = set(names)
    if known is None:
        unchecked: tuple[str, ...] = names
    elif distinct <= known.keys():
        unchecked = ()
    else:
        unchecked = tuple(n for n in names if n not in known)
    if unchecked:
        path = where()
        names_ok.check(c, unchecked, lambda n: f"{path}[{names.index(n)}]", owned=owned)
    if len(distinct) != len(names):
        seen: set[str] = set()
        for i, n in enumerate(names):
            if n in seen:
                c.fail(f"{where()}[{i}]", "expected distinct bundle names (a set), this one repeats")
            seen.add(n)
    return names, unchecked


# --------------------------------------------------------------------------------------------
# the other sections
# --------------------------------------------------------------------------------------------
def _bundle_data(c: _Checker, data: Mapping[str, w.BundleData]) -> Mapping[str, BundleData]:
    out: dict[str, BundleData] = {}
    for name, bd in data.items():
        path = f"bundleData{key_path(name)}"
        c.bundle_name(path, name)
        out[name] = BundleData(_time_average(c, f"{path}.shortTermData", bd.shortTermData),
                               _time_average(c, f"{path}.longTermData", bd.longTermData),
                               bd.topics)
    return MappingProxyType(out)


def _time_average(c: _Checker, path: str, t: w.TimeAverageMessageData) -> TimeAverageMessageData:
    if t.numSamples > t.maxSamples:
        c.fail(f"{path}.numSamples", f"expected at most maxSamples ({t.maxSamples})", t.numSamples)
    return TimeAverageMessageData(t.maxSamples, t.numSamples, t.msgThroughputIn,
                                  t.msgThroughputOut, t.msgRateIn, t.msgRateOut)


def _recently_unloaded(c: _Checker, raw: Mapping[str, int] | Any) -> dict[str, int]:
    if raw is UNSET:
        return {}
    for name in raw:
        c.bundle_name(f"recentlyUnloaded{key_path(name)}", name)
    return dict(raw)


def _usage(r: w.ResourceUsage | None) -> ResourceUsage:
    return _NO_USAGE if r is None else ResourceUsage(r.usage, r.limit)


def _published_load(p: w.BrokerLoadData) -> PublishedLoad:
    """``BrokerLoadData`` (``extensions.data``): missing fields take the Java defaults; without
    ``weightedMaxEMA`` the cycle computes the features from the sample."""
    features: dict[str, float] = {k: v for k in ("maxResourceUsage", "weightedMaxEMA",
                                                 "msgThroughputEMA")
                                  if (v := getattr(p, k)) is not UNSET}
    data = BrokerLoadData(
        _usage(p.cpu), _usage(p.memory), _usage(p.directMemory), _usage(p.bandwidthIn),
        _usage(p.bandwidthOut), p.msgThroughputIn, p.msgThroughputOut, p.msgRateIn, p.msgRateOut,
        p.bundleCount, p.topics, updatedAt=p.updatedAt, reportedAt=p.reportedAt, **features)
    return PublishedLoad(data, p.weightedMaxEMA is not UNSET,
                         () if p.reconstructed is UNSET else tuple(p.reconstructed))


def _top_bundles(c: _Checker, path: str, p: w.TopBundlesLoadData) -> PublishedTopBundles:
    """``TopBundlesLoadData``: the top bundles in the published (ascending) order."""
    for i, t in enumerate(p.topBundlesLoadData):
        c.bundle_name(f"{path}.topBundlesLoadData[{i}].bundleName", t.bundleName)
    return PublishedTopBundles(tuple(TopBundle(t.bundleName, t.stats)
                                     for t in p.topBundlesLoadData),
                               () if p.reconstructed is UNSET else tuple(p.reconstructed))


def parse_broker_load_data(raw: object, file: str, path: str) -> PublishedLoad:
    """One ``brokerLoadData`` entry on its own (``path`` names it in errors)."""
    return _published_load(convert(raw, _BLD, file, path))


def parse_top_bundles(raw: object, file: str, path: str) -> PublishedTopBundles:
    """One ``topBundlesLoadData`` entry on its own (``path`` names it in errors)."""
    return _top_bundles(_Checker(file), path, convert(raw, _TOPS, file, path))


_BLD = Annotated[w.BrokerLoadData, msgspec.Meta(extra={"expected": "an object"})]
_TOPS = Annotated[w.TopBundlesLoadData, msgspec.Meta(extra={"expected": "an object"})]


def _observed(c: _Checker, raw: w.Observed | None | Any) -> Any:
    if raw is UNSET or raw is None:
        return None
    from lbctl.sources.snapshot_observed import observed_from_wire  # rare: imported when needed

    return observed_from_wire(c, raw, parse_captured_at)


# --------------------------------------------------------------------------------------------
# ClusterState → snapshot
# --------------------------------------------------------------------------------------------
def snapshot_to_dict(state: ClusterState) -> dict[str, Any]:
    """The snapshot v1 object for ``state``: plain dicts, lists and scalars (JSON/YAML ready).

    ``parse_snapshot(snapshot_to_dict(s), f) == s`` for every modelled field (``source`` aside);
    ``capturedAt`` is written as RFC 3339 UTC with milliseconds when there are any. Optional
    sections that are empty are left out.
    """
    out: dict[str, Any] = msgspec.to_builtins(snapshot_to_wire(state))
    return out


def snapshot_to_wire(state: ClusterState) -> w.Snapshot:
    """The snapshot records of ``state`` (what :func:`snapshot_to_dict` writes)."""
    from lbctl.sources.snapshot_observed import observed_to_wire

    return w.Snapshot(
        format=FORMAT,
        cluster=state.cluster,
        capturedAt=iso_time(state.captured_at),
        loadManager=state.load_manager,  # type: ignore[arg-type]  # checked when read
        config={k: _plain(v) for k, v in state.config.items()},
        dynamicConfig={k: _plain(v) for k, v in state.dynamic_config.items()} or UNSET,
        brokers={bid: broker_to_wire(local) for bid, local in state.brokers.items()},
        bundleData=UNSET if state.bundle_data is None else {
            name: w.BundleData(_tamd_to_wire(bd.shortTermData), _tamd_to_wire(bd.longTermData),
                               bd.topics)
            for name, bd in state.bundle_data.items()},
        namespaces={ns: w.BundlesData([format_position(b) for b in bounds], len(bounds) - 1)
                    for ns, bounds in state.namespaces.items()} or UNSET,
        topics=dict(state.topics) or UNSET,
        recentlyUnloaded=dict(state.recently_unloaded) or UNSET,
        brokerLoadData={b: _load_to_wire(p) for b, p in state.broker_load_data.items()} or UNSET,
        topBundlesLoadData={b: _tops_to_wire(p)
                            for b, p in state.top_bundles_load_data.items()} or UNSET,
        recentlyUnloadedBrokers=dict(state.recently_unloaded_brokers) or UNSET,
        observed=UNSET if state.observed is None else observed_to_wire(state.observed),
        resourceQuotas=UNSET if state.resource_quotas is None else state.resource_quotas,
        **_placement_to_wire(state),
    )


def broker_to_wire(local: LocalBrokerData) -> w.LocalBrokerData:
    """A ``LocalBrokerData`` as the load-report endpoint serialises it (modelled fields only)."""
    return w.LocalBrokerData(
        _to_wire(local.cpu), _to_wire(local.memory), _to_wire(local.directMemory),
        _to_wire(local.bandwidthIn), _to_wire(local.bandwidthOut),
        msgThroughputIn=local.msgThroughputIn, msgThroughputOut=local.msgThroughputOut,
        msgRateIn=local.msgRateIn, msgRateOut=local.msgRateOut, numTopics=local.numTopics,
        numBundles=local.numBundles, numConsumers=local.numConsumers,
        numProducers=local.numProducers, bundles=list(local.bundles),
        lastBundleGains=list(local.lastBundleGains),
        lastBundleLosses=list(local.lastBundleLosses), lastStats=dict(local.lastStats),
        lastUpdate=local.lastUpdate,
        brokerVersionString=UNSET if local.brokerVersionString is None
        else local.brokerVersionString,
        loadManagerClassName=UNSET if local.loadManagerClassName is None
        else local.loadManagerClassName,
        persistentTopicsEnabled=local.persistentTopicsEnabled,
        nonPersistentTopicsEnabled=local.nonPersistentTopicsEnabled,
    )


def _to_wire(r: ResourceUsage) -> w.ResourceUsage:
    return w.ResourceUsage(r.usage, r.limit)


def _load_to_wire(p: PublishedLoad) -> w.BrokerLoadData:
    d = p.data
    features: dict[str, Any] = {}
    if p.has_features:  # else re-read, it must again be completed from the sample
        features = {"maxResourceUsage": d.maxResourceUsage, "weightedMaxEMA": d.weightedMaxEMA,
                    "msgThroughputEMA": d.msgThroughputEMA}
    return w.BrokerLoadData(
        _to_wire(d.cpu), _to_wire(d.memory), _to_wire(d.directMemory), _to_wire(d.bandwidthIn),
        _to_wire(d.bandwidthOut), msgThroughputIn=d.msgThroughputIn, msgThroughputOut=d.msgThroughputOut,
        msgRateIn=d.msgRateIn, msgRateOut=d.msgRateOut, bundleCount=d.bundleCount,
        topics=d.topics, updatedAt=d.updatedAt, reportedAt=d.reportedAt,
        reconstructed=list(p.reconstructed) or UNSET, **features)


def _tops_to_wire(p: PublishedTopBundles) -> w.TopBundlesLoadData:
    return w.TopBundlesLoadData([w.TopBundle(t.bundleName, t.stats) for t in p.bundles],
                                list(p.reconstructed) or UNSET)


def _tamd_to_wire(t: TimeAverageMessageData) -> w.TimeAverageMessageData:
    return w.TimeAverageMessageData(t.maxSamples, t.numSamples, t.msgThroughputIn,
                                    t.msgThroughputOut, t.msgRateIn, t.msgRateOut)


def _plain(value: Any) -> Any:
    """Mappings → dicts and tuples/sets → lists, recursively (for YAML's safe dumper)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    return value


# --------------------------------------------------------------------------------------------
# placement inputs besides load: active brokers, cluster policies, namespace topic lists
# (documented in docs/snapshot-policies.md)
# --------------------------------------------------------------------------------------------
def _placement(c: _Checker, doc: w.Snapshot,
               brokers: Mapping[str, LocalBrokerData]) -> dict[str, Any]:
    """``availableBrokers``, ``policies`` and ``namespaceTopics`` as :class:`ClusterState`
    keyword arguments (absent sections are left to their defaults: not captured)."""
    out: dict[str, Any] = {}
    if doc.availableBrokers is not UNSET:
        out["available_brokers"] = _available_brokers(c, doc.availableBrokers, brokers)
    if doc.policies is not UNSET:
        out["policies"] = policies_from_wire(c, doc.policies)
    if doc.namespaceTopics is not UNSET:
        out["namespace_topics"] = MappingProxyType(_namespace_topics(c, doc.namespaceTopics))
    return out


def _available_brokers(c: _Checker, names: list[str],
                       brokers: Mapping[str, LocalBrokerData]) -> tuple[str, ...]:
    """``GET /admin/v2/brokers``: the active broker ids; every broker with a report among them."""
    seen: set[str] = set()
    for i, b in enumerate(names):
        if b in seen:
            c.fail(f"availableBrokers[{i}]", "expected distinct broker ids, this one repeats")
        seen.add(b)
    for b in brokers:
        if b not in seen:
            c.fail("availableBrokers", "expected every broker of brokers to be listed (Pulsar "
                   f"drops the report of a broker that is not active); missing {json.dumps(b)}")
    return tuple(names)


def _regexes(c: _Checker, path: str, items: list[str]) -> tuple[str, ...]:
    from lbctl.model.policies import regex_error

    for i, p in enumerate(items):
        problem = regex_error(p)
        if problem is not None:
            c.fail(f"{path}[{i}]", f"expected a valid regular expression ({problem})", p)
    return tuple(items)


def _int_parameter(c: _Checker, path: str, params: Mapping[str, Any], key: str) -> int:
    """A ``min_available`` parameter: ``Integer.parseInt`` of its string value."""
    value = params.get(key, _MISSING)
    if value is _MISSING:
        c.fail(f"{path}.{key}", "required key is missing (expected an integer, as a string)")
    text = str(value) if type(value) in (str, int) else ""
    if re.fullmatch(r"[+-]?[0-9]+", text) is None or not -(2**31) <= int(text) < 2**31:
        c.fail(f"{path}.{key}", "expected an integer (Integer.parseInt)", value)
    return int(text)


def _isolation_policy(c: _Checker, path: str, name: str, data: w.IsolationPolicy) -> Any:
    """``NamespaceIsolationData`` checked as its ``validate()`` does (namespaces and primary not
    empty, regexes valid, a ``min_available`` auto-failover policy with ``min_limit`` and
    ``usage_threshold``)."""
    from lbctl.model.policies import MIN_AVAILABLE, IsolationPolicy

    namespaces = _regexes(c, f"{path}.namespaces", data.namespaces)
    if not namespaces:
        c.fail(f"{path}.namespaces", "expected at least one namespace regex")
    primary = _regexes(c, f"{path}.primary", data.primary)
    if not primary:
        c.fail(f"{path}.primary", "expected at least one primary broker regex")
    secondary = _regexes(c, f"{path}.secondary", data.secondary or [])
    afp_path = f"{path}.auto_failover_policy"
    afp = data.auto_failover_policy
    kind = afp.policy_type if afp.policy_type is not UNSET else afp.policyType
    if kind != MIN_AVAILABLE:
        c.fail(f"{afp_path}.policy_type", f'expected "{MIN_AVAILABLE}"', None)
    params = afp.parameters
    return IsolationPolicy(
        namespaces, primary, secondary,
        _int_parameter(c, f"{afp_path}.parameters", params, "min_limit"),
        _int_parameter(c, f"{afp_path}.parameters", params, "usage_threshold"), name)


def policies_from_wire(c: _Checker, data: w.Policies) -> Any:
    """``policies``: isolation policies (``namespaceIsolationPolicies``, in the served order),
    anti-affinity groups (namespace → group) and failure domains (domain → ``{"brokers": [...]}``)."""
    from lbctl.model.policies import ClusterPolicies

    isolation = tuple(
        _isolation_policy(c, f"policies.namespaceIsolationPolicies{key_path(n)}", n, p)
        for n, p in data.namespaceIsolationPolicies.items())
    domains = {name: tuple(d.brokers) for name, d in data.failureDomains.items()}
    return ClusterPolicies(isolation, MappingProxyType(dict(data.antiAffinityGroups)),
                           MappingProxyType(domains))


def _namespace_topics(c: _Checker, data: Mapping[str, w.NamespaceTopics]) -> dict[str, Any]:
    """``namespaceTopics``: per namespace, its persistent and non-persistent topics and its
    partitioned topics with their partition counts, every name of that namespace."""
    from lbctl.model.bundle import topic_namespace
    from lbctl.model.cluster import NamespaceTopics

    out: dict[str, Any] = {}
    for ns, lists in data.items():
        base = f"namespaceTopics{key_path(ns)}"
        persistent = _topic_names(c, ns, "persistent", lists.persistent, f"{base}.persistent")
        non_persistent = _topic_names(c, ns, "non-persistent", lists.nonPersistent,
                                      f"{base}.nonPersistent")
        for t in lists.partitioned:
            if _TOPIC_RE.search(t) is None or topic_namespace(t) != ns:
                c.fail(f"{base}.partitioned{key_path(t)}",
                       f"expected a full topic name of {ns} as the key")
        out[ns] = NamespaceTopics(persistent, non_persistent,
                                  MappingProxyType(dict(lists.partitioned)))
    return out


def _topic_names(c: _Checker, ns: str, domain: str, items: list[str],
                 path: str) -> tuple[str, ...]:
    from lbctl.model.bundle import topic_namespace

    for i, t in enumerate(items):
        if (not t.startswith(domain + "://") or _TOPIC_RE.search(t) is None
                or topic_namespace(t) != ns):
            c.fail(f"{path}[{i}]", f"expected a {domain} topic of {ns} ({domain}://{ns}/…)", t)
    return tuple(items)


def _placement_to_wire(state: ClusterState) -> dict[str, Any]:
    """The sections :func:`_placement` reads, for the ones ``state`` has."""
    out: dict[str, Any] = {}
    if state.available_brokers is not None:
        out["availableBrokers"] = list(state.available_brokers)
    if state.policies is not None:
        p = state.policies
        out["policies"] = w.Policies(
            namespaceIsolationPolicies={
                (pol.name or f"policy-{i}"): w.IsolationPolicy(
                    namespaces=list(pol.namespaces), primary=list(pol.primary),
                    secondary=list(pol.secondary),
                    auto_failover_policy=w.AutoFailoverPolicy(
                        policy_type="min_available",
                        parameters={"min_limit": str(pol.min_limit),
                                    "usage_threshold": str(pol.usage_threshold)}))
                for i, pol in enumerate(p.isolation)},
            antiAffinityGroups=dict(p.anti_affinity),
            failureDomains={d: w.FailureDomain(list(b)) for d, b in p.failure_domains.items()})
    if state.namespace_topics:
        out["namespaceTopics"] = {
            ns: w.NamespaceTopics(list(t.persistent), list(t.non_persistent), dict(t.partitioned))
            for ns, t in state.namespace_topics.items()}
    return out
