"""`lbctl explain`: the reasoning, in words and numbers, in every format."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lbctl.cli.app import app
from tests.paths import EXAMPLES, example_files


@pytest.mark.parametrize("example", example_files(), ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["table", "json", "yaml", "csv"])
def test_every_example_every_format(runner, example: Path, fmt: str) -> None:
    res = runner.invoke(app, ["explain", str(example), "-o", fmt])
    assert res.exit_code == 0, res.output
    if fmt == "json":
        plan = json.loads(res.stdout)
        assert plan["format"] == "lbctl/plan@1"
        assert "explanation" in plan
        for b in plan["brokers"]:
            assert "why" in b and "resources" in b
    elif fmt == "yaml":
        assert "explanation" in yaml.safe_load(res.stdout)
    elif fmt == "csv":
        assert res.stdout.splitlines()[0].startswith("cycle,capturedAt,broker,usage")
    else:
        assert "weighted max resource usage" in res.stdout


def test_explains_why_nothing_happens(runner) -> None:
    res = runner.invoke(app, ["explain", str(EXAMPLES / "rolling-restart.yaml")])
    assert res.exit_code == 0, res.output
    assert "Why nothing happens" in res.stdout
    assert "threshold" in res.stdout.lower()


def test_explains_the_hot_broker(runner) -> None:
    res = runner.invoke(app, ["explain", str(EXAMPLES / "hot-broker.json"), "-o", "json"])
    plan = json.loads(res.stdout)
    shed = [b for b in plan["brokers"] if b.get("reason") == "Overloaded"]
    assert shed and shed[0]["label"] == "Success"
    ex = plan["explanation"]
    assert any(c["chosen"] for c in ex["candidates"])
    out = ex["outcomes"][0]
    assert out["placement"]["decision"]["scores"]
    assert ex["whyNothingHappens"] == []
    text = runner.invoke(app, ["explain", str(EXAMPLES / "hot-broker.json")]).stdout
    assert "Candidate bundles" in text and "Unloads:" in text and "placement" in text


def test_broker_filter(runner) -> None:
    plan = json.loads(runner.invoke(app, ["recommend", str(EXAMPLES / "hot-broker.json"),
                                          "-o", "json"]).stdout)
    name = plan["brokers"][1]["broker"]
    res = runner.invoke(app, ["explain", str(EXAMPLES / "hot-broker.json"), "--broker", name,
                              "--wide"])
    assert res.exit_code == 0
    others = [b["broker"] for b in plan["brokers"] if b["broker"] != name]
    body = res.stdout.split("Brokers", 1)[1].split("\n\n")[0]
    assert name in body and not any(o + ":" in body for o in others)


def test_unknown_broker_suggests(runner) -> None:
    plan = json.loads(runner.invoke(app, ["recommend", str(EXAMPLES / "hot-broker.json"),
                                          "-o", "json"]).stdout)
    name = plan["brokers"][0]["broker"]
    res = runner.invoke(app, ["explain", str(EXAMPLES / "hot-broker.json"),
                              "--broker", name[:-1] + "9"])
    assert res.exit_code == 2
    assert "did you mean" in res.stderr


def test_bundle_view(runner) -> None:
    plan = json.loads(runner.invoke(app, ["recommend", str(EXAMPLES / "hot-broker.json"),
                                          "-o", "json"]).stdout)
    bundle = plan["actions"][0]["bundle"]
    res = runner.invoke(app, ["explain", str(EXAMPLES / "hot-broker.json"), "-b", bundle])
    assert res.exit_code == 0
    assert f"Bundle {bundle}:" in res.stdout and "owned by" in res.stdout


def test_bad_bundle_name(runner) -> None:
    res = runner.invoke(app, ["explain", str(EXAMPLES / "hot-broker.json"), "-b", "nope"])
    assert res.exit_code == 2 and "bad bundle name" in res.stderr


@pytest.mark.slow
def test_real_subprocess() -> None:
    out = subprocess.run([sys.executable, "-m", "lbctl", "explain",
                          str(EXAMPLES / "rolling-restart.yaml")],
                         capture_output=True, text=True, check=True)
    assert "Why nothing happens" in out.stdout
