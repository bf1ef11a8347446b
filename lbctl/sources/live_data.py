"""The pieces of a live read, shared by the modular and the extensible readers: what a read gives
back, how admin-API JSON is cleaned (settings kept, topic stats flattened, reads at different
moments reconciled), and how the parts are decoded into the snapshot's records
(:func:`live_snapshot`) — each part into its own declared type, so a live state and an exported
file of it are read by the same code. Pure data and parsing; no request is sent here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from lbctl.admin.errors import AdminError
from lbctl.config import SETTINGS_BY_NAME, Settings, resolve
from lbctl.errors import ConfigError, SnapshotError
from lbctl.model.bundle import BundleName, BundleNameError
from lbctl.model.cluster import ClusterState
from lbctl.model.wire import snapshot as w

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class BrokerFailure:
    """A broker (or namespace) whose data could not be read, with the one-line error."""

    broker: str
    error: str
    exit_code: int


@dataclass
class LiveRead:
    """The result of one read: the state, the snapshot records it came from, and what went
    wrong."""

    state: ClusterState
    snapshot: w.Snapshot
    failures: list[BrokerFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: bundle → broker from every broker's ``ownedNamespaces`` when the reader was asked for it
    #: (:mod:`lbctl.sources.live_ownership`): ownership now, not as the load reports last had it
    #: (the reports' owner for a broker that did not answer: ``live_ownership.merged``); None
    #: when not asked for or no broker answered
    owners: dict[str, str] | None = None


def live_snapshot(name: str, *, cluster: str, captured_at: int, load_manager: str,
                  config: dict[str, Any], brokers: dict[str, Any],
                  sections: dict[str, Any]) -> w.Snapshot:
    """The snapshot records of one live read: the admin API's JSON (and the objects rebuilt from
    it) decoded part by part into the declared types of :mod:`lbctl.model.wire.snapshot`, with
    a snapshot file's checks and messages (``name`` in place of the file). ``sections``: the
    optional sections by their snapshot key (``namespaces``, ``topics``, ``availableBrokers``,
    ``policies``, ``namespaceTopics``, ``brokerLoadData``, ``topBundlesLoadData``)."""
    from lbctl.sources.snapshot_schema import convert

    fields = {f.name: f.type for f in msgspec.structs.fields(w.Snapshot)}
    parts: dict[str, Any] = {
        key: convert(value, _section(fields[key]), name, key) for key, value in sections.items()}
    return w.Snapshot(
        format=w.FORMAT, cluster=cluster, capturedAt=captured_at,
        loadManager=load_manager,  # type: ignore[arg-type]  # one of the two, by discovery
        config=convert(config, w.Config, name, "config"),
        brokers=convert(brokers, w.Brokers, name, "brokers"), **parts)


def _section(tp: Any) -> Any:
    """A section's declared type without the ``UNSET`` of an optional field."""
    args = [a for a in getattr(tp, "__args__", ()) if a is not msgspec.UnsetType]
    return args[0] if len(args) == 1 else tp


@dataclass
class Discovery:
    cluster: str
    brokers: list[str]
    config: dict[str, Any]
    load_manager: str
    #: the load-balancer settings stored with ``update-dynamic-config`` (:func:`lb_settings` of
    #: ``GET /admin/v2/brokers/configuration/values``), when the discovery asked for them
    dynamic: dict[str, Any] = field(default_factory=dict)
    #: what that read leaves to say: the request failed, or a stored value cannot be parsed
    dynamic_notes: list[str] = field(default_factory=list)


