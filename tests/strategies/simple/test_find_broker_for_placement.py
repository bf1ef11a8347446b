"""``SimpleLoadManagerImpl.findBrokerForPlacement`` and ``WRRPlacementStrategy`` (Pulsar master
0058e734 / 085e7b8f), branch by branch, on rankings built from plain load reports."""

from __future__ import annotations

from random import Random

from lbctl.config import resolve
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats, ResourceUsage
from lbctl.strategies.simple.decide import find_broker_for_placement, rank, weighted_random
from lbctl.strategies.simple.quota import QuotaState, Stored
from lbctl.strategies.simple.ranking import LEAST_MSG, LLS

NOW = 1_773_324_300_000
SETTINGS = resolve({})  # underloaded 50, overloaded 85


def _broker(cpu: float, bundles: int = 0) -> LocalBrokerData:
    stats = {f"t/ns{cpu:g}/0x{i:08x}_0x{i + 1:08x}": NamespaceBundleStats(msgRateIn=1)
             for i in range(bundles)}
    return LocalBrokerData(cpu=ResourceUsage(cpu, 100), lastStats=stats)


def _place(brokers: dict[str, LocalBrokerData], strategy: str = LLS, cursor: int = 0):  # type: ignore[no-untyped-def]
    ranked = rank(brokers, dict.fromkeys(brokers, NOW), Stored(), QuotaState(), {}, strategy)
    cands = sorted(((ranked.ranks[b], b) for b in brokers), key=lambda x: (x[0], "http://" + x[1]))
    return ranked, find_broker_for_placement(cands, "x/y/0x00000000_0xffffffff", ranked,
                                             ranked.rankings, cursor, SETTINGS)


def test_the_least_loaded_busy_broker_below_the_underload_threshold() -> None:
    """A busy broker at 30 % (≤ 50 %) is preferred to an idle one: fill it first."""
    ranked, p = _place({"a:1": _broker(30, 2), "b:1": _broker(45, 2), "c:1": _broker(5)})
    assert (p.broker, p.why.code) == ("a:1", "least-loaded")
    assert "x/y/0x00000000_0xffffffff" in p.rankings["a:1"].preallocated
    assert p.rankings["a:1"].estimated > ranked.rankings["a:1"].estimated  # the quota counts
    assert p.cursor == 1


def test_an_idle_broker_once_the_least_loaded_is_above_the_underload_threshold() -> None:
    _, p = _place({"a:1": _broker(60, 2), "b:1": _broker(70, 2), "c:1": _broker(5)})
    assert (p.broker, p.why.code) == ("c:1", "idle")


def _big(bw_out: float, cpu_limit: float) -> LocalBrokerData:
    """Overloaded on bandwidth out; its capacity set by its CPU limit (memory and bandwidth
    limits too large to bind): cpu_limit / 0.025 / 160 default-quota bundles."""
    return LocalBrokerData(cpu=ResourceUsage(1, cpu_limit), memory=ResourceUsage(1, 1e6),
                           bandwidthIn=ResourceUsage(1, 1e7),
                           bandwidthOut=ResourceUsage(bw_out * 1e5, 1e7),
                           lastStats={f"t/n{bw_out:g}/0x00000000_0xffffffff":
                                      NamespaceBundleStats(msgRateIn=1)})


def test_the_most_room_left_when_all_are_overloaded() -> None:
    """The least loaded busy broker is at 90 % > 85 %, none idle: the broker with the most
    capacity × free share wins — the 95 % one, whose CPU holds 200 bundles (200 × 5 % = 10)
    against 25 (25 × 10 % = 2)."""
    ranked, p = _place({"a:1": _big(95, 800), "b:1": _big(90, 100)})
    assert ranked.rankings["a:1"].max_capacity(Stored().default) == 200
    assert (p.broker, p.why.code, p.why.count) == ("a:1", "max-available", 10)


def test_a_rotating_pick_when_all_are_full() -> None:
    """Every broker at 100 %: the candidate at the rotation cursor (cursor mod candidates)."""
    brokers = {"a:1": _broker(100, 1), "b:1": _broker(100, 1), "c:1": _broker(100, 1)}
    picks = [_place(brokers, cursor=c)[1].broker for c in range(3)]
    assert picks == ["a:1", "b:1", "c:1"]


def test_least_msg_per_second_compares_rates_only() -> None:
    """leastMsgPerSecond: the estimated message rate (quotas) decides, and the overload branches
    do not apply (unbounded ranks)."""
    _, p = _place({"a:1": _broker(95, 3), "b:1": _broker(96, 1)}, strategy=LEAST_MSG)
    assert (p.broker, p.why.code) == ("b:1", "least-loaded")


def test_weighted_random_is_proportional_to_rank_in_int() -> None:
    """WRRPlacementStrategy: a draw in [0, sum of ranks); rank 0 brokers only when all are 0."""
    cands = [(0, "a:1"), (3, "b:1"), (7, "c:1")]
    hits = {"a:1": 0, "b:1": 0, "c:1": 0}
    rng = Random(7)
    for _ in range(2000):
        p = weighted_random(cands, {}, 0, rng)
        assert p.broker is not None
        hits[p.broker] += 1
    assert hits["a:1"] == 0 and 500 < hits["b:1"] < 700 and 1300 < hits["c:1"] < 1500
    zero = weighted_random([(0, "a:1"), (0, "b:1")], {}, 0, Random(1))
    assert zero.broker in ("a:1", "b:1") and zero.why.count == 0
