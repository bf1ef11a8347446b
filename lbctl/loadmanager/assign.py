"""Where unowned bundles would be assigned now (``lbctl assign-preview``): the leader's answer to
the lookups that follow a namespace's creation, a broker's stop, or a topic's first use.

* **modular** (``ModularLoadManagerImpl.selectBrokerForAssignment``, Pulsar master
  009a9bf2cdffeb2e67b0d64a3e9cf95257e551fa): ``selectBroker`` — the namespace policies, the
  max-topics, anti-affinity and distribute-evenly filters, the filter pipeline, the placement
  strategy (round robin for shedding-excluded namespaces), the overload re-check — exactly as
  :meth:`~lbctl.loadmanager.modular.ModularLoadManager.select_broker` runs it; then
  ``preallocateBundle``: the bundle's data (its stored ``BundleData``, else
  ``ModularLoadManagerImpl.defaultStats``) joins the chosen broker's
  ``preallocatedBundleData`` and its namespace's ranges on that broker, so the next lookup sees
  it (LeastLongTermMessageRate scores preallocated bundles; max topics and distribute-evenly
  count them). A bundle already owned is answered with its owner (the lookup finds it).
* **simple** (``SimpleLoadManagerImpl.getLeastLoadedBroker``): its ranking of the brokers with
  their resource quotas, ``findBrokerForPlacement`` (or the weighted random pick), each pick
  preallocated (:func:`lbctl.loadmanager.simple.lookups`).
* **extensible** (``ExtensibleLoadManagerImpl.assign`` → ``selectAsync``): the broker filters over
  the available brokers, then its LeastResourceUsageWithWeight; nothing is preallocated, so
  successive lookups see the same published loads (as Pulsar's do until the brokers report
  again).

A stopped broker is gone from the available brokers (its lock is released) and from the leader's
load data, as ``updateAll`` finds it; its bundles (the heartbeat and SLA-monitor namespaces aside,
which follow the broker) are looked up heaviest first, and a new namespace's bundles in range
order: the order of the lookups is the clients', lbctl's choice here. The leader's own
``preallocatedBundleToBroker`` of earlier lookups is not in a snapshot: it starts empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from types import MappingProxyType
from typing import TypeVar

from msgspec import Struct

from lbctl.config import Settings
from lbctl.errors import UsageError
from lbctl.explain.words import text
from lbctl.loadmanager.loaddata import build_load_data, update_bundle_data
from lbctl.loadmanager.select import Options, extensible_load_manager, modular_load_manager
from lbctl.model.bundle import (
    BundleName,
    BundleNameError,
    bundle_name,
    default_boundaries,
    is_system_service_namespace,
    locate,
    namespace_of,
    ranges_from_boundaries,
    topic_hash,
    topic_namespace,
    validate_boundaries,
)
from lbctl.model.cluster import EXTENSIBLE, SIMPLE, ClusterState
from lbctl.model.load import BundleData
from lbctl.model.loaddata import LoadData
from lbctl.records import replace

NAMESPACE, STOPPED, TOPIC = "namespace", "broker-stopped", "topic"
T = TypeVar("T")


class Assignment(Struct, frozen=True):
    """One lookup's answer: the broker that would own ``bundle`` (``None``: no broker, ``why``
    says why), ``owner`` when the bundle is owned already (the lookup returns it), the candidates
    left after the filters and the score of the pick (the strategy's own figure)."""

    bundle: str
    broker: str | None
    why: str = ""
    owner: str | None = None
    candidates: tuple[str, ...] = ()
    score: float | None = None


class AssignPreview(Struct, frozen=True):
    """The lookups of one request (``kind`` ``namespace``, ``broker-stopped`` or ``topic``, of
    ``subject``) in the order they are made, on ``state`` with ``settings``."""

    state: ClusterState
    settings: Settings
    kind: str
    subject: str
    placement: str
    assignments: tuple[Assignment, ...]
    stopped: str | None = None
    warnings: tuple[str, ...] = ()


# --- the bundles to look up ---------------------------------------------------------------------
def known_boundaries(state: ClusterState, namespace: str) -> tuple[int, ...] | None:
    """The namespace's boundaries: declared in the snapshot, else those of the bundles its
    brokers report when they cover the whole hash range; ``None``: a namespace not seen."""
    bounds = state.namespaces.get(namespace)
    if bounds is not None:
        return tuple(bounds)
    found: set[tuple[int, int]] = set()
    for b in owners_of(state):
        if namespace_of(b) == namespace:
            with suppress(BundleNameError):
                r = BundleName.parse(b).range
                found.add((r.lower, r.upper))
    ranges = sorted(found)
    if not ranges:
        return None
    cuts = [ranges[0][0]] + [u for _, u in ranges]
    if validate_boundaries(cuts) is None and all(
            a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False)):
        return tuple(cuts)
    raise UsageError(f"{namespace}: its bundles' ranges do not cover the hash range and the "
                     "snapshot declares no boundaries (namespaces section)")


