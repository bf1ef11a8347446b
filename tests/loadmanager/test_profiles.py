"""The same snapshot, different Pulsar releases: each code variant of ``lbctl.versions`` changes
the decision the way the cited Pulsar change did."""

from __future__ import annotations

import pytest

from lbctl.errors import UsageError
from lbctl.loadmanager.select import Options, plans, run
from lbctl.model.brokerload import top_k_bundles
from lbctl.model.cluster import ClusterState
from lbctl.model.load import NamespaceBundleStats
from lbctl.records import replace
from lbctl.strategies.builtin import algorithm_by_name
from lbctl.versions import Version, profile_for
from tests.factories import MB, broker, state, stats

NOW = 1_763_000_000_000


def _bundles(prefix: str, n: int, tp: float) -> dict[str, NamespaceBundleStats]:
    return {f"{prefix}/0x{i:08x}_0x{i + 1:08x}": stats(100, 100, tp, tp) for i in range(n)}


def direct_memory_hot() -> ClusterState:
    """broker-1 at 10 % CPU and 90 % direct memory (Netty's cache), broker-2 idle."""
    return state({
        "broker-1:8080": broker(cpu=(10, 100), direct_memory=(90, 100),
                                bundles=_bundles("t/a", 4, 5 * MB)),
        "broker-2:8080": broker(cpu=(5, 100), bundles=_bundles("t/b", 1, MB)),
    }, now=NOW)


def test_overload_shedder_before_and_after_pip_358() -> None:
    """Before Pulsar 4.0 OverloadShedder compares the unweighted ``getMaxResourceUsage()``
    (direct memory included) with the 85 % threshold: 90 % direct memory sheds. From 4.0
    (PR #22888) it is the weighted usage, where direct memory weighs 0: nothing."""
    old = plans([direct_memory_hot()], Options(strategy="OverloadShedder",
                                               pulsar_version="3.3.9"))[-1]
    new = plans([direct_memory_hot()], Options(strategy="OverloadShedder",
                                               pulsar_version="4.0.0"))[-1]
    assert [a.broker for a in old.actions] == ["broker-1:8080"]
    assert new.actions == ()


def test_threshold_shedder_weighs_heap_before_3_0() -> None:
    """2.10/2.11's ThresholdShedder used the 5-argument weighted usage with
    ``loadBalancerMemoryResourceWeight`` (1.0 then); PR #19559 (3.0) dropped JVM heap."""
    hot = state({
        "a:8080": broker(cpu=(10, 100), memory=(95, 100), bundles=_bundles("t/a", 4, 20 * MB)),
        "b:8080": broker(cpu=(10, 100), memory=(10, 100), bundles=_bundles("t/b", 2, MB)),
        "c:8080": broker(cpu=(10, 100), memory=(10, 100), bundles=_bundles("t/c", 2, MB)),
    }, now=NOW)
    old = run([hot], Options(strategy="ThresholdShedder", pulsar_version="2.11.4"))[-1]
    new = run([hot], Options(strategy="ThresholdShedder", pulsar_version="3.0.0"))[-1]
    assert old.unloads and not new.unloads
    assert "loadBalancerMemoryResourceWeight" in old.plan().to_dict()["settings"]


def test_a_release_without_avg_shedder_falls_back_like_pulsar() -> None:
    """``ModularLoadManagerImpl.createLoadSheddingStrategy``: a class that cannot be loaded gives
    OverloadShedder; ``ModularLoadManagerStrategy.create`` gives LeastLongTermMessageRate."""
    (p,) = plans([direct_memory_hot()], Options(strategy="AvgShedder", placement="AvgShedder",
                                                pulsar_version="3.0.5"))
    assert (p.shedding, p.placement) == ("OverloadShedder", "LeastLongTermMessageRate")
    assert any("AvgShedder does not exist in Pulsar 3.0.5" in w for w in p.warnings)
    (q,) = plans([direct_memory_hot()], Options(strategy="AvgShedder", placement="AvgShedder",
                                                pulsar_version="3.0.8"))
    assert q.shedding == "AvgShedder"


def test_avg_shedder_wrong_key_refuses_to_start() -> None:
    """PR #23156: 3.0.6 compared AvgShedder with ``loadBalancerPlacementStrategy``; unless that
    key names AvgShedder too, the load manager did not start."""
    opts = Options(strategy="AvgShedder", placement="AvgShedder", pulsar_version="3.0.6")
    with pytest.raises(UsageError, match="PR #23156"):
        run([direct_memory_hot()], opts)
    fixed = replace(opts, overrides={"loadBalancerPlacementStrategy":
                                     "org.apache.pulsar.broker.loadbalance.impl.AvgShedder"})
    assert run([direct_memory_hot()], fixed)[-1].shedding == "AvgShedder"


