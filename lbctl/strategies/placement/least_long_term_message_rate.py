"""LeastLongTermMessageRate: place a bundle on the broker with the least long-term message rate.

Mirrors ``org.apache.pulsar.broker.loadbalance.impl.LeastLongTermMessageRate``, Pulsar's default
``loadBalancerLoadPlacementStrategy``, as of the post-PIP-358 source (commit ``06c80c77``).

Rules:

1. A candidate whose weighted max resource usage is strictly above
   ``loadBalancerBrokerOverloadedThresholdPercentage`` / 100 scores +∞. The usage is the
   deprecated *5-argument* ``getMaxResourceUsageWithWeight(cpu, memory, directMemory, bandwidthIn,
   bandwidthOut)``, weighted by ``loadBalancerCPUResourceWeight``,
   ``loadBalancerMemoryResourceWeight`` (default 0, so JVM heap does not count),
   ``loadBalancerDirectMemoryResourceWeight`` (default 0), and the *raw* deprecated keys
   ``loadBalancerBandwithInResourceWeight`` / ``loadBalancerBandwithOutResourceWeight`` (the
   source calls their Lombok getters, not the ``Bandwidth`` getters with fallback, so the
   correctly spelt keys are not read here).
2. Otherwise the score is the long-term message rate (in + out) of the bundles preallocated to it
   plus its ``TimeAverageBrokerData`` long-term rate in + out.
3. The best set holds every candidate with the minimum score (exact ``==``); since +∞ == +∞, when
   all are overloaded all are best. An empty best set falls back to all candidates.
4. One of the best is picked uniformly at random (``ThreadLocalRandom`` in Java; lbctl uses
   ``rng.randrange(len(best))`` with ``--seed``).

Before Pulsar 4.0 (PIP-358) rule 1's usage was the unweighted ``getMaxResourceUsage()`` (the version
profile chooses, :func:`overload_usage`).

There is no ``1/(threshold - usage)`` weighting any more (removed by PR #442); the +∞ rule is what
is left of it.

Ties: candidates are scanned in the order given (Java ``HashSet`` order), and ``best`` keeps that
order, which is what the random index is drawn over.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain, filterfalse
from types import MappingProxyType
from typing import Any, Literal

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.candidates import Excluding
from lbctl.model.decision import PlacementDecision, Why
from lbctl.model.load import LocalBrokerData
from lbctl.model.loaddata import BrokerData, LoadData
from lbctl.strategies.base import NO_PLAN, PlacementRequest
from lbctl.strategies.registry import PLACEMENT

NAME = "LeastLongTermMessageRate"


#: How LeastLongTermMessageRate picked, and why a candidate scored +inf.
Least = Literal[
    "all-overloaded",  # every candidate at +inf: a pick among all of them
    "lowest",  # one candidate has the least score
    "tie",  # several share it: a random pick among them
    "no-candidates",
    "no-load-data",  # a +inf note: broker
    "overloaded",  # a +inf note: broker, usage, threshold
]


class LeastWhy(Why, frozen=True):
    """A reason of :data:`Least`: the pick among ``best`` at ``score``, and the +inf notes of
    the candidate set (one tuple shared by every placement over the set)."""

    code: Least
    pick: str = ""
    best: tuple[str, ...] = ()
    score: float = 0.0
    notes: tuple[LeastWhy, ...] = ()
    broker: str = ""
    usage: float = 0.0
    threshold: float = 0.0


NO_CANDIDATES = LeastWhy("no-candidates")


def weighted_usage5(local: LocalBrokerData, settings: Settings) -> float:
    """Rule 1's usage: the 5-argument weighted max, with the raw deprecated bandwidth weights."""
    return local.max_resource_usage_with_weight(
        float(settings["loadBalancerCPUResourceWeight"]),
        float(settings["loadBalancerDirectMemoryResourceWeight"]),
        float(settings["loadBalancerBandwithInResourceWeight"]),
        float(settings["loadBalancerBandwithOutResourceWeight"]),
        memory_weight=float(settings["loadBalancerMemoryResourceWeight"]),
    )


def overload_usage(local: LocalBrokerData, settings: Settings) -> float:
    """Rule 1's usage in the modelled release: :func:`weighted_usage5` from Pulsar 4.0 (PIP-358),
    the unweighted ``getMaxResourceUsage()`` before."""
    if settings.profile["overloadUsage"] == "weighted":
        return weighted_usage5(local, settings)
    return local.max_resource_usage()


