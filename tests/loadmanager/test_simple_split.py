"""The simple load manager's own splits: ``SimpleLoadManagerImpl.doNamespaceBundleSplit`` (master
0058e734 and cde090c5), run by each broker right after it wrote its load report, on that report's
bundle stats (:mod:`lbctl.strategies.simple.split`, :func:`lbctl.loadmanager.simple.auto_splits`).

Pulsar's ``SimpleLoadManagerImplTest`` (master 01f1d8fa) has no split test; its
``testDoLoadShedding`` bundles (10000 msg/s out, no topics) are used below with a lower message
rate limit: over it, yet never split, as they have fewer than two topics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lbctl.explain.modular import ModularExplanation
from lbctl.loadmanager.select import Options, run
from lbctl.model.cycle import ModularCycle
from lbctl.model.decision import Reason
from lbctl.model.javaorder import java_hash_order
from lbctl.sources.snapshot import read_snapshots
from lbctl.strategies.simple.decide import SimpleWhy
from tests.jdk import needs_jdk, run_java
from tests.paths import EXAMPLES

DATA = Path(__file__).resolve().parents[1] / "data"
JAVA = Path(__file__).parent / "java"
B1, B2 = "b1.example:8080", "b2.example:8080"
FULL = "0x00000000_0xffffffff"
HALF = ("0x00000000_0x80000000", "0x80000000_0xffffffff")
MB = 1024 * 1024


def _usage(pct: float) -> dict[str, Any]:
    u = {"usage": pct, "limit": 100.0}
    return {k: dict(u) for k in ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")}


def _stats(topics: int = 4, rate: float = 0.0, tp: float = 0.0, producers: int = 0,
           consumers: int = 0) -> dict[str, Any]:
    return {"topics": topics, "msgRateIn": rate / 2, "msgRateOut": rate / 2,
            "msgThroughputIn": tp / 2, "msgThroughputOut": tp / 2,
            "producerCount": producers, "consumerCount": consumers}


def _snap(tmp: Path, b1: dict[str, Any], b2: dict[str, Any] | None = None, *, at: int = 0,
          stamps: tuple[int, int] = (1_700_000_000_000, 1_700_000_000_000),
          namespaces: dict[str, Any] | None = None, name: str = "s.json") -> Path:
    """A two-broker simple snapshot, both brokers at 20 % (nothing to shed)."""
    doc: dict[str, Any] = {
        "format": "lbctl/snapshot@1", "cluster": "c", "loadManager": "simple",
        "capturedAt": 1_700_000_060_000 + at,
        "brokers": {
            B1: {"timestamp": stamps[0], "systemResourceUsage": _usage(20.0), "bundleStats": b1},
            B2: {"timestamp": stamps[1], "systemResourceUsage": _usage(20.0),
                 "bundleStats": b2 or {}},
        }}
    if namespaces is not None:
        doc["namespaces"] = namespaces
    p = tmp / name
    p.write_text(json.dumps(doc))
    return p


def _run(paths: list[Path], **overrides: str) -> list[ModularCycle]:
    out = run(read_snapshots(paths), Options(overrides=overrides or None))
    assert all(isinstance(c, ModularCycle) for c in out)
    return out  # type: ignore[return-value]


def _splits(path: Path, **overrides: str) -> list[tuple[str, str, Reason, tuple[str, ...]]]:
    (cycle,) = _run([path], **overrides)
    return [(s.candidate.bundle, s.candidate.broker, s.candidate.reason, s.children)
            for s in cycle.splits if s.skipped is None]


def test_a_bundle_over_the_message_rate_is_split_on_its_broker(tmp_path: Path) -> None:
    p = _snap(tmp_path, {f"t/ns/{FULL}": _stats(rate=40_000.0)})
    assert _splits(p) == [(f"t/ns/{FULL}", B1, Reason.MSG_RATE,
                           ("t/ns/0x00000000_0x7fffffff", "t/ns/0x7fffffff_0xffffffff"))]
    (cycle,) = _run([p])
    (s,) = cycle.splits
    assert s.algorithm == "range_equally_divide" and s.unload  # Pulsar's defaults
    assert s.candidate.limit == 30_000 and s.candidate.msg_rate == 40_000.0


@pytest.mark.parametrize(("stats", "reason"), [
    (_stats(topics=1001), Reason.TOPICS),
    (_stats(producers=600, consumers=401), Reason.SESSIONS),
    (_stats(tp=101.0 * MB), Reason.BANDWIDTH),
    (_stats(topics=1001, tp=101.0 * MB), Reason.TOPICS),  # the first limit exceeded
])
def test_each_limit_at_its_default(tmp_path: Path, stats: dict[str, Any], reason: Reason) -> None:
    assert [r for _, _, r, _ in _splits(_snap(tmp_path, {f"t/ns/{FULL}": stats}))] == [reason]


def test_limits_are_strict_and_one_topic_never_splits(tmp_path: Path) -> None:
    at_limits = _stats(topics=1000, rate=30_000.0, tp=100.0 * MB, producers=500, consumers=500)
    one_topic = _stats(topics=1, rate=90_000.0)
    p = _snap(tmp_path, {f"t/a/{FULL}": at_limits, f"t/b/{FULL}": one_topic})
    assert _splits(p) == []
    assert [b for b, *_ in _splits(p, loadBalancerNamespaceBundleMaxTopics="999")] == [
        f"t/a/{FULL}"]


def test_pulsar_s_do_load_shedding_bundles_have_no_topics(tmp_path: Path) -> None:
    """testDoLoadShedding's two bundles at 10000 msg/s out: over a 5000 msg/s limit, but with no
    topic ("Unable to split hot namespace bundle ... only one topic")."""
    path = DATA / "simple" / "do-load-shedding.json"
    assert _splits(path, loadBalancerNamespaceBundleMaxMsgRate="5000") == []
    doc = json.loads(path.read_text())
    for st in doc["brokers"]["pulsar-broker1.com:8080"]["bundleStats"].values():
        st["topics"] = 2
    p = tmp_path / "two-topics.json"
    p.write_text(json.dumps(doc))
    assert len(_splits(p, loadBalancerNamespaceBundleMaxMsgRate="5000")) == 2
    assert _splits(p) == []  # 10000 msg/s is under the default 30000


def test_the_report_s_own_figures_are_read_not_long_term_averages(tmp_path: Path) -> None:
    """Two snapshots: the bundle was quiet, then its broker reports 40000 msg/s. The modular
    leader's long-term average is still far below the limit; the simple broker splits on the
    report it just wrote."""
    quiet = _snap(tmp_path, {f"t/ns/{FULL}": _stats(rate=10.0)}, name="a.json")
    hot = _snap(tmp_path, {f"t/ns/{FULL}": _stats(rate=40_000.0)}, at=60_000,
                stamps=(1_700_000_060_000, 1_700_000_000_000), name="b.json")
    cycles = _run([quiet, hot])
    assert [len(c.splits) for c in cycles] == [0, 1]


def test_only_brokers_that_wrote_their_report_split(tmp_path: Path) -> None:
    """doNamespaceBundleSplit runs after a write: a report not rewritten splits nothing again."""
    hot = {f"t/a/{FULL}": _stats(rate=40_000.0)}
    hot2 = {f"t/b/{FULL}": _stats(rate=40_000.0)}
    first = _snap(tmp_path, hot, hot2, name="a.json")
    later = _snap(tmp_path, hot, hot2, at=60_000, stamps=(1_700_000_000_000, 1_700_000_060_000),
                  name="b.json")
    cycles = _run([first, later])
    assert [[s.candidate.broker for s in c.splits] for c in cycles] == [[B1, B2], [B2]]


def test_the_namespace_count_is_not_raised_by_earlier_picks(tmp_path: Path) -> None:
    """Two hot bundles of one namespace of 2 bundles, loadBalancerNamespaceMaximumBundles 3: both
    split (getBundleCount is 2 for each; BundleSplitterTask would count the first pick and stop
    at one); at 2 neither does."""
    hot = {f"t/ns/{h}": _stats(rate=40_000.0) for h in HALF}
    ns = {"t/ns": {"boundaries": ["0x00000000", "0x80000000", "0xffffffff"], "numBundles": 2}}
    p = _snap(tmp_path, hot, namespaces=ns)
    assert len(_splits(p, loadBalancerNamespaceMaximumBundles="3")) == 2
    assert _splits(p, loadBalancerNamespaceMaximumBundles="2") == []


@pytest.mark.parametrize(("stamps", "first"), [((1, 2), B1), ((2, 1), B2)])
def test_a_later_broker_reads_the_count_earlier_splits_left(
        tmp_path: Path, stamps: tuple[int, int], first: str) -> None:
    """One hot bundle of a 2-bundle namespace on each broker, loadBalancerNamespaceMaximumBundles
    3: the broker that wrote its report first splits (synchronous admin split, 3 bundles); the
    other scans after it and reads getBundleCount = 3, at the maximum, so it does not split. At
    4 both split; within one broker's report both did (the test above)."""
    lo, hi = (f"t/ns/{h}" for h in HALF)
    ns = {"t/ns": {"boundaries": ["0x00000000", "0x80000000", "0xffffffff"], "numBundles": 2}}
    base = 1_700_000_000_000
    p = _snap(tmp_path, {lo: _stats(rate=40_000.0)}, {hi: _stats(rate=40_000.0)}, namespaces=ns,
              stamps=(base + stamps[0], base + stamps[1]))
    assert [b for _, b, _, _ in _splits(p, loadBalancerNamespaceMaximumBundles="3")] == [first]
    assert sorted(b for _, b, _, _ in _splits(p, loadBalancerNamespaceMaximumBundles="4")) == [
        B1, B2]


