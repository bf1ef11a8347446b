"""`lbctl split-bundle` end to end: every output format, the documentation's flow-or-QPS cases on
the bundled example, one-line errors with non-zero exit codes; and `recommend` showing the
automatic splits."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lbctl.cli.app import app
from tests.paths import EXAMPLES

EXAMPLE = str(EXAMPLES / "flow-or-qps.json")
DATA = Path(__file__).resolve().parents[1] / "data" / "split"
BASE = ["split-bundle", "my-tenant/my-ns", "--snapshot", EXAMPLE]
FLOW = [*BASE, "-b", "0x00000000_0x80000000", "-san", "flow_or_qps_equally_divide"]


def limits(rate: int, mbytes: int) -> list[str]:
    return ["--set", f"loadBalancerNamespaceBundleMaxMsgRate={rate}",
            "--set", f"loadBalancerNamespaceBundleMaxBandwidthMbytes={mbytes}"]


@pytest.mark.parametrize(("rate", "mbytes", "boundaries"), [
    (450, 200, ["0x1c800001", "0x2e800001", "0x48800001", "0x67000001"]),
    (1900, 90, ["0x2e800001", "0x67000001"]),
    (1100, 110, ["0x48800001"]),
])
def test_documentation_cases(runner, rate: int, mbytes: int, boundaries: list[str]) -> None:
    res = runner.invoke(app, [*FLOW, *limits(rate, mbytes), "-o", "json"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)
    (action,) = plan["actions"]
    assert action["action"] == "split" and action["reason"] == "Admin"
    assert action["boundaries"] == boundaries
    assert action["algorithm"] == "flow_or_qps_equally_divide"
    edges = ["0x00000000", *boundaries, "0x80000000"]
    assert action["children"] == [f"my-tenant/my-ns/{a}_{b}"
                                  for a, b in zip(edges, edges[1:], strict=False)]
    kids = plan["preview"]["children"]
    assert sum(len(c["topics"]) for c in kids) == 6
    assert sum(c["msgRate"] for c in kids) == 2100.0
    assert all(c["broker"] == "broker-1.pulsar.svc:8080" for c in kids)


@pytest.mark.parametrize("fmt", ["table", "json", "yaml", "csv"])
def test_every_format(runner, fmt: str) -> None:
    res = runner.invoke(app, [*FLOW, *limits(1100, 110), "-u", "-o", fmt])
    assert res.exit_code == 0, res.output
    out = res.stdout
    if fmt in ("json", "yaml"):
        plan = json.loads(out) if fmt == "json" else yaml.safe_load(out)
        assert plan["format"] == "lbctl/plan@1"
        assert plan["summary"]["splits"] == 1 and plan["summary"]["unloads"] == 0
        assert plan["actions"][0]["unload"] is True
        assert plan["settings"]["loadBalancerNamespaceBundleMaxMsgRate"] == 1100
        assert plan["preview"]["namespaceBundles"] == {"before": 2, "after": 3}
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert [r["bundle"] for r in rows] == ["my-tenant/my-ns/0x00000000_0x48800001",
                                               "my-tenant/my-ns/0x48800001_0x80000000"]
        assert [r["topics"] for r in rows] == ["4", "2"]
        assert [float(r["msgRate"]) for r in rows] == [1000.0, 1100.0]
    else:
        assert "boundaries: 0x48800001" in out
        assert "0x00000000_0x48800001" in out and "(unloaded)" in out
        assert "2 -> 3 bundles" in out and "Preview only" in out


def test_bundle_types(runner) -> None:
    for flags in (["-bt", "HOT"], ["-b", "HOT"], ["-bt", "largest"], ["-b", "LARGEST"]):
        res = runner.invoke(app, [*BASE, *flags, "-o", "json"])
        assert res.exit_code == 0, (flags, res.output)
        plan = json.loads(res.stdout)
        assert plan["actions"][0]["bundle"] == "my-tenant/my-ns/0x00000000_0x80000000"
        assert plan["preview"]["selectedBy"] in ("HOT", "LARGEST")


def test_specified_positions_hex_and_decimal(runner) -> None:
    res = runner.invoke(app, [*BASE, "-b", "0x00000000_0x80000000", "-san",
                              "specified_positions_divide", "-sb", "0x30000000",
                              "-sb", str(0x20000000), "-o", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["actions"][0]["boundaries"] == ["0x20000000", "0x30000000"]


def test_default_algorithm_comes_from_the_snapshot(runner) -> None:
    res = runner.invoke(app, [*BASE, "-b", "0x00000000_0x80000000", "-o", "json",
                              "--set", "defaultNamespaceBundleSplitAlgorithm=range_equally_divide"])
    assert res.exit_code == 0, res.output
    action = json.loads(res.stdout)["actions"][0]
    assert (action["algorithm"], action["boundaries"]) == ("range_equally_divide", ["0x40000000"])


@pytest.mark.parametrize(("args", "code", "message"), [
    # without --snapshot it goes live: nobody listens on port 1 here
    (["--admin-url", "http://127.0.0.1:1", "split-bundle", "my-tenant/my-ns", "-b",
      "0x00000000_0x80000000", "--yes"], 3, "connection refused"),
    ([*BASE], 2, "Must pass one of the params: --bundle / --bundle-type"),
    ([*BASE, "-b", "0x00000000_0x80000000", "-bt", "HOT"], 2, "mutually exclusive"),
    (["split-bundle", "my-tenant/nope", "--snapshot", EXAMPLE, "-b", "0x00000000_0x80000000"], 2,
     "namespace my-tenant/nope is not in the snapshot (did you mean my-tenant/my-ns?)"),
    ([*BASE, "-b", "0x00000000_0x40000000"], 2, "is not a bundle of my-tenant/my-ns"),
    ([*BASE, "-b", "0-0x4"], 2, "bad bundle range"),  # a bad flag value, as unload -b
    ([*BASE, "-b", "0x00000000_0x80000000", "-san", "specified_positions_divide",
      "-sb", "0x90000000"], 1, "no split position is strictly inside"),
    ([*BASE, "-b", "0x00000000_0x80000000", "-san", "specified_positions_divide"], 1,
     "splitBoundaries must not be empty"),
    ([*BASE, "-b", "0x00000000_0x80000000", "-san", "range_equaly_divide"], 1,
     "Unsupported namespace bundle split algorithm"),
    ([*BASE, "-b", "0x00000000_0x80000000", "-san", "topic_count_equally_divide",
      "--set", "supportedNamespaceBundleSplitAlgorithms=range_equally_divide"], 1,
     "supported algorithms are [range_equally_divide]"),
    ([*BASE, "-b", "0x00000000_0x80000000", "--set", "loadBalancerNamespaceMaximumBundles=2"], 1,
     "already has 2 bundles"),
    ([*FLOW, "--set", "defaultNamespaceBundleSplitAlgorithm=range_equally_divide"], 1,
     "needs defaultNamespaceBundleSplitAlgorithm=flow_or_qps_equally_divide"),
    ([*FLOW, *limits(30000, 1000)], 1, "no split: flow_or_qps_equally_divide found no boundary"),
    ([*BASE, "-b", "0x00000000_0x80000000", "-san", "specified_positions_divide", "-sb", "zz"], 2,
     "--split-boundaries: not a hash position"),
    ([*BASE, "-bt", "WARM"], 2, "--bundle-type must be LARGEST or HOT"),
    (["split-bundle", "my-tenant/my-ns", "--snapshot", "missing.json", "-b", "LARGEST"], 1,
     "missing.json"),
])
def test_errors_are_one_line(runner, args: list[str], code: int, message: str) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == code, res.output
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lbctl: error: ")
    assert message in lines[0]


def test_too_small_bundle(runner, tmp_path: Path) -> None:
    snap = json.loads(Path(EXAMPLE).read_text())
    snap["namespaces"]["my-tenant/my-ns"]["boundaries"] = ["0x00000000", "0x00000001",
                                                            "0xffffffff"]
    b1 = snap["brokers"]["broker-1.pulsar.svc:8080"]
    st = b1["lastStats"].pop("my-tenant/my-ns/0x00000000_0x80000000")
    b1["lastStats"]["my-tenant/my-ns/0x00000000_0x00000001"] = st
    b1["bundles"] = ["my-tenant/my-ns/0x00000000_0x00000001"]
    b2 = snap["brokers"]["broker-2.pulsar.svc:8080"]
    st = b2["lastStats"].pop("my-tenant/my-ns/0x80000000_0xffffffff")
    b2["lastStats"]["my-tenant/my-ns/0x00000001_0xffffffff"] = st
    b2["bundles"] = ["my-tenant/my-ns/0x00000001_0xffffffff"]
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(snap))
    res = runner.invoke(app, ["split-bundle", "my-tenant/my-ns", "-b", "0x00000000_0x00000001",
                              "--snapshot", str(path)])
    assert res.exit_code == 1
    assert res.stderr.strip() == ("lbctl: error: my-tenant/my-ns/0x00000000_0x00000001 can't be "
                                  "split further (upper - lower <= 1)")


def test_recommend_shows_automatic_splits(runner) -> None:
    res = runner.invoke(app, ["recommend", str(DATA / "auto-split.json"), "-o", "json"])
    assert res.exit_code == 0, res.output
    splits = [a for a in json.loads(res.stdout)["actions"] if a["action"] == "split"]
    assert {a["detail"] for a in splits} == {"Message Rate: 49976/30000 msg/s",
                                             "Topics: 1500/1000"}
    res = runner.invoke(app, ["recommend", str(DATA / "auto-split.json"),
                              "--set", "loadBalancerAutoBundleSplitEnabled=false", "-o", "json"])
    assert [a for a in json.loads(res.stdout)["actions"] if a["action"] == "split"] == []
    table = runner.invoke(app, ["recommend", str(DATA / "auto-split.json")]).stdout
    assert "split" in table and "MsgRate" in table


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_explain_shows_the_cycles_splits_as_recommend_does(runner, fmt: str) -> None:
    """explain lists the splits of the cycle (its candidates say "split in this cycle") with the
    threshold each exceeded, its figure against the limit and the algorithm; the same bundles
    and details as recommend's split actions."""
    snap = str(DATA / "auto-split.json")
    res = runner.invoke(app, ["explain", snap, "-o", fmt])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout) if fmt == "json" else yaml.safe_load(res.stdout)
    splits = {s["bundle"]: s for s in data["explanation"]["splits"]}
    planned = {a["bundle"]: a for a in data["actions"] if a["action"] == "split"}
    assert set(splits) == set(planned) and len(splits) == 2
    for b, s in splits.items():
        assert s["detail"] == planned[b]["detail"]
        assert (s["children"], s["algorithm"]) == (planned[b]["children"],
                                                  planned[b]["algorithm"])
    rate = splits["acme/events/0x00000000_0x40000000"]
    assert (rate["threshold"], rate["value"], rate["limit"]) == (
        "loadBalancerNamespaceBundleMaxMsgRate", 49976.0, 30000)
    assert splits["acme/events/0xc0000000_0xffffffff"]["threshold"] == (
        "loadBalancerNamespaceBundleMaxTopics")
    one = runner.invoke(app, ["explain", snap, "--broker", "broker-1", "-o", "json"])
    assert [s["bundle"] for s in json.loads(one.stdout)["explanation"]["splits"]] == [
        "acme/events/0x00000000_0x40000000"]
    off = runner.invoke(app, ["explain", snap, "--set", "loadBalancerAutoBundleSplitEnabled=false",
                              "-o", "json"])
    assert json.loads(off.stdout)["explanation"]["splits"] == []


