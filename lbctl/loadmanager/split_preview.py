"""What ``pulsar-admin namespaces split-bundle`` would do, computed before anything changes.

Mirrors the broker side of the admin call, in order:

1. ``NamespacesBase.internalSplitNamespaceBundleAsync``: a named algorithm must be in
   ``supportedNamespaceBundleSplitAlgorithms`` ("Unsupported namespace bundle split algorithm…"),
   and ``specified_positions_divide`` needs split boundaries;
2. ``getBundleRangeAsync``: ``LARGEST`` is the bundle holding most of the namespace's persistent
   topics (``NamespaceBundleFactory.getBundleWithHighestTopicsAsync``: topics in name order, the
   first bundle to reach the highest count wins); ``HOT`` the bundle with the highest long-term
   ``msgThroughputIn + msgThroughputOut`` among bundles whose bundle data counts topics
   (``getBundleWithHighestThroughputAsync``); none → "Bundle range LARGEST not found";
3. ``NamespaceService.splitAndOwnBundle``: the algorithm by name, else the broker's
   ``defaultNamespaceBundleSplitAlgorithm``; its boundaries from the bundle's owned topics
   (``getBundleSplitOption``); no boundary → nothing happens; else
   ``NamespaceBundleFactory.splitBundles`` makes the children, which the owner broker takes
   (``tryAcquiringOwnership``) and, with ``unload``, releases right away for the next lookup.

One guard is lbctl's own: Pulsar's admin path does not look at
``loadBalancerNamespaceMaximumBundles`` (only the automatic split does), but a namespace at that
count is refused here, because the automatic splitter would then never split it again; raise the
setting with ``--set`` to preview anyway.

:func:`preview` is pure (a :class:`~lbctl.model.cluster.ClusterState` and settings in, a
:class:`SplitPreview` out), so a live path can call it on a state read from the cluster and then
carry the split out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lbctl.config import Settings, closest
from lbctl.errors import LbctlError, UsageError
from lbctl.explain.words import text
from lbctl.loadmanager.loaddata import update_bundle_data
from lbctl.model.bundle import (
    BundleNameError,
    BundleRange,
    locate,
    namespace_of,
    topic_hash,
    topic_namespace,
)
from lbctl.model.cluster import ClusterState
from lbctl.model.decision import AdminSplitWhy
from lbctl.model.load import NamespaceBundleStats
from lbctl.strategies.builtin import PLACEMENT, SHEDDING, algorithm_by_name
from lbctl.strategies.registry import Registry
from lbctl.strategies.split.base import (
    SPECIFIED_POSITIONS_DIVIDE,
    SplitBoundaries,
    SplitError,
    apply_boundaries,
    option_for,
)

LARGEST = "LARGEST"
HOT = "HOT"
BUNDLE_TYPES = (LARGEST, HOT)


@dataclass(frozen=True, slots=True)
class SplitRequest:
    """The flags of ``split-bundle``: ``bundle`` is a range or ``LARGEST``/``HOT``."""

    namespace: str
    bundle: str | None = None
    bundle_type: str | None = None
    algorithm: str | None = None
    positions: tuple[int, ...] = ()
    unload: bool = False

    def target(self) -> str:
        """The ``{bundle}`` path segment pulsar-admin would send."""
        if self.bundle and self.bundle_type:
            raise UsageError("--bundle and --bundle-type are mutually exclusive")
        if not self.bundle and not self.bundle_type:
            raise UsageError("Must pass one of the params: --bundle / --bundle-type")
        if self.bundle_type:
            kind = self.bundle_type.upper()
            if kind not in BUNDLE_TYPES:
                raise UsageError(f"--bundle-type must be LARGEST or HOT, got {self.bundle_type!r}")
            return kind
        assert self.bundle is not None  # one of the two, checked above
        return self.bundle.strip()


@dataclass(frozen=True, slots=True)
class ChildBundle:
    """One bundle the split creates, with the topics that hash into it and their traffic."""

    bundle: str  # full name
    range: BundleRange
    topics: tuple[str, ...]
    msg_rate: float | None  # sum over its topics' stats; None when the snapshot has none
    throughput: float | None
    broker: str | None  # the owner of the parent keeps it
    without_stats: int = 0  # its topics the snapshot lists with no stats (traffic unknown)


@dataclass(frozen=True, slots=True)
class Unattributed:
    """The part of the parent's latest load report that no child accounts for, and why.

    Pulsar divides nothing but the hash range (``NamespaceBundleFactory.splitBundles``, apache/pulsar
    036f00a1: new partitions, no stats carried over): each topic's traffic follows the topic into
    the child its hash falls in. lbctl can attribute only
    the topics the snapshot lists, with their stats; what is left is named here so that the
    children plus this add up to the parent."""

    topics: int  # topics the load report counts that the snapshot does not list
    msg_rate: float  # load report minus the children's topic stats (either sign)
    throughput: float
    without_stats: int  # listed topics with no stats: counted in topics, not in traffic
    unloaded: int = 0  # listed topics beyond the report's count (metadata lists unloaded ones)

    @property
    def nothing(self) -> bool:
        return (self.topics == 0 and self.without_stats == 0 and self.unloaded == 0
                and self.msg_rate == 0 and self.throughput == 0)


@dataclass(frozen=True, slots=True)
class SplitPreview:
    state: ClusterState
    settings: Settings
    namespace: str
    bundle: str  # full name of the bundle split
    owner: str | None
    selected_by: str | None  # LARGEST or HOT, when the bundle was resolved from a type
    selection_why: AdminSplitWhy | None  # how LARGEST or HOT found it
    algorithm: str
    algorithm_note: AdminSplitWhy  # how the algorithm was chosen
    result: SplitBoundaries
    children: tuple[ChildBundle, ...]
    unload: bool
    topics: tuple[str, ...]
    stats: NamespaceBundleStats | None  # the parent's latest load report figures
    bundles_before: int
    bundles_after: int
    shedding: str = ""  # the cluster's strategies, short names (for the plan's header)
    placement: str = ""

    @property
    def boundaries(self) -> tuple[int, ...]:
        return tuple(sorted(self.result.boundaries or ()))

    def unattributed(self) -> Unattributed | None:
        """What the children leave out of the parent's load report (None without a report)."""
        if self.stats is None:
            return None
        rate = sum(c.msg_rate or 0.0 for c in self.children)
        tput = sum(c.throughput or 0.0 for c in self.children)
        return Unattributed(
            topics=max(0, self.stats.topics - len(self.topics)),
            msg_rate=_settled(self.stats.msg_rate - rate, self.stats.msg_rate),
            throughput=_settled(self.stats.throughput - tput, self.stats.throughput),
            without_stats=sum(c.without_stats for c in self.children),
            unloaded=max(0, len(self.topics) - self.stats.topics))