def test_the_bandwidth_limit_is_a_long_and_does_not_wrap(tmp_path: Path) -> None:
    """2048 MB: BundleSplitterTask's int product wraps to -2^31, so every bundle with throughput
    splits there; SimpleLoadManagerImpl multiplies by a long MBytes: 1 MB/s stays under it."""
    p = _snap(tmp_path, {f"t/ns/{FULL}": _stats(tp=1.0 * MB)})
    assert _splits(p, loadBalancerNamespaceBundleMaxBandwidthMbytes="2048") == []
    assert _splits(p, loadBalancerNamespaceBundleMaxBandwidthMbytes="0") != []


def test_the_session_sum_is_an_int_that_wraps(tmp_path: Path) -> None:
    """consumerCount + producerCount is summed in int before it is widened: 2^31 - 1 + 2 is
    negative, under any limit."""
    wraps = _stats(producers=2**31 - 1, consumers=2)
    assert _splits(_snap(tmp_path, {f"t/ns/{FULL}": wraps})) == []
    assert _splits(_snap(tmp_path, {f"t/ns/{FULL}": _stats(producers=2**31 - 2, consumers=1)}))


@pytest.mark.parametrize("setting", ["loadBalancerAutoBundleSplitEnabled",
                                     "loadBalancerEnabled"])
