"""Snapshot sections for the data placement reads beside load: ``availableBrokers``, ``policies``
(isolation policies as ``clusters/{cluster}/namespaceIsolationPolicies`` serves them, anti-affinity
groups, failure domains), ``namespaceTopics``, and a report's ``loadManagerClassName``."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from lbctl.errors import SnapshotFormatError
from lbctl.sources.snapshot import parse_snapshot, snapshot_to_dict

# NamespaceIsolationPoliciesTest.defaultJson (pulsar-common), as the admin API serves it
ISOLATION_JSON = {"policy1": {
    "namespaces": ["pulsar/use/test.*"],
    "primary": ["prod1-broker[1-3].messaging.use.example.com"],
    "secondary": ["prod1-broker.*.use.example.com"],
    "auto_failover_policy": {"parameters": {"min_limit": "3", "usage_threshold": "100"},
                             "policy_type": "min_available"}}}


def snap(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": 0,
        "brokers": {"b1:8080": {"loadManagerClassName":
                                "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"},
                    "b2:8080": {}}}
    base.update(extra)
    return base


def full() -> dict[str, Any]:
    return snap(
        availableBrokers=["b1:8080", "b2:8080", "b3:8080"],
        policies={"namespaceIsolationPolicies": ISOLATION_JSON,
                  "antiAffinityGroups": {"t/a": "g1", "t/b": "g1"},
                  "failureDomains": {"d1": {"brokers": ["b1:8080"]},
                                     "d2": {"brokers": ["b2:8080", "b3:8080"]}}},
        namespaceTopics={"t/a": {"persistent": ["persistent://t/a/x", "persistent://t/a/y-partition-0"],
                                 "nonPersistent": ["non-persistent://t/a/np"],
                                 "partitioned": {"persistent://t/a/y": 3}}})


def test_sections_parse_and_round_trip() -> None:
    st = parse_snapshot(full(), "f")
    assert st.available() == ("b1:8080", "b2:8080", "b3:8080")
    assert st.brokers["b1:8080"].loadManagerClassName.endswith("ModularLoadManagerImpl")
    assert st.brokers["b2:8080"].loadManagerClassName is None
    pol = st.policies
    assert pol is not None and pol.isolation[0].name == "policy1"
    assert (pol.isolation[0].min_limit, pol.isolation[0].usage_threshold) == (3, 100)
    assert pol.anti_affinity_group("t/b") == "g1"
    assert pol.broker_domains() == {"b1:8080": "d1", "b2:8080": "d2", "b3:8080": "d2"}
    topics = st.namespace_topics["t/a"]
    # getOwnedTopicListForNamespaceBundle: persistent, non-persistent, then missing partitions
    assert topics.all_topics() == ["persistent://t/a/x", "persistent://t/a/y-partition-0",
                                   "non-persistent://t/a/np", "persistent://t/a/y-partition-1",
                                   "persistent://t/a/y-partition-2"]
    again = parse_snapshot(snapshot_to_dict(st), "g")
    assert again.policies == st.policies and again.available() == st.available()
    assert again.namespace_topics == st.namespace_topics
    assert again.brokers == st.brokers


def test_absent_sections_mean_not_captured() -> None:
    st = parse_snapshot(snap(), "f")
    assert st.policies is None and st.available_brokers is None
    assert st.available() == ("b1:8080", "b2:8080")
    out = snapshot_to_dict(st)
    assert not {"policies", "availableBrokers", "namespaceTopics"} & set(out)


def test_integer_failover_parameters_are_accepted() -> None:
    """``NamespaceIsolationPoliciesTest.testSetPolicy`` sends ``"min_limit": 2`` as a number."""
    doc = full()
    doc["policies"]["namespaceIsolationPolicies"]["policy1"]["auto_failover_policy"][
        "parameters"] = {"min_limit": 2, "usage_threshold": 80}
    assert parse_snapshot(doc, "f").policies.isolation[0].min_limit == 2


@pytest.mark.parametrize("mutate, path, message", [
    (lambda d: d["availableBrokers"].remove("b2:8080"), "availableBrokers",
     "expected every broker of brokers to be listed"),
    (lambda d: d["availableBrokers"].append("b1:8080"), "availableBrokers[3]", "distinct"),
    (lambda d: d["policies"]["namespaceIsolationPolicies"]["policy1"].update(primary=[]),
     'policies.namespaceIsolationPolicies["policy1"].primary', "at least one primary"),
    (lambda d: d["policies"]["namespaceIsolationPolicies"]["policy1"].update(primary=["a[b"]),
     'policies.namespaceIsolationPolicies["policy1"].primary[0]', "regular expression"),
    (lambda d: d["policies"]["namespaceIsolationPolicies"]["policy1"].pop("auto_failover_policy"),
     'policies.namespaceIsolationPolicies["policy1"].auto_failover_policy', "required key"),
    (lambda d: d["policies"]["namespaceIsolationPolicies"]["policy1"]["auto_failover_policy"][
        "parameters"].update(min_limit="three"),
     'policies.namespaceIsolationPolicies["policy1"].auto_failover_policy.parameters.min_limit',
     "Integer.parseInt"),
    (lambda d: d["policies"]["antiAffinityGroups"].update({"not-a-namespace": "g"}),
     'policies.antiAffinityGroups["not-a-namespace"]', "namespace name"),
    (lambda d: d["policies"]["failureDomains"]["d1"].update(brokers="b1:8080"),
     'policies.failureDomains["d1"].brokers', "array"),
    (lambda d: d["namespaceTopics"]["t/a"]["persistent"].append("persistent://t/other/x"),
     'namespaceTopics["t/a"].persistent[2]', "persistent topic of t/a"),
    (lambda d: d["namespaceTopics"]["t/a"]["partitioned"].update({"persistent://t/a/z": -1}),
     'namespaceTopics["t/a"].partitioned["persistent://t/a/z"]', "integer >= 0"),
    (lambda d: d["brokers"]["b2:8080"].update(loadManagerClassName=7),
     'brokers["b2:8080"].loadManagerClassName', "string"),
])
def test_malformed_sections_name_their_path(mutate, path: str, message: str) -> None:
    doc = copy.deepcopy(full())
    mutate(doc)
    with pytest.raises(SnapshotFormatError) as e:
        parse_snapshot(doc, "f.json")
    assert path in str(e.value) and message in str(e.value)