def _settled(diff: float, whole: float) -> float:
    """A difference of sums, 0 when it is only float rounding (a millionth of the whole)."""
    return 0.0 if abs(diff) <= 1e-6 * max(abs(whole), 1.0) else diff


def preview(state: ClusterState, settings: Settings, request: SplitRequest) -> SplitPreview:
    """The split the broker would make for ``request`` on ``state``; errors are one line."""
    target = request.target()
    ns = _check_namespace(state, request.namespace)
    _check_algorithm(request, settings)

    selected_by: str | None = None
    selection_why: AdminSplitWhy | None = None
    if target in BUNDLE_TYPES:
        selected_by = target
        rng, selection_why = (_largest(state, ns) if target == LARGEST else _hot(state, ns))
    else:
        try:
            rng = BundleRange.parse(target)
        except BundleNameError as e:
            raise SplitError(str(e)) from None
    bundles = namespace_ranges(state, ns)
    if rng not in bundles:
        shown = ", ".join(str(b) for b in bundles[:4]) + (", …" if len(bundles) > 4 else "")
        raise UsageError(f"{rng} is not a bundle of {ns}; its {len(bundles)} bundle(s): {shown}")
    bundle = f"{ns}/{rng}"

    limit = int(settings["loadBalancerNamespaceMaximumBundles"])
    if len(bundles) >= limit:
        raise SplitError(
            f"namespace {ns} already has {len(bundles)} bundles "
            f"(loadBalancerNamespaceMaximumBundles = {limit}): a further split is permanent and "
            f"the automatic splitter stops here; --set loadBalancerNamespaceMaximumBundles=N to "
            f"preview anyway")
    if not rng.can_split():
        raise SplitError(f"{bundle} can't be split further (upper - lower <= 1)")

    algo = algorithm_by_name(request.algorithm, settings)
    default = str(settings["defaultNamespaceBundleSplitAlgorithm"])
    if request.algorithm and algo.name == request.algorithm:
        note = AdminSplitWhy("asked", asked=request.algorithm)
    elif request.algorithm:
        note = AdminSplitWhy("asked-unknown", asked=request.algorithm, used=algo.name)
    else:
        note = AdminSplitWhy("default" if algo.name == default
                             else "default-unknown", default=default, used=algo.name)

    topics = tuple(state.topics_of_bundle(bundle))
    option = option_for(rng, topics, state.topics, settings, request.positions or None)
    result = algo.boundaries(option)
    stats = state.bundle_stats(bundle)
    if not result.boundaries:
        hint = ""
        if len(topics) <= 1 and stats and stats.topics > 1 and ns not in state.namespace_topics:
            hint = (f" (its load report counts {stats.topics}: "
                    + ("the snapshot's 'topics' must list them)" if not is_live(state) else
                       "the brokers' topic stats list fewer)"))
        raise SplitError(f"no split: {algo.name} found no boundary for {bundle}: "
                         f"{text(result.why)}{hint}; Pulsar would leave the bundle as it is")
    ranges = apply_boundaries(rng, result.boundaries)
    owner = state.owners().get(bundle)
    children = tuple(_child(state, ns, r, topics, owner) for r in ranges)
    return SplitPreview(
        state=state, settings=settings, namespace=ns, bundle=bundle, owner=owner,
        selected_by=selected_by, selection_why=selection_why, algorithm=algo.name,
        algorithm_note=note, result=result, children=children, unload=request.unload,
        topics=topics, stats=stats, bundles_before=len(bundles),
        bundles_after=len(bundles) - 1 + len(children),
        shedding=_strategy_name(SHEDDING, settings["loadBalancerLoadSheddingStrategy"]),
        placement=_strategy_name(PLACEMENT, settings["loadBalancerLoadPlacementStrategy"]),
    )