def test_switched_off(tmp_path: Path, setting: str) -> None:
    """Auto split off: Pulsar logs a DRY RUN. loadBalancerEnabled off: no LoadReportUpdaterTask,
    so no report write and no split (PulsarService.startLoadManagementService)."""
    p = _snap(tmp_path, {f"t/ns/{FULL}": _stats(rate=40_000.0)})
    assert _splits(p) != []
    assert _splits(p, **{setting: "false"}) == []


def _with_switch(path: Path, value: object) -> Path:
    doc = json.loads(path.read_text())
    doc["resourceQuotas"] = {"autoBundleSplitEnabled": value}
    out = path.with_name(f"switch-{json.dumps(value)}.json")
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize(("stored", "setting", "splits"), [
    ("false", "true", False), ("true", "false", True), ("TRUE", "false", True),
    ("yes", "true", False), ("", "true", False), (False, "true", False), (True, "false", True)])
def test_the_simple_managers_own_switch_beats_the_setting(
        tmp_path: Path, stored: object, setting: str, splits: bool) -> None:
    """``getLoadBalancerAutoBundleSplitEnabled`` reads ``/loadbalance/settings/
    auto_bundle_split_enabled`` first (``Boolean.parseBoolean`` of the stored string: "yes" and
    "" are false), and the dynamic ``loadBalancerAutoBundleSplitEnabled`` only without it."""
    p = _with_switch(_snap(tmp_path, {f"t/ns/{FULL}": _stats(rate=40_000.0)}), stored)
    assert bool(_splits(p, loadBalancerAutoBundleSplitEnabled=setting)) is splits


