"""The greedy bundle selector shared by ``ThresholdShedder`` and ``OverloadShedder``.

Both Pulsar classes (``…loadbalance.impl.ThresholdShedder#filterAndSelectBundle`` and the stream in
``OverloadShedder#findBundlesForUnloading``) pick bundles off one broker the same way:

1. Candidates are the entries of ``LoadData.getBundleDataForLoadShedding()`` (bundle data minus the
   system namespaces: ``pulsar/system`` from Pulsar 2.11 on, heartbeat and SLA-monitor ones) that
   belong to the broker's ``bundles`` set.
2. A bundle in ``recentlyUnloadedBundles`` is dropped (the leader already cut that map to
   ``loadBalancerSheddingGracePeriodMinutes``, so the strategy only tests membership).
3. Each candidate is valued by its *short-term* throughput, ``msgThroughputIn + msgThroughputOut``
   of ``shortTermData`` (bytes/s).
4. Candidates are sorted by that value, largest first, with a stable sort: equal values keep the
   iteration order of the shedding map (see :func:`shedding_bundles`).
5. Walking that list, a bundle is taken while the running sum is below the amount to offload, and
   the first one is always taken ("at least one bundle"): so the selection is the smallest prefix
   whose sum reaches the amount, or every candidate if they never reach it.

Besides the selections, :func:`select_greedy` reports a :class:`BundleCandidate` for every bundle of
the broker it looked at, chosen or not and why (a :class:`GreedyWhy` or an :class:`UnrankedWhy`:
codes and figures, worded by :mod:`lbctl.explain.words.select`), so ``lbctl explain`` can replay
the loop.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from operator import add, attrgetter
from typing import Any, Literal

from msgspec import Struct

from lbctl.model.bundlecolumns import BundleColumns
from lbctl.model.decision import BundleCandidate, Reason, Selection, Why
from lbctl.model.load import BundleData
from lbctl.model.loaddata import BrokerData, BundleDataView, LoadData

#: Why a shed broker's bundle is out of the selection before any value counts.
Unranked = Literal[
    "recently-unloaded",  # in recentlyUnloadedBundles (the grace period)
    "split-away",  # split in this cycle: no bundle data until the next update
    "system-namespace",  # pulsar/system, heartbeat, SLA monitor
    "no-bundle-data",  # Pulsar only ranks bundles it has BundleData for
]


class UnrankedWhy(Why, frozen=True):
    """A reason of :data:`Unranked` (no figures)."""

    code: Unranked


#: one record per reason, shared by every bundle it applies to
RECENTLY = UnrankedWhy("recently-unloaded")
SPLIT_AWAY = UnrankedWhy("split-away")
SYSTEM_NAMESPACE = UnrankedWhy("system-namespace")
NO_BUNDLE_DATA = UnrankedWhy("no-bundle-data")


#: How the selection off an overloaded broker ended (``ThresholdShedder``, ``OverloadShedder``).
Offload = Literal[
    "shed",  # bundles selected
    "none-sheddable",  # more than one bundle, none eligible
    "one-bundle",  # Pulsar never sheds a single-bundle broker
    "no-bundles",
]


#: What the greedy loop did with a ranked bundle.
Greedy = Literal[
    "largest",  # the first: at least one bundle is always selected (value)
    "below-amount",  # selected: the marked sum was below the amount
    "enough",  # not needed: the marked sum reached the amount
]


class GreedyWhy(Why, frozen=True):
    """A reason of :data:`Greedy`: the bundle's value, the throughput marked before it and the
    amount to offload (bytes/s)."""

    code: Greedy
    value: float = 0.0
    marked: float = 0.0
    amount: float = 0.0


def descending(value: float) -> tuple[int, float, float]:
    """Sort key for ``Double.compare(b, a)`` (largest first), the comparator of the greedy
    shedders' and UniformLoadShedder's bundle sorts (OverloadShedder, ThresholdShedder,
    UniformLoadShedder at 085e7b8f428f): NaN, which ``Double.compare`` ranks above everything,
    comes first, and ``0.0`` before ``-0.0`` (a bundle whose two throughput figures are both
    ``-0.0``), which Python's ``<`` calls equal."""
    return (0, 0.0, 0.0) if value != value else (1, -value, -math.copysign(1.0, value))


def is_sheddable_data(load: LoadData, bundle: str) -> bool:
    """Whether ``bundle`` is a key of ``LoadData.getBundleDataForLoadShedding()``: it has bundle
    data and is not in a system namespace (``pulsar/system``, heartbeat, SLA monitor)."""
    return load.is_sheddable(bundle)