def long_term_rate(data: BrokerData) -> float:
    """Rule 2: preallocated bundles' long-term rate, then the broker's own long-term rate."""
    total = 0.0
    for bundle in data.preallocated.values():
        lt = bundle.longTermData
        total += lt.msgRateIn + lt.msgRateOut
    ta = data.time_average
    return total + (ta.longTermMsgRateIn + ta.longTermMsgRateOut)


class _Ranking(Struct, frozen=True):
    """The outcome of rules 1-3 for one candidate set (everything but the random pick): the
    scores, the best, the least score, how the pick is made, and the +inf brokers' notes."""

    scores: Mapping[str, float]
    best: tuple[str, ...]
    min_score: float
    notes: tuple[LeastWhy, ...]
    code: Least = "lowest"

    @classmethod
    def of(cls, scores: Mapping[str, float], best: tuple[str, ...], min_score: float,
           notes: tuple[LeastWhy, ...]) -> _Ranking:
        code: Least = ("all-overloaded" if math.isinf(min_score) or math.isnan(min_score) else
                       "lowest" if len(best) == 1 else "tie")
        return cls(scores, best, min_score, notes, code)


@PLACEMENT.register(NAME, reads=(
    "loadBalancerCPUResourceWeight", "loadBalancerMemoryResourceWeight",
    "loadBalancerDirectMemoryResourceWeight", "loadBalancerBandwithInResourceWeight",
    "loadBalancerBandwithOutResourceWeight", "loadBalancerBrokerOverloadedThresholdPercentage"))
class LeastLongTermMessageRate:
    """See the module docstring. Keeps no state between calls.

    Scores depend only on the load data and the settings, and a cycle places many bundles over
    the same candidate sets, so rankings are memoised per (load data, candidate set); the random
    pick is still drawn on every call, exactly as often as Java draws it.
    """

    name = NAME

    def __init__(self) -> None:
        self._memo_load: LoadData | None = None  # held, so that identity means "same data"
        self._memo_settings: Settings | None = None  # held likewise
        self._memo_key: tuple[Any, ...] | None = None
        self._memo: dict[tuple[str, ...], _Ranking] = {}
        self._by_id: dict[int, tuple[tuple[str, ...], _Ranking]] = {}
        self._bases: dict[int, _BaseRanking] = {}  # id(candidate tuple) -> its ranking
        self._views: dict[tuple[int, frozenset[str]], tuple[tuple[str, ...], _Ranking]] = {}
        # broker -> score, and broker -> note for those at +inf
        self._scores: tuple[dict[str, float], dict[str, LeastWhy]] = ({}, {})

    def initial_memory(self) -> None:
        return None

    def select(self, request: PlacementRequest, memory: Any) -> tuple[PlacementDecision, Any]:
        """``LeastLongTermMessageRate.selectBroker``: rank the candidates (rules 1-3, memoised
        per candidate set), then a uniform random pick among the best."""
        candidates, load, settings = request.candidates, request.load, request.settings
        cands: Sequence[str]
        if isinstance(candidates, Excluding):
            cands = candidates
            ranking = self._view_ranking(candidates, load, settings)
        else:
            cands = tuple(candidates)
            ranking = self._ranking(cands, load, settings)
        best = ranking.best
        if not best:
            return PlacementDecision(NAME, request.bundle, None, cands,
                                     why=NO_CANDIDATES), memory
        pick = best[request.rng.randrange(len(best))]
        why = LeastWhy(ranking.code, pick, best, ranking.min_score, ranking.notes)
        return PlacementDecision(
            NAME, request.bundle, pick, cands, ranking.scores, best, why
        ), memory

    def _fresh(self, load: LoadData, settings: Settings) -> None:
        """Forget every ranking when the load data or the settings the scores read change.

        The same load data with the same ``Settings`` object (never changed in place) is known
        by identity: its values are not read again for each bundle placed."""
        if self._memo_load is load and self._memo_settings is settings:
            return
        key = _settings_key(settings)
        self._memo_settings = settings
        if self._memo_load is not load or self._memo_key != key:
            self._memo_load, self._memo_key, self._memo = load, key, {}
            self._scores = ({}, {})
            self._by_id = {}
            self._bases = {}
            self._views = {}

    def _view_ranking(self, view: Excluding, load: LoadData, settings: Settings) -> _Ranking:
        """Rule 3 over ``view`` (a candidate list without a namespace's owners): its list is
        ranked once (:class:`_BaseRanking`), and each view walks that order past its few
        excluded brokers."""
        self._fresh(load, settings)
        key = (id(view.base), view.excluded)
        known = self._views.get(key)
        if known is not None and known[0] is view.base:
            return known[1]
        base = self._bases.get(id(view.base))
        if base is None or base.names is not view.base:
            _fill(view.base, load, settings, self._scores)
            base = self._bases[id(view.base)] = _BaseRanking.of(view.base, self._scores)
        ranking = base.without(view)
        self._views[key] = (view.base, ranking)  # holding the base: its id is not reused
        return ranking

    def _ranking(self, cands: tuple[str, ...], load: LoadData, settings: Settings) -> _Ranking:
        self._fresh(load, settings)
        # the load manager hands the same tuple object for every bundle of a namespace: found by
        # identity first (hashing a 10,000-broker tuple costs more than ranking a small one)
        known = self._by_id.get(id(cands))
        if known is not None and known[0] is cands:
            return known[1]
        ranking = self._memo.get(cands)
        if ranking is None:
            ranking = self._memo[cands] = _rank(cands, load, settings, self._scores)
        self._by_id[id(cands)] = (cands, ranking)  # holding cands: its id is not reused
        return ranking

    def on_active_brokers_change(self, memory: Any, active: frozenset[str]) -> Any:
        return memory

    def on_unload_attempt_completed(self, memory: Any, planned: Mapping[str, str] = NO_PLAN,
                                    settings: Settings | None = None) -> Any:
        return memory

    def on_bundle_data_update(self, memory: Any, load: LoadData) -> Any:
        return memory