def test_a_bad_switch_is_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from lbctl.cli.app import app
    p = _with_switch(_snap(tmp_path, {f"t/ns/{FULL}": _stats(rate=40_000.0)}), 3)
    r = CliRunner().invoke(app, ["recommend", str(p)])
    assert r.exit_code == 1
    assert "autoBundleSplitEnabled" in r.output and "Traceback" not in r.output
    assert len([ln for ln in r.output.splitlines() if ln.strip()]) == 1


def test_children_stay_when_unload_split_bundles_is_off(tmp_path: Path) -> None:
    p = _snap(tmp_path, {f"t/ns/{FULL}": _stats(rate=40_000.0)})
    (cycle,) = _run([p], loadBalancerAutoUnloadSplitBundlesEnabled="false")
    assert [s.unload for s in cycle.splits] == [False]


def _names(n: int) -> list[str]:
    return [f"tenant-{i % 3}/ns-{i}/{FULL}" for i in range(n)]


def test_the_split_order_is_the_hash_set_s(tmp_path: Path) -> None:
    names = _names(20)
    p = _snap(tmp_path, {b: _stats(rate=40_000.0) for b in names})
    got = [b for b, *_ in _splits(p)]
    assert got == java_hash_order(java_hash_order(names))
    assert sorted(got) == sorted(names) and got != names


@needs_jdk("the order SimpleLoadManagerImpl splits in: a HashMap copy's walk into a HashSet")
@pytest.mark.parametrize(("n", "every"), [(12, 1), (20, 1), (300, 7), (1000, 3), (3000, 2)])
def test_the_split_order_against_the_jdk(tmp_path: Path, n: int, every: int) -> None:
    """A report of ``n`` bundles, every ``every``-th hot: ``LoadReport.setBundleStats`` copies the
    stats into ``new HashMap<>(stats)`` (its table presized for all ``n``), which
    doNamespaceBundleSplit walks, adding the hot ones to a new HashSet, split in its order
    (java/ReportSplitOrder.java, plain JDK)."""
    names = _names(n)
    hot = set(names[::every])
    lines = [f"{b}\t{int(b in hot)}" for b in names]
    expected = run_java("ReportSplitOrder", tmp_path, lines, JAVA)["order"]
    p = _snap(tmp_path, {b: _stats(rate=40_000.0 if b in hot else 1.0) for b in names})
    assert [b for b, *_ in _splits(p)] == expected


def test_a_bundle_split_is_not_also_unloaded() -> None:
    """examples/simple-overloaded.json: broker-1 splits its four hot bundles (over 100 MB/s) after
    writing its report; the leader's unload of one of them fails, as the bundle is gone."""
    (cycle,) = _run([EXAMPLES / "simple-overloaded.json"])
    split = {s.candidate.bundle for s in cycle.splits if s.skipped is None}
    assert len(split) == 4
    (o,) = cycle.outcomes
    assert o.selection.bundle in split and o.skipped is not None
    assert isinstance(o.skipped, SimpleWhy) and o.skipped.code == "split-away"
    assert cycle.load.recently_unloaded.get(o.selection.bundle) is None
    assert not cycle.effect().moves
    text = ModularExplanation(cycle, None, None).to_text()
    assert "Bundle splits (SimpleLoadManagerImpl.doNamespaceBundleSplit" in text
    assert "split this bundle after writing its load report" in text


def test_the_simulated_simple_cluster_splits() -> None:
    from lbctl.simulate.engine import SimulationOptions, simulate

    r = simulate(read_snapshots([EXAMPLES / "simple-overloaded.json"]), Options(),
                 SimulationOptions(cycles=3))
    assert len(r.cycles[0].splits) == 4
    assert sum(r.cycles[1].bundles.values()) == 12 + 4


def _bounds(n: int) -> list[str]:
    """LoadBalancerTest.getBundles(n): n equal segments, the last ending at 0xffffffff."""
    seg = 0x100000000 // n
    return [f"0x{i * seg:08x}" for i in range(n)] + ["0xffffffff"]