def shedding_candidates(load: LoadData, bundles: Iterable[str],
                        value: Callable[[str], float] | None = None) -> list[str]:
    """The ``bundles`` (of one broker) that the shedding map holds, in the order Java iterates it.

    Pulsar builds that map with ``Collectors.toMap`` over the ``bundleData``
    ``ConcurrentHashMap`` (``LoadData`` at commit 19938526): a ``HashMap`` filled one ``put`` at a
    time — not a presized ``new HashMap<>(map)`` copy — whose order
    :meth:`~lbctl.strategies.base.LoadData.shedding_order` reproduces.
    """
    return load.shedding_order(_partition(load, bundles)[0], value)


def _partition(load: LoadData, bundles: Iterable[str]) -> tuple[list[str], list[str]]:
    """The ``bundles`` the shedding map holds, and the others (in ``bundles``' order): one pass
    for what :func:`shedding_candidates` and :func:`unranked_candidates` each test
    (:meth:`LoadData.split_sheddable`)."""
    return load.split_sheddable(bundles if isinstance(bundles, (tuple, list)) else tuple(bundles))


class GreedyResult(Struct, frozen=True):
    """What the greedy loop chose off one broker, and every bundle it looked at."""

    selections: tuple[Selection, ...]
    candidates: tuple[BundleCandidate, ...]
    marked: float  # throughput (bytes/s) of the chosen bundles


_THROUGHPUT_IN = attrgetter("msgThroughputIn")
_THROUGHPUT_OUT = attrgetter("msgThroughputOut")


def _short_term_throughput_of(load: LoadData) -> Callable[[str], float]:
    """bundle → its short-term throughput. When every bundle's data is just this cycle's first
    sample, that is its reported stats' ``msgThroughputIn + msgThroughputOut`` (what
    ``BundleData.first_sample`` stores, summed in the same order), read without building the
    bundle's ``BundleData``."""
    table = load.bundle_data
    first = table.first_sample_values(False) if isinstance(table, BundleDataView) else None
    if first is not None:
        return first
    stored = table.stored() if isinstance(table, BundleDataView) else None
    if isinstance(stored, BundleColumns):
        # a sequence's later cycle: the view takes the columns' entry for every bundle they
        # hold; the columns add each bundle's two figures once, as the object would
        short = stored.short_term_throughputs()

        def column(bundle: str) -> float:
            v = short.get(bundle)
            return v if v is not None else short_term_throughput(table[bundle])

        return column
    return lambda bundle: short_term_throughput(table[bundle])


def short_term_throughput(data: BundleData) -> float:
    st = data.shortTermData
    return st.msgThroughputIn + st.msgThroughputOut


def short_term_rate(data: BundleData) -> float:
    st = data.shortTermData
    return st.msgRateIn + st.msgRateOut


def unranked_candidates(
    load: LoadData, broker: str, bundles: Iterable[str]
) -> list[BundleCandidate]:
    """The broker's bundles that a selection loop never sees, so an explanation is complete:
    system namespaces (heartbeat / SLA monitor) and bundles without ``BundleData``."""
    return _unranked(load, broker, [b for b in bundles if not is_sheddable_data(load, b)])


def _unranked(load: LoadData, broker: str, bundles: Iterable[str]) -> list[BundleCandidate]:
    """:func:`unranked_candidates` of bundles already known not to be in the shedding map."""
    out = []
    for bundle in bundles:
        if bundle in load.split_away:
            why = SPLIT_AWAY
        elif load.is_system_bundle(bundle):
            why = SYSTEM_NAMESPACE
        else:
            why = NO_BUNDLE_DATA
        out.append(BundleCandidate(broker, bundle, 0.0, False, why))
    return out


#: the bundle data view (by identity) the rankings below were made from, and (a broker's bundles,
#: what else the shedding map's keys and order depend on) → that ranking
_RANKED: list[tuple[BundleDataView, dict[Any, Any]]] = []


def _tie_key(value: float) -> object:
    """What ``Double.compare`` ties on, as a dict key: every NaN alike, and ``-0.0`` apart from
    ``0.0`` (which Python's ``==`` and ``hash`` would merge)."""
    if value != value:
        return "nan"
    if value == 0.0 and math.copysign(1.0, value) < 0:
        return "-0"
    return value