def _settings_key(settings: Settings) -> tuple[Any, ...]:
    return tuple(settings[k] for k in (
        "loadBalancerBrokerOverloadedThresholdPercentage", "loadBalancerCPUResourceWeight",
        "loadBalancerDirectMemoryResourceWeight", "loadBalancerBandwithInResourceWeight",
        "loadBalancerBandwithOutResourceWeight", "loadBalancerMemoryResourceWeight"))


def _score(broker: str, load: LoadData, settings: Settings) -> tuple[float, LeastWhy | None]:
    """Rules 1-2 for one broker: its score, and a note when it is +inf."""
    bd = load.brokers.get(broker)
    if bd is None:
        # Pulsar would fail on a candidate without load data; lbctl ranks it last.
        return math.inf, LeastWhy("no-load-data", broker=broker)
    threshold, usage_of = _rule1(settings)
    return _scored(broker, bd, threshold, usage_of)


def _rule1(settings: Settings) -> tuple[float, Callable[[LocalBrokerData], float]]:
    """Rule 1's threshold and usage function, the settings read once for a whole candidate set
    (a first fill scores every broker: 10,000 lookups of six settings each otherwise). The same
    values and the same calls as :func:`overload_usage` and :func:`weighted_usage5`."""
    threshold = float(settings["loadBalancerBrokerOverloadedThresholdPercentage"]) / 100.0
    if settings.profile["overloadUsage"] != "weighted":
        return threshold, LocalBrokerData.max_resource_usage
    weights = (float(settings["loadBalancerCPUResourceWeight"]),
               float(settings["loadBalancerDirectMemoryResourceWeight"]),
               float(settings["loadBalancerBandwithInResourceWeight"]),
               float(settings["loadBalancerBandwithOutResourceWeight"]))
    memory_weight = float(settings["loadBalancerMemoryResourceWeight"])

    def usage_of(local: LocalBrokerData) -> float:
        return local.max_resource_usage_with_weight(*weights, memory_weight=memory_weight)

    return threshold, usage_of


def _scored(broker: str, bd: BrokerData, threshold: float,
            usage_of: Callable[[LocalBrokerData], float]) -> tuple[float, LeastWhy | None]:
    """Rules 1-2 for a broker with load data, given :func:`_rule1`."""
    usage = usage_of(bd.local)
    if usage > threshold:
        return math.inf, LeastWhy("overloaded", broker=broker, usage=usage,
                                  threshold=threshold)
    return long_term_rate(bd), None


