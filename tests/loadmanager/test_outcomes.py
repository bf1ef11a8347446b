"""What a cycle came to (plan@1's ``decision``), the order Pulsar issues unloads in, a split
bundle left alone, and reports whose figures overflow Java's float."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.explain.words import text
from lbctl.loadmanager.select import Options, plans, run
from lbctl.model.javaorder import java_hash_order
from lbctl.model.load import ResourceUsage
from lbctl.records import replace
from tests.factories import MB, balanced, broker, single_broker, skewed_overload, state, stats
from tests.plan_contract import check_plan

NOW = 1_763_000_000_000


# --- the decision -------------------------------------------------------------------------------
@pytest.mark.parametrize(("scenario", "opts", "label", "reason"), [
    (skewed_overload, Options(strategy="ThresholdShedder"), "Success", "Overloaded"),
    (balanced, Options(strategy="ThresholdShedder"), "Skip", "Balanced"),
    (single_broker, Options(), "Skip", "NoBrokers"),
    (skewed_overload, Options(overrides={"loadBalancerSheddingEnabled": "false"}), "Skip",
     "Disabled"),
    (skewed_overload, Options(strategy="AvgShedder", placement="AvgShedder"), "Skip", "HitCount"),
])
def test_the_plan_says_why(scenario, opts, label, reason) -> None:  # type: ignore[no-untyped-def]
    (p,) = plans([scenario()], opts)
    d = p.to_dict()
    check_plan(d)
    assert (d["decision"]["label"], d["decision"]["reason"]) == (label, reason)
    assert d["decision"]["detail"]
    # every broker the strategy looked at has its own label and reason
    if label == "Skip" and reason not in ("NoBrokers", "Disabled"):
        assert all("label" in b and "reason" in b for b in d["brokers"])


def test_extensible_decision_and_broker_reasons() -> None:
    from lbctl.sources.snapshot import read_snapshots
    from tests.paths import EXAMPLES

    (s,) = read_snapshots([EXAMPLES / "extensible" / "pip220-12-2-1-1.jsonl"])[:1]
    (p,) = plans([s], Options())
    d = p.to_dict()
    check_plan(d)
    assert d["decision"]["reason"] == "HitCount" and "held 1 time" in d["decision"]["detail"]
    assert {(b["label"], b["reason"]) for b in d["brokers"]} == {("Skip", "HitCount")}


def test_recommend_json_carries_decision_version_and_history() -> None:
    out = CliRunner().invoke(app, ["recommend", "examples/rolling-restart.yaml", "-o", "json"])
    assert out.exit_code == 0, out.output
    plan = json.loads(out.stdout)
    assert list(plan)[:10] == ["format", "cluster", "capturedAt", "loadManager", "shedding",
                               "placement", "settings", "actions", "brokers", "summary"]
    assert plan["decision"]["label"] == "Skip" and plan["decision"]["reason"] == "Balanced"
    assert plan["pulsarVersion"]["origin"] == "snapshot"
    assert plan["history"]["firstSight"] is True


# --- the order of the unloads ----------------------------------------------------------------
def _many_hot(n: int) -> object:
    """``n`` overloaded brokers with two bundles each (OverloadShedder sheds each of them)."""
    brokers = {f"broker-{i}.pulsar.svc:8080": broker(
        cpu=(95, 100), bundles={f"t/n{i}/0x00000000_0x80000000": stats(10, 0, 5 * MB),
                                f"t/n{i}/0x80000000_0xffffffff": stats(10, 0, 4 * MB)})
        for i in range(n)}
    brokers["idle.pulsar.svc:8080"] = broker(cpu=(1, 100))
    return state(brokers, now=NOW)


@pytest.mark.parametrize(("version", "buckets"), [("4.1.1", 16), ("3.0.0", 32)])
def test_unloads_follow_the_multimap_order(version: str, buckets: int) -> None:
    """``doLoadShedding`` walks ``bundlesToUnload.asMap()``: an ``ArrayListMultimap`` whose
    ``HashMap`` has 16 buckets on Guava 32+ and 32 on Guava ≤ 31.1 (Pulsar 3.0.0 shipped 31.1)."""
    (p,) = plans([_many_hot(6)], Options(strategy="OverloadShedder", pulsar_version=version))
    sources = list(dict.fromkeys(a.broker for a in p.actions))
    assert sources == java_hash_order(sources, capacity=buckets)
    assert len(sources) == 6


def test_a_reused_multimap_keeps_its_grown_table() -> None:
    """OverloadShedder keeps its ``selectedBundlesCache`` and ``clear()``s it: after a cycle that
    unloaded from 14 brokers (the table grew to 32), a later cycle's order uses 32 buckets."""
    big = _many_hot(14)
    small = _many_hot(5)
    later = replace(small, captured_at=NOW + 31 * 60_000)  # past the grace period
    rs = run([big, later], Options(strategy="OverloadShedder"))
    assert rs[0].memory.multimap_capacity == 32
    sources = list(dict.fromkeys(o.selection.broker for o in rs[1].outcomes))
    assert sources == java_hash_order(sources, capacity=32)
    fresh = run([later], Options(strategy="OverloadShedder"))[0]
    assert fresh.memory.multimap_capacity == 16