def lb_settings(runtime: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The load-balancer settings lbctl declares, from a runtime configuration (strings)."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in runtime.items():
        setting = SETTINGS_BY_NAME.get(key)
        if setting is None or value is None:
            continue
        if isinstance(value, str) and value == "" and setting.type not in ("list", "set"):
            continue
        try:
            setting.parse(value)
        except ConfigError:
            dropped.append(key)
            continue
        kept[key] = value if not isinstance(value, dict) else str(value)
    return kept, dropped


def live_settings(runtime: Mapping[str, Any],
                  dynamic: Mapping[str, Any] | None = None) -> Settings:
    """The settings of a runtime configuration (or a snapshot's ``config``) and the values stored
    with ``update-dynamic-config`` beside it (:attr:`Discovery.dynamic`, a snapshot's
    ``dynamicConfig``), resolved by the one function that layers them
    (:func:`lbctl.config.resolve`: the dynamic value wins and says so) — what every reader of a
    live read's settings uses (the extensible reader's weights, ``monitor-brokers``, the
    sandbox's leader), so that none resolves them without the dynamic layer. Values that cannot
    be parsed are left out (:func:`lb_settings`), as a live read leaves them out of a snapshot."""
    return resolve(lb_settings(dict(runtime))[0],
                   dynamic_config=lb_settings(dict(dynamic or {}))[0])


def flatten_topics(nested: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``/broker-stats/topics`` (namespace → bundle → persistent|non-persistent → topic → stats)
    → full topic name → the rates a snapshot keeps."""
    out: dict[str, dict[str, Any]] = {}
    for bundles in nested.values():
        if not isinstance(bundles, dict):
            continue
        for domains in bundles.values():
            if not isinstance(domains, dict):
                continue
            for topics in domains.values():
                if not isinstance(topics, dict):
                    continue
                for name, st in topics.items():
                    if not isinstance(st, dict):
                        continue
                    subs = st.get("subscriptions") or {}
                    consumers = sum(len(s.get("consumers") or []) for s in subs.values()
                                    if isinstance(s, dict))
                    out[name] = {
                        "msgRateIn": _rate(st.get("msgRateIn")),
                        "msgRateOut": _rate(st.get("msgRateOut")),
                        "msgThroughputIn": _rate(st.get("msgThroughputIn")),
                        "msgThroughputOut": _rate(st.get("msgThroughputOut")),
                        "producerCount": _count(st.get("producerCount",
                                                       len(st.get("publishers") or []))),
                        "consumerCount": consumers,
                    }
    return out


def _rate(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 else 0.0


def _count(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


def _stats_of(report: dict[str, Any]) -> dict[str, Any]:
    stats = report.get("lastStats")
    if not isinstance(stats, dict):
        stats = report.get("bundleStats")
    return stats if isinstance(stats, dict) else {}


def reconcile(brokers: dict[str, Any], namespaces: dict[str, Any]) -> list[str]:
    """Resolve what reads at different moments disagree on: a bundle reported by two brokers
    stays with the report updated last; so does one of two overlapping bundles of a namespace
    whose reported bundles no longer match its boundaries (a split between two reports:
    :func:`_overlapped`); a namespace whose bundles still do not match keeps the bundles and drops
    the boundaries. Returns the warnings; ``brokers`` and ``namespaces`` are changed in place.

    Linear in the number of bundles: each namespace's boundaries are indexed once (position of
    each boundary) and a broker's dropped bundles are removed in one pass per broker; only the
    namespaces that do not match are looked at again."""
    warnings: list[str] = []
    owner: dict[str, str] = {}
    dropped: dict[str, set[str]] = {}
    for bid, rep in sorted(brokers.items(), key=lambda kv: _last_update(kv[1])):
        names = list(_stats_of(rep)) + [b for b in rep.get("bundles") or [] if isinstance(b, str)]
        for name in dict.fromkeys(names):
            prev = owner.get(name)
            if prev is not None and prev != bid:
                dropped.setdefault(prev, set()).add(name)
                warnings.append(f"bundle {name} reported by {prev} and {bid}; kept with {bid} "
                                "(newer report)")
            owner[name] = bid
    for prev, gone in dropped.items():
        _drop_bundles(brokers[prev], gone)
    if not namespaces:  # (monitor-brokers: no boundaries to compare the bundles with)
        return warnings
    index: dict[str, dict[Any, int] | None] = {}
    stale: set[str] = set()

    def mismatch(name: str) -> str | None:
        """The namespace of ``name`` when it is not one of its namespace's current bundles."""
        try:
            bn = BundleName.parse(name)
        except BundleNameError:
            return None
        ns = bn.namespace
        if ns not in index:
            data = namespaces.get(ns)
            bounds = data.get("boundaries") if isinstance(data, dict) else None
            index[ns] = ({b: i for i, b in enumerate(bounds) if isinstance(b, str)}
                         if isinstance(bounds, list) else None)
        at = index[ns]
        if at is None or ns in stale:
            return None
        lo, hi = name.rsplit("/", 1)[1].split("_")
        i, j = at.get(lo), at.get(hi)
        return ns if i is None or j is None or j != i + 1 else None

    for name in owner:
        ns = mismatch(name)
        if ns is not None:
            stale.add(ns)
    if not stale:
        return warnings
    suspects = {n: b for n, b in owner.items() if n.rpartition("/")[0] in stale}
    gone_by: dict[str, set[str]] = {}
    for lost, kept in _overlapped(brokers, suspects):
        gone_by.setdefault(owner[lost], set()).add(lost)
        warnings.append(f"bundle {lost} reported by {owner[lost]} overlaps {kept} reported by "
                        f"{owner[kept]}; kept {kept} (newer report, a split in between)")
        del owner[lost]
    for prev, gone_names in gone_by.items():
        _drop_bundles(brokers[prev], gone_names)
    checked, stale = stale, set()
    for name in owner:
        if name.rpartition("/")[0] not in checked:
            continue
        ns = mismatch(name)
        if ns is not None:
            stale.add(ns)
            del namespaces[ns]
            warnings.append(f"namespace {ns}: reported bundle {name} is not one of its "
                            "current bundles (changed while reading); boundaries left out")
    return warnings


def _overlapped(brokers: dict[str, Any], owner: dict[str, str]) -> list[tuple[str, str]]:
    """``(dropped, kept)`` pairs: a bundle whose range overlaps another's of the same namespace
    (a split between two reports: one broker's report, written before it, still lists the
    parent; another's, written after, a child) gives way to the one in the report updated last,
    as a bundle two brokers report does. Reports of one age are left as they are (the snapshot's
    check then names the overlap). Pulsar's leader reads such stale reports as they are
    (ModularLoadManagerImpl.updateBundleData takes every broker's lastStats); lbctl's model holds
    a namespace's bundles disjoint, so a live read (and the sandbox's leader, at ``--speed 60``
    with a splitting scenario) failed with "expected bundles of one namespace not to overlap"
    until the older report was written again.

    One sort per namespace: ranges by (lower, upper), each compared with the kept range reaching
    furthest so far."""
    by_ns: dict[str, list[tuple[int, int, str]]] = {}
    for name in owner:
        ns, _, tail = name.rpartition("/")
        lo, _, hi = tail.partition("_")
        try:
            by_ns.setdefault(ns, []).append((int(lo, 16), int(hi, 16), name))
        except ValueError:
            continue  # not a bundle name: the snapshot's check names it
    out: list[tuple[str, str]] = []
    for ranges in by_ns.values():
        ranges.sort()
        last: tuple[int, int, str] | None = None
        for r in ranges:
            if last is None or r[0] >= last[1]:
                last = r if last is None or r[1] > last[1] else last
                continue
            age_last = _last_update(brokers[owner[last[2]]])
            age_r = _last_update(brokers[owner[r[2]]])
            if age_last == age_r:
                last = r if r[1] > last[1] else last
                continue
            gone, kept = (last, r) if age_last < age_r else (r, last)
            out.append((gone[2], kept[2]))
            last = kept
    return out


def _last_update(rep: dict[str, Any]) -> int:
    v = rep.get("lastUpdate")
    return v if isinstance(v, int) else 0


def _drop_bundles(rep: dict[str, Any], names: set[str]) -> None:
    for key in ("lastStats", "bundleStats"):
        st = rep.get(key)
        if isinstance(st, dict):
            for name in names:
                st.pop(name, None)
    if isinstance(rep.get("bundles"), list):
        rep["bundles"] = [b for b in rep["bundles"] if b not in names]


def is_simple_report(raw: object) -> bool:
    """A ``SimpleLoadManagerImpl`` ``LoadReport`` rather than a ``LocalBrokerData``: its
    ``loadReportType``, else (older brokers) an ``allocated…`` field — ``BrokerMonitor`` looks for
    the word "allocated" in the JSON text; lbctl looks at the keys only, so that a bundle or topic
    named "allocated" does not count."""
    if not isinstance(raw, dict):
        return False
    kind = raw.get("loadReportType")
    if isinstance(kind, str):
        return kind == "LoadReport"
    return any(isinstance(k, str) and k.startswith("allocated") for k in raw)


def parse_simple_report(raw: dict[str, Any]) -> Any:
    """A ``LoadReport`` as :class:`~lbctl.model.loadreport.SimpleLoadReport`; fields that are
    missing or not numbers read as Java's defaults (0)."""
    from lbctl.model.load import ResourceUsage
    from lbctl.model.loadreport import SimpleLoadReport

    usage = raw.get("systemResourceUsage")
    usage = usage if isinstance(usage, dict) else raw

    def num(obj: Any, key: str) -> float:
        v = obj.get(key) if isinstance(obj, dict) else None
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0

    def res(key: str) -> ResourceUsage:
        ru = usage.get(key)
        return ResourceUsage(num(ru, "usage"), num(ru, "limit"))

    def size(key: str) -> int:
        v = raw.get(key)
        return len(v) if isinstance(v, list | dict) else 0

    return SimpleLoadReport(
        res("cpu"), res("memory"), res("directMemory"), res("bandwidthIn"), res("bandwidthOut"),
        num(raw, "msgRateIn"), num(raw, "msgRateOut"), _count(raw.get("numTopics")),
        _count(raw.get("numBundles")), _count(raw.get("numConsumers")),
        _count(raw.get("numProducers")), size("bundleGains"), size("bundleLosses"),
        num(raw, "allocatedCPU"), num(raw, "allocatedMemory"), num(raw, "allocatedBandwidthIn"),
        num(raw, "allocatedBandwidthOut"), num(raw, "allocatedMsgRateIn"),
        num(raw, "allocatedMsgRateOut"), raw.get("overLoaded") is True,
        _count(raw.get("timestamp", raw.get("lastUpdate"))))


def parse_reports(cluster: str, reports: dict[str, Any]) -> dict[str, Any]:
    """Broker → ``LocalBrokerData`` (decoded and validated as a snapshot's brokers are), a
    ``SimpleLoadReport`` for a broker on ``SimpleLoadManagerImpl``, or its error text."""
    from lbctl.sources.snapshot_schema import state_from_wire

    out: dict[str, Any] = {b: str(r) for b, r in reports.items() if isinstance(r, AdminError)}
    out.update({b: parse_simple_report(r) for b, r in reports.items() if is_simple_report(r)})
    good = {b: r for b, r in reports.items()
            if not isinstance(r, AdminError) and not is_simple_report(r)}
    reconcile(good, {})

    def parse(brokers: dict[str, Any]) -> dict[str, Any]:
        snap = live_snapshot("load-report", cluster=cluster or "?", captured_at=0,
                             load_manager=w.MODULAR, config={}, brokers=brokers, sections={})
        return dict(state_from_wire(snap, "load-report").brokers)

    try:
        out.update(parse(good))
    except SnapshotError:
        for b, r in good.items():  # find the malformed ones; keep the others
            try:
                out.update(parse({b: r}))
            except SnapshotError as e:
                out[b] = f"malformed load report: {str(e).split(': ', 1)[-1]}"
    return out
