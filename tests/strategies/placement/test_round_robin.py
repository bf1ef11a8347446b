"""RoundRobinBrokerSelector: Pulsar's scenario plus memory and explanations.

Source: ``ModularLoadManagerStrategyTest#testRoundRobinBrokerSelector``
(``pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/ModularLoadManagerStrategyTest.java``;
there is no ``RoundRobinBrokerSelectorTest`` class). Candidates are ``LinkedHashSet``s, so their
order is the order written.
"""

from __future__ import annotations

from lbctl.explain.words import text
from lbctl.strategies.base import PlacementRequest
from lbctl.strategies.placement.round_robin import (
    INT_MAX,
    RoundRobinBrokerSelector,
    RoundRobinMemory,
)


def _sel(strategy, brokers, mem):
    decision, mem = strategy.select(PlacementRequest(brokers, "t/n/b", None, None, None), mem)
    return decision.broker, mem


def test_round_robin_broker_selector() -> None:
    strategy = RoundRobinBrokerSelector()
    mem = strategy.initial_memory()
    brokers = ("1", "2", "3")
    n = len(brokers)

    picked, mem = _sel(strategy, (), mem)
    assert picked is None

    i = 0
    while i < 10:
        picked, mem = _sel(strategy, brokers, mem)
        assert picked == str(i % n + 1)
        i += 1

    brokers2 = ("2", "3", "1")  # same set, other order: the rotation list is kept
    while i < 20:
        picked, mem = _sel(strategy, brokers2, mem)
        assert picked == str(i % n + 1)
        i += 1

    brokers3 = ("1", "2", "4")
    for expected in ("4", "1", "2", "4", "1", "2"):
        picked, mem = _sel(strategy, brokers3, mem)
        assert picked == expected

    brokers4 = ("2", "4")
    for expected in ("2", "4", "2", "4"):
        picked, mem = _sel(strategy, brokers4, mem)
        assert picked == expected

    mem = RoundRobinMemory(INT_MAX, mem.cache)
    picked, mem = _sel(strategy, brokers, mem)
    assert picked == str(INT_MAX % n + 1)
    assert mem.count == 0


# --- memory and explanations ---------------------------------------------------------------------
def test_empty_candidates_do_not_advance_the_counter() -> None:
    strategy = RoundRobinBrokerSelector()
    mem = RoundRobinMemory(5, ("a", "b"))
    picked, after = _sel(strategy, (), mem)
    assert picked is None and after == mem


def test_memory_holds_counter_and_rotation_list() -> None:
    strategy = RoundRobinBrokerSelector()
    _, mem = _sel(strategy, ("x", "y"), strategy.initial_memory())
    assert mem == RoundRobinMemory(1, ("x", "y"))
    _, mem = _sel(strategy, ("y", "x"), mem)
    assert mem == RoundRobinMemory(2, ("x", "y"))
    assert strategy.on_active_brokers_change(mem, frozenset({"x"})) == mem


def test_why_and_scores() -> None:
    strategy = RoundRobinBrokerSelector()
    decision, _ = strategy.select(PlacementRequest(("1", "2", "4"), "t/n/b", None, None, None),
                                  RoundRobinMemory(20, ("1", "2", "3")))
    assert decision.broker == "4" and decision.best == ("4",)
    assert "index 20 % 3 = 2" in text(decision.why)
    assert "3 is no longer one" in text(decision.why)
    assert dict(decision.scores) == {"1": 0.0, "2": 1.0, "4": 2.0}