def namespace_bundles(state: ClusterState, settings: Settings, namespace: str,
                      count: int | None) -> list[str]:
    """A namespace's bundles: its boundaries when the snapshot knows it (``--bundles`` must then
    agree), else ``count`` (or ``defaultNumberOfNamespaceBundles``) equal ranges as
    ``NamespaceBundleFactory`` cuts a new namespace, in range order."""
    bounds = known_boundaries(state, namespace)
    if bounds is not None:
        if count is not None and count != len(bounds) - 1:
            raise UsageError(f"{namespace} exists with {len(bounds) - 1} bundles: --bundles "
                             f"{count} does not apply")
        return [bundle_name(namespace, r.lower, r.upper) for r in ranges_from_boundaries(bounds)]
    n = count if count is not None else int(settings["defaultNumberOfNamespaceBundles"])
    return [bundle_name(namespace, r.lower, r.upper)
            for r in ranges_from_boundaries(default_boundaries(n))]


def stopped_bundles(state: ClusterState, broker: str) -> list[str]:
    """The bundles a stopped broker leaves unowned, heaviest first (throughput, message rate,
    name); its heartbeat and SLA-monitor namespaces follow the broker and are not looked up."""
    if broker not in state.brokers and broker not in state.available():
        from lbctl.config import closest

        hint = closest(broker, state.brokers)
        raise UsageError(f"{broker} is not an active broker of {state.cluster}"
                         + (f" (did you mean {hint}?)" if hint else ""))
    stats = {t.bundleName: t.stats for t in (
        state.top_bundles_load_data[broker].bundles if broker in state.top_bundles_load_data
        else ())}
    local = state.brokers.get(broker)
    if local is not None:
        stats.update(local.lastStats)
    names = [b for b, owner in owners_of(state).items() if owner == broker]
    out = [b for b in names if b.count("/") >= 2
           and not is_system_service_namespace(namespace_of(b))]

    def weight(b: str) -> tuple[float, float, str]:
        st = stats.get(b)
        return (-(st.throughput if st else 0.0), -(st.msg_rate if st else 0.0), b)

    return sorted(out, key=weight)


def topic_bundle(state: ClusterState, settings: Settings, topic: str) -> str:
    """The bundle whose range holds the topic's hash: of the namespace's boundaries when known,
    else of a new namespace's ``defaultNumberOfNamespaceBundles`` ranges."""
    try:
        namespace = topic_namespace(topic)
        BundleName.parse(f"{namespace}/0x00000000_0xffffffff")
    except (ValueError, BundleNameError):
        raise UsageError(f"--topic expects persistent://tenant/namespace/topic, got {topic!r}") \
            from None
    bounds = known_boundaries(state, namespace) or default_boundaries(
        int(settings["defaultNumberOfNamespaceBundles"]))
    r = locate(bounds, topic_hash(topic))
    return bundle_name(namespace, r.lower, r.upper)


# --- the lookups ---------------------------------------------------------------------------------
def preview(state: ClusterState, settings: Settings, opts: Options, *, kind: str, subject: str,
            bundles: Sequence[str], stopped: str | None = None,
            warnings: Sequence[str] = ()) -> AssignPreview:
    """Each bundle's lookup in turn (module docstring); ``stopped``: the broker gone."""
    if stopped is not None:
        state = without_broker(state, stopped)
    owners = owners_of(state)
    if state.load_manager == EXTENSIBLE:
        picks, placement = extensible_assignments(state, settings, bundles, opts, owners)
    elif state.load_manager == SIMPLE:
        picks, placement = simple_assignments(state, settings, bundles, opts, owners)
    else:
        picks, placement = modular_assignments(state, settings, bundles, opts, owners)
    return AssignPreview(state, settings, kind, subject, placement, tuple(picks), stopped,
                         tuple(warnings))


def owners_of(state: ClusterState) -> dict[str, str]:
    """Bundle → owner: the brokers' reports, and on the extensible load manager the brokers that
    publish a bundle among their top bundles (its ``topBundlesLoadData``)."""
    owners = {t.bundleName: b for b, p in state.top_bundles_load_data.items() for t in p.bundles}
    owners.update(state.owners())
    return owners


def without_broker(state: ClusterState, broker: str) -> ClusterState:
    """The state once ``broker`` stopped: no load report, not among the available brokers."""
    def others(m: Mapping[str, T]) -> Mapping[str, T]:
        return MappingProxyType({b: v for b, v in m.items() if b != broker})

    available = (None if state.available_brokers is None
                 else tuple(b for b in state.available_brokers if b != broker))
    return replace(state, brokers=others(state.brokers), available_brokers=available,
                   broker_load_data=others(state.broker_load_data),
                   top_bundles_load_data=others(state.top_bundles_load_data))


