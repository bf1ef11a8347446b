"""Reading plan@1 files for apply: every plan lbctl writes reads back; hostile ones are one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.apply.planfile import parse_plan, read_plan
from lbctl.cli.app import app
from lbctl.errors import PlanError
from tests.paths import EXAMPLES


def _plan(**over: object) -> dict:
    doc = {"format": "lbctl/plan@1", "cluster": "c", "capturedAt": "2026-11-21T22:00:00Z",
           "actions": [{"action": "unload", "bundle": "t/ns/0x00000000_0x40000000",
                        "broker": "b1:8080", "destinationBroker": "b2:8080", "reason": "x"}]}
    doc.update(over)
    return doc


@pytest.mark.parametrize("example", ["hot-broker.json", "extensible/skewed.json",
                                     "flow-or-qps.json"])
def test_recommend_output_reads_back(example: str, tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["recommend", str(EXAMPLES / example), "-o", "json"])
    assert r.exit_code == 0
    p = tmp_path / "plan.json"
    p.write_text(r.stdout)
    pf = read_plan(p)
    doc = json.loads(r.stdout)
    assert pf.cluster == doc["cluster"] and len(pf.actions) == len(doc["actions"])
    assert [a.bundle for a in pf.actions] == [a["bundle"] for a in doc["actions"]]
    y = CliRunner().invoke(app, ["recommend", str(EXAMPLES / example), "-o", "yaml"])
    (tmp_path / "plan.yaml").write_text(y.stdout)
    assert read_plan(tmp_path / "plan.yaml").actions == pf.actions


def test_fields() -> None:
    pf = parse_plan(_plan(), "p")
    a = pf.actions[0]
    assert (a.step, a.namespace, a.range, a.destination) == (1, "t/ns", "0x00000000_0x40000000",
                                                             "b2:8080")
    split = {"action": "split", "bundle": "t/ns/0x00000000_0x40000000", "broker": "",
             "reason": "Admin", "boundaries": ["0x10000000", "0x20000000"], "unload": True}
    a = parse_plan(_plan(actions=[split]), "p").actions[0]
    assert a.boundaries == (0x10000000, 0x20000000) and a.unload


@pytest.mark.parametrize("change,words", [
    ({"format": "lbctl/plan@0"}, "expected 'lbctl/plan@1'"),
    ({"cluster": ""}, "cluster: expected a non-empty string"),
    ({"capturedAt": "2026-11-21T22:00:00"}, "no time zone"),
    ({"actions": {}}, "actions: expected a list"),
    ({"actions": [{"action": "merge"}]}, "is not one of unload, transfer, split"),
    ({"actions": [{"action": "unload", "bundle": "t/ns/0x1_0x2", "broker": "b"}]}, "bundle"),
    ({"actions": [{"action": "unload", "bundle": "t/../0x00000000_0x40000000", "broker": "b"}]},
     "bundle"),
    ({"actions": [{"action": "unload", "bundle": "t/ns/0x00000000_0x40000000", "broker": "b",
                   "destinationBroker": "b"}]}, "the destination is the current owner"),
    ({"actions": [{"action": "transfer", "bundle": "t/ns/0x00000000_0x40000000",
                   "broker": "b"}]}, "a transfer needs a destinationBroker"),
    ({"actions": [{"action": "split", "bundle": "t/ns/0x00000000_0x40000000", "broker": "",
                   "boundaries": ["0x50000000"]}]}, "is not inside"),
    ({"actions": [{"action": "split", "bundle": "t/ns/0x00000000_0x40000000", "broker": "",
                   "boundaries": ["0x20000000", "0x10000000"]}]}, "ascending"),
    ({"actions": [{"action": "unload", "bundle": "t/ns/0x00000000_0x40000000", "broker": "b",
                   "throughput": "fast"}]}, "throughput: expected a finite number"),
    # issue 25 item 13: a negative figure would defeat --max-throughput; a bundle twice is sent once
    ({"actions": [{"action": "unload", "bundle": "t/ns/0x00000000_0x40000000", "broker": "b",
                   "throughput": -1e9}]}, "actions[0].throughput: -1000000000.0 is not a rate"),
    ({"actions": [{"action": "unload", "bundle": "t/ns/0x00000000_0x40000000", "broker": "b",
                   "msgRate": -5}]}, "actions[0].msgRate: -5.0 is not a rate"),
    ({"actions": [{"action": "unload", "bundle": "t/ns/0x00000000_0x40000000", "broker": "b"},
                  {"action": "unload", "bundle": "t/ns/0x40000000_0x80000000", "broker": "b"},
                  {"action": "unload", "bundle": "t/ns/0x00000000_0x40000000", "broker": "b",
                   "destinationBroker": "c"}]},
     "actions[2].bundle: t/ns/0x00000000_0x40000000 is already actions[0]"),
    ({"actions": [{"action": "unload", "bundle": "t/ns/0x00000000_0x40000000", "broker": "b"},
                  {"action": "split", "bundle": "t/ns/0x00000000_0x40000000", "broker": "b",
                   "boundaries": ["0x20000000"]}]}, "a plan acts on a bundle once"),
])
def test_bad_plans_are_one_line(change: dict, words: str) -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(_plan(**change), "p.json")
    assert words in str(e.value) and "\n" not in str(e.value)


def test_files_that_are_not_plans(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="no such file"):
        read_plan(tmp_path / "missing.json")
    with pytest.raises(PlanError, match="is a directory"):
        read_plan(tmp_path)
    (tmp_path / "x.yaml").write_text("- a\n- b\n")
    with pytest.raises(PlanError, match="expected a plan@1 object"):
        read_plan(tmp_path / "x.yaml")


def test_a_skipped_action_may_name_a_bundle_again() -> None:
    acts = [{"action": "unload", "bundle": "t/ns/0x00000000_0x40000000", "broker": "b"},
            {"action": "unload", "bundle": "t/ns/0x00000000_0x40000000", "broker": "b",
             "skipped": "grace period"}]
    assert len(parse_plan(_plan(actions=acts), "p").actions) == 2