def test_explain_text_shows_the_cycles_splits(runner) -> None:
    table = runner.invoke(app, ["explain", str(DATA / "auto-split.json"), "--wide"]).stdout
    assert "Bundle splits (BundleSplitterTask" in table
    assert "Message Rate: 49976/30000 msg/s (loadBalancerNamespaceBundleMaxMsgRate)" in table
    assert "range_equally_divide at 0x20000000" in table



SKEWED = str(EXAMPLES / "extensible" / "skewed.json")
#: the extensible example splits its hot bundles at once (no hit count to wait for)
EXT_SPLITS = ["--set", "loadBalancerNamespaceBundleSplitConditionHitCountThreshold=0",
              "--set", "loadBalancerNamespaceBundleMaxMsgRate=100"]


@pytest.mark.parametrize("args", [
    [str(DATA / "auto-split.json"), "--set", "loadBalancerSheddingEnabled=false"],
    [SKEWED, *EXT_SPLITS, "--set", "loadBalancerSheddingEnabled=false"],
])
def test_gated_shedding_still_explains_the_splits(runner, args: list[str]) -> None:
    """The split task runs on its own (modular ``checkNamespaceBundleSplit``, extensible
    ``SplitScheduler``): a cycle whose shedding is disabled still splits, and explain says so
    in every format, as recommend does."""
    table = runner.invoke(app, ["explain", *args, "--wide"]).stdout
    assert "Bundle splits (" in table
    assert "Nothing happens" not in table
    assert "No bundle is unloaded: loadBalancerSheddingEnabled is false" in table
    splits = {a["bundle"] for a in json.loads(runner.invoke(
        app, ["recommend", *args, "-o", "json"]).stdout)["actions"] if a["action"] == "split"}
    assert splits
    for fmt in ("json", "yaml"):
        out = runner.invoke(app, ["explain", *args, "-o", fmt]).stdout
        data = json.loads(out) if fmt == "json" else yaml.safe_load(out)
        assert data["explanation"]["gate"].startswith("loadBalancerSheddingEnabled is false")
        assert splits <= {s["bundle"] for s in data["explanation"]["splits"]}


