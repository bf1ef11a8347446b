"""AvgShedder: Pulsar's ``AvgShedderTest`` scenarios, plus memory and explanations.

Source: ``pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/impl/AvgShedderTest.java``.
Java builds every broker with cpu/memory/bandwidth ``ResourceUsage()`` (0 %), sets the cpu usage and
the broker's message rates directly, and gives ``broker1`` (and ``broker3``) 11 bundles whose
short-term rate is 450 in + 450 out. ``selectBroker`` is asked with all brokers as candidates.
"""

from __future__ import annotations

from collections import Counter
from random import Random
from types import MappingProxyType

import pytest

from lbctl.config import Settings
from lbctl.explain.words import text
from lbctl.model.decision import Label, Reason
from lbctl.model.javaorder import java_hash_order
from lbctl.model.javasort import CONTRACT_MESSAGE
from lbctl.model.loaddata import LoadData
from lbctl.records import replace
from lbctl.strategies.base import PlacementRequest
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.shedding.avg import (
    AvgPicks,
    AvgShedder,
    AvgShedderMemory,
    AvgShedderPlacement,
)
from lbctl.versions import newest
from tests.factories import broker, bundle_data, hashed_names, load

MB = 1024 * 1024


def _broker(cpu: float, rate: float, bundles: tuple[str, ...] = (), tp: float = 0.0):
    return broker(
        cpu=(cpu, 100),
        msg_rate_in=rate,
        msg_rate_out=rate,
        tp_in=tp,
        tp_out=tp,
        bundle_names=bundles,
    )


def _bundles(prefix: str, n: int = 11) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(n))


def _three_brokers(cpu1: float, cpu2: float) -> LoadData:
    names = _bundles("bundle-")
    return load(
        {
            "broker1": _broker(cpu1, 10000, names),
            "broker2": _broker(cpu2, 1000),
            "broker3": _broker(50, 5000),  # in the middle
        },
        bundle_data={b: bundle_data(rate_in=450, rate_out=450) for b in names},
    )


def _place(data: LoadData, decision, settings: Settings) -> dict[str, str]:
    """AvgShedder as placement for every selected bundle, all brokers as candidates."""
    planned = {s.bundle: s.destination for s in decision.selections}
    strategy = AvgShedderPlacement()
    out = {}
    for s in decision.selections:
        d, _ = strategy.select(PlacementRequest(
            tuple(data.brokers), s.bundle, data, settings, Random(0),
            data.bundle_data[s.bundle], planned), strategy.initial_memory())
        out[s.bundle] = d.broker
    return out


# --- AvgShedderTest ------------------------------------------------------------------------------
def test_hit_high_threshold() -> None:
    settings = Settings.defaults().with_values(
        maxUnloadPercentage=0.5,
        loadBalancerAvgShedderHighThreshold=40,
        loadBalancerAvgShedderHitCountHighThreshold=2,
    )
    data = _three_brokers(80, 30)
    shedder = AvgShedder()
    # first time: the hit count is not enough
    first, mem = shedder.shed(data, settings, shedder.initial_memory())
    assert first.selections == ()
    # second time: (20000 - 2000) / 2 = 9000 msg/s = 10 bundles of 900
    second, mem = shedder.shed(data, settings, mem)
    assert len(second.selections) == 10
    assert {s.broker for s in second.selections} == {"broker1"}
    assert set(_place(data, second, settings).values()) == {"broker2"}


def test_hit_low_threshold() -> None:
    hit_count_low = 6
    settings = Settings.defaults().with_values(
        maxUnloadPercentage=0.5,
        loadBalancerAvgShedderLowThreshold=20,
        loadBalancerAvgShedderHitCountLowThreshold=hit_count_low,
    )
    data = _three_brokers(60, 40)
    shedder = AvgShedder()
    mem = shedder.initial_memory()
    for _ in range(hit_count_low - 1):
        decision, mem = shedder.shed(data, settings, mem)
        assert decision.selections == ()
    decision, mem = shedder.shed(data, settings, mem)
    assert len(decision.selections) == 10
    assert {s.broker for s in decision.selections} == {"broker1"}
    assert set(_place(data, decision, settings).values()) == {"broker2"}