def test_no_extensible_load_manager_before_3_0() -> None:
    with pytest.raises(UsageError, match="3.0.0"):
        run([direct_memory_hot()], Options(strategy="TransferShedder", pulsar_version="2.11"))


def test_pulsar_system_is_shed_only_on_2_10() -> None:
    """``isSystemServiceNamespace`` names ``pulsar/system`` from 2.11.0 (PR #15252)."""
    s = state({
        "a:8080": broker(cpu=(95, 100), bundles={
            "pulsar/system/0x00000000_0xffffffff": stats(100, 100, 80 * MB, 80 * MB),
            **_bundles("t/a", 2, MB)}),
        "b:8080": broker(cpu=(5, 100), bundles=_bundles("t/b", 1, MB)),
    }, now=NOW)
    for version, shed in (("2.10.6", True), ("2.11.0", False), ("4.1", False)):
        (p,) = plans([s], Options(strategy="OverloadShedder", pulsar_version=version))
        moved = {a.bundle for a in p.actions}
        assert ("pulsar/system/0x00000000_0xffffffff" in moved) is shed, version


def test_flow_or_qps_only_from_3_0() -> None:
    from lbctl.config import resolve

    for version, expected in (("2.11.4", "range_equally_divide"),
                              ("3.0.0", "flow_or_qps_equally_divide")):
        conf = resolve({"defaultNamespaceBundleSplitAlgorithm": "flow_or_qps_equally_divide"},
                       profile=profile_for(Version.parse(version)))
        assert algorithm_by_name(None, conf).name == expected


def test_top_k_comparator_variants() -> None:
    """Two bundles 60 kB/s apart: the threshold comparator (before PR #24772) calls them equal
    and keeps their map order; the resolution comparator rounds 140 kB/s to 1 and 200 kB/s to 2."""
    from lbctl.config import resolve

    data = [("t/n/0x10000000_0x20000000", NamespaceBundleStats(msgThroughputIn=140_000)),
            ("t/n/0x00000000_0x10000000", NamespaceBundleStats(msgThroughputIn=200_000))]
    old = resolve({}, profile=profile_for(Version.parse("4.0.6")))
    new = resolve({}, profile=profile_for(Version.parse("4.0.7")))
    top_old = [t.bundleName for t in top_k_bundles(data, 1, old)]
    top_new = [t.bundleName for t in top_k_bundles(data, 1, new)]
    assert top_new == ["t/n/0x00000000_0x10000000"]
    assert top_old == ["t/n/0x10000000_0x20000000"]  # "equal": the first in map order stays


def test_transfer_shedder_underloaded_rule_before_22321() -> None:
    """Before PR #22321 a broker counted as underloaded when its ``msgThroughputEMA`` was below
    1 B/s; since, when it is below the max broker's times min(0.5, targetStd / 2)."""
    from lbctl.sources.snapshot import read_snapshots
    from tests.paths import EXAMPLES

    (s,) = read_snapshots([EXAMPLES / "extensible" / "pip220-12-2-1-1.jsonl"])[:1]
    new = run([s], Options(pulsar_version="3.3.0"))[-1]
    old = run([s], Options(pulsar_version="3.1.3"))[-1]
    assert new.shed is not None and old.shed is not None
    assert new.shed.condition["minUnderloaded"] is True
    assert old.shed.condition["minUnderloaded"] is False


def test_profile_named_in_plans_and_explanations() -> None:
    (r,) = run([direct_memory_hot()], Options(pulsar_version="3.0"))
    d = r.plan().to_dict()
    assert d["pulsarVersion"] == {"version": "3.0.17", "line": "3.0",
                                  "origin": "--pulsar-version", "requested": "3.0"}
    assert "Pulsar profile: Pulsar 3.0.17 (--pulsar-version)" in r.explanation().to_text()
    (r,) = run([direct_memory_hot()], Options(pulsar_version="3.4.2"))
    assert any("nearest" in w.message for w in r.plan().all_warnings())


def test_least_long_term_message_rate_overload_test_before_pip_358() -> None:
    """``LeastLongTermMessageRate.getScore``: a candidate over the overload threshold scores +inf.
    Before PIP-358 (4.0) the test used the unweighted ``getMaxResourceUsage()``, so a broker at
    90 % direct memory was avoided; since, direct memory weighs 0 and it is an ordinary
    candidate."""
    from lbctl.config import resolve
    from lbctl.strategies.placement.least_long_term_message_rate import overload_usage

    local = broker(cpu=(10, 100), direct_memory=(90, 100))
    old = resolve({}, profile=profile_for(Version.parse("3.3.9")))
    new = resolve({}, profile=profile_for(Version.parse("4.0.0")))
    assert overload_usage(local, old) == pytest.approx(0.9)
    assert overload_usage(local, new) == pytest.approx(0.1)
