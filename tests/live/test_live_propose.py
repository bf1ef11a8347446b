"""`lbctl propose` on the loopback test cluster, and its plan carried out with `lbctl unload -d`:
every action is executable as it stands (its bundle exists, its source is the owner, its
destination is a live broker), which is what `lbctl apply` will rely on."""

from __future__ import annotations

import json

import pytest

from tests.live.live_helpers import Lbctl, assert_no_secret
from tests.plan_contract import check_plan

pytestmark = pytest.mark.live


def test_a_live_plan_applies_action_by_action(lbctl: Lbctl) -> None:
    c = lbctl.cluster
    res = lbctl("propose", "--solver", "greedy", "-o", "json")
    assert res.exit_code == 0, res.stderr
    plan = json.loads(res.stdout)
    check_plan(plan)
    unloads = [a for a in plan["actions"] if a["action"] == "unload"]
    assert unloads, "the hot test cluster needs moves"
    assert plan["brokers"][0]["usage"] > plan["brokers"][0]["usageAfter"]
    for a in unloads:
        assert c.owners[a["bundle"]] == a["broker"]
        ns, rng = a["bundle"].rsplit("/", 1)
        done = lbctl("unload", ns, "-b", rng, "-d", a["destinationBroker"], "--yes")
        assert done.exit_code == 0, done.stderr
        assert c.owners[a["bundle"]] == a["destinationBroker"]
    puts = [r for r in c.requests("PUT") if r.status == 204]
    assert [r.query for r in puts] == [{"destinationBroker": a["destinationBroker"]}
                                       for a in unloads]
    assert_no_secret(res.stdout, res.stderr)


def test_a_live_plan_leaves_put_what_apply_would_refuse(lbctl: Lbctl) -> None:
    """Bundles unloaded moments ago (the journal's, within loadBalancerSheddingGracePeriodMinutes)
    are refused by `apply`'s validation; a live `propose` made after them plans none of them (it
    planned them before: the plan then landed short of its band by the moves apply skipped)."""
    first = json.loads(lbctl("propose", "--solver", "greedy", "-o", "json").stdout)
    moved = [a for a in first["actions"] if a["action"] == "unload"][:2]
    for a in moved:
        ns, rng = a["bundle"].rsplit("/", 1)
        assert lbctl("unload", ns, "-b", rng, "-d", a["destinationBroker"], "--yes").exit_code == 0
    res = lbctl("propose", "--solver", "greedy", "-o", "json")
    assert res.exit_code == 0, res.stderr
    again = {a["bundle"] for a in json.loads(res.stdout)["actions"] if a["action"] == "unload"}
    assert again and not again & {a["bundle"] for a in moved}
