"""Placement data beside load, captured live from the loopback test cluster and applied: isolation
policies (``clusters/{cluster}/namespaceIsolationPolicies``), anti-affinity groups
(``namespaces/{t}/{ns}/antiAffinity``), failure domains, the active brokers (with those whose
load report cannot be read), every namespace's topic lists (``namespaces/{t}/{ns}/topics``,
partitioned metadata), and on an extensible cluster each broker's version
(``brokers/version``) and load manager class."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lbctl.model.bundle import topic_hash
from lbctl.sandbox import Fault, TestCluster, extensible_cluster
from lbctl.sources.snapshot import read_snapshot_file
from tests.live.live_helpers import TOKENS, Lbctl

MODULAR_LM = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"
GOLD = {"namespaces": ["tenant-a/.*"], "primary": [], "secondary": [],
        "auto_failover_policy": {"policy_type": "min_available",
                                 "parameters": {"min_limit": "1", "usage_threshold": "80"}}}


def _recommend(lbctl: Lbctl, *extra: str) -> dict:
    res = lbctl("recommend", "-o", "json", *extra)
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)


def _unloads(plan: dict) -> list[tuple[str, str]]:
    return [(a["broker"], a["destinationBroker"]) for a in plan["actions"]
            if a["action"] == "unload" and not a.get("skipped")]


def test_export_captures_the_placement_sections(lbctl: Lbctl, tmp_path: Path) -> None:
    c = lbctl.cluster
    ids = list(c.brokers)
    c.isolation_policies = {"gold": {**GOLD, "primary": [ids[2].replace(".", r"\.")]}}
    c.failure_domains = {"zone-a": ids[:2], "zone-b": ids[2:]}
    c.anti_affinity = {"tenant-a/orders": "orders"}
    c.idle_topics = ["persistent://public/default/idle-1", "non-persistent://public/default/np"]
    c.partitioned = {"persistent://public/default/parted": 3}
    snap = tmp_path / "snap.json"
    res = lbctl("snapshot", "export", "-o", str(snap))
    assert res.exit_code == 0, res.stderr
    [st] = read_snapshot_file(snap)
    assert st.available() == tuple(ids)
    assert st.policies is not None
    assert st.policies.isolation[0].name == "gold"
    assert st.policies.isolation[0].is_primary(ids[2])
    assert st.policies.anti_affinity_group("tenant-a/orders") == "orders"
    assert st.policies.broker_domains() == {ids[0]: "zone-a", ids[1]: "zone-a", ids[2]: "zone-b"}
    topics = st.namespace_topics["public/default"]
    assert "persistent://public/default/idle-1" in topics.persistent  # loaded or not
    assert topics.non_persistent == ("non-persistent://public/default/np",)
    assert dict(topics.partitioned) == {"persistent://public/default/parted": 3}
    every = topics.all_topics()
    assert {f"persistent://public/default/parted-partition-{i}" for i in range(3)} <= set(every)
    assert len(every) == len(c.topics) + 2 + 3
    # the requests: one per namespace for each list, one per partitioned topic
    assert c.requests("GET", r"/namespaces/public/default/topics$")[0].query == {
        "mode": "ALL", "includeSystemTopic": "true"}
    assert c.requests("GET", r"/persistent/public/default/parted/partitions$")


def test_isolation_policy_changes_the_live_plan(lbctl: Lbctl) -> None:
    """Pulsar matches a policy's broker regexes against each broker's host
    (``LoadManagerShared.applyNamespacePolicies``): a policy naming the destination's
    ``host:port`` id changes nothing; one naming its host reserves every broker of that host
    (here all of them, on 127.0.0.1), so public/default (no policy) has no shared broker left."""
    c = lbctl.cluster
    ids = list(c.brokers)
    [(src, dest)] = _unloads(_recommend(lbctl))
    assert src == ids[0]
    c.isolation_policies = {"gold": {**GOLD, "primary": [dest]}}
    assert _unloads(_recommend(lbctl)) == [(src, dest)]
    c.isolation_policies = {"gold": {**GOLD, "primary": [dest.rpartition(":")[0]]}}
    assert _unloads(_recommend(lbctl)) == []
    explain = lbctl("explain")
    assert explain.exit_code == 0 and "no broker other than the owner passes the namespace " \
        "policies" in explain.stdout


def test_broker_without_a_readable_report_receives_nothing(lbctl: Lbctl) -> None:
    c = lbctl.cluster
    ids = list(c.brokers)
    [(_, dest)] = _unloads(_recommend(lbctl))
    c.faults.append(Fault(r"load-report", kind="status", status=500, broker=dest))
    res = lbctl("recommend", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert "without a readable load report" in res.stderr
    [(src, dest2)] = _unloads(json.loads(res.stdout))
    assert src == ids[0] and dest2 not in (dest, ids[0])


def test_policies_not_readable_are_not_applied(lbctl: Lbctl, tmp_path: Path) -> None:
    lbctl.cluster.faults.append(Fault(r"namespaceIsolationPolicies", status=403,
                                      reason="Don't have admin permission"))
    snap = tmp_path / "s.json"
    res = lbctl("snapshot", "export", "-o", str(snap))
    assert res.exit_code == 0, res.stderr
    assert "policies not captured" in res.stderr
    [st] = read_snapshot_file(snap)
    assert st.policies is None and st.available_brokers is not None


def test_topic_lists_of_one_namespace_failing(lbctl: Lbctl, tmp_path: Path) -> None:
    lbctl.cluster.faults.append(Fault(r"/namespaces/tenant-a/orders/topics", status=500))
    snap = tmp_path / "s.json"
    res = lbctl("snapshot", "export", "-o", str(snap))
    assert res.exit_code == 0 and "topic lists of tenant-a/orders not read" in res.stderr
    [st] = read_snapshot_file(snap)
    assert "tenant-a/orders" not in st.namespace_topics
    assert "public/default" in st.namespace_topics


def test_split_preview_sees_idle_topics_live(lbctl: Lbctl) -> None:
    """``split-bundle -bt LARGEST`` counts the persistent topics in metadata, loaded or not: idle
    topics piled into the last bundle make it the largest."""
    c = lbctl.cluster
    last = c.ranges("public/default")[-1]
    lo = int(last.split("_")[0], 16)
    idle, i = [], 0
    while len(idle) < 40:
        name = f"persistent://public/default/idle-{i}"
        i += 1
        if topic_hash(name) >= lo:
            idle.append(name)
    c.idle_topics = idle
    res = lbctl("split-bundle", "public/default", "-bt", "LARGEST", "--dry-run", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert last in res.stdout


@pytest.fixture
def ext() -> Iterator[TestCluster]:
    c = extensible_cluster(tokens=TOKENS)
    yield c
    c.stop()


def test_extensible_capture_records_versions_and_classes(ext: TestCluster, tmp_path: Path) -> None:
    ids = list(ext.brokers)
    ext.brokers[ids[1]].version = "4.0.5"
    ext.brokers[ids[3]].lm_class = MODULAR_LM  # still on the modular load manager
    lb = Lbctl(ext)
    snap = tmp_path / "s.json"
    assert lb("snapshot", "export", "-o", str(snap)).exit_code == 0
    [st] = read_snapshot_file(snap)
    assert st.brokers[ids[0]].brokerVersionString == "4.2.5"
    assert st.brokers[ids[1]].brokerVersionString == "4.0.5"
    assert st.brokers[ids[3]].loadManagerClassName == MODULAR_LM
    assert st.brokers[ids[0]].loadManagerClassName.endswith("ExtensibleLoadManagerImpl")
    # the migrating broker is no destination: transfers that would go there do not happen
    plan = json.loads(lb("recommend", "-o", "json").stdout)
    assert all(a.get("destinationBroker") != ids[3] for a in plan["actions"])
    baseline = json.loads(lb("recommend", "-o", "json", "--set",
                             "loadManagerClassName=" + MODULAR_LM).stdout)
    assert baseline["actions"] == plan["actions"]  # a non-extensible setting is not the leader's


def test_extensible_capture_records_every_bundle(ext: TestCluster, tmp_path: Path) -> None:
    """The capture keeps every bundle's stats (``lastStats``), not only the top bundles: the split
    scheduler evaluates them all."""
    lb = Lbctl(ext)
    snap = tmp_path / "s.json"
    ext.config["loadBalancerMaxNumberOfBundlesInBundleLoadReport"] = "1"
    assert lb("snapshot", "export", "-o", str(snap)).exit_code == 0
    [st] = read_snapshot_file(snap)
    hot = list(ext.brokers)[0]
    assert len(st.top_bundles_load_data[hot].bundles) == 1
    assert len(st.brokers[hot].lastStats) == 4


def test_extensible_top_bundles_leave_out_bundles_with_policies(ext: TestCluster,
                                                                tmp_path: Path) -> None:
    """``TopKBundles.hasPolicies``: with public/default in an anti-affinity group its bundles are
    not among any broker's top bundles (unless loadBalancerSheddingBundlesWithPoliciesEnabled)."""
    lb = Lbctl(ext)
    snap = tmp_path / "s.json"
    assert lb("snapshot", "export", "-o", str(snap)).exit_code == 0
    [before] = read_snapshot_file(snap)
    assert any(p.bundles for p in before.top_bundles_load_data.values())
    ext.anti_affinity = {"public/default": "grp"}
    assert lb("snapshot", "export", "-o", str(snap)).exit_code == 0
    [after] = read_snapshot_file(snap)
    assert not any(p.bundles for p in after.top_bundles_load_data.values())
    ext.config["loadBalancerSheddingBundlesWithPoliciesEnabled"] = "true"
    assert lb("snapshot", "export", "-o", str(snap)).exit_code == 0
    [allowed] = read_snapshot_file(snap)
    assert any(p.bundles for p in allowed.top_bundles_load_data.values())
