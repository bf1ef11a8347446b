"""Plan sanity warnings: Pulsar's decision is kept, and what looks wrong is said in one line."""

from __future__ import annotations

import math

from lbctl.config import Settings
from lbctl.loadmanager.select import Options, plans
from lbctl.plan import Action, BrokerRow, Plan, plan_warnings
from lbctl.sources.snapshot import read_snapshots
from tests.paths import EXAMPLES


def _plan(actions: list[Action], usage_after: dict[str, float], **settings: str) -> Plan:
    brokers = tuple(BrokerRow(b, 0.5, after, 0.5, 1.0, 1.0, 1) for b, after in usage_after.items())
    return Plan("c", "2026-01-01T00:00:00Z", "modular", "ThresholdShedder",
                "LeastLongTermMessageRate", Settings.defaults().with_values(**settings),
                tuple(actions), brokers, 10)


def _unload(bundle: str, src: str, dst: str | None) -> Action:
    return Action("unload", bundle, src, "Overloaded", destinationBroker=dst)


def test_destination_itself_shed_and_over_threshold() -> None:
    p = _plan([_unload("t/n/0x00000000_0x40000000", "a", "b"),
               _unload("t/n/0x40000000_0x80000000", "b", "c"),
               _unload("t/n/0x80000000_0xc0000000", "c", "d")],
              {"a": 0.3, "b": 0.5, "c": 0.9, "d": 25.646})
    w = {x.code: x for x in plan_warnings(p)}
    assert w["destination-shed"].message.startswith("2 of 3 moves go to a broker that is itself")
    assert w["destination-shed"].brokers == ("b", "c")
    assert "2,564.6% on d (above 100 %)" in w["over-threshold"].message
    assert w["over-threshold"].brokers == ("d", "c")  # worst first; b at 50 % is fine
    assert "concentrated" not in w


def test_threshold_follows_the_setting_and_is_not_listed_as_read() -> None:
    p = _plan([_unload("t/n/0x00000000_0x40000000", "a", "b")], {"a": 0.3, "b": 0.6},
              loadBalancerBrokerOverloadedThresholdPercentage="55")
    assert [x.code for x in plan_warnings(p)] == ["over-threshold"]
    assert "loadBalancerBrokerOverloadedThresholdPercentage" not in p.to_dict()["settings"]


def test_concentrated_and_split_and_unload() -> None:
    moves = [_unload(f"t/n/0x{i:08x}_0x{i + 1:08x}", "a", "b") for i in range(4)]
    split = Action("split", "t/n/0x00000000_0x00000001", "a", "MsgRate")
    p = _plan([*moves, split], {"a": 0.3, "b": 0.5, "c": 0.2, "d": 0.2})
    codes = [x.code for x in plan_warnings(p)]
    assert codes == ["concentrated", "split-and-unload"]
    three = _plan(moves[:3], {"a": 0.3, "b": 0.5, "c": 0.2, "d": 0.2})
    assert plan_warnings(three) == []  # 3 moves to one broker is never called concentrated


def test_skipped_actions_do_not_count() -> None:
    a = Action("unload", "t/n/0x00000000_0x40000000", "a", "Overloaded", destinationBroker="b",
               skipped="grace period")
    assert plan_warnings(_plan([a], {"a": 0.3, "b": math.nan})) == []


def test_hot_broker_example() -> None:
    plan = plans(read_snapshots([EXAMPLES / "hot-broker.json"]), Options())[-1]
    data = plan.to_dict()
    assert [w["code"] for w in data["warnings"]] == ["concentrated"]
    assert data["warnings"][0]["message"] == "4 of 5 moves go to broker-4.pulsar.svc:8080"
    quiet = plans(read_snapshots([EXAMPLES / "balanced.json"]), Options())[-1]
    assert quiet.to_dict()["warnings"] == []