def test_a_disabled_load_balancer_splits_in_modular_only(runner) -> None:
    """``loadBalancerEnabled=false``: the modular ``checkNamespaceBundleSplit`` does not read it
    (``ModularLoadManagerImpl``; ``updateAll`` runs it), so recommend still splits and explain
    says what runs those splits instead of "the load manager does nothing"; the extensible
    ``SplitScheduler.isLoadBalancerAutoBundleSplitEnabled`` reads it, so nothing splits there."""
    off = ["--set", "loadBalancerEnabled=false"]
    args = [str(DATA / "auto-split.json"), *off]
    splits = [a for a in json.loads(runner.invoke(
        app, ["recommend", *args, "-o", "json"]).stdout)["actions"] if a["action"] == "split"]
    assert len(splits) == 2
    table = runner.invoke(app, ["explain", *args, "--wide"]).stdout
    assert "Bundle splits (" in table
    assert "does nothing" not in table
    assert "no LoadReportUpdaterTask" in table
    assert "No bundle is unloaded: loadBalancerEnabled is false" in table
    data = json.loads(runner.invoke(app, ["explain", *args, "-o", "json"]).stdout)
    assert "updateAll" in data["explanation"]["splitTrigger"]
    ext = json.loads(runner.invoke(app, ["recommend", SKEWED, *EXT_SPLITS, *off,
                                         "-o", "json"]).stdout)
    assert [a for a in ext["actions"] if a["action"] == "split"] == []
    assert [a for a in json.loads(runner.invoke(app, ["recommend", SKEWED, *EXT_SPLITS,
                                                       "-o", "json"]).stdout)["actions"]
            if a["action"] == "split"]