def test_shedding_multiple_pairs() -> None:
    settings = Settings.defaults().with_values(
        maxUnloadPercentage=0.5,
        loadBalancerAvgShedderHighThreshold=40,
        loadBalancerAvgShedderHitCountHighThreshold=2,
    )
    b1, b3 = _bundles("bundle1-"), _bundles("bundle3-")
    data = load(
        {
            "broker1": _broker(80, 10000, b1),  # pair broker1 and broker2
            "broker2": _broker(30, 1000),
            "broker3": _broker(75, 10000, b3),  # pair broker3 and broker4
            "broker4": _broker(35, 1000),
        },
        bundle_data={b: bundle_data(rate_in=450, rate_out=450) for b in b1 + b3},
    )
    shedder = AvgShedder()
    first, mem = shedder.shed(data, settings, shedder.initial_memory())
    assert first.selections == ()
    second, mem = shedder.shed(data, settings, mem)
    assert len(second.selections) == 20
    assert Counter(s.broker for s in second.selections) == {"broker1": 10, "broker3": 10}
    placed = _place(data, second, settings)
    for bundle, dest in placed.items():
        assert dest == ("broker2" if bundle.startswith("bundle1-") else "broker4")


# --- memory carried across calls -----------------------------------------------------------------
def test_hit_counts_are_carried_in_memory_and_reset_when_shed() -> None:
    settings = Settings.defaults().with_values(maxUnloadPercentage=0.5)
    data = _three_brokers(80, 30)
    shedder = AvgShedder()
    _, mem = shedder.shed(data, settings, shedder.initial_memory())
    assert isinstance(mem, AvgShedderMemory)
    # gap 50 >= high 40: both low and high counters of the pair go up; the middle broker has none
    assert dict(mem.hit_high) == {"broker1": 1, "broker2": 1}
    assert dict(mem.hit_low) == {"broker1": 1, "broker2": 1}
    decision, mem = shedder.shed(data, settings, mem)
    assert len(decision.selections) == 10
    assert dict(mem.hit_high) == {} and dict(mem.hit_low) == {}
    # the input memory is not mutated
    before = AvgShedderMemory(MappingProxyType({"broker1": 1}), MappingProxyType({"broker1": 1}))
    shedder.shed(data, settings, before)
    assert dict(before.hit_high) == {"broker1": 1}


def test_gap_between_low_and_high_drops_the_high_count() -> None:
    settings = Settings.defaults()
    shedder = AvgShedder()
    high = _three_brokers(80, 30)
    _, mem = shedder.shed(high, settings, shedder.initial_memory())
    assert mem.hit_high["broker1"] == 1
    low = _three_brokers(60, 40)  # gap 20: between low 15 and high 40
    _, mem = shedder.shed(low, settings, mem)
    assert "broker1" not in mem.hit_high
    assert mem.hit_low["broker1"] == 2


def test_no_pair_clears_every_hit_count() -> None:
    settings = Settings.defaults()
    stale = AvgShedderMemory(
        MappingProxyType({"gone": 1, "broker1": 1}), MappingProxyType({"gone": 5})
    )
    data = _three_brokers(50, 45)  # scores 45, 50, 50: no gap of 15
    decision, mem = AvgShedder().shed(data, settings, stale)
    assert decision.selections == ()
    assert mem == AvgShedderMemory()
    assert any(n.startswith(Reason.BALANCED) for n in map(text, decision.notes))
    assert {v.reason for v in decision.brokers.values()} == {Reason.BALANCED}


# --- bundle selection ----------------------------------------------------------------------------
def test_recently_unloaded_and_idle_bundles_are_not_selected() -> None:
    settings = Settings.defaults().with_values(
        maxUnloadPercentage=0.5, loadBalancerAvgShedderHitCountHighThreshold=1
    )
    names = ("a/b/x", "a/b/y", "a/b/z")
    data = load(
        {"hi": _broker(80, 10000, names), "lo": _broker(30, 1000)},
        bundle_data={
            "a/b/x": bundle_data(rate_in=450, rate_out=450),
            "a/b/y": bundle_data(rate_in=450, rate_out=450),
            "a/b/z": bundle_data(),  # no traffic: v > 0 fails
        },
        recently_unloaded={"a/b/y": 0},
    )
    decision, _ = AvgShedder().shed(data, settings, AvgShedder().initial_memory())
    assert [s.bundle for s in decision.selections] == ["a/b/x"]
    assert decision.selections[0].destination == "lo"
    why = {c.bundle: c for c in decision.candidates}
    assert not why["a/b/y"].chosen and "recently" in text(why["a/b/y"].why)
    assert not why["a/b/z"].chosen and "no traffic" in text(why["a/b/z"].why)


