"""The extensible cycle over snapshots: PIP-220's motivating cases, EMA and cool-down carried
across a sequence, load data derived from modular reports, and the CLI on every example."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.explain.words import text
from lbctl.loadmanager.select import Options, plans, run
from lbctl.model.load import ResourceUsage
from lbctl.records import replace
from lbctl.sources.snapshot import read_snapshots
from tests.plan_contract import check_plan

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "examples" / "extensible"
PIP220 = [EXT / "pip220-12-2-1-1.jsonl", EXT / "pip220-50x5-0.jsonl"]


def all_examples() -> list[Path]:
    files = [p for d in (ROOT / "examples", EXT) for p in sorted(d.iterdir())
             if p.suffix in (".json", ".yaml", ".yml", ".jsonl", ".gz")]
    return files


@pytest.mark.parametrize("example", PIP220, ids=lambda p: p.name)
def test_pip220_threshold_shedder_recommends_nothing(example):
    states = [replace(s, load_manager="modular") for s in read_snapshots([example])]
    ps = plans(states, Options(strategy="ThresholdShedder"))
    assert len(ps) == len(states) == 4
    assert [[a for a in p.actions if a.action == "unload"] for p in ps] == [[]] * 4


@pytest.mark.parametrize("example, source, dest, rule", [
    # 12,2,1,1 %: std 0.046 is under target; the idle broker's throughput EMA is < 1/8 of the max's
    (PIP220[0], "broker-1.pulsar.svc:8080", "broker-3.pulsar.svc:8080", "msgThroughputEMA"),
    # 50,50,50,50,50,0 %: the empty broker's load is under avg × min(0.5, targetStd / 2)
    (PIP220[1], "broker-5.pulsar.svc:8080", "broker-6.pulsar.svc:8080", "< avg"),
])
def test_pip220_transfer_shedder_moves_load(example, source, dest, rule):
    rs = run(read_snapshots([example]), Options())
    ps = [r.plan() for r in rs]
    # the condition must hold more than 3 cycles in a row: nothing, nothing, nothing, transfers
    assert [len(p.actions) for p in ps[:3]] == [0, 0, 0]
    for i, r in enumerate(rs[:3], 1):
        assert r.shed.skip[1] == "HitCount" and r.shed.hit_count == i
    last = ps[-1]
    moves = {(a.action, a.broker, a.destinationBroker, a.reason) for a in last.actions}
    assert moves == {("transfer", source, dest, "Underloaded")}
    assert len(last.actions) == 2
    assert rule in text(rs[-1].shed.rounds[0].why_reason)
    assert last.summary()["after"]["std"] < last.summary()["before"]["std"]


@pytest.mark.parametrize("example", PIP220, ids=lambda p: p.name)
def test_pip220_explain_says_why(runner, example):
    res = runner.invoke(app, ["explain", str(example), "--all-cycles"])
    assert res.exit_code == 0, res.output
    cycles = res.stdout.split("=== Cycle ")[1:]
    for c in cycles[:3]:
        assert "Skip/HitCount" in c and "loadBalancerSheddingConditionHitCountThreshold (3)" in c
    assert "Underloaded" in cycles[3] and "std " in cycles[3] and "loop ended" in cycles[3]
    res = runner.invoke(app, ["recommend", str(example), "--strategy", "ThresholdShedder",
                              "--set", "loadBalancerSheddingConditionHitCountThreshold=3"])
    assert res.exit_code == 2 and "TransferShedder only" in res.output


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _shift(state, ms):
    return replace(state, captured_at=state.captured_at + ms,
                   broker_load_data={b: replace(p, data=replace(p.data,
                                                                updatedAt=p.data.updatedAt + ms))
                                     for b, p in state.broker_load_data.items()})


def test_cool_down_across_cycles():
    (s,) = read_snapshots([EXT / "skewed.json"])
    rs = run([s, _shift(s, 60_000), _shift(s, 240_000)], Options())
    ps = [r.plan() for r in rs]
    assert {a.broker for a in ps[0].actions} == {"broker-5.pulsar.svc:8080",
                                                 "broker-4.pulsar.svc:8080"}
    assert rs[1].shed.skip[1] == "CoolDown" and ps[1].actions == ()
    assert rs[1].recently_unloaded_brokers["broker-5.pulsar.svc:8080"] == s.captured_at
    # 4 minutes on: past loadBalanceSheddingDelayInSeconds, but the moved bundles are in grace
    assert rs[2].shed.skip is None or rs[2].shed.skip[1] != "CoolDown"
    moved = {a.bundle for a in ps[0].actions}
    assert not moved & {a.bundle for a in ps[2].actions}


def test_published_emas_are_what_the_leader_reads():
    """TransferShedder reads ``BrokerLoadData.weightedMaxEMA`` as each broker published it
    (``ExtensibleLoadManagerImpl``'s brokerLoadDataStore): in a sequence too, the snapshot's own
    EMA is used, not one recomputed by lbctl from the raw percentages."""
    (s,) = read_snapshots([EXT / "skewed.json"])
    b = "broker-1.pulsar.svc:8080"
    later = _shift(s, 60_000)
    pub = later.broker_load_data[b]
    hot = replace(pub, data=replace(pub.data, cpu=ResourceUsage(720, 800),
                                    weightedMaxEMA=0.5, msgThroughputEMA=1234.0))
    later = replace(later, broker_load_data={**later.broker_load_data, b: hot})
    rs = run([s, later], Options(overrides={"loadBalancerSheddingEnabled": "false"}))
    assert rs[0].store[b].weightedMaxEMA == pytest.approx(0.02)
    assert rs[1].store[b].weightedMaxEMA == 0.5
    assert rs[1].store[b].msgThroughputEMA == 1234.0
    # a report that publishes no EMA gets one: the carried one, advanced by its sample
    bare = replace(hot, has_features=False)
    later2 = replace(later, broker_load_data={**later.broker_load_data, b: bare})
    rs = run([s, later2], Options(overrides={"loadBalancerSheddingEnabled": "false"}))
    assert rs[1].store[b].weightedMaxEMA == pytest.approx(0.9 * 0.02 + 0.1 * 0.9)


def test_modular_snapshot_with_transfer_shedder_derives_load_data():
    hot = ROOT / "examples" / "hot-broker.json"
    r = run(read_snapshots([hot]), Options(
        strategy="TransferShedder",
        overrides={"loadBalancerSheddingConditionHitCountThreshold": "0"}))[-1]
    assert r.derived
    src = "broker-2.pulsar.svc:8080"
    assert r.store[src].weightedMaxEMA == pytest.approx(0.92)
    p = r.plan()
    assert any(a.action == "transfer" and a.broker == src for a in p.actions)
    d = p.to_dict(explained=True)
    assert d["shedding"] == "TransferShedder" and d["placement"] == "LeastResourceUsageWithWeight"
    assert r.explanation().to_dict()["loadData"] == "derived from the modular load reports"
    assert "loadBalancerBrokerLoadTargetStd" in d["settings"]


def test_unload_mode_leaves_destination_to_the_lookup():
    (s,) = read_snapshots([EXT / "skewed.json"])
    r = run([s], Options(overrides={"loadBalancerTransferEnabled": "false"}))[-1]
    p = r.plan()
    assert p.actions and all(a.action == "unload" and a.destinationBroker is None
                             for a in p.actions)
    ex = r.explanation().to_dict()
    assert ex["placementPreview"] and ex["placementPreview"][0]["broker"]


def test_fully_qualified_name_in_config_selects_the_extensible_cycle():
    hot = ROOT / "examples" / "hot-broker.json"
    (s,) = read_snapshots([hot])
    s = replace(s, config={**s.config, "loadBalancerLoadSheddingStrategy":
                           "org.apache.pulsar.broker.loadbalance.extensions.scheduler.TransferShedder"})
    assert run([s], Options())[0].shedding == "TransferShedder"


@pytest.mark.parametrize("example", all_examples(), ids=lambda p: p.name)
def test_recommend_transfer_shedder_on_every_example(runner, example):
    res = runner.invoke(app, ["recommend", str(example), "--strategy", "TransferShedder",
                              "-o", "json"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)
    assert plan["shedding"] == "TransferShedder" and plan["placement"] == "LeastResourceUsageWithWeight"
    check_plan(plan)  # transfers go to another broker; the summary counts them


@pytest.mark.parametrize("example", sorted(EXT.glob("*.json*")), ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["table", "json", "yaml", "csv"])
def test_explain_extensible_every_format(runner, example, fmt):
    res = runner.invoke(app, ["explain", str(example), "-o", fmt])
    assert res.exit_code == 0, res.output
    out = res.stdout
    if fmt in ("json", "yaml"):
        plan = json.loads(out) if fmt == "json" else yaml.safe_load(out)
        ex = plan["explanation"]
        assert plan["loadManager"] == "extensible"
        sh = ex["shedding"]
        assert {"loadAvg", "loadStd", "hitCount", "rounds", "phaseA", "loopEnded"} <= set(sh)
        assert sh["rounds"], "every bundled extensible example ends with a shedding round"
        for r in sh["rounds"]:
            assert r["stdBefore"] is not None and r["stdAfter"] is not None
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert rows and {"broker", "usage", "cpu"} <= set(rows[0])
    else:
        assert "weightedMaxEMA" in out and ("Rounds" in out or "Why nothing happens" in out)


def test_explain_one_broker_and_one_bundle(runner):
    ex = EXT / "skewed.json"
    res = runner.invoke(app, ["explain", str(ex), "--broker", "broker-4.pulsar.svc:8080",
                              "--wide"])
    assert res.exit_code == 0
    assert "broker-4.pulsar.svc:8080 -> broker-2.pulsar.svc:8080" in res.stdout
    assert "broker-5.pulsar.svc:8080 ->" not in res.stdout
    res = runner.invoke(app, ["explain", str(ex), "-b", "acme/telemetry/0xdb6db6d8_0xedb6db6a"])
    assert res.exit_code == 0
    assert "acme/telemetry/0xdb6db6d8_0xedb6db6a" in res.stdout


def test_bad_broker_load_data_is_one_line(runner, tmp_path):
    raw = json.loads((EXT / "skewed.json").read_text())
    raw["brokerLoadData"]["broker-1.pulsar.svc:8080"]["msgThroughputIn"] = -5
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(raw))
    res = runner.invoke(app, ["recommend", str(f)])
    assert res.exit_code == 1
    assert res.output.startswith("lbctl: error: ") and res.output.count("\n") == 1
    assert 'brokerLoadData["broker-1.pulsar.svc:8080"].msgThroughputIn' in res.output


def test_one_broker_cycle_still_forgets_expired_bundles():
    """``UnloadScheduler.execute`` removes the bundles unloaded longer than
    ``loadBalancerSheddingGracePeriodMinutes`` ago before it reads the available brokers, so a
    cycle that then stops at one broker has forgotten them all the same; a cycle with
    shedding off stops before and forgets nothing."""
    from lbctl.config import Settings
    from lbctl.loadmanager.extensible import ExtensibleLoadManager

    (s,) = read_snapshots([EXT / "skewed.json"])
    lone = next(iter(s.brokers))
    old, fresh = s.captured_at - 31 * 60_000, s.captured_at - 60_000
    state = replace(s, available_brokers=(lone,),
                    recently_unloaded={"t/n/0x00000000_0x0fffffff": old,
                                       "t/n/0x0fffffff_0xffffffff": fresh})
    res = ExtensibleLoadManager().run_cycle(state, Settings.defaults())
    assert res.gate is not None and "1 broker" in res.gate
    assert res.expired_grace == ("t/n/0x00000000_0x0fffffff",)
    assert dict(res.memory.recently_unloaded) == {"t/n/0x0fffffff_0xffffffff": fresh}
    off = ExtensibleLoadManager().run_cycle(
        state, Settings.defaults().with_values(loadBalancerSheddingEnabled=False))
    assert off.expired_grace == () and len(off.memory.recently_unloaded) == 2