def modular_assignments(state: ClusterState, settings: Settings, bundles: Sequence[str],
                        opts: Options, owners: dict[str, str] | None = None
                        ) -> tuple[list[Assignment], str]:
    """``selectBrokerForAssignment`` for each bundle in turn, each pick preallocated."""
    lm = modular_load_manager(settings, opts, check_splits=False)
    owners = owners if owners is not None else state.owners()
    if not state.brokers:
        return [Assignment(b, None, "no other broker to take it") for b in bundles], \
            lm.placement.name
    bundle_data = update_bundle_data(state)
    load = build_load_data(state, bundle_data)
    active = frozenset(state.brokers)
    pmem = lm.placement.on_active_brokers_change(lm.placement.initial_memory(), active)
    rmem = lm.round_robin.on_active_brokers_change(lm.round_robin.initial_memory(), active)
    out: list[Assignment] = []
    for b in bundles:
        owner = owners.get(b)
        if owner is not None:
            out.append(Assignment(b, owner, "owned: the lookup returns its owner", owner))
            continue
        trace, pmem, rmem = lm.select_broker(b, load, settings, pmem, rmem)
        pick = trace.recheck if trace.recheck is not None and trace.recheck.broker else \
            trace.decision
        cands = tuple(pick.candidates) if pick is not None else ()
        if trace.broker is None:
            out.append(Assignment(b, None, text(trace.why) or "placement found no broker",
                                  candidates=cands))
            continue
        score = pick.scores.get(trace.broker) if pick is not None else None
        out.append(Assignment(b, trace.broker, text(trace.why) or text(pick.why if pick else None),
                              candidates=cands, score=score))
        load = preallocate(load, trace.broker, b, bundle_data.get(b) or BundleData.new())
    return out, lm.placement.name


def preallocate(load: LoadData, broker: str, bundle: str, data: BundleData) -> LoadData:
    """``preallocateBundle``: ``brokerData.getPreallocatedBundleData().put(bundle, data)`` (the
    filters read the broker's namespaces from its owned and preallocated bundles, so
    ``brokerToNamespaceToBundleRange.add`` follows from it)."""
    brokers = dict(load.brokers)
    bd = brokers[broker]
    brokers[broker] = replace(bd, preallocated=MappingProxyType({**bd.preallocated, bundle: data}))
    return replace(load, brokers=MappingProxyType(brokers))


def extensible_assignments(state: ClusterState, settings: Settings, bundles: Sequence[str],
                           opts: Options, owners: dict[str, str] | None = None
                           ) -> tuple[list[Assignment], str]:
    """``ExtensibleLoadManagerImpl.selectAsync`` for each bundle (no exclusion, no
    preallocation)."""
    from lbctl.loadmanager.extensible import _lookups, _store
    from lbctl.model.cycle import ExtensibleMemory
    from lbctl.strategies.placement.broker_filters import FilterContext

    ext = extensible_load_manager(opts)
    owners = owners if owners is not None else state.owners()
    store, _, _ = _store(state, settings, ExtensibleMemory())
    lookups = _lookups(state)
    fctx = FilterContext(settings, store)
    out: list[Assignment] = []
    for b in bundles:
        owner = owners.get(b)
        if owner is not None:
            out.append(Assignment(b, owner, "owned: the lookup returns its owner", owner))
            continue
        d = ext._preview(b, "", lookups, fctx, store, settings)
        out.append(Assignment(
            b, d.broker, text(d.why) or ("" if d.broker else "no candidate broker"),
            candidates=tuple(d.candidates),
            score=d.scores.get(d.broker) if d.broker else None))
    return out, "LeastResourceUsageWithWeight"


def simple_assignments(state: ClusterState, settings: Settings, bundles: Sequence[str],
                       opts: Options, owners: dict[str, str]) -> tuple[list[Assignment], str]:
    """``SimpleLoadManagerImpl.getLeastLoadedBroker`` for each unowned bundle in turn, each pick
    preallocated (:func:`lbctl.loadmanager.simple.lookups`)."""
    from lbctl.loadmanager.simple import lookups
    from lbctl.strategies.simple.ranking import placement_key

    todo = [b for b in bundles if b not in owners]
    found = {x.bundle: x for x in lookups(state, settings, todo, opts.seed)}
    out: list[Assignment] = []
    for b in bundles:
        owner = owners.get(b)
        if owner is not None:
            out.append(Assignment(b, owner, "owned: the lookup returns its owner", owner))
            continue
        x = found[b]
        out.append(Assignment(b, x.broker, text(x.why), candidates=x.candidates, score=x.score))
    return out, placement_key(settings["loadBalancerPlacementStrategy"])
