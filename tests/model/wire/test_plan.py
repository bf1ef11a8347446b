"""plan@1's records (:mod:`lbctl.model.wire.plan`): one per action kind, told apart by
``action``, written with the keys in plan@1's order."""

from __future__ import annotations

import msgspec
import pytest

from lbctl.model.wire import plan as wire
from lbctl.model.wire.problems import first_problem

B = "t/ns/0x00000000_0x80000000"


def test_actions_are_written_in_plan_order() -> None:
    move = wire.TransferAction(bundle=B, broker="a:1", destinationBroker="b:1", reason="x")
    assert list(msgspec.to_builtins(move)) == ["action", "bundle", "broker", "destinationBroker",
                                               "reason", "msgRate", "throughput"]
    split = wire.SplitAction(bundle=B, broker="", boundaries=["0x40000000"], unload=True)
    assert list(msgspec.to_builtins(split)) == [
        "action", "bundle", "broker", "reason", "detail", "algorithm", "boundaries", "children",
        "unload", "msgRate", "throughput"]


def test_the_action_key_chooses_the_record() -> None:
    doc = {"format": "lbctl/plan@1", "cluster": "c", "capturedAt": "2026-01-01T00:00:00Z",
           "actions": [{"action": "unload", "bundle": B, "broker": "a:1"},
                       {"action": "split", "bundle": B, "boundaries": ["0x40000000"]}]}
    header = msgspec.convert(doc, wire.PlanHeader)
    assert [type(a) for a in header.actions] == [wire.UnloadAction, wire.SplitAction]


@pytest.mark.parametrize(("action", "path", "message"), [
    ({"action": "unload", "bundle": B, "broker": ""}, "actions[0].broker",
     'expected a non-empty string, got ""'),
    ({"action": "unload", "bundle": B, "broker": "a", "throughput": "fast"},
     "actions[0].throughput", 'expected a finite number or null, got "fast"'),
    ({"action": "split", "bundle": B, "unload": "yes"}, "actions[0].unload",
     'expected true or false, got "yes"'),
])
def test_a_bad_action_is_named(action: dict[str, object], path: str, message: str) -> None:
    doc = {"format": "lbctl/plan@1", "cluster": "c", "capturedAt": "2026-01-01T00:00:00Z",
           "actions": [action]}
    assert first_problem(doc, wire.PlanHeader) == (path, message)
