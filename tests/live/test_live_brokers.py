"""`lbctl brokers` against the loopback cluster: versions, load managers, the leader, and a broker
that does not answer; on both load managers."""

from __future__ import annotations

import csv
import io
import json

import pytest

from lbctl.sandbox import Fault, extensible_cluster
from lbctl.sources.live_brokers import leader_id
from tests.live.live_helpers import Lbctl

pytestmark = pytest.mark.live


def test_lists_every_broker_with_the_leader(lbctl: Lbctl) -> None:
    c = lbctl.cluster
    c.leader = list(c.brokers)[1]
    res = lbctl("brokers", "-o", "json")
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["leader"] == c.leader and data["cluster"] == c.cluster
    assert [b["broker"] for b in data["brokers"]] == list(c.brokers)
    assert [b["leader"] for b in data["brokers"]] == [False, True, False]
    assert all(b["answered"] and b["version"] == "4.2.5" for b in data["brokers"])
    assert all(b["loadManager"].endswith("ModularLoadManagerImpl") for b in data["brokers"])


def test_leader_only(lbctl: Lbctl) -> None:
    c = lbctl.cluster
    c.leader = list(c.brokers)[2]
    res = lbctl("brokers", "--leader")
    assert res.exit_code == 0 and res.stdout.strip() == c.leader


def test_no_leader_is_an_error(lbctl: Lbctl) -> None:
    lbctl.cluster.no_leader = True
    res = lbctl("brokers", "--leader")
    assert res.exit_code == 1 and "no leader broker" in res.stderr
    res = lbctl("brokers")  # the list still works, saying there is none
    assert res.exit_code == 0 and "leader none" in res.stdout


def test_a_broker_that_does_not_answer(lbctl: Lbctl) -> None:
    c = lbctl.cluster
    bad = list(c.brokers)[2]
    c.faults.append(Fault(r"brokers/version", status=503, reason="Broker is not ready",
                          broker=bad))
    res = lbctl("brokers", "-o", "csv")
    assert res.exit_code == 0, res.stderr
    rows = {r["broker"]: r for r in csv.DictReader(io.StringIO(res.stdout))}
    assert rows[bad]["answered"] == "false" and "Broker is not ready" in rows[bad]["error"]
    assert all(r["answered"] == "true" for b, r in rows.items() if b != bad)
    table = lbctl("brokers").stdout
    assert "no" in table and "2 answered" in table


def test_extensible_cluster() -> None:
    c = extensible_cluster()
    try:
        res = Lbctl(c, token=None)("brokers", "-o", "json")
        assert res.exit_code == 0, res.stderr
        data = json.loads(res.stdout)
        assert data["leader"] == next(iter(c.brokers))
        assert all(b["loadManager"].endswith("ExtensibleLoadManagerImpl")
                   for b in data["brokers"])
    finally:
        c.stop()


@pytest.mark.parametrize("info,expected", [
    ({"serviceUrl": "http://b-1:8080", "brokerId": "b-1:8080"}, "b-1:8080"),
    ({"serviceUrl": "http://b-2.svc:8080/"}, "b-2.svc:8080"),  # before Pulsar 3.0: no brokerId
    ({}, None), ("nope", None),
])
def test_leader_id(info, expected) -> None:
    assert leader_id(info) == expected
