"""The data a modular load-manager cycle reads: Pulsar's ``LoadData`` and ``BrokerData``, and the
bundle data after one cycle's samples (:class:`BundleDataView`).

``LoadData`` is what the leader holds when a cycle runs (``ModularLoadManagerImpl.loadData``): every
broker's report with its bundles' time averages, every bundle's ``BundleData``, and the bundles
unloaded within the grace period. Strategies read it and never change it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import and_, methodcaller, not_
from types import MappingProxyType
from typing import Any

from lbctl.model.bundle import (
    SYSTEM_PREFIXES,
    count_system_bundles,
    is_shedding_excluded,
    namespace_of,
)
from lbctl.model.javaorder import (
    ConcurrentOrder,
    hash_fill,
    hashmap_capacity,
    java_string_hash,
    spread,
)
from lbctl.model.load import (
    BundleData,
    LocalBrokerData,
    NamespaceBundleStats,
    TimeAverageBrokerData,
)

_EMPTY: Mapping[str, Any] = MappingProxyType({})
#: the last bundle map's order (a function of its keys alone), reused while the keys are the same
_LAST_ORDER: list[ConcurrentOrder] = []
#: :meth:`LoadData.shedding_order`'s hashing of the last bundle map (key ``None``): (a broker's
#: bundles, HashMap mask) → (their buckets, shared buckets, the keys by bucket)
_ORDER_MEMO: dict[Any, Any] = {}
_ORDER_MEMO_SIZE = 4096
#: :meth:`LoadData.shedding_order` fills the shedding ``HashMap`` put by put up to this many
#: bundles (:class:`ConcurrentOrder`'s own full-simulation limit); larger maps take the count's
#: table and chains (a chain of 9 sheddable names there is not followed: docs/fidelity.md)
FULL_FILL_LIMIT = 4096
#: the last such fill: [its keys in put order, (each key's position, the table length)]
_FILL_MEMO: list[Any] = []


@dataclass(frozen=True, slots=True)
class BrokerData:
    """``BrokerData``: the broker's report, its bundles' time averages, and preallocations."""

    local: LocalBrokerData
    time_average: TimeAverageBrokerData = TimeAverageBrokerData()
    preallocated: Mapping[str, BundleData] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, slots=True)
class LoadData:
    """``LoadData`` as the leader holds it when a cycle runs.

    ``brokers`` iterates in Java ``ConcurrentHashMap`` order (see :mod:`lbctl.model.javaorder`),
    because Pulsar's shedders iterate that map and break ties by the first broker found.
    ``bundle_data`` iterates in the order bundles were put into the leader's ``bundleData`` map.
    ``recently_unloaded`` is already cut to the grace period. ``pulsar_system``: whether
    ``pulsar/system`` is left out of shedding like the heartbeat and SLA-monitor namespaces
    (Pulsar 2.11+, see :func:`lbctl.model.bundle.is_shedding_excluded`).
    """

    brokers: Mapping[str, BrokerData]
    bundle_data: Mapping[str, BundleData]
    recently_unloaded: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    now: int = 0
    system_bundles: int = -1  # bundles of system namespaces in bundle_data; -1: not counted yet
    pulsar_system: bool = True
    #: bundles split this cycle: ``checkNamespaceBundleSplit`` removed their ``BundleData``, so no
    #: shedder sees them until the next ``updateBundleData``
    split_away: frozenset[str] = frozenset()
    #: the leader's ``bundleData`` ``ConcurrentHashMap`` with its history across a sequence
    #: (``None``: a map filled once, in ``bundle_data``'s order)
    bundle_map: ConcurrentOrder | None = field(default=None, compare=False, repr=False)
    _memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def is_system_bundle(self, bundle: str) -> bool:
        """Whether ``getBundleDataForLoadShedding()`` leaves the bundle out (system namespace)."""
        return bundle.startswith(SYSTEM_PREFIXES) and is_shedding_excluded(
            namespace_of(bundle), self.pulsar_system)

    def is_sheddable(self, bundle: str) -> bool:
        """Whether ``bundle`` is a key of ``getBundleDataForLoadShedding()``."""
        return (bundle in self.bundle_data and not self.is_system_bundle(bundle)
                and bundle not in self.split_away)

    def sheddable(self, bundles: Iterable[str]) -> list[str]:
        """The keys of ``getBundleDataForLoadShedding()`` among ``bundles``, each once, in their
        order (:meth:`split_sheddable` of the distinct names)."""
        return self.split_sheddable(list(dict.fromkeys(bundles)))[0]

    def split_sheddable(self, bundles: Sequence[str]) -> tuple[list[str], list[str]]:
        """``bundles`` split by :meth:`is_sheddable` into those the shedding map holds and the
        others, each in ``bundles``' order, by C-speed passes (a deep broker's 170,000, a cycle of
        1,000 shed brokers' 100,000): whether each is reported, not split away and without a
        system namespace's prefix; only the prefixed few (every broker owns its heartbeat bundle)
        are asked :meth:`is_system_bundle` one by one."""
        data = self.bundle_data
        held = data.reported() if isinstance(data, BundleDataView) else data
        keep = list(map(held.__contains__, bundles))
        if self.split_away:
            keep = list(map(and_, keep, map(not_, map(self.split_away.__contains__, bundles))))
        prefixed = map(methodcaller("startswith", SYSTEM_PREFIXES), bundles)
        for i in compress(range(len(bundles)), prefixed):
            if keep[i] and self.is_system_bundle(bundles[i]):
                keep[i] = False
        kept = list(compress(bundles, keep))
        return kept, ([] if len(kept) == len(bundles)
                      else list(compress(bundles, map(not_, keep))))

    def _bundle_map(self) -> ConcurrentOrder:
        """The ``bundleData`` ``ConcurrentHashMap``: the one kept across the sequence, else one
        filled in ``bundle_data``'s order."""
        if self.bundle_map is not None:
            return self.bundle_map
        order = self._memo.get("bundles")
        if order is None:
            keys = list(self.bundle_data)
            last = _LAST_ORDER[0] if _LAST_ORDER else None
            # a sequence's cycles mostly keep the same bundles in the same order: the same map
            if last is not None and last.keys == keys:  # list == compares identity first
                order = last
            else:
                order = ConcurrentOrder(keys)
                _LAST_ORDER[:] = [order]
            self._memo["bundles"] = order
        assert isinstance(order, ConcurrentOrder)
        return order

    def _shedding_fill(self, chm: ConcurrentOrder) -> tuple[dict[str, int], int]:
        """``getBundleDataForLoadShedding()`` filled put by put (:meth:`shedding_order`): each
        key's position and the table length, once per :class:`LoadData`."""
        memo = self._memo.get("shed_fill")
        if memo is None:
            keys = [k for k in chm.order() if self.is_sheddable(k)]
            # a sequence's cycles mostly fill the same keys in the same order: the same map
            if _FILL_MEMO and _FILL_MEMO[0] == keys:
                memo = _FILL_MEMO[1]
            else:
                order, length = hash_fill(keys)
                memo = ({k: i for i, k in enumerate(order)}, length)
                _FILL_MEMO[:] = [keys, memo]
            self._memo["shed_fill"] = memo
        return memo

    def shedding_order(self, bundles: Iterable[str],
                       value: Callable[[str], float] | None = None) -> list[str]:
        """``bundles`` in the order ``getBundleDataForLoadShedding()`` iterates them.

        That map is a ``HashMap`` collected (``Collectors.toMap``, one ``putIfAbsent`` at a time)
        from the ``ConcurrentHashMap`` of all bundle data minus the system namespaces: by its
        bucket, then in the concurrent map's order (its bucket — the concurrent map is never
        smaller — then the position in that bucket, which depends on the map's resizes and is
        replayed only for buckets holding two or more of ``bundles``).

        Its table length is the count's (:func:`hashmap_capacity`) and each bucket a chain,
        unless a chain reaches 9 keys on the way (colliding names, ``"Aa"``/``"BB"``): JDK 17's
        ``treeifyBin`` then doubles a table under 64 buckets early, or makes a tree bin, which
        iterates in another order (and keeps it when a resize splits it). A map of up to
        :data:`FULL_FILL_LIMIT` bundles (whose concurrent map is simulated in full anyway), or
        one under 64 buckets, is therefore filled put by put in the concurrent map's order
        (:func:`hash_fill`, once per map) and ``bundles`` come in that fill's order.

        ``value``: the figure the caller then sorts by (stably). Keys sharing a bucket only need
        their exact order when they also tie on it, so other buckets are not replayed: that
        replay hashes the whole map, which is costly on a large one.
        """
        items = list(dict.fromkeys(bundles))
        if len(items) <= 1:
            return items
        total = len(self.bundle_data)
        system = self.system_bundles
        if system < 0:
            system = count_system_bundles(self.bundle_data, self.pulsar_system)
        gone = sum(1 for b in self.split_away if b in self.bundle_data
                   and not self.is_system_bundle(b))
        hm_mask = hashmap_capacity(total - system - gone) - 1
        chm = self._bundle_map()
        if hm_mask < 63 or chm.size <= FULL_FILL_LIMIT:
            at, length = self._shedding_fill(chm)
            if all(map(at.__contains__, items)):
                return sorted(items, key=at.__getitem__)
            hm_mask = length - 1  # keys the map lacks: placed by their bucket as below
        chm_mask = chm.capacity - 1
        # the buckets depend on the keys and the two table lengths alone: a sequence's cycles ask
        # for the same brokers' bundles again and again
        if _ORDER_MEMO.get(None) is not chm:  # entries of one map at a time
            _ORDER_MEMO.clear()
            _ORDER_MEMO[None] = chm
        memo_key = (tuple(items), hm_mask)
        memo = _ORDER_MEMO.get(memo_key)
        if memo is None:
            decorated = []
            shared: dict[int, int] = {}
            for k in items:
                h = spread(java_string_hash(k))
                decorated.append((h & hm_mask, h & chm_mask & 0x7FFFFFFF, k))
                shared[h & chm_mask] = shared.get(h & chm_mask, 0) + 1
            by_bucket = [d[2] for d in sorted(decorated, key=lambda d: (d[0], d[1]))]
            # only keys sharing a concurrent-map bucket can need their position there
            crowded = [d for d in decorated if shared[d[1] & chm_mask] > 1]
            if len(_ORDER_MEMO) > _ORDER_MEMO_SIZE:
                _ORDER_MEMO.clear()
                _ORDER_MEMO[None] = chm
            memo = _ORDER_MEMO[memo_key] = (decorated, shared, by_bucket, crowded)
        decorated, shared, by_bucket, crowded = memo
        ties = _tied_buckets(crowded, shared, chm_mask, value) if crowded else []
        if not ties:  # every position 0 below: the stable sort by bucket alone
            return list(by_bucket)
        decorated = list(decorated)
        position: dict[str, int] = {}
        for b in ties:
            position.update((k, i) for i, k in enumerate(chm.bucket(b)))
        decorated.sort(key=lambda d: (d[0], d[1], position.get(d[2], 0)))
        return [d[2] for d in decorated]