def is_live(state: ClusterState) -> bool:
    """Whether ``state`` is a live read (``lbctl.sources.live`` names it ``live:CLUSTER``)."""
    return state.live_read


def read_from(state: ClusterState) -> str:
    """Where ``state`` was read, for messages: a live read is never called a snapshot."""
    return "the cluster" if is_live(state) else "the snapshot"


# --- checks ---------------------------------------------------------------------------------------
def _check_namespace(state: ClusterState, namespace: str) -> str:
    ns = namespace.strip().strip("/")
    parts = ns.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise UsageError(f"bad namespace {namespace!r}: expected tenant/namespace")
    known = set(state.namespaces) | {namespace_of(b) for b in state.owners()}
    if ns not in known:
        hint = closest(ns, sorted(known))
        raise UsageError(f"namespace {ns} is not in {read_from(state)}"
                         + (f" (did you mean {hint}?)" if hint else ""))
    return ns


def _check_algorithm(request: SplitRequest, settings: Settings) -> None:
    """``internalSplitNamespaceBundleAsync``'s checks, made before anything else."""
    name = (request.algorithm or "").strip()
    if not name:
        return
    supported = list(settings["supportedNamespaceBundleSplitAlgorithms"])
    if name not in supported:
        from lbctl.strategies.builtin import SPLIT

        hint = None if name in SPLIT.names() else closest(name, supported)
        raise SplitError(
            f"Unsupported namespace bundle split algorithm {name!r}, supported algorithms are "
            f"[{', '.join(supported)}]" + (f" (did you mean {hint}?)" if hint else ""))
    if name.lower() == SPECIFIED_POSITIONS_DIVIDE and not request.positions:
        raise SplitError("With specified_positions_divide split algorithm, splitBoundaries must "
                         "not be empty (-sb/--split-boundaries)")