# --- a bundle split this cycle ----------------------------------------------------------------
def test_a_bundle_split_in_a_cycle_is_not_also_shed() -> None:
    """``checkNamespaceBundleSplit`` removes the bundle's ``BundleData`` (and the leader's
    ``lastStats``): no shedder sees it until the next ``updateBundleData``."""
    hot = "t/hot/0x00000000_0xffffffff"
    s = state({
        "a:8080": broker(cpu=(95, 100), bundles={hot: stats(40000, 0, 90 * MB, topics=2000),
                                                 "t/x/0x00000000_0xffffffff": stats(10, 0, MB)}),
        "b:8080": broker(cpu=(5, 100), bundles={"t/y/0x00000000_0xffffffff": stats(10, 0, MB)}),
    }, now=NOW)
    (r,) = run([s], Options(strategy="OverloadShedder"))
    assert [x.candidate.bundle for x in r.splits if x.skipped is None] == [hot]
    assert hot not in {o.selection.bundle for o in r.outcomes}
    why = {c.bundle: text(c.why) for c in r.decision.candidates}  # type: ignore[union-attr]
    assert "split in this cycle" in why[hot]
    (r,) = run([s], Options(strategy="OverloadShedder",
                            overrides={"loadBalancerAutoBundleSplitEnabled": "false"}))
    assert hot in {o.selection.bundle for o in r.outcomes}


# --- figures beyond float ----------------------------------------------------------------------
def overflowing():  # type: ignore[no-untyped-def]
    """A usage ≥ 3.4e38 (infinite as a Java float), a limit below float's smallest value (0 as a
    float: usage/0 = +inf) and a 0/0 (NaN) — reports the validator accepts."""
    return state({
        "inf:8080": broker(cpu=(3.5e38, 100), bundles={
            "t/a/0x00000000_0x80000000": stats(10, 0, 5 * MB),
            "t/a/0x80000000_0xffffffff": stats(10, 0, 4 * MB)}),
        "tiny:8080": broker(cpu=(5, 1e-46), bundles={"t/b/0x00000000_0xffffffff": stats(1)}),
        "nan:8080": broker(cpu=(0, 1e-46), bundles={"t/c/0x00000000_0xffffffff": stats(1)}),
        "ok:8080": broker(cpu=(20, 100)),
    }, now=NOW)


@pytest.mark.parametrize("strategy", ["ThresholdShedder", "OverloadShedder", "UniformLoadShedder",
                                      "AvgShedder", "TransferShedder"])
def test_infinite_usage_gives_pulsars_decision(strategy: str) -> None:
    """Java carries on with ±inf and NaN: ``inf - inf`` is NaN and every comparison with NaN is
    false. ThresholdShedder: the average is +inf; the infinite broker is not below it, so it is
    shed, and since ``need`` is NaN exactly one bundle (the first) is selected — as
    ``ThresholdShedder.findBundlesForUnloading`` does with these figures."""
    placement = "AvgShedder" if strategy == "AvgShedder" else None
    results = run([overflowing()], Options(strategy=strategy, placement=placement))
    p = results[-1].plan()
    d = p.to_dict()
    check_plan(d)
    text = json.dumps(d, allow_nan=False)  # JSON never carries inf/NaN …
    assert "Infinity" not in text and "NaN" not in text
    if strategy in ("ThresholdShedder", "OverloadShedder"):
        # OverloadShedder: usage +inf ≥ 85 %; it should offload throughput × +inf = +inf, so
        # every bundle is selected (the running sum never reaches +inf)
        expected = ["t/a/0x00000000_0x80000000"] + (
            ["t/a/0x80000000_0xffffffff"] if strategy == "OverloadShedder" else [])
        assert [a.bundle for a in p.actions if a.broker == "inf:8080"] == expected
        # … but says where a figure could not be written
        assert any("inf:8080" in w["message"] and "infinity" in w["message"]
                   for w in d["warnings"])


@pytest.mark.parametrize("command", [
    ["recommend"], ["explain"], ["simulate", "--cycles", "3"],
    ["compare", "--strategy", "ThresholdShedder", "--strategy", "AvgShedder:AvgShedder",
     "--cycles", "3"],
])
@pytest.mark.parametrize("fmt", ["table", "json", "yaml", "csv"])
def test_commands_survive_overflowing_reports(command: list[str], fmt: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from lbctl.sources.snapshot import write_snapshot

    path = tmp_path / "inf.json"
    write_snapshot(overflowing(), path)
    out = CliRunner().invoke(app, [*command, str(path), "-o", fmt])
    assert out.exit_code == 0, out.output
    if fmt == "json":
        data = json.loads(out.stdout)
        # a non-finite figure is reported: in the warnings, or counted in the spread it left
        assert data.get("warnings") or '"nonFinite"' in out.stdout


def test_a_limit_rounding_to_zero_is_infinite_like_java() -> None:
    assert math.isinf(ResourceUsage(5, 1e-46).percent)
    assert math.isnan(ResourceUsage(0, 1e-46).percent)
    assert math.isinf(ResourceUsage(3.5e38, 100).percent)
