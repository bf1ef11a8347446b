"""The modular load manager's broker filters in ``selectBroker`` (``LoadManagerShared``).

Each filter takes the candidates in order and returns those it keeps, recording a
:class:`~lbctl.model.decision.FilterStep` (who went in, who came out, and why) for ``explain``:

* :func:`filter_large_topic_count` — ``filterBrokersWithLargeTopicCount``
  (``loadBalancerBrokerMaxTopics``);
* :func:`remove_most_servicing` — ``removeMostServicingBrokersForNamespace``, with the
  per-namespace ownership index of :func:`namespace_bundle_counts`;
* :func:`policy_candidates` — ``applyNamespacePolicies`` (isolation policies, the shared brokers,
  the topic kinds a broker loads; a broker without a load report is no candidate);
* :func:`filter_anti_affinity_modular` — ``filterAntiAffinityGroupOwnedBrokers`` (anti-affinity
  groups, failure domains);
* :func:`filter_load_manager_class` and :func:`filter_versions` — the ``filterPipeline``
  (``BrokerLoadManagerClassFilter``, ``BrokerVersionFilter``).
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import filterfalse, repeat
from operator import itemgetter
from typing import Any, Literal

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.bundle import namespace_of
from lbctl.model.candidates import Excluding
from lbctl.model.cluster import NameIndex
from lbctl.model.decision import FilterStep, Why
from lbctl.model.javaorder import bucket_order, hashmap_capacity, java_hash_order
from lbctl.model.loaddata import LoadData
from lbctl.model.policies import NO_POLICIES, ClusterPolicies, HostRule, IsolationPolicy
from lbctl.strategies.placement.namespace_policies import (
    BrokerClasses,
    PolicyCandidates,
    apply_namespace_policies,
    classify,
    filter_anti_affinity,
    namespace_group_counts,
)
from lbctl.strategies.placement.versions import Version, compare_versions, same_version

#: What a broker filter of ``selectBroker`` did.
Filter = Literal[
    "too-many-topics",  # limit; names: removed
    "all-too-many-topics",  # limit: not applied
    "evenly",  # namespace, least; names/counts: the owners removed and their bundles
    "other-class",  # names/classes: removed; detail: the leader's class
    "no-versions",  # not applied
    "version-failed",  # problem, broker, detail (its version)
    "older-version",  # newest
]


#: Why Pulsar's ``BrokerVersionFilter`` throws (``BrokerFilterBadVersionException``).
VersionProblem = Literal[
    "empty",
    "no-data",
    "no-version",
    "invalid",
]


class FilterWhy(Why, frozen=True):
    """A reason of :data:`Filter`, with its figures."""

    code: Filter
    limit: int = 0
    namespace: str = ""
    least: int = 0
    names: tuple[str, ...] = ()
    counts: tuple[int, ...] = ()
    classes: tuple[str | None, ...] = ()
    detail: str = ""
    problem: VersionProblem | None = None
    broker: str = ""
    newest: Version | None = None


NO_VERSIONS = FilterWhy("no-versions")


def filter_large_topic_count(
    cands: tuple[str, ...], load: LoadData, settings: Settings, steps: list[FilterStep]
) -> tuple[str, ...]:
    """``LoadManagerShared.filterBrokersWithLargeTopicCount``: keep brokers whose topics (plus
    preallocated bundles' topics) are at most ``loadBalancerBrokerMaxTopics``; if none is left,
    keep them all."""
    limit = int(settings["loadBalancerBrokerMaxTopics"])
    kept = []
    brokers = load.brokers
    for b in cands:
        bd = brokers.get(b)
        # a broker without BrokerData counts 0 topics; the preallocated bundles' topics are
        # summed only when there are some (usually none: no generator per broker)
        if bd is None:
            topics = 0
        else:
            pre = bd.preallocated
            topics = bd.local.numTopics + (sum(d.topics for d in pre.values()) if pre else 0)
        if topics <= limit:
            kept.append(b)
    if not kept:
        steps.append(FilterStep("loadBalancerBrokerMaxTopics", cands, cands,
                                FilterWhy("all-too-many-topics", limit)))
        return cands
    removed: tuple[str, ...] = ()
    if len(kept) < len(cands):
        kept_set = set(kept)
        removed = tuple(b for b in cands if b not in kept_set)
    steps.append(FilterStep(
        "loadBalancerBrokerMaxTopics", cands, tuple(kept),
        FilterWhy("too-many-topics", limit, names=removed) if removed else None))
    return tuple(kept)


def namespace_bundle_counts(
    load: LoadData, namespaces: AbstractSet[str] | None = None, names: NameIndex | None = None
) -> Mapping[str, Mapping[str, int]]:
    """``brokerToNamespaceToBundleRange``, inverted: per namespace, how many of its bundles each
    broker owns (reports in ``lastStats``) or has preallocated. Brokers without any are absent.

    ``namespaces``: only these are wanted (a cycle's unloads ask for a few of many); the index
    then holds them alone, each exactly as the whole index would, and must not be asked for
    another. ``names``: the snapshot reader's :class:`~lbctl.model.cluster.NameIndex`: the names of
    the reports it checked are valid, so their namespaces are cut without a Python step per
    name, or not cut again at all for a broker with one bundle in each (``NameIndex.one_each``).
    Each owner is appended to its namespace's list in C; a namespace's counts are made when it
    is asked for (:class:`_Owners`). A function of the brokers (in order) and
    their bundle names alone (not their order within a broker): without preallocations the last
    answer is kept for the next cycle that shows the same reports and wants the same namespaces
    (read-only: shared). The memo compares the reports' key sets at C speed instead of copying
    every name into a key."""
    if not any(bd.preallocated for bd in load.brokers.values()):
        reports: list[tuple[str, Mapping[str, object]]] = [
            (broker, bd.local.lastStats) for broker, bd in load.brokers.items()]
        last = _LAST_COUNTS[0] if _LAST_COUNTS else None
        if last is not None and last[1] == namespaces and _same_reports(last[0], reports):
            return last[2]
        index = _namespace_bundle_counts(load, namespaces, names)
        _LAST_COUNTS[:] = [(reports, namespaces, index)]
        return index
    return _namespace_bundle_counts(load, namespaces, names)


def _same_reports(before: Sequence[tuple[str, Mapping[str, object]]],
                  now: Sequence[tuple[str, Mapping[str, object]]]) -> bool:
    """The same brokers in the same order, each reporting the same bundle names."""
    return len(before) == len(now) and all(
        a == b and (x is y or x.keys() == y.keys())
        for (a, x), (b, y) in zip(before, now, strict=True))


#: the last (the brokers and their reports, the namespaces wanted, index) of
#: :func:`namespace_bundle_counts`
_LAST_COUNTS: list[tuple[list[tuple[str, Mapping[str, object]]], AbstractSet[str] | None,
                         Mapping[str, Mapping[str, int]]]] = []


def _namespace_bundle_counts(load: LoadData, wanted: AbstractSet[str] | None = None,
                             names: NameIndex | None = None) -> _Owners:
    # namespace → its owners, a broker once per bundle of it it owns, in the brokers' order
    # (each broker's entries together): appended in C, counted when a namespace is asked for
    owners: defaultdict[str, list[str]] = defaultdict(list)
    per_namespace = owners.__getitem__  # a new namespace's list made in C (defaultdict)
    one_each: Mapping[str, tuple[str, ...]] = {} if names is None else names.one_each
    for broker, bd in load.brokers.items():
        pre = bd.preallocated
        # the order within one broker's names does not matter, so its lastStats serve as they
        # are when nothing is preallocated
        owned = {*bd.local.lastStats, *pre} if pre else bd.local.lastStats
        spaces: Iterable[str]
        if names is not None and not pre and names.validated(broker, bd.local):
            # the reader's namespaces of a broker with one bundle in each, else (names the
            # reader checked) each name without its 22-character range, cut by a C call
            each = one_each.get(broker)
            spaces = each if each is not None else map(_NAMESPACE, owned)
            if wanted is not None:
                spaces = filter(wanted.__contains__, spaces)
        else:
            spaces = [x.rpartition("/")[0] for x in owned]  # namespace_of, inline
            if wanted is not None:
                spaces = [ns for ns in spaces if ns in wanted]
        # owners[ns].append(broker) for each, in C (no Python step per bundle)
        deque(map(list.append, map(per_namespace, spaces), repeat(broker)), maxlen=0)
    owners.default_factory = None  # a namespace absent stays absent
    return _Owners(owners)


class _Owners(Mapping[str, Mapping[str, int]]):
    """The ownership index: per namespace, each owner (in the brokers' order) → how many of the
    namespace's bundles it owns, counted the first time the namespace is asked for (a cycle asks
    for its unloads' namespaces, once each: the counting is C's, per owner list)."""

    __slots__ = ("_counted", "_lists")

    def __init__(self, lists: dict[str, list[str]]) -> None:
        self._lists = lists
        self._counted: dict[str, dict[str, int]] = {}

    def __getitem__(self, namespace: str) -> Mapping[str, int]:
        done = self._counted.get(namespace)
        if done is None:
            owners = self._lists[namespace]
            # usually each owner holds one bundle of the namespace (a namespace's bundles spread
            # over the brokers): then every count is 1, set in one C call; else Counter. Both
            # keep the order in which owners first appear: the brokers' order
            done = dict.fromkeys(owners, 1)
            if len(done) != len(owners):
                done = dict(Counter(owners))
            self._counted[namespace] = done
        return done

    def get(self, namespace: str, default: Any = None) -> Any:  # no KeyError raised per miss
        return self[namespace] if namespace in self._lists else default

    def __contains__(self, namespace: object) -> bool:
        return namespace in self._lists

    def __iter__(self) -> Iterator[str]:
        return iter(self._lists)

    def __len__(self) -> int:
        return len(self._lists)


#: a valid bundle name's namespace: the name without ``/0xLLLLLLLL_0xUUUUUUUU``
_NAMESPACE = itemgetter(slice(None, -22))


def remove_most_servicing(
    cands: Sequence[str], namespace: str, index: Mapping[str, Mapping[str, int]],
    steps: list[FilterStep], members: AbstractSet[str] | None = None,
) -> Sequence[str]:
    """``LoadManagerShared.removeMostServicingBrokersForNamespace``: keep the candidates that own
    (or have preallocated) the fewest bundles of the bundle's namespace. ``members``: ``cands``
    (distinct names, a tuple) as a set, when the caller already has it (the same candidates serve
    many namespaces): then the usual answer — every candidate but the namespace's owners — is an
    :class:`~lbctl.model.candidates.Excluding` view, built in time proportional to the owners."""
    if not cands:
        return cands
    owners = index.get(namespace, {})
    shared = members is not None  # the caller places many namespaces over these candidates
    if members is None:
        members = frozenset(cands)
    owning = list(filter(members.__contains__, owners))  # C speed: a namespace of many owners
    # Usually most candidates own none of the namespace: then the least count is 0 and the
    # owners (a few) are removed; only otherwise are all candidates' counts compared.
    kept: Sequence[str]
    if len(owning) < len(cands):
        least = 0
        if not owning:
            kept = cands
        elif shared and isinstance(cands, tuple) and len(members) == len(cands):
            kept = Excluding(cands, frozenset(owning), members)
        else:
            kept = tuple(filterfalse(owners.__contains__, cands))
    else:
        least = min(owners[b] for b in cands)
        kept = tuple(b for b in cands if owners[b] == least)
    why = None
    if len(kept) < len(cands):
        # an owner counts one bundle or more: with least 0 every owning candidate is removed
        removed = (tuple(owning) if least == 0
                   else tuple(b for b in owning if owners[b] != least))
        why = FilterWhy("evenly", namespace=namespace, least=least, names=removed,
                        counts=tuple(map(owners.__getitem__, removed)))
    steps.append(FilterStep("loadBalancerDistributeBundlesEvenlyEnabled", cands, kept, why))
    return kept


# --- namespace policies, anti-affinity, the filter pipeline (selectBroker) --------------------------
#: :attr:`PlacementEnv.classes`
ClassesMemo = dict[int, tuple[LoadData, ClusterPolicies, str, BrokerClasses]]


@dataclass(frozen=True)
class PlacementEnv:
    """What the modular ``selectBroker`` reads besides ``LoadData``, fixed for one cycle.

    ``available`` are the active brokers (``getAvailableBrokers``, in ``HashSet`` order), with or
    without a load report; ``class_known`` / ``versions_known`` say whether any load report
    names its load manager class / broker version (when none does, the data was not captured and
    the filter that needs it is not applied, rather than failing every broker)."""

    available: tuple[str, ...]
    policies: ClusterPolicies = NO_POLICIES
    class_known: bool = False
    versions_known: bool = False
    #: how the release takes a broker's host for the policies (the profile's
    #: ``isolationBrokerHost``)
    host_rule: HostRule = "brokerId"
    #: per cycle: the policy candidates of each isolation policy (None: namespaces without one),
    #: which is all that makes them differ between namespaces
    cache: dict[tuple[int, IsolationPolicy | None], PolicyCandidates] = field(
        default_factory=dict, compare=False, repr=False)
    #: per cycle, shared by the cycle's environments (same brokers, policies and host rule):
    #: by the load data's id, the load data, policies and host rule the brokers' classes were
    #: taken with, and the classes (:func:`_classes`)
    classes: ClassesMemo = field(
        default_factory=dict, compare=False, repr=False)
    #: per cycle: the anti-affinity counts of each group
    group_counts: dict[tuple[int, str], dict[str, int] | None] = field(
        default_factory=dict, compare=False, repr=False)
    #: the table length of the set ``available`` is iterated from (0: a fresh set's,
    #: ``hashmap_capacity(len(available))``); an isolation policy's fill goes into it primaries first
    table: int = 0
    #: the table length of the thread-local set the secondaries (and the shared brokers) are
    #: collected in, when longer than ``table`` (0: no longer; see ``apply_namespace_policies``)
    secondaries: int = 0
    #: ``getAvailableBrokers()``'s ``HashSet`` copy as it iterates, which the policy fills walk
    #: (empty: ``available``'s order)
    walk: tuple[str, ...] = ()
    #: the table lengths before the fill (``brokerCandidateCache``'s, the secondaries set's,
    #: the primaries set's) that the policy fills start from (``None``: ``table`` and
    #: ``secondaries``, the primaries set fresh)
    start: tuple[int, int, int] | None = None

    @classmethod
    def of(cls, available: Sequence[str], load: LoadData,
           policies: ClusterPolicies, settings: Settings,
           capacity: int | None = None, secondaries: int = 0,
           start: tuple[int, int, int] | None = None,
           classes: ClassesMemo | None = None) -> PlacementEnv:
        """``capacity``: the table length of the set the candidates are iterated from (the
        modular ``brokerCandidateCache``, which keeps its table across calls; ``available`` then
        in the order the set was filled, and the order given is the walk of the fills);
        ``None``: a fresh set's. ``secondaries``: the secondaries' scratch set's table length
        (0: none longer than ``capacity``). ``start``: the three sets' table lengths before the
        fill (see :attr:`start`). ``classes``: the dict the environments of one cycle share
        (:attr:`classes`; a new one when not given)."""
        locals_ = [bd.local for bd in load.brokers.values()]
        return cls(
            tuple(bucket_order(available, capacity) if capacity else java_hash_order(available)),
            policies,
            any(x.loadManagerClassName is not None for x in locals_),
            any(x.brokerVersionString for x in locals_),
            settings.profile["isolationBrokerHost"], table=capacity or 0, secondaries=secondaries,
            walk=tuple(available) if capacity else (), start=start,
            classes={} if classes is None else classes)

    def domains(self, settings: Settings) -> dict[str, str] | None:
        """The broker → failure-domain map when ``failureDomainsEnabled`` (read only here, as
        ``filterAntiAffinityGroupOwnedBrokers`` reads it)."""
        return self.policies.broker_domains() if settings["failureDomainsEnabled"] else None


def policy_candidates(namespace: str, env: PlacementEnv, load: LoadData) -> PolicyCandidates:
    """``applyNamespacePolicies`` over every available broker with the modular load manager's
    ``BrokerTopicLoadingPredicate``: the broker's load report must allow the topic kind (a broker
    without a report allows none). Bundles are placed here as persistent ones: during shedding
    Pulsar builds the bundle from its name, which never marks it non-persistent. The brokers come
    in the order ``brokerCandidateCache`` iterates them (``env.table``; see
    :func:`apply_namespace_policies`)."""

    key = (id(load), env.policies.isolation_for(namespace))
    hit = env.cache.get(key)
    if hit is not None:
        return hit

    def loads(broker: str, non_persistent: bool) -> bool:
        bd = load.brokers.get(broker)
        if bd is None:
            return False
        return bd.local.nonPersistentTopicsEnabled if non_persistent \
            else bd.local.persistentTopicsEnabled

    # the candidate set's table: an isolation policy's brokers go in primaries first
    # (apply_namespace_policies), which orders them within a bucket
    if env.start is not None:
        table, secondaries, primaries = env.start
    else:
        table = env.table or hashmap_capacity(len(set(env.available)))
        secondaries, primaries = env.secondaries, 0
    classes = None
    if key[1] is None:  # no isolation policy: the brokers' classes, kept for the cycle's fills
        classes = _classes(env, load, loads)
    out = env.cache[key] = apply_namespace_policies(
        namespace, env.available, env.policies, loads, rule=env.host_rule, table=table,
        secondaries_table=secondaries, primaries_table=primaries, walk=env.walk or None,
        classes=classes)
    return out


def _classes(env: PlacementEnv, load: LoadData,
             loads: Callable[[str, bool], bool]) -> BrokerClasses:
    """:func:`classify` of ``env``'s brokers for persistent bundles, kept in ``env.classes``
    (which a modular cycle's environments share) by the load data: a cycle fills the candidate
    set from three environments or more (each table the fills grow gives one), each with the
    same brokers in another order, and the classes do not depend on the order."""
    brokers = frozenset(env.available)
    known = env.classes.get(id(load))
    if (known is not None and known[0] is load and known[1] is env.policies
            and known[2] == env.host_rule and known[3].brokers == brokers):
        return known[3]
    classes = classify(brokers, env.policies, loads, rule=env.host_rule)
    # holding the load data and the policies: their ids are not reused
    env.classes[id(load)] = (load, env.policies, env.host_rule, classes)
    return classes


def filter_anti_affinity_modular(
    cands: tuple[str, ...], namespace: str, env: PlacementEnv, load: LoadData,
    settings: Settings, steps: list[FilterStep],
) -> tuple[str, ...]:
    """``filterAntiAffinityGroupOwnedBrokers`` with the modular count (namespaces of the group a
    broker owns bundles of, or has preallocated)."""
    counts = anti_affinity_counts(namespace, env, load)
    if counts is None:
        return cands
    kept, why = filter_anti_affinity(cands, counts, env.domains(settings))
    steps.append(FilterStep("anti-affinity group", cands, kept, why))
    return kept


def anti_affinity_counts(namespace: str, env: PlacementEnv, load: LoadData) -> dict[str, int] | None:
    """``getAntiAffinityNamespaceOwnedBrokers`` over ``brokerToNamespaceToBundleRange``."""
    group = env.policies.anti_affinity_group(namespace)
    if group is None:
        return None
    key = (id(load), group.lower())
    if key not in env.group_counts:
        per_broker = {b: {namespace_of(x) for x in (*bd.local.lastStats, *bd.preallocated)}
                      for b, bd in load.brokers.items()}
        env.group_counts[key] = namespace_group_counts(namespace, env.policies, per_broker)
    return env.group_counts[key]


def filter_load_manager_class(cands: Sequence[str], load: LoadData, settings: Settings,
                              env: PlacementEnv, steps: list[FilterStep]) -> Sequence[str]:
    """``impl.BrokerLoadManagerClassFilter``: every broker whose report names another load manager
    class than the leader's ``loadManagerClassName`` (or none) is removed."""
    if not env.class_known:
        return cands
    mine = str(settings["loadManagerClassName"])
    brokers = load.brokers  # Pulsar iterates loadData: a broker without data is not removed
    other = {b for b in cands if b in brokers and brokers[b].local.loadManagerClassName != mine}
    kept = tuple(b for b in cands if b not in other)
    if len(kept) < len(cands):
        removed = tuple(b for b in cands if b in other)
        steps.append(FilterStep("BrokerLoadManagerClassFilter", cands, kept, FilterWhy(
            "other-class", names=removed, detail=mine,
            classes=tuple(brokers[b].local.loadManagerClassName for b in removed))))
    return kept


def filter_versions(cands: Sequence[str], load: LoadData, settings: Settings,
                    env: PlacementEnv, steps: list[FilterStep]) -> Sequence[str] | None:
    """``impl.BrokerVersionFilter`` (``preferLaterVersions``): the candidates on the newest
    version; ``None`` when Pulsar's filter throws (no candidate, a candidate without a report or a
    version, an invalid version) — the caller then restores the policy candidates."""
    if not settings["preferLaterVersions"]:
        return cands
    if not env.versions_known:
        steps.append(FilterStep("BrokerVersionFilter", cands, cands, NO_VERSIONS))
        return cands
    latest = _latest_version(cands, load)
    if isinstance(latest, _Problem):
        steps.append(FilterStep("BrokerVersionFilter", cands, (), FilterWhy(
            "version-failed", problem=latest.problem, broker=latest.broker,
            detail=latest.version)))
        return None
    kept = tuple(b for b in cands
                 if same_version(Version.parse(load.brokers[b].local.brokerVersionString or ""),
                                 latest))
    if len(kept) < len(cands):
        steps.append(FilterStep("BrokerVersionFilter", cands, kept,
                                FilterWhy("older-version", newest=latest)))
    return kept


class _Problem(Struct, frozen=True):
    problem: VersionProblem
    broker: str = ""
    version: str = ""


def _latest_version(cands: Sequence[str], load: LoadData) -> Version | _Problem:
    """``getLatestVersionNumber``: the newest version of the candidates, or why Pulsar's filter
    throws (the first candidate without a report, a version or a valid one)."""
    latest: Version | None = None
    for b in cands:
        bd = load.brokers.get(b)
        if bd is None:
            return _Problem("no-data", b)
        version = bd.local.brokerVersionString
        if not version:
            return _Problem("no-version", b)
        try:
            v = Version.parse(version)
        except ValueError:
            return _Problem("invalid", b, version)
        if latest is None or compare_versions(latest, v) < 0:
            latest = v
    return latest if latest is not None else _Problem("empty")
