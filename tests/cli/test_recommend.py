"""`lbctl recommend` end to end on the bundled examples, in every output format."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from random import Random

import pytest
import yaml

from lbctl.cli.app import app
from tests.paths import EXAMPLES, example_files

PLAN_KEYS = {"format", "cluster", "capturedAt", "loadManager", "shedding", "placement", "settings",
             "actions", "brokers", "summary"}


def check_plan(plan: dict) -> None:
    """The plan v1 contract, as the CLI tests see it (tests/plan_contract.py checks all of it)."""
    assert set(plan) >= PLAN_KEYS
    assert plan["format"] == "lbctl/plan@1"
    assert plan["loadManager"] in ("modular", "extensible", "simple")
    assert isinstance(plan["settings"], dict) and plan["settings"]
    for a in plan["actions"]:
        assert {"action", "bundle", "broker", "reason"} <= set(a)
        assert a["action"] in ("unload", "transfer", "split")
        if a["action"] == "unload":
            assert "destinationBroker" in a and "msgRate" in a and "throughput" in a
            assert a["destinationBroker"] != a["broker"] or "skipped" in a
    names = [b["broker"] for b in plan["brokers"]]
    assert len(names) == len(set(names))
    for b in plan["brokers"]:
        assert {"broker", "usage", "score", "msgRate", "throughput", "bundles"} <= set(b)
    s = plan["summary"]
    assert {"brokers", "bundles", "unloads", "splits"} <= set(s)
    assert s["brokers"] == len(plan["brokers"])
    assert s["unloads"] == sum(1 for a in plan["actions"]
                               if "skipped" not in a and a["action"] != "split")


@pytest.mark.parametrize("example", example_files(), ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["table", "json", "yaml", "csv"])
def test_every_example_every_format(runner, example: Path, fmt: str) -> None:
    res = runner.invoke(app, ["recommend", str(example), "-o", fmt])
    assert res.exit_code == 0, res.output
    out = res.stdout
    if fmt == "json":
        check_plan(json.loads(out))
    elif fmt == "yaml":
        check_plan(yaml.safe_load(out))
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        for r in rows:
            assert r["action"] in ("unload", "split") and r["bundle"]
    else:
        assert "Brokers:" in out and "Actions" in out


def _plan(runner, *args: str) -> dict:
    res = runner.invoke(app, ["recommend", *args, "-o", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_balanced_cluster_has_nothing_to_do(runner) -> None:
    plan = _plan(runner, str(EXAMPLES / "balanced.json"))
    assert plan["actions"] == []
    assert plan["shedding"] == "ThresholdShedder"


def test_hot_broker_is_shed(runner) -> None:
    plan = _plan(runner, str(EXAMPLES / "hot-broker.json"))
    hot = max(plan["brokers"], key=lambda b: b["usage"])
    unloads = [a for a in plan["actions"] if "skipped" not in a]
    assert unloads and all(a["broker"] == hot["broker"] for a in unloads)
    assert all(a["reason"] == "Overloaded" for a in unloads)
    assert all(a["destinationBroker"] != hot["broker"] for a in unloads)
    assert plan["summary"]["after"]["max"] < plan["summary"]["before"]["max"]


def test_rolling_restart_threshold_shedder_does_nothing(runner) -> None:
    """PIP-220: loads 50,50,50,50,50,0 % — ThresholdShedder never moves anything."""
    plan = _plan(runner, str(EXAMPLES / "rolling-restart.yaml"))
    assert plan["actions"] == []


def test_sequence_all_cycles(runner) -> None:
    """The 90 %/10 % sequence: history weighting makes a later cycle shed again."""
    res = runner.invoke(app, ["recommend", str(EXAMPLES / "two-brokers-90-10.jsonl"),
                              "--all-cycles", "-o", "json"])
    assert res.exit_code == 0, res.output
    cycles = json.loads(res.stdout)["cycles"]
    assert len(cycles) >= 3
    for c in cycles:
        check_plan(c)
    with_unloads = [i for i, c in enumerate(cycles) if c["summary"]["unloads"]]
    assert with_unloads and with_unloads[0] == 0
    assert any(i > 0 for i in with_unloads), "a later cycle over-unloads"


def test_strategy_override_and_settings(runner) -> None:
    plan = _plan(runner, str(EXAMPLES / "hot-broker.json"), "--strategy",
                 "org.apache.pulsar.broker.loadbalance.impl.OverloadShedder",
                 "--set", "loadBalancerBrokerOverloadedThresholdPercentage=80")
    assert plan["shedding"] == "OverloadShedder"
    assert plan["settings"]["loadBalancerBrokerOverloadedThresholdPercentage"] == 80


def test_seed_picks_among_equally_good_brokers(runner) -> None:
    """uniform.json's one unload has two equally good destinations for
    LeastResourceUsageWithWeight (``best``, in the candidates' Java order); Pulsar's
    ``ThreadLocalRandom`` pick is ``Random(seed).randrange(2)`` into that list."""
    args = [str(EXAMPLES / "uniform.json"), "--placement", "LeastResourceUsageWithWeight"]
    ex = json.loads(runner.invoke(app, ["explain", *args, "-o", "json"]).stdout)
    [outcome] = ex["explanation"]["outcomes"]
    best = outcome["placement"]["decision"]["best"]
    assert best == ["broker-3.pulsar.svc:8080", "broker-2.pulsar.svc:8080"]
    for seed, index in ((0, 1), (3, 0)):  # Random(0).randrange(2) == 1, Random(3)… == 0
        assert Random(seed).randrange(len(best)) == index
        [action] = _plan(runner, *args, "--seed", str(seed))["actions"]
        assert action["destinationBroker"] == best[index]


@pytest.mark.parametrize("args, code, text", [
    (["--strategy", "ThreshholdShedder"], 2, "did you mean ThresholdShedder"),
    (["--placement", "LeastLongTermMsgRate"], 2, "LeastLongTermMessageRate"),
    (["--set", "loadBalancerBrokerThresholdShedderPercentag=5"], 2,
     "did you mean loadBalancerBrokerThresholdShedderPercentage"),
    (["--set", "noequals"], 2, "key=value"),
    (["--set", "loadBalancerBrokerThresholdShedderPercentage=abc"], 2, "expected an integer"),
    (["--placement", "AvgShedder"], 2, "AvgShedder"),
])
def test_bad_options_one_line(runner, args, code, text) -> None:
    res = runner.invoke(app, ["recommend", str(EXAMPLES / "hot-broker.json"), *args])
    assert res.exit_code == code, res.output
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lbctl: error:") and text in err[0]


@pytest.mark.slow
def test_real_subprocess_json() -> None:
    out = subprocess.run([sys.executable, "-m", "lbctl", "recommend",
                          str(EXAMPLES / "hot-broker.json"), "-o", "json"],
                         capture_output=True, text=True, check=True)
    check_plan(json.loads(out.stdout))
    assert out.stderr == ""


@pytest.mark.slow
def test_real_subprocess_missing_file_no_traceback(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "lbctl", "recommend", str(tmp_path / "nope.json")],
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_unknown_strategy_in_snapshot_config(runner, tmp_path: Path) -> None:
    doc = json.loads((EXAMPLES / "hot-broker.json").read_text())
    doc["config"]["loadBalancerLoadSheddingStrategy"] = (
        "org.apache.pulsar.broker.loadbalance.impl.ThreshholdShedder")
    f = tmp_path / "bad-strategy.json"
    f.write_text(json.dumps(doc))
    res = runner.invoke(app, ["recommend", str(f)])
    assert res.exit_code == 2
    assert "did you mean ThresholdShedder" in res.stderr


def test_broker_conf_layer(runner, tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text("# excerpt\nloadBalancerLoadSheddingStrategy="
                    "org.apache.pulsar.broker.loadbalance.impl.OverloadShedder\n"
                    "loadBalancerBrokerOverloadedThresholdPercentage=95\nzookeeperServers=zk:2181\n")
    plan = _plan(runner, str(EXAMPLES / "hot-broker.json"), "--broker-conf", str(conf))
    assert plan["shedding"] == "OverloadShedder"
    assert plan["actions"] == []  # 92 % < 95 %
    plan = _plan(runner, str(EXAMPLES / "hot-broker.json"), "--broker-conf", str(conf),
                 "--set", "loadBalancerBrokerOverloadedThresholdPercentage=90")
    assert plan["actions"], "--set wins over broker.conf"
