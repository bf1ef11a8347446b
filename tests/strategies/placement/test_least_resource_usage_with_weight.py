"""LeastResourceUsageWithWeight: Pulsar's scenarios plus memory and explanations.

Sources: ``ModularLoadManagerStrategyTest#testLeastResourceUsageWithWeight`` and
``#testLeastResourceUsageWithWeightWithArithmeticException``
(``pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/ModularLoadManagerStrategyTest.java``;
``extensions/strategy/LeastResourceUsageWithWeightTest`` tests the extensible load manager's class,
not this one). ``initBrokerData(usage, limit)`` sets all five resources to ``usage/limit``, message
rates 100 in / 100 out and one bundle.
"""

from __future__ import annotations

from random import Random
from types import MappingProxyType

import pytest

from lbctl.config import Settings
from lbctl.explain.words import text
from lbctl.model.javaorder import java_hash_order
from lbctl.model.load import BundleData
from lbctl.model.loaddata import LoadData
from lbctl.strategies.base import PlacementRequest
from lbctl.strategies.placement.least_resource_usage_with_weight import (
    LeastResourceUsageWithWeight,
)
from tests.factories import broker, load

BUNDLE = "t/n/0x00000000_0xffffffff"


def _init(usage: float, limit: float = 100, *, bundles: tuple[str, ...] = ("0x00000000_0xffffffff",)):
    u = (usage, limit)
    return broker(
        cpu=u, memory=u, direct_memory=u, bandwidth_in=u, bandwidth_out=u,
        msg_rate_in=100.0, msg_rate_out=100.0, bundle_names=bundles,
    )


def _settings() -> Settings:
    return Settings.defaults().with_values(
        loadBalancerCPUResourceWeight=1.0,
        loadBalancerMemoryResourceWeight=0.1,
        loadBalancerDirectMemoryResourceWeight=0.1,
        loadBalancerBandwithInResourceWeight=1.0,
        loadBalancerBandwithOutResourceWeight=1.0,
        loadBalancerHistoryResourcePercentage=0.5,
        loadBalancerAverageResourceUsageDifferenceThresholdPercentage=5,
    )


def _select(strategy, candidates, data: LoadData, memory, settings=None, seed=0):
    return strategy.select(PlacementRequest(
        java_hash_order(candidates), BUNDLE, data, settings or _settings(), Random(seed),
        BundleData.new()), memory)


def test_least_resource_usage_with_weight() -> None:
    strategy = LeastResourceUsageWithWeight()
    brokers = {"1": _init(10), "2": _init(30), "3": _init(60), "4": _init(5)}
    # make the history contain broker 4
    first, mem = _select(strategy, list(brokers), load(brokers, bundle_data={}), strategy.initial_memory())
    assert first.best == ("1", "4")  # Java does not assert this random pick

    candidates = ["1", "2", "3"]  # should choose from brokers 1 2 3
    decision, mem = _select(strategy, candidates, load(brokers, bundle_data={}), mem)
    assert decision.broker == "1"

    for usages, expected in (
        ((20, 30, 50), "1"),
        ((30, 30, 40), "1"),
        ((30, 30, 40), "1"),
        ((35, 20, 45), "2"),
    ):
        brokers.update({b: _init(u) for b, u in zip(candidates, usages, strict=True)})
        decision, mem = _select(strategy, candidates, load(brokers, bundle_data={}), mem)
        assert decision.best == (expected,)
        assert decision.broker == expected

    # a restarted broker can take the bundle as one of the best brokers
    brokers.update({"1": _init(35), "2": _init(20), "3": _init(0, bundles=())})
    decision, mem = _select(strategy, candidates, load(brokers, bundle_data={}), mem)
    assert decision.broker == "3"


def test_least_resource_usage_with_weight_with_arithmetic_exception() -> None:
    strategy = LeastResourceUsageWithWeight()
    brokers = {"1": _init(10), "2": _init(30), "3": _init(60), "4": _init(5)}
    history = MappingProxyType({"1": 0.1, "2": 0.3, "4": 0.05})
    decision, _ = _select(strategy, ["1", "2", "3"], load(brokers, bundle_data={}), history)
    assert decision.broker == "1"


# --- memory ----------------------------------------------------------------------------------------
def test_history_is_smoothed_across_calls() -> None:
    strategy = LeastResourceUsageWithWeight()
    settings = _settings()
    _, mem = _select(strategy, ["1"], load({"1": _init(10)}, bundle_data={}), {}, settings)
    assert mem["1"] == pytest.approx(0.1)
    _, mem2 = _select(strategy, ["1"], load({"1": _init(30)}, bundle_data={}), mem, settings)
    assert mem2["1"] == pytest.approx(0.1 * 0.5 + 0.5 * 0.3)
    assert mem["1"] == pytest.approx(0.1)  # the old memory is untouched


def test_zero_message_rate_resets_the_history() -> None:
    strategy = LeastResourceUsageWithWeight()
    idle = broker(cpu=(70, 100), bundle_names=("x",))  # message rates 0
    decision, mem = _select(
        strategy, ["1"], load({"1": idle}, bundle_data={}), MappingProxyType({"1": 0.1})
    )
    assert mem["1"] == pytest.approx(0.7)
    assert "history reset" in text(decision.why)


def test_on_active_brokers_change_drops_dead_brokers() -> None:
    strategy = LeastResourceUsageWithWeight()
    mem = strategy.on_active_brokers_change(
        MappingProxyType({"1": 0.1, "2": 0.2}), frozenset({"2", "3"})
    )
    assert dict(mem) == {"2": 0.2}


# --- the rules and explanations --------------------------------------------------------------------
def test_nobody_far_enough_below_the_mean_falls_back_to_all() -> None:
    strategy = LeastResourceUsageWithWeight()
    brokers = {"1": _init(30), "2": _init(32), "3": _init(31)}
    decision, _ = _select(strategy, list(brokers), load(brokers, bundle_data={}), {}, seed=4)
    assert decision.best == tuple(java_hash_order(brokers))
    assert "no candidate is 5% below it" in text(decision.why)


def test_why_gives_the_mean_and_the_scores() -> None:
    strategy = LeastResourceUsageWithWeight()
    brokers = {"1": _init(10), "2": _init(30), "3": _init(90)}
    decision, _ = _select(strategy, list(brokers), load(brokers, bundle_data={}), {})
    assert decision.scores == pytest.approx({"1": 0.1, "2": 0.3, "3": 0.9})
    assert "mean smoothed usage of the candidates 43.3%" in text(decision.why)
    assert "1 (10.0%)" in text(decision.why)
    assert "3 (90.0%)" in text(decision.why) and "only logs" in text(decision.why)


def test_no_candidates_keeps_memory() -> None:
    strategy = LeastResourceUsageWithWeight()
    decision, mem = _select(strategy, [], load({}), MappingProxyType({"1": 0.4}))
    assert decision.broker is None and dict(mem) == {"1": 0.4}
