"""A live cluster on ``SimpleLoadManagerImpl`` (the loopback sandbox serving its ``LoadReport``):
read as a simple cluster — the nested ``systemResourceUsage`` and ``bundleStats`` are the
brokers' figures — and its decisions modelled by ``recommend`` and ``assign-preview``."""

from __future__ import annotations

import json

import pytest

from tests.live.live_helpers import Lbctl

pytestmark = pytest.mark.live


def test_a_simple_cluster_is_read_and_modelled(lbctl: Lbctl) -> None:
    c = lbctl.cluster
    for st in c.brokers.values():
        st.simple_lm = True
    hot = next(iter(c.brokers))
    res = lbctl("recommend", "-o", "json")
    assert res.exit_code == 0, res.stderr
    plan = json.loads(res.stdout)
    assert (plan["loadManager"], plan["shedding"]) == ("simple", "SimpleLoadManagerImpl")
    rows = {b["broker"]: b for b in plan["brokers"]}
    cpu, limit = c.brokers[hot].cpu
    assert rows[hot]["usage"] >= cpu / limit > 0  # the nested usage, read
    assert set(rows) == set(c.brokers) and rows[hot]["bundles"] > 0
    new = lbctl("assign-preview", "--namespace", "acme/brand-new", "--bundles", "3", "-o", "json")
    assert new.exit_code == 0, new.stderr
    data = json.loads(new.stdout)
    assert data["loadManager"] == "simple" and len(data["assignments"]) == 3
    assert all(a["broker"] in c.brokers for a in data["assignments"])


def test_assign_preview_of_a_stopped_broker_live(lbctl: Lbctl) -> None:
    hot = next(iter(lbctl.cluster.brokers))
    res = lbctl("assign-preview", "--broker-stopped", hot, "-o", "json")
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["stoppedBroker"] == hot and data["assignments"]
    assert all(a["broker"] not in (None, hot) for a in data["assignments"])