def _ranking(load: LoadData, bundles: Iterable[str]
             ) -> tuple[list[str], list[float], list[str]]:
    """The broker's sheddable bundles ranked by short-term throughput (largest first; ties in
    the shedding map's order), their throughputs, and the bundles not in that map.

    A function of the bundle data and the broker's bundles: a cycle that sees the same bundle
    data object (a sequence's snapshot with no report written since the last one) ranks the
    same, so the last bundle data's rankings are kept."""
    table = load.bundle_data
    bundles = tuple(bundles)
    key = (bundles, load.split_away, load.pulsar_system, load.system_bundles)
    # only the load manager's own views: read-only, so the same object holds the same data
    memo: dict[Any, Any] | None = None
    if isinstance(table, BundleDataView):
        slot = _RANKED[0] if _RANKED else None
        if slot is None or slot[0] is not table:
            slot = (table, {})
            _RANKED[:] = [slot]
        memo = slot[1]
        hit: tuple[list[str], list[float], list[str]] | None = memo.get(key)
        if hit is not None:
            return hit
    throughput = _short_term_throughput_of(load)
    sheddable, other = _partition(load, bundles)
    distinct = list(dict.fromkeys(sheddable))
    if isinstance(table, BundleDataView) and table.first_samples_only():
        # _short_term_throughput_of's first case for every bundle at once: the same two
        # figures added in the same order, by C calls instead of a Python call per bundle
        stats = list(map(table.reported().__getitem__, distinct))
        values = list(map(add, map(_THROUGHPUT_IN, stats), map(_THROUGHPUT_OUT, stats)))
    else:
        values = list(map(throughput, distinct))
    nan = any(map(math.isnan, values))
    # -0.0 (which ``in`` finds as 0.0) sorts after 0.0 under Double.compare
    exact = nan or (0.0 in values and any(v == 0.0 and math.copysign(1.0, v) < 0
                                          for v in values))
    order = distinct
    if nan or len(set(values)) < len(values):
        # The stable sort below keeps the shedding map's order among bundles that tie on their
        # value (every NaN ties every NaN; 0.0 and -0.0 do not) and orders the others by value
        # alone: only the tied ones need the map's order (a Java hash of each name). They go
        # first in that order, the others after them in any order.
        count = Counter(_tie_key(v) for v in values)
        tied = [b for b, v in zip(distinct, values, strict=True) if count[_tie_key(v)] > 1]
        alone = [b for b, v in zip(distinct, values, strict=True) if count[_tie_key(v)] == 1]
        value_of = dict(zip(distinct, values, strict=True))
        order = (load.shedding_order(tied, throughput) if tied else []) + alone
        values = list(map(value_of.__getitem__, order))
    # list.sort is stable, like Java's Stream.sorted: ties keep the map's iteration order.
    # Dropping recently unloaded bundles before or after a stable sort gives the same order.
    if exact:  # Double.compare ranks NaN first, 0.0 before -0.0
        keys: list[tuple[int, float, float]] | list[float] = [descending(v) for v in values]
    else:  # the same order: no NaN, no -0.0
        keys = [-v for v in values]
    ranks = sorted(range(len(order)), key=keys.__getitem__)
    hit = ([order[i] for i in ranks], [values[i] for i in ranks], other)
    if memo is not None:
        memo[key] = hit
    return hit


def select_greedy(
    load: LoadData,
    broker: str,
    data: BrokerData,
    amount: float,
    reason: Reason = Reason.OVERLOADED,
) -> GreedyResult:
    """Pick bundles off ``broker`` until their short-term throughput reaches ``amount`` (bytes/s).

    Tie rule: equal throughputs keep the shedding map's Java iteration order (stable sort).
    Besides the bundles in the loop, the broker's bundles that Pulsar never ranks (system
    namespaces, or no ``BundleData``) are listed as not chosen, after the ranked ones.
    """
    table = load.bundle_data
    ranked, values, other = _ranking(load, data.local.bundles)

    selections: list[Selection] = []
    candidates: list[BundleCandidate] = []
    append = candidates.append
    recently = load.recently_unloaded
    marked = 0.0
    stop = len(ranked)
    for i, bundle in enumerate(ranked):
        value = values[i]
        if bundle in recently:
            append(BundleCandidate(broker, bundle, value, False, RECENTLY))
            continue
        if not (marked < amount or not selections):
            stop = i  # enough is marked: nothing changes for the rest (below)
            break
        why = (GreedyWhy("below-amount", value, marked, amount) if selections
               else GreedyWhy("largest", value, marked, amount))
        marked += value
        selections.append(
            Selection(broker, bundle, reason, short_term_rate(table[bundle]), value)
        )
        append(BundleCandidate(broker, bundle, value, True, why))
    if stop < len(ranked):
        # every later bundle is either recently unloaded or not needed (one reason for all)
        not_needed = GreedyWhy("enough", 0.0, marked, amount)
        candidates += [
            BundleCandidate(broker, bundle, value, False,
                            RECENTLY if bundle in recently else not_needed)
            for bundle, value in zip(ranked[stop:], values[stop:], strict=True)]

    candidates.extend(_unranked(load, broker, other))
    return GreedyResult(tuple(selections), tuple(candidates), marked)