# --- the namespace's bundles ------------------------------------------------------------------
def namespace_ranges(state: ClusterState, namespace: str) -> list[BundleRange]:
    """The namespace's bundles: from its boundaries, else the ranges its brokers report."""
    bounds = state.namespaces.get(namespace)
    if bounds is not None:
        return [BundleRange(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]
    ranges = set()
    for b in state.owners():
        if namespace_of(b) == namespace:
            try:
                ranges.add(BundleRange.parse(b.rpartition("/")[2]))
            except BundleNameError:
                continue
    return sorted(ranges)


def _find(ranges: Sequence[BundleRange], bounds: Sequence[int] | None, h: int) -> BundleRange | None:
    if bounds is not None:
        return locate(bounds, h)
    return next((r for r in ranges if r.contains(h)), None)


def _largest(state: ClusterState, ns: str) -> tuple[BundleRange, AdminSplitWhy]:
    """``getBundleWithHighestTopicsAsync``: persistent topics in name order; a bundle takes the
    lead only with a strictly higher count, so the first to reach the top count wins. The topics
    are the namespace's persistent topics in metadata (loaded or not) when the snapshot lists them
    (``namespaceTopics``), else the persistent topics of ``topics``."""
    ranges = namespace_ranges(state, ns)
    bounds = state.namespaces.get(ns)
    counts: dict[BundleRange, int] = {}
    best, best_count = None, 0
    listed = state.namespace_topics.get(ns)
    source = listed.persistent if listed is not None else state.topics
    for topic in sorted(t for t in source
                        if t.startswith("persistent://") and topic_namespace(t) == ns):
        r = _find(ranges, bounds, topic_hash(topic))
        if r is None:
            continue
        counts[r] = counts.get(r, 0) + 1
        if counts[r] > best_count:
            best, best_count = r, counts[r]
    if best is None:
        raise SplitError(f"Bundle range LARGEST not found: {read_from(state)} lists no persistent "
                         f"topic of {ns}")
    return best, AdminSplitWhy("largest", best_count, sum(counts.values()))


def _hot(state: ClusterState, ns: str) -> tuple[BundleRange, AdminSplitWhy]:
    """``getBundleWithHighestThroughputAsync``: among the namespace's bundles (ascending) whose
    bundle data counts topics, the highest long-term throughput; the first wins a tie."""
    data = update_bundle_data(state)
    best, best_tp = None, -1.0
    for r in namespace_ranges(state, ns):
        d = data.get(f"{ns}/{r}")
        if d is None or d.topics <= 0:
            continue
        tp = d.longTermData.throughput
        if tp > best_tp:
            best, best_tp = r, tp
    if best is None:
        raise SplitError(f"Bundle range HOT not found: no bundle of {ns} reports topics")
    return best, AdminSplitWhy("hot", namespace=ns, throughput=best_tp)


def _child(state: ClusterState, ns: str, rng: BundleRange, topics: Sequence[str],
           owner: str | None) -> ChildBundle:
    mine = tuple(t for t in topics if rng.contains(topic_hash(t)))
    known = [state.topics[t] for t in mine if t in state.topics]
    rate = tp = None
    if state.topics:
        rate = sum(s.msgRateIn + s.msgRateOut for s in known)
        tp = sum(s.msgThroughputIn + s.msgThroughputOut for s in known)
    return ChildBundle(f"{ns}/{rng}", rng, mine, rate, tp, owner, len(mine) - len(known))


def _strategy_name(registry: Registry[Any], value: object) -> str:
    """A configured strategy's short name (the class name's last part when it is not ours)."""
    try:
        return registry.short_name(str(value))
    except LbctlError:
        return str(value).rsplit(".", 1)[-1]