def test_largest_first_while_it_fits() -> None:
    settings = Settings.defaults().with_values(
        maxUnloadPercentage=0.5, loadBalancerAvgShedderHitCountHighThreshold=1
    )
    rates = {"t/n/a": 3000, "t/n/b": 2500, "t/n/c": 2000, "t/n/d": 500}
    data = load(
        {"hi": _broker(80, 5000, tuple(rates)), "lo": _broker(30, 0)},
        bundle_data={b: bundle_data(rate_in=r) for b, r in rates.items()},
    )
    # need = 10000 * 0.5 = 5000: a (3000) fits, b (2500 > 2000) does not, c (2000) fits, d does not
    decision, _ = AvgShedder().shed(data, settings, AvgShedder().initial_memory())
    assert [s.bundle for s in decision.selections] == ["t/n/a", "t/n/c"]
    assert decision.brokers["hi"].numbers["need_msg_rate"] == 5000


def test_throughput_when_the_rate_gap_is_too_small() -> None:
    settings = Settings.defaults().with_values(
        maxUnloadPercentage=0.5, loadBalancerAvgShedderHitCountHighThreshold=1
    )
    names = ("t/n/a", "t/n/b")
    data = load(
        {"hi": _broker(80, 500, names, tp=4 * MB), "lo": _broker(30, 0)},
        bundle_data={b: bundle_data(tp_in=1.5 * MB, rate_in=10) for b in names},
    )
    # rate: 1000 * 0.5 = 500 <= 1000; throughput: 8 MB * 0.5 = 4 MB > 1 MB → 2 × 1.5 MB fit
    decision, _ = AvgShedder().shed(data, settings, AvgShedder().initial_memory())
    assert len(decision.selections) == 2
    assert "moves throughput" in text(decision.brokers["hi"].why)


def test_traffic_gap_too_small_sheds_nothing_and_says_why() -> None:
    settings = Settings.defaults().with_values(loadBalancerAvgShedderHitCountHighThreshold=1)
    data = load(
        {"hi": _broker(80, 1000, ("t/n/a",)), "lo": _broker(30, 900)},
        bundle_data={"t/n/a": bundle_data(rate_in=100)},
    )
    decision, mem = AvgShedder().shed(data, settings, AvgShedder().initial_memory())
    assert decision.selections == ()
    assert decision.brokers["hi"].reason == Reason.BALANCED
    assert "minUnloadMessage" in text(decision.brokers["hi"].why)
    assert any("too small" in n for n in map(text, decision.notes))
    assert dict(mem.hit_high) == {}  # the counts were consumed by the check


def test_equal_scores_keep_hash_map_order() -> None:
    names = ["b", "a", "c", "d"]
    data = load({n: _broker(40, 100) for n in names})
    decision, _ = AvgShedder().shed(data, Settings.defaults(), AvgShedder().initial_memory())
    ranks = {b: int(v.numbers["rank"]) for b, v in decision.brokers.items()}
    assert sorted(ranks, key=ranks.__getitem__) == java_hash_order(names)


