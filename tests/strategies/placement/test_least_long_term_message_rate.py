"""LeastLongTermMessageRate: Pulsar's scenario plus the rules behind it.

Source: ``ModularLoadManagerStrategyTest#testLeastLongTermMessageRate``
(``pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/ModularLoadManagerStrategyTest.java``;
there is no ``LeastLongTermMessageRateTest`` class in Pulsar). Brokers "1", "2", "3" have all
resources at 0 % and long-term rate in 100, 200, 300 msg/s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from random import Random
from types import MappingProxyType

import pytest

from lbctl.config import Settings
from lbctl.explain.words import text
from lbctl.model.javaorder import java_hash_order
from lbctl.model.load import BundleData, LocalBrokerData, ResourceUsage, TimeAverageBrokerData
from lbctl.model.loaddata import BrokerData, LoadData
from lbctl.strategies.base import PlacementRequest
from lbctl.strategies.builtin import PLACEMENT
from lbctl.strategies.placement.least_long_term_message_rate import LeastLongTermMessageRate
from tests.factories import broker, bundle_data

BUNDLE = "t/n/0x00000000_0xffffffff"


def _load(brokers: Mapping[str, BrokerData]) -> LoadData:
    order = java_hash_order(brokers)
    return LoadData(MappingProxyType({b: brokers[b] for b in order}), MappingProxyType({}))


def _data(rate_in: float, local: LocalBrokerData | None = None, **kw) -> BrokerData:
    return BrokerData(
        local=local or LocalBrokerData(), time_average=TimeAverageBrokerData(longTermMsgRateIn=rate_in), **kw
    )


def _select(data: LoadData, settings: Settings | None = None, seed: int = 0):
    strategy = LeastLongTermMessageRate()
    decision, _ = strategy.select(PlacementRequest(
        tuple(data.brokers), BUNDLE, data, settings or Settings.defaults(), Random(seed),
        BundleData.new()), strategy.initial_memory())
    return decision


def test_least_long_term_message_rate() -> None:
    brokers = {"1": _data(100), "2": _data(200), "3": _data(300)}
    assert _select(_load(brokers)).broker == "1"
    brokers["1"] = _data(400)
    assert _select(_load(brokers)).broker == "2"
    brokers["2"] = _data(200, LocalBrokerData(cpu=ResourceUsage(90, 100)))
    decision = _select(_load(brokers))
    assert decision.broker == "3"
    assert decision.scores["2"] == math.inf


# --- the rules -----------------------------------------------------------------------------------
def test_preallocated_bundles_count_towards_the_score() -> None:
    pre = MappingProxyType({"t/n/a": bundle_data(rate_in=150, long_term=(0, 0, 150, 0))})
    data = _load({"1": _data(100, preallocated=pre), "2": _data(200)})
    decision = _select(data)
    assert decision.scores == {"1": 250.0, "2": 200.0}
    assert decision.broker == "2"


def test_usage_at_the_threshold_is_not_overloaded() -> None:
    data = _load({"1": _data(100, LocalBrokerData(cpu=ResourceUsage(85, 100))), "2": _data(200)})
    assert _select(data).broker == "1"


def test_all_overloaded_means_all_are_best() -> None:
    hot = LocalBrokerData(bandwidthOut=ResourceUsage(99, 100))
    data = _load({"1": _data(100, hot), "2": _data(200, hot), "3": _data(300, hot)})
    decision = _select(data, seed=3)
    assert decision.best == ("1", "2", "3")
    assert decision.broker in decision.best
    assert "every candidate is overloaded" in text(decision.why)


def test_ties_keep_candidate_order_and_pick_with_rng() -> None:
    data = _load({"1": _data(100), "2": _data(100), "3": _data(300)})
    picks = {_select(data, seed=s).broker for s in range(20)}
    assert _select(data).best == ("1", "2")
    assert picks == {"1", "2"}
    # the pick is best[rng.randrange(len(best))]
    assert _select(data, seed=5).broker == ("1", "2")[Random(5).randrange(2)]


def test_overload_uses_the_five_argument_weighted_usage() -> None:
    heap = LocalBrokerData(memory=ResourceUsage(95, 100), directMemory=ResourceUsage(95, 100))
    data = _load({"1": _data(100, heap), "2": _data(200)})
    # defaults: memory and direct memory weights are 0, so neither counts
    assert _select(data).broker == "1"
    # the deprecated memory weight is read (5-argument form)
    heavy = Settings.defaults().with_values(loadBalancerMemoryResourceWeight=1.0)
    assert _select(data, heavy).broker == "2"


def test_bandwidth_weights_are_the_raw_deprecated_keys() -> None:
    busy = LocalBrokerData(bandwidthIn=ResourceUsage(90, 100))
    data = _load({"1": _data(100, busy), "2": _data(200)})
    # the correctly spelt key is not read by this strategy (it calls the misspelt getters)
    new_key = Settings.defaults().with_values(loadBalancerBandwidthInResourceWeight=0.5)
    assert _select(data, new_key).broker == "2"
    old_key = Settings.defaults().with_values(loadBalancerBandwithInResourceWeight=0.5)
    assert _select(data, old_key).broker == "1"


def test_why_names_the_winner_and_the_overloaded() -> None:
    hot = broker(cpu=(91, 100))
    data = _load({"1": _data(300, hot), "2": _data(120), "3": _data(200)})
    decision = _select(data)
    assert decision.broker == "2"
    assert "2 has the lowest long-term message rate 120.0 msg/s" in text(decision.why)
    assert "1 is overloaded (usage 91% > 85%) → +inf" in text(decision.why)
    assert decision.candidates == ("1", "2", "3")


def test_no_candidates() -> None:
    strategy = LeastLongTermMessageRate()
    decision, mem = strategy.select(
        PlacementRequest((), BUNDLE, _load({}), Settings.defaults(), Random(0), BundleData.new()),
        None)
    assert decision.broker is None and mem is None


def test_stateless_and_registered() -> None:
    strategy = PLACEMENT.create("org.apache.pulsar.broker.loadbalance.impl.LeastLongTermMessageRate")
    assert isinstance(strategy, LeastLongTermMessageRate)
    assert strategy.initial_memory() is None
    assert strategy.on_active_brokers_change(None, frozenset({"1"})) is None


@pytest.mark.parametrize("cpu", [86, 100])
def test_just_over_the_threshold_scores_infinity(cpu: int) -> None:
    data = _load({"1": _data(1, LocalBrokerData(cpu=ResourceUsage(cpu, 100))), "2": _data(500)})
    decision = _select(data)
    assert decision.scores["1"] == math.inf and decision.broker == "2"


def _java_rank(cands: tuple[str, ...], scores: Mapping[str, float]) -> tuple[list[str], float]:
    """Rule 3 as Java's loop writes it: a strictly lower score restarts the best list, an equal
    one joins it; with no best (NaN only) every candidate is."""
    best: list[str] = []
    least = math.inf
    for c in cands:
        s = scores[c]
        if s < least:
            best, least = [c], s
        elif s == least:
            best.append(c)
    return (best or list(cands)), least


@pytest.mark.parametrize("seed", range(40))
def test_whole_list_ranking_is_javas_loop(seed: int) -> None:
    """The ranking's whole-list form against Java's loop: ties, -0.0 before 0.0, +inf (all
    overloaded), NaN (never the least), repeated candidates."""
    from lbctl.strategies.placement.least_long_term_message_rate import _rank

    rng = Random(seed)
    brokers = [f"b{i}" for i in range(rng.randint(1, 60))]
    pool = [0.0, -0.0, 1.5, 2.0, math.inf, math.nan, 7.25]
    scores = {b: (rng.choice(pool) if rng.random() < 0.6 else rng.uniform(0, 10)) for b in brokers}
    if seed % 5 == 0:
        scores = {b: rng.choice([math.inf, math.nan]) for b in brokers}
    notes = {b: f"{b} is overloaded" for b, s in scores.items() if math.isinf(s)}
    for _ in range(5):
        cands = tuple(rng.sample(brokers, rng.randint(1, len(brokers))))
        if seed % 7 == 0:
            cands += cands[:2]
        ranking = _rank(cands, None, None, ({**scores}, {**notes}))  # type: ignore[arg-type]  # memo complete: load and settings unread
        best, least = _java_rank(cands, scores)
        assert list(ranking.best) == best
        assert (ranking.min_score == least and math.copysign(1, ranking.min_score)
                == math.copysign(1, least)) or (math.isnan(least) and math.isnan(ranking.min_score))
        assert list(ranking.notes) == [notes[c] for c in cands if c in notes]
        assert list(ranking.scores) == list(dict.fromkeys(cands))


@pytest.mark.parametrize("seed", range(40))
def test_a_view_ranks_as_its_names_do(seed: int) -> None:
    """A candidate list without a namespace's owners (an ``Excluding`` view) is ranked from its
    list's one ranking; the result equals ranking the remaining names themselves."""
    from lbctl.model.candidates import Excluding
    from lbctl.strategies.placement.least_long_term_message_rate import _BaseRanking, _rank

    rng = Random(1000 + seed)
    base = tuple(f"b{i}" for i in rng.sample(range(200), rng.randint(1, 80)))
    pool = [0.0, -0.0, 1.5, 2.0, math.inf, math.nan, 7.25]
    scores = {b: (rng.choice(pool) if rng.random() < 0.6 else rng.uniform(0, 10)) for b in base}
    if seed % 5 == 0:
        scores = {b: rng.choice([math.inf, math.nan]) for b in base}
    notes = {b: f"{b} is overloaded" for b, s in scores.items() if math.isinf(s)}
    ranked = _BaseRanking.of(base, (scores, notes))
    for _ in range(6):
        out = frozenset(rng.sample(base, rng.randint(0, len(base))))
        view = Excluding(base, out, frozenset(base))
        got = ranked.without(view)
        want = _rank(tuple(view), None, None, (scores, notes))  # type: ignore[arg-type]  # memo complete
        assert got.best == want.best
        assert math.copysign(1, got.min_score) == math.copysign(1, want.min_score)
        assert got.min_score == want.min_score or (math.isnan(got.min_score)
                                                   and math.isnan(want.min_score))
        assert got.notes == want.notes
        assert list(got.scores) == list(want.scores) and len(got.scores) == len(want.scores)
        assert all(got.scores[b] == want.scores[b] or math.isnan(want.scores[b])
                   for b in want.scores)
        assert not any(b in got.scores for b in out)


def test_select_over_a_view_is_select_over_its_names() -> None:
    """The strategy itself: the same pick (same random draw), best, scores and reason."""
    from lbctl.model.candidates import Excluding

    brokers = {f"broker-{i}": _data(100.0 * (i % 7)) for i in range(30)}
    brokers["broker-3"] = _data(0.0, LocalBrokerData(cpu=ResourceUsage(95.0, 100.0)))
    load = _load(brokers)
    base = tuple(java_hash_order(brokers))
    for out in (frozenset(), frozenset({"broker-0", "broker-7"}), frozenset(base[:-1]),
                frozenset(base)):
        view = Excluding(base, out, frozenset(base))
        a, _ = LeastLongTermMessageRate().select(PlacementRequest(
            view, BUNDLE, load, Settings.defaults(), Random(5), BundleData.new()), None)
        b, _ = LeastLongTermMessageRate().select(PlacementRequest(
            tuple(view), BUNDLE, load, Settings.defaults(), Random(5), BundleData.new()), None)
        assert (a.broker, a.best, text(a.why), dict(a.scores), tuple(a.candidates)) == (
            b.broker, b.best, text(b.why), dict(b.scores), tuple(b.candidates))
