"""The loopback cluster's additions for apply and drain (lbctl.sandbox.operations), over real HTTP:
lookups and their redirects, ownership coming back after an unload (delay, elsewhere), owned
namespaces, dynamic configuration, a broker going away, a failure on the n-th request."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from lbctl.config import SETTINGS
from lbctl.sandbox import TestCluster, hot_cluster
from lbctl.sandbox.operations import DYNAMIC_SETTINGS, NthFault

pytestmark = pytest.mark.live
httpx = pytest.importorskip("httpx")  # the tests speak plain HTTP to the test cluster


@pytest.fixture
def c() -> Iterator[TestCluster]:
    cl = hot_cluster(3, bundles_per_broker=3)
    yield cl
    cl.stop()


def _topic_in(c: TestCluster, bundle: str) -> str:
    ns = bundle.rsplit("/", 1)[0]
    for i in range(100000):
        t = f"persistent://{ns}/t{i}"
        if c.bundle_of_topic(t) == bundle:
            return t
    raise AssertionError


def _lookup(url: str, topic: str, follow: bool = True) -> Any:
    path = "/lookup/v2/topic/" + topic.replace("://", "/")
    return httpx.get(url + path, follow_redirects=follow, timeout=5)


def test_lookup_answers_the_owner_and_redirects_to_it(c: TestCluster) -> None:
    ids = list(c.brokers)
    bundle = c.bundles_of(ids[1])[0]
    topic = _topic_in(c, bundle)
    r = _lookup(c.url(ids[0]), topic, follow=False)
    assert r.status_code == 307
    assert r.headers["location"].startswith(f"http://{ids[1]}/lookup/v2/topic/")
    assert r.headers["location"].endswith("?authoritative=true")
    r = _lookup(c.url(ids[0]), topic)
    assert r.status_code == 200
    assert r.json()["httpUrl"] == f"http://{ids[1]}"
    assert r.json()["brokerUrl"].startswith("pulsar://127.0.0.1:")
    assert _lookup(c.url(ids[0]), "persistent://no/such/topic").status_code == 404


def test_ownership_after_unload_delay_and_elsewhere(c: TestCluster) -> None:
    ids = list(c.brokers)
    b1, b2 = c.bundles_of(ids[0])[:2]
    c.set_reassignment(delay=0.5, elsewhere={b2})
    for b in (b1, b2):
        rng = b.rsplit("/", 1)[1]
        r = httpx.put(f"{c.url(ids[0])}/admin/v2/namespaces/public/default/{rng}/unload",
                      params={"destinationBroker": ids[1]}, timeout=5)
        assert r.status_code == 204
    assert b1 not in c.owners and b2 not in c.owners
    assert _lookup(c.admin_url, _topic_in(c, b1)).status_code == 503  # still assigning
    time.sleep(0.6)
    assert _lookup(c.admin_url, _topic_in(c, b1)).json()["httpUrl"] == f"http://{ids[1]}"
    assert c.owners[b2] not in (ids[1], None)  # settled by the request above, elsewhere
    assert b1 in c.brokers[ids[1]].gains and b1 in c.brokers[ids[0]].losses


def test_owned_namespaces_on_the_broker_itself(c: TestCluster) -> None:
    ids = list(c.brokers)
    path = f"/admin/v2/brokers/{c.cluster}/{ids[1]}/ownedNamespaces"
    r = httpx.get(c.url(ids[0]) + path, timeout=5)
    assert r.status_code == 307 and r.headers["location"] == c.url(ids[1]) + path
    owned = httpx.get(c.url(ids[1]) + path, timeout=5).json()
    assert set(owned) == {*c.bundles_of(ids[1]),
                          f"pulsar/{c.cluster}/{ids[1]}/0x00000000_0xffffffff"}
    assert owned[c.bundles_of(ids[1])[0]]["is_active"] is True


def test_dynamic_configuration(c: TestCluster) -> None:
    base = c.admin_url + "/admin/v2/brokers/configuration"
    assert "loadBalancerSheddingEnabled" in httpx.get(base, timeout=5).json()
    assert httpx.get(base + "/values", timeout=5).json() == {}
    assert httpx.post(base + "/loadBalancerSheddingEnabled/false", timeout=5).status_code == 204
    assert httpx.get(base + "/values", timeout=5).json() == {"loadBalancerSheddingEnabled": "false"}
    assert httpx.get(base + "/runtime", timeout=5).json()["loadBalancerSheddingEnabled"] == "false"
    assert httpx.post(base + "/loadBalancerSheddingEnabled/maybe", timeout=5).status_code == 412
    assert httpx.post(base + "/clusterName/x", timeout=5).status_code == 412
    # not dynamic in ServiceConfiguration (no @FieldContext(dynamic = true)): refused, as by Pulsar
    assert httpx.post(base + "/loadBalancerLoadPlacementStrategy/x.LeastResourceUsageWithWeight",
                      timeout=5).status_code == 412
    assert {s.name for s in SETTINGS if s.dynamic} >= set(DYNAMIC_SETTINGS)
    assert httpx.delete(base + "/loadBalancerSheddingEnabled", timeout=5).status_code == 204
    assert httpx.delete(base + "/loadBalancerSheddingEnabled", timeout=5).status_code == 404
    assert httpx.get(base + "/values", timeout=5).json() == {}


def test_broker_going_away(c: TestCluster) -> None:
    ids = list(c.brokers)
    theirs = c.bundles_of(ids[2])
    c.remove_broker(ids[2])
    assert ids[2] not in httpx.get(c.admin_url + "/admin/v2/brokers", timeout=5).json()
    assert all(c.owners[b] in ids[:2] for b in theirs)
    time.sleep(0.1)
    with pytest.raises(httpx.TransportError):
        httpx.get(c.url(ids[2]) + "/admin/v2/brokers", timeout=2)


def test_failure_on_the_nth_request_only(c: TestCluster) -> None:
    ids = list(c.brokers)
    c.nth_faults.append(NthFault(r"/unload$", nth=2, status=409, reason="busy"))
    codes = []
    for b in c.bundles_of(ids[0])[:3]:
        rng = b.rsplit("/", 1)[1]
        codes.append(httpx.put(f"{c.url(ids[0])}/admin/v2/namespaces/public/default/{rng}/unload",
                               timeout=5).status_code)
    assert codes == [204, 409, 204]