def test_ported_namespace_bundle_auto_split(tmp_path: Path) -> None:
    """LoadBalancerTest.testNamespaceBundleAutoSplit (01f1d8fab668): one report, Pulsar's default
    limits; namespaces 01-07 each exceed one limit (topics, producers, consumers, rate in, rate
    out, throughput in, out) and are split; 08 sits exactly at every limit, 09 has one topic,
    10 already has loadBalancerNamespaceMaximumBundles (128) bundles: none of them is."""
    max_topics, max_sessions, max_rate, max_bw = 1000, 1000, 30_000, 100 * MB

    def stats(topics: int, prod: int, cons: int, r_in: float, r_out: float, t_in: float,
              t_out: float) -> dict[str, Any]:
        return {"topics": topics, "producerCount": prod, "consumerCount": cons,
                "msgRateIn": r_in, "msgRateOut": r_out, "msgThroughputIn": t_in,
                "msgThroughputOut": t_out}

    half = "0x00000000_0x80000000"
    report = {
        f"pulsar/use/primary-ns-01/{half}": stats(max_topics + 1, 0, 0, 0, 0, 0, 0),
        f"pulsar/use/primary-ns-02/{half}": stats(2, max_sessions + 1, 0, 0, 0, 0, 0),
        f"pulsar/use/primary-ns-03/{half}": stats(2, 0, max_sessions + 1, 0, 0, 0, 0),
        f"pulsar/use/primary-ns-04/{half}": stats(2, 0, 0, max_rate + 1, 0, 0, 0),
        f"pulsar/use/primary-ns-05/{half}": stats(2, 0, 0, 0, max_rate + 1, 0, 0),
        f"pulsar/use/primary-ns-06/{half}": stats(2, 0, 0, 0, 0, max_bw + 1, 0),
        f"pulsar/use/primary-ns-07/{half}": stats(2, 0, 0, 0, 0, 0, max_bw + 1),
        f"pulsar/use/primary-ns-08/{half}": stats(max_topics - 1, max_sessions - 1, 1,
                                                  max_rate - 1, 1, max_bw - 1, 1),
        f"pulsar/use/primary-ns-09/{half}": stats(1, 0, 0, 0, 0, 0, max_bw + 1),
        "pulsar/use/primary-ns-10/0x00000000_0x02000000": stats(max_topics + 1, 0, 0, 0, 0, 0, 0),
    }
    namespaces = {f"pulsar/use/primary-ns-{i:02d}": {
        "boundaries": _bounds(128 if i == 10 else 2), "numBundles": 128 if i == 10 else 2}
        for i in range(1, 11)}
    p = _snap(tmp_path, report, namespaces=namespaces)
    got = _splits(p)
    assert sorted(b for b, *_ in got) == [f"pulsar/use/primary-ns-{i:02d}/{half}"
                                          for i in range(1, 8)]
    assert [r for *_, r, _ in sorted(got)] == [
        Reason.TOPICS, Reason.SESSIONS, Reason.SESSIONS, Reason.MSG_RATE, Reason.MSG_RATE,
        Reason.BANDWIDTH, Reason.BANDWIDTH]


@pytest.mark.live
@pytest.mark.slow
def test_the_sandbox_s_simple_leader_splits() -> None:
    """The living sandbox on SimpleLoadManagerImpl (its leader: lbctl's simple cycle on the
    reports as written, carrying out the plan): with a 500 msg/s limit the hot bundles of
    public/default are split, and the namespace has more bundles after."""
    from lbctl.sandbox import hot_cluster
    from lbctl.sandbox.clock import SteppedClock
    from lbctl.sandbox.scenarios import living

    c = hot_cluster(3)
    c.config["loadManagerClassName"] = \
        "org.apache.pulsar.broker.loadbalance.impl.SimpleLoadManagerImpl"
    c.config["loadBalancerNamespaceBundleMaxMsgRate"] = "500"
    before = len(c.namespaces["public/default"]) - 1
    clock = SteppedClock()
    life = living(c, clock)
    try:
        start = clock.now()
        for minute in (1, 2):
            life.advance(start + 60 * minute)
    finally:
        c.stop()
    assert life.leader is not None
    splits = [a for d in life.leader.decisions for a in d.actions if a["action"] == "split"]
    assert splits and len(c.namespaces["public/default"]) - 1 > before