# --- explanations --------------------------------------------------------------------------------
def test_verdicts_explain_a_pair_waiting_for_its_hit_count() -> None:
    settings = Settings.defaults().with_values(maxUnloadPercentage=0.5)
    data = _three_brokers(80, 30)
    decision, _ = AvgShedder().shed(data, settings, AvgShedder().initial_memory())
    assert set(decision.brokers) == {"broker1", "broker2", "broker3"}
    v1 = decision.brokers["broker1"]
    assert v1.label == Label.SKIP and v1.reason == Reason.HIT_COUNT
    assert v1.score is None and v1.numbers["score"] == pytest.approx(80.0)
    assert v1.usage == pytest.approx(0.8)
    assert "paired with broker2: gap 50.0 ≥ high threshold 40" in text(v1.why)
    assert "high hit count 1/2" in text(v1.why) and "not yet" in text(v1.why)
    assert v1.numbers["gap"] == pytest.approx(50.0)
    assert v1.numbers["hit_high"] == 1 and v1.numbers["hit_count_high_threshold"] == 2
    v3 = decision.brokers["broker3"]
    assert v3.reason == Reason.BALANCED and "middle broker" in text(v3.why)
    assert any(n.startswith(Reason.HIT_COUNT) and "broker1" in n for n in map(text, decision.notes))


def test_verdicts_explain_a_shed_pair() -> None:
    settings = Settings.defaults().with_values(
        maxUnloadPercentage=0.5, loadBalancerAvgShedderHitCountHighThreshold=1
    )
    decision, _ = AvgShedder().shed(_three_brokers(80, 30), settings, AvgShedder().initial_memory())
    hi, lo = decision.brokers["broker1"], decision.brokers["broker2"]
    assert (hi.label, hi.reason) == (Label.SUCCESS, Reason.OVERLOADED)
    assert (lo.label, lo.reason) == (Label.SUCCESS, Reason.UNDERLOADED)
    assert "go to broker2" in text(hi.why) and "9000.0 msg/s" in text(hi.why)
    assert "receives 10 bundle(s)" in text(lo.why)
    assert sum(c.chosen for c in decision.candidates) == 10
    assert decision.numbers["pairs"] == 1
    assert all(s.destination == "broker2" for s in decision.selections)


def test_no_brokers() -> None:
    decision, mem = AvgShedder().shed(
        load({}), Settings.defaults(), AvgShedder().initial_memory()
    )
    assert decision.selections == () and text(decision.notes[0]).startswith(Reason.NO_BROKERS)
    assert mem == AvgShedderMemory()


# --- placement half ------------------------------------------------------------------------------
def test_placement_without_plan_is_a_random_pick_among_sorted_candidates() -> None:
    data = _three_brokers(80, 30)
    strategy = AvgShedderPlacement()
    cands = ("broker3", "broker1", "broker2")
    d, mem = strategy.select(PlacementRequest(
        cands, "bundle-0", data, Settings.defaults(), Random(7), data.bundle_data["bundle-0"]),
        strategy.initial_memory())
    assert d.best == ("broker1", "broker2", "broker3")
    assert d.broker in d.best
    assert "no AvgShedder plan" in text(d.why)
    # same seed, same pick
    d2, _ = strategy.select(PlacementRequest(
        cands, "bundle-0", data, Settings.defaults(), Random(7), data.bundle_data["bundle-0"]),
        mem)
    assert d2.broker == d.broker


def test_placement_plan_for_a_broker_that_is_not_a_candidate() -> None:
    data = _three_brokers(80, 30)
    strategy = AvgShedderPlacement()
    d, _ = strategy.select(PlacementRequest(
        ("broker1", "broker3"), "bundle-0", data, Settings.defaults(), Random(1),
        data.bundle_data["bundle-0"], {"bundle-0": "broker2"}), None)
    assert d.best == ("broker1", "broker3")
    assert "broker2 is not a candidate" in text(d.why)


def test_placement_follows_the_plan() -> None:
    data = _three_brokers(80, 30)
    strategy = AvgShedderPlacement()
    d, _ = strategy.select(PlacementRequest(
        tuple(data.brokers), "bundle-3", data, Settings.defaults(), Random(1),
        data.bundle_data["bundle-3"], {"bundle-3": "broker2"}), None)
    assert d.broker == "broker2" and d.best == ("broker2",)
    assert d.scores["broker1"] == pytest.approx(80.0)
    assert "planned" in text(d.why)


def test_registered_under_pulsar_names() -> None:
    assert isinstance(SHEDDING.create("AvgShedder"), AvgShedder)
    assert isinstance(
        PLACEMENT.create("org.apache.pulsar.broker.loadbalance.impl.AvgShedder"),
        AvgShedderPlacement,
    )