def _tied_buckets(decorated: list[tuple[int, int, str]], shared: Mapping[int, int],
                  mask: int, value: Callable[[str], float] | None) -> list[int]:
    """The concurrent-map buckets holding two or more keys whose order can matter: all shared
    ones, or with ``value`` only those where two keys tie on it (NaN ties NaN, as in
    ``Double.compare``)."""
    multi = [b for b, n in shared.items() if n > 1]
    if value is None or not multi:
        return multi
    wanted = set(multi)
    seen: dict[int, set[Any]] = {}
    tied: list[int] = []
    for _, bucket, k in decorated:
        b = bucket & mask
        if b not in wanted:
            continue
        v = value(k)
        key = "nan" if v != v else v
        vals = seen.setdefault(b, set())
        if key in vals and b not in tied:
            tied.append(b)
        vals.add(key)
    return tied


class BundleDataView(Mapping[str, BundleData]):
    """Bundle data after one cycle's samples, each entry built when first read.

    Read-only from outside; the memo inside is an implementation detail. Entry for bundle ``b``:
    the snapshot's own ``bundleData[b]`` when it carries one (it already holds the samples), else
    ``previous[b]`` updated with ``stats`` ``samples`` times (one per report write the leader saw),
    else the first sample ``stats`` itself (then ``samples - 1`` more).

    It iterates in ``order`` when given (the order the leader put the bundles into its
    ``bundleData`` map, when ``stats`` is a lookup table in another order: the reader's table of
    every bundle, in the snapshot's order), else in ``stats``' order.
    """

    __slots__ = ("_built", "_given", "_order", "_prev", "_samples", "_stats")

    def __init__(
        self,
        stats: Mapping[str, NamespaceBundleStats],
        previous: Mapping[str, BundleData] | None = None,
        given: Mapping[str, BundleData] | None = None,
        samples: int = 1,
        order: Sequence[str] | None = None,
    ):
        self._stats = stats
        self._order = order
        self._prev = previous or {}
        self._given = given or {}
        self._built: dict[str, BundleData] = {}
        self._samples = samples

    def __getitem__(self, bundle: str) -> BundleData:
        data = self._given.get(bundle)  # stored data is used as is: nothing to build
        if data is not None and bundle in self._stats:
            return data
        data = self._built.get(bundle)
        if data is None:
            stats = self._stats[bundle]  # KeyError: not reported, so not in LoadData
            data = self._given.get(bundle)
            if data is None:
                base = self._prev.get(bundle)
                n = self._samples
                if base is None:
                    data, n = BundleData.first_sample(stats), n - 1
                else:
                    data = base
                for _ in range(n):
                    data = data.update(stats)
            self._built[bundle] = data
        return data

    def get(self, bundle: str, default: BundleData | None = None) -> BundleData | None:  # type: ignore[override]  # Mapping.get's overloads, one signature
        """``Mapping.get`` without its exception round trip (called per bundle per cycle)."""
        if bundle not in self._stats:
            return default
        data = self._given.get(bundle)
        return data if data is not None else self[bundle]

    def __iter__(self) -> Iterator[str]:
        return iter(self._stats if self._order is None else self._order)

    def __len__(self) -> int:
        return len(self._stats)

    def __contains__(self, bundle: object) -> bool:
        return bundle in self._stats

    def is_first_sample(self, bundle: str) -> bool:
        """True when the entry is just the latest stats (no history, no stored data)."""
        return bundle not in self._given and bundle not in self._prev and self._samples <= 1

    def stored(self) -> Mapping[str, BundleData]:
        """The stored data taken as is for every reported bundle it holds (``given``)."""
        return self._given

    def reported(self) -> Mapping[str, NamespaceBundleStats]:
        """The reported stats the entries are built from (bundle → its latest stats), a lookup
        table: it iterates in the view's order only when the view was given no ``order``."""
        return self._stats

    def first_samples_only(self) -> bool:
        """True when :meth:`is_first_sample` holds for every bundle."""
        return not self._given and not self._prev and self._samples <= 1

    def first_sample_values(self, by_rate: bool) -> Callable[[str], float] | None:
        """Each bundle's short-term message rate (or throughput) read from its stats, without
        building its ``BundleData``, when every entry is a first sample (both windows then hold
        exactly the stats: :meth:`BundleData.first_sample`, the same sums); else ``None``."""
        if not self.first_samples_only():
            return None
        stats = self._stats
        if by_rate:
            return lambda b: stats[b].msg_rate
        return lambda b: stats[b].throughput

    def materialized(self) -> dict[str, BundleData]:
        """Every entry, built (used when a sequence carries the data to its next cycle)."""
        return {b: self[b] for b in self}