@pytest.mark.parametrize("args", [
    [str(DATA / "auto-split.json")],
    [SKEWED, *EXT_SPLITS, "--set", "loadBalancerSheddingConditionHitCountThreshold=100"],
])
def test_a_cycle_that_splits_but_unloads_nothing_does_not_say_nothing_happens(
        runner, args: list[str]) -> None:
    table = runner.invoke(app, ["explain", *args, "--wide"]).stdout
    assert "Bundle splits (" in table
    assert "Why no bundle is unloaded:" in table
    assert "nothing happens" not in table.lower()


@pytest.mark.parametrize("gate", [[], ["--set", "loadBalancerSheddingEnabled=false"]])
def test_a_cycle_that_neither_splits_nor_unloads_says_nothing_happens(
        runner, gate: list[str]) -> None:
    table = runner.invoke(app, ["explain", str(DATA / "auto-split.json"), *gate, "--set",
                                "loadBalancerAutoBundleSplitEnabled=false", "--wide"]).stdout
    assert "Bundle splits (" not in table
    assert ("Nothing happens: loadBalancerSheddingEnabled is false" if gate
            else "Why nothing happens:") in table


@pytest.mark.slow
def test_subprocess_help_and_run() -> None:
    out = subprocess.run([sys.executable, "-m", "lbctl", "split-bundle", "--help"],
                         capture_output=True, text=True, check=True).stdout
    for flag in ("--bundle", "-bt", "--split-algorithm-name", "-san", "-sb", "--unload",
                 "--snapshot"):
        assert flag in out
    run = subprocess.run([sys.executable, "-m", "lbctl", *FLOW, *limits(450, 200)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "0x1c800001, 0x2e800001, 0x48800001, 0x67000001" in run.stdout