def test_placement_stores_its_fallback_pick_for_the_next_ask() -> None:
    """``AvgShedder.selectBroker`` puts its random pick in the bundle → broker map (master, PR
    #26246): a second ask with more candidates answers with the pick, not the plan; the map is
    cleared when the unload attempt completes."""
    data = _three_brokers(80, 30)
    strategy = AvgShedderPlacement()
    plan = {"bundle-0": "broker2"}
    d, mem = strategy.select(PlacementRequest(
        ("broker1",), "bundle-0", data, Settings.defaults(), Random(1),
        data.bundle_data["bundle-0"], plan), strategy.initial_memory())
    assert d.broker == "broker1" and mem == AvgPicks({"bundle-0": "broker1"})
    again, mem2 = strategy.select(PlacementRequest(
        ("broker1", "broker2", "broker3"), "bundle-0", data, Settings.defaults(), Random(1),
        data.bundle_data["bundle-0"], plan), mem)
    assert again.broker == "broker1" and "stored" in text(again.why)
    assert mem2 == mem
    fresh, _ = strategy.select(PlacementRequest(
        ("broker1", "broker2", "broker3"), "bundle-0", data, Settings.defaults(), Random(1),
        data.bundle_data["bundle-0"], plan), strategy.on_unload_attempt_completed(mem2))
    assert fresh.broker == "broker2"


@pytest.mark.parametrize("by_rate", [True, False])
def test_first_samples_are_valued_from_their_stats(by_rate: bool) -> None:
    """A snapshot's first sight (every bundle's data a first sample) values the high broker's
    bundles from their stats, without building their bundle data: the same picks, candidates
    and verdicts as from the built data. Rates and throughputs rank the bundles in opposite
    orders, so reading the wrong figure picks others."""
    from lbctl.model.loaddata import BundleDataView
    from tests.factories import stats

    settings = Settings.defaults().with_values(
        maxUnloadPercentage=0.5, loadBalancerAvgShedderHitCountHighThreshold=1
    )
    figures = {"t/n/a": (3000, 1), "t/n/b": (2500, 2), "t/n/c": (2000, 3), "t/n/d": (500, 4),
               "t/n/e": (2000, 3), "t/n/f": (0, 0)}
    scale = 1.0 if by_rate else 0.0  # no rate gap: throughput moves
    hi = {b: stats(r * scale, 0, t * MB, 0) for b, (r, t) in figures.items()}
    brokers = {"hi": broker(cpu=(80, 100), bundles=hi), "lo": broker(cpu=(30, 100))}
    view = load(brokers, recently_unloaded={"t/n/b": 1})
    assert isinstance(view.bundle_data, BundleDataView) and view.bundle_data.first_samples_only()
    built = load(brokers, bundle_data=view.bundle_data.materialized(),
                 recently_unloaded={"t/n/b": 1})
    fresh, _ = AvgShedder().shed(view, settings, AvgShedder().initial_memory())
    slow, _ = AvgShedder().shed(built, settings, AvgShedder().initial_memory())
    assert fresh.selections and fresh == slow
    assert "moves throughput" in text(fresh.brokers["hi"].why) or by_rate


# --- the broker sort of the modelled releases: (int) (score1 - score2) ---------------------------
def _profile(order: str) -> Settings:
    """Defaults of the newest profile, with AvgShedder's broker order as ``order``."""
    p = newest()
    return Settings.defaults(replace(p, values=MappingProxyType(
        {**p.values, "avgShedderScoreOrder": order})))


def _scored(cpu_in_list_order: list[float], **extra) -> LoadData:
    """Brokers ``b0``… whose cpu (= AvgShedder score) is given in the order the sort starts from
    (the score ``HashMap``'s)."""
    names = [f"b{i}" for i in range(len(cpu_in_list_order))]
    order = java_hash_order(load({n: _broker(0, 0) for n in names}).brokers)
    cpu = dict(zip(order, cpu_in_list_order, strict=True))
    return load({n: _broker(cpu[n], extra.get("rates", {}).get(n, 0),
                            extra.get("owned", {}).get(n, ())) for n in names},
                bundle_data=extra.get("bundle_data"))