def _fill(cands: Sequence[str], load: LoadData, settings: Settings,
          memo: tuple[dict[str, float], dict[str, LeastWhy]]) -> None:
    """Score the candidates not scored yet (rules 1-2) into ``memo``. The settings are read at
    the first candidate with load data, as :func:`_score` reads them (none without)."""
    scored, noted = memo
    if all(map(scored.__contains__, cands)):
        return
    brokers = load.brokers
    rule1: tuple[float, Callable[[LocalBrokerData], float]] | None = None
    for c in cands:
        if c in scored:
            continue
        bd = brokers.get(c)
        if bd is None:
            score, note = _score(c, load, settings)
        else:
            if rule1 is None:
                rule1 = _rule1(settings)
            score, note = _scored(c, bd, *rule1)
        scored[c] = score
        if note:
            noted[c] = note


def _rank(
    cands: tuple[str, ...], load: LoadData, settings: Settings,
    memo: tuple[dict[str, float], dict[str, LeastWhy]],
) -> _Ranking:
    """Rule 3 over ``cands`` in their order (broker scores memoised in ``memo``: each broker's
    score, and the note of those at +inf).

    Java keeps the first candidate whose score is strictly lower than the least so far and adds
    those equal to it: the result is every candidate equal to the first-met minimum, in order.
    That is computed with whole-list operations (one score lookup per candidate, ``min`` from
    +inf — NaN is never lower, as in Java — and a count of the minimum), so that the thousands
    of candidate sets of a large cycle cost a copy each rather than a Python step per broker."""
    _fill(cands, load, settings, memo)
    scored, noted = memo
    values = list(map(scored.__getitem__, cands))
    min_score = min(chain((math.inf,), values))
    ties = values.count(min_score)
    if ties == 0:
        best = list(cands)  # NaN scores only; Pulsar's "all overloaded" fallback
    elif ties == 1:
        best = [cands[values.index(min_score)]]
    else:
        best = [c for c, v in zip(cands, values, strict=True) if v == min_score]
    notes = tuple(map(noted.__getitem__, filter(noted.__contains__, cands))) if noted else ()
    return _Ranking.of(MappingProxyType(dict(zip(cands, values, strict=True))), tuple(best),
                    min_score, notes)


class _BaseRanking:
    """One candidate list ranked once, for the views that drop a few of its brokers: its scores
    in order, its positions sorted by (score, position) — NaN left out, as it is never the least
    — and the notes of its +inf brokers with their positions."""

    __slots__ = ("names", "notes", "order", "scores")

    def __init__(self, names: tuple[str, ...], scores: dict[str, float],
                 order: list[int], notes: list[tuple[int, LeastWhy]]) -> None:
        self.names = names
        self.scores = scores
        self.order = order
        self.notes = notes

    @classmethod
    def of(cls, names: tuple[str, ...],
           memo: tuple[dict[str, float], dict[str, LeastWhy]]) -> _BaseRanking:
        scored, noted = memo
        values = list(map(scored.__getitem__, names))
        order = sorted((i for i, v in enumerate(values) if v == v),  # not NaN
                       key=lambda i: (values[i], i))
        notes = [(i, noted[b]) for i, b in enumerate(names) if b in noted]
        return cls(names, dict(zip(names, values, strict=True)), order, notes)

    def without(self, view: Excluding) -> _Ranking:
        """Rule 3 over ``view``: the least score not excluded, and every view broker equal to it
        (in list order, the first one's score being the least Java keeps — -0.0 or 0.0 as met);
        when every view broker is NaN, all of them (the loop's fallback)."""
        names, scores, out = self.names, self.scores, view.excluded
        least: float | None = None
        group: list[int] = []
        for i in self.order:
            if names[i] in out:
                continue
            v = scores[names[i]]
            if least is None:
                least = v
            elif v != least:
                break
            group.append(i)
        if not group:
            best: tuple[str, ...] = view.items()
            min_score = math.inf
        else:
            group.sort()
            best = tuple(names[i] for i in group)
            min_score = scores[names[group[0]]]
        notes = tuple(n for i, n in self.notes if names[i] not in out)
        return _Ranking.of(_ScoresWithout(scores, out, len(view)), best, min_score, notes)


class _ScoresWithout(Mapping[str, float]):
    """A list's scores without the excluded brokers' (a view: built in no time, read only by an
    explanation)."""

    __slots__ = ("_len", "_out", "_scores")

    def __init__(self, scores: dict[str, float], out: frozenset[str], length: int) -> None:
        self._scores, self._out, self._len = scores, out, length

    def __getitem__(self, name: str) -> float:
        if name in self._out:
            raise KeyError(name)
        return self._scores[name]

    def __iter__(self) -> Iterator[str]:
        return filterfalse(self._out.__contains__, self._scores)

    def __len__(self) -> int:
        return self._len