def test_near_tied_scores_pair_as_the_int_cast_sort_does() -> None:
    """AvgShedder at d76ae6831a1c: ``(int) (80.0 - 80.4)`` is 0, so the two hot brokers keep their
    score-map order and the hotter one pairs with the second coolest broker, not the coolest; its
    bundles go there. Master (PR #24954) pairs by the exact score."""
    names = [f"b{i}" for i in range(4)]
    l0, l1, l2, l3 = java_hash_order(load({n: _broker(0, 0) for n in names}).brokers)
    owned = {l0: _bundles("h0-"), l1: _bundles("h1-")}
    data = _scored([80.4, 80.0, 10, 20], rates={l0: 10000, l1: 10000, l2: 1000, l3: 1000},
                   owned=owned, bundle_data={b: bundle_data(rate_in=450, rate_out=450)
                                             for bs in owned.values() for b in bs})
    conf = {"maxUnloadPercentage": 0.5, "loadBalancerAvgShedderHitCountHighThreshold": 1}
    int_cast, _ = AvgShedder().shed(data, _profile("int-cast").with_values(**conf),
                                    AvgShedder().initial_memory())
    exact, _ = AvgShedder().shed(data, _profile("double").with_values(**conf),
                                 AvgShedder().initial_memory())
    assert {s.destination for s in int_cast.selections if s.broker == l0} == {l3}
    assert {s.destination for s in int_cast.selections if s.broker == l1} == {l2}
    assert {s.destination for s in exact.selections if s.broker == l0} == {l2}
    assert {s.destination for s in exact.selections if s.broker == l1} == {l3}
    ranks = {b: int(v.numbers["rank"]) for b, v in int_cast.brokers.items()}
    assert sorted(ranks, key=ranks.__getitem__) == [l2, l3, l0, l1]


#: 32 scores (in the score map's order) on which JDK 17's TimSort throws with (int) (a - b)
THROWS = [40.8, 45.1, 44.6, 41.5, 43.0, 42.7, 43.9, 44.7, 40.6, 40.2, 45.0, 42.6, 44.6, 40.0,
          42.7, 44.3, 41.4, 45.7, 45.4, 40.2, 40.2, 43.2, 45.6, 42.3, 41.3, 42.5, 40.2, 41.3,
          42.6, 43.0, 41.4, 41.4]


def test_a_broker_sort_that_throws_fails_the_cycle() -> None:
    """``Collections.sort`` throws ("Comparison method violates its general contract!") before
    ``findBrokerPairs``: nothing is selected, every broker is Failure/Unknown, and the hit counts
    stay as they were (LoadSheddingTask only logs the exception)."""
    data = _scored(THROWS)
    before = AvgShedderMemory(MappingProxyType({"b3": 1}), MappingProxyType({"b3": 2, "b4": 1}))
    decision, mem = AvgShedder().shed(data, _profile("int-cast"), before)
    assert decision.failure == f"java.lang.IllegalArgumentException: {CONTRACT_MESSAGE}"
    # the score map was refilled before the sort threw: 32 brokers grew its table to 64
    assert decision.selections == () and mem == replace(before, score_capacity=64)
    assert {(v.label, v.reason) for v in decision.brokers.values()} == {
        (Label.FAILURE, Reason.UNKNOWN)}
    [note] = map(text, decision.notes)
    assert note.startswith("Unknown") and CONTRACT_MESSAGE in note
    assert "Error during the load shedding" in note
    assert "sort threw" in text(decision.brokers["b0"].why)
    # master compares the doubles: no throw (and no pair 15 points apart: counts cleared)
    exact, mem2 = AvgShedder().shed(data, _profile("double"), before)
    assert exact.failure == "" and mem2 != before
    assert all(v.label is not Label.FAILURE for v in exact.brokers.values())


def test_the_sort_starts_from_the_score_map_order() -> None:
    """``calculateScoresAndSort`` streams the score ``HashMap`` (filled in ``getBrokerData()``
    order), not ``getBrokerData()`` itself (PIP-364's first draft did): with 12 brokers the
    ``ConcurrentHashMap`` has grown to 32 buckets (it grows when its size *reaches* 3/4) where the
    ``HashMap`` still has 16, so the orders differ, and equal scores keep the ``HashMap``'s."""
    names = [f"pulsar-broker-{i}.pulsar-broker.pulsar.svc.cluster.local:8080" for i in range(12)]
    data = load({n: _broker(40, 100) for n in names})
    assert list(data.brokers) != java_hash_order(data.brokers)  # the case has teeth
    decision, _ = AvgShedder().shed(data, Settings.defaults(), AvgShedder().initial_memory())
    ranks = {b: int(v.numbers["rank"]) for b, v in decision.brokers.items()}
    assert sorted(ranks, key=ranks.__getitem__) == java_hash_order(data.brokers)


@pytest.mark.parametrize(("zeros", "recent"), [(False, False), (True, False), (False, True)])
def test_bundles_of_equal_value_keep_the_map_order(zeros: bool, recent: bool) -> None:
    """Rule 8 sorts the high broker's bundles by value and puts only the bundles of equal value
    in ``getBundleDataForLoadShedding()``'s order: the same candidates and picks, in the same
    order, as sorting that whole order stably by value (3,000 bundles of five values, many
    sharing a hash bucket; with zeros, -0.0 and a negative value the ``Double.compare`` key;
    with a recently unloaded bundle the whole order, as before). ``selections`` gives the same
    selections without candidates, and with ``first_only`` each broker's first."""
    from lbctl.strategies.shedding.avg import _neg_key
    from tests.factories import stats

    names = [f"t/ns-{i % 7}/0x{i:08x}_0x{i + 1:08x}" for i in range(3000)]
    rates = [float(1 + (i * 7919) % 5) for i in range(3000)]
    if zeros:
        rates[10:13] = [0.0, -0.0, -1.0]
    hi = {b: stats(r) for b, r in zip(names, rates, strict=True)}
    brokers = {"hi": broker(cpu=(80, 100), bundles=hi), "lo": broker(cpu=(30, 100))}
    data = load(brokers, recently_unloaded={names[5]: 1, names[6]: 1} if recent else None)
    settings = Settings.defaults().with_values(maxUnloadPercentage=0.5,
                                               loadBalancerAvgShedderHitCountHighThreshold=1)
    mem = AvgShedder().initial_memory()
    d, _ = AvgShedder().shed(data, settings, mem)

    def value(b: str) -> float:
        return data.bundle_data[b].shortTermData.msg_rate

    ordered = data.shedding_order([b for b in names if data.is_sheddable(b)], value)
    held = [b for b in ordered if b in data.recently_unloaded]
    rest = sorted((b for b in ordered if b not in data.recently_unloaded),
                  key=lambda b: _neg_key(value(b)))
    assert [c.bundle for c in d.candidates] == held + rest
    left, picks = d.brokers["hi"].numbers["need_msg_rate"], []
    for b in rest:
        if 0 < value(b) <= left:
            picks.append(b)
            left -= value(b)
    assert [s.bundle for s in d.selections] == picks and 1 < len(picks) < len(rest) - 100
    lean, _, _ = AvgShedder().selections(data, settings, mem)
    assert lean.selections == d.selections and not lean.candidates
    first, _, cut = AvgShedder().selections(data, settings, mem, first_only=True)
    assert first.selections == d.selections[:1] and cut == {"hi"}


def test_bundles_of_distinct_values_need_no_map_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """``getBundleDataForLoadShedding()``'s order only decides among bundles of equal value:
    rule 8 over a broker whose bundles all differ hashes none of their names (it hashed every
    one, 170,000 on a deep broker) and picks the largest first."""
    from tests.factories import stats

    hi = {f"t/ns/0x{i:08x}_0x{i + 1:08x}": stats(100.0 + i) for i in range(300)}
    data = load({"hi": broker(cpu=(80, 100), bundles=hi), "lo": broker(cpu=(30, 100))})
    settings = Settings.defaults().with_values(maxUnloadPercentage=0.5,
                                               loadBalancerAvgShedderHitCountHighThreshold=1)
    hashed = hashed_names(monkeypatch)
    d, _ = AvgShedder().shed(data, settings, AvgShedder().initial_memory())
    assert d.selections[0].bundle == "t/ns/0x0000012b_0x0000012c"  # 399 msg/s
    assert len(d.candidates) == 300 and not hashed
