"""`lbctl drain` and `lbctl rebalance-after` against the loopback cluster: the broker emptied, the
balancer paused and restored as it was, the restore from the journal, pacing, the fill."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lbctl.errors import ExitStatus
from lbctl.sandbox import TestCluster, hot_cluster
from tests.apply.apply_helpers import lbctl, mutations, unloads_done
from tests.plan_contract import check_plan

pytestmark = pytest.mark.live


@pytest.fixture
def hot() -> Iterator[TestCluster]:
    """Three brokers, the first one at 90 % (overloaded); 2 bundles each of public/default."""
    c = hot_cluster(3, bundles_per_broker=3)
    c.set_reassignment(delay=0.05)
    yield c
    c.stop()


def test_drain_empties_the_broker_and_restores_the_balancer(hot: TestCluster) -> None:
    c = hot
    ids = list(c.brokers)
    target = ids[1]
    c.dynamic["loadBalancerSheddingEnabled"] = "true"  # an override before; split: none
    seen: list[dict[str, str]] = []
    c.after_mutation.append(lambda m, p, q: seen.append(dict(c.dynamic)) if "unload" in p
                            else None)
    before = set(c.bundles_of(target))
    assert before
    r = lbctl(c, "drain", target, "--pause-balancer", "--yes", "-m", "0", "--timeout", "10")
    assert r.exit_code == 0, r.stderr
    assert "owns no bundle now: it is safe to restart it" in r.stdout
    assert c.bundles_of(target) == []
    # every bundle went where placement put it: never to the overloaded first broker
    assert all(c.owners[b] == ids[2] for b in before)
    # the balancer was off while bundles moved, and is as it was after
    assert seen and all(d == {"loadBalancerSheddingEnabled": "false",
                              "loadBalancerAutoBundleSplitEnabled": "false"} for d in seen)
    assert c.dynamic == {"loadBalancerSheddingEnabled": "true"}
    muts = mutations(c)
    assert muts[:2] == [("POST", "/admin/v2/brokers/configuration/loadBalancerSheddingEnabled/false"),
                        ("POST", "/admin/v2/brokers/configuration/"
                                 "loadBalancerAutoBundleSplitEnabled/false")]
    assert muts[-2:] == [("POST", "/admin/v2/brokers/configuration/loadBalancerSheddingEnabled/true"),
                         ("DELETE", "/admin/v2/brokers/configuration/"
                                    "loadBalancerAutoBundleSplitEnabled")]
    assert sorted(unloads_done(c)) == sorted(before)


def test_keep_paused_then_restore_from_the_journal(hot: TestCluster, journal: Path) -> None:
    c = hot
    target = list(c.brokers)[2]
    r = lbctl(c, "drain", target, "--pause-balancer", "--keep-paused", "--yes", "-m", "0")
    assert r.exit_code == 0, r.stderr
    assert c.dynamic == {"loadBalancerSheddingEnabled": "false",
                         "loadBalancerAutoBundleSplitEnabled": "false"}
    recs = [json.loads(x) for x in journal.read_text().splitlines()]
    paused = [x for x in recs if x.get("state") == "balancer-paused"]
    assert paused[0]["previous"] == {"loadBalancerSheddingEnabled": None,
                                     "loadBalancerAutoBundleSplitEnabled": None}
    r = lbctl(c, "drain", "--restore")  # no terminal, no --yes: refused
    assert r.exit_code == ExitStatus.NOT_CONFIRMED
    assert c.dynamic != {}
    r = lbctl(c, "drain", "--restore", "--yes")
    assert r.exit_code == 0, r.stderr
    assert c.dynamic == {}
    r = lbctl(c, "drain", "--restore", "--yes")
    assert r.exit_code == 1 and "nothing to restore" in r.stderr


def test_pause_twice_sends_nothing_the_second_time(hot: TestCluster) -> None:
    c = hot
    c.dynamic.update(loadBalancerSheddingEnabled="false", loadBalancerAutoBundleSplitEnabled="false")
    r = lbctl(c, "drain", list(c.brokers)[2], "--pause-balancer", "--yes", "-m", "0")
    assert r.exit_code == 0, r.stderr
    assert not [m for m in mutations(c) if "configuration" in m[1]]


def test_drain_dry_run_and_no_terminal_send_nothing(hot: TestCluster) -> None:
    c = hot
    target = list(c.brokers)[1]
    for args, code in ((["--dry-run", "--yes"], 0), ([], ExitStatus.NOT_CONFIRMED)):
        r = lbctl(c, "drain", target, "--pause-balancer", *args)
        assert r.exit_code == code, r.stderr
        assert "would send" in r.stdout and "loadBalancerSheddingEnabled/false" in r.stdout
    assert mutations(c) == [] and c.dynamic == {}


def test_drain_paced_per_second(hot: TestCluster, journal: Path) -> None:
    c = hot
    target = list(c.brokers)[1]
    n = len(c.bundles_of(target))
    assert n == 3
    t0 = time.monotonic()
    r = lbctl(c, "drain", target, "--yes", "-m", "1")
    assert r.exit_code == 0, r.stderr
    assert time.monotonic() - t0 >= 2.0  # one unload per second: two pauses between three
    sends = [json.loads(x) for x in journal.read_text().splitlines() if '"state":"sending"' in x]
    from lbctl.apply.journal import time_of

    times = [time_of(s) for s in sends]  # epoch seconds or RFC 3339: the journal has held both
    assert all(a is not None and b is not None and b - a >= 0.99
               for a, b in zip(times, times[1:], strict=False))


def test_drain_unknown_broker(hot: TestCluster) -> None:
    r = lbctl(hot, "drain", "127.0.0.1:1", "--yes")
    assert r.exit_code == ExitStatus.USAGE and "not an active broker" in r.stderr
    assert lbctl(hot, "drain").exit_code == ExitStatus.USAGE


def test_rebalance_after_then_fill(hot: TestCluster, tmp_path: Path) -> None:
    c = hot
    ids = list(c.brokers)
    target = ids[1]
    # the broker was drained and restarted: it owns nothing
    assert lbctl(c, "drain", target, "--yes", "-m", "0").exit_code == 0
    c.brokers[target].cpu = (5.0, 100.0)
    r = lbctl(c, "rebalance-after", target, "-o", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    check_plan(doc)
    assert doc["shedding"] == "fill" and doc["actions"]
    assert all(a["destinationBroker"] == target for a in doc["actions"])
    assert "--concurrency 2 --interval 60" in r.stderr
    plan = tmp_path / "fill.json"
    plan.write_text(r.stdout)
    r = lbctl(c, "apply", str(plan), "--yes", "--concurrency", "1", "--interval", "0.1")
    assert r.exit_code == 0, r.stderr
    assert {a["bundle"] for a in doc["actions"]} <= set(c.bundles_of(target))


def test_drain_fill_applies_paced(hot: TestCluster) -> None:
    c = hot
    target = list(c.brokers)[1]
    assert lbctl(c, "drain", target, "--yes", "-m", "0").exit_code == 0
    c.brokers[target].cpu = (5.0, 100.0)
    r = lbctl(c, "drain", target, "--fill", "--per-interval", "1", "--interval", "0.1", "--yes")
    assert r.exit_code == 0, r.stderr
    assert "filled" in r.stdout
    assert c.bundles_of(target)


def test_bundle_arriving_during_the_drain_is_drained_in_another_round(hot: TestCluster) -> None:
    from tests.apply.apply_helpers import move_now

    c = hot
    ids = list(c.brokers)
    target = ids[1]
    newcomer = sorted(c.bundles_of(ids[2]))[0]
    done = {"n": 0}

    def arrive(method: str, path: str, query: dict[str, str]) -> None:
        done["n"] += 1
        if done["n"] == 1:  # a lookup assigned a bundle to it meanwhile
            move_now(c, newcomer, target)

    c.after_mutation.append(arrive)
    r = lbctl(c, "drain", target, "--yes", "-m", "0", "-o", "json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["safe"] and len(out["rounds"]) == 2
    assert [a["bundle"] for a in out["rounds"][1]["actions"]] == [newcomer]
    assert c.bundles_of(target) == []


def test_recently_moved_bundles_are_drained_too(hot: TestCluster, tmp_path: Path) -> None:
    """A bundle an apply moved onto the broker a moment ago is within the grace period; a drain
    moves it anyway (an operator's explicit intent, like a rollback)."""
    from tests.apply.apply_helpers import plan_doc, write_plan

    c = hot
    ids = list(c.brokers)
    b = sorted(c.bundles_of(ids[2]))[0]
    plan = write_plan(tmp_path / "p.json", plan_doc(c, [(b, ids[2], ids[1])]))
    assert lbctl(c, "apply", str(plan), "--yes").exit_code == 0
    assert c.owners[b] == ids[1]
    r = lbctl(c, "drain", ids[1], "--yes", "-m", "0")
    assert r.exit_code == 0, r.stderr
    assert c.bundles_of(ids[1]) == []


# ---- issue 25 item 14: the balancer's state always visible and restorable ----------------------
def test_a_failed_restore_is_said_loudly_and_drain_restore_then_finishes_it(
        hot: TestCluster, journal: Path) -> None:
    from lbctl.sandbox.operations import NthFault

    c = hot
    target = list(c.brokers)[1]
    c.dynamic["loadBalancerSheddingEnabled"] = "true"
    c.nth_faults.append(NthFault(r"/configuration/loadBalancerSheddingEnabled/true$", nth=1,
                                 status=500, reason="metadata store down", method="POST"))
    r = lbctl(c, "drain", target, "--pause-balancer", "--yes", "-m", "0", "-o", "json")
    assert r.exit_code == ExitStatus.PARTIAL, r.stderr
    assert "THE BALANCER IS STILL PAUSED" in r.stderr and "drain --restore" in r.stderr
    assert json.loads(r.stdout)["balancer"] == "restore failed"
    # the other setting was restored all the same; the failed one is still off
    assert c.dynamic == {"loadBalancerSheddingEnabled": "false"}
    recs = [json.loads(x) for x in journal.read_text().splitlines()]
    assert not [x for x in recs if x.get("state") == "balancer-restored"]
    # the failed request was never applied: the grace-period guard does not refuse it
    before = len(mutations(c))
    r = lbctl(c, "drain", "--restore", "--yes")
    assert r.exit_code == 0, r.stderr
    assert c.dynamic == {"loadBalancerSheddingEnabled": "true"}
    assert mutations(c)[before:] == [
        ("POST", "/admin/v2/brokers/configuration/loadBalancerSheddingEnabled/true")]


def test_a_drain_after_a_pause_left_behind_says_so(hot: TestCluster, journal: Path) -> None:
    c = hot
    ids = list(c.brokers)
    r = lbctl(c, "drain", ids[2], "--pause-balancer", "--keep-paused", "--yes", "-m", "0")
    assert r.exit_code == 0, r.stderr
    r = lbctl(c, "drain", ids[1], "--pause-balancer", "--yes", "-m", "0")
    assert "paused by run" in r.stderr and "never restored" in r.stderr
    assert "lbctl drain --restore puts it back" in r.stderr


def test_non_string_dynamic_values_are_restored_in_their_json_form(hot: TestCluster) -> None:
    c = hot
    c.dynamic["loadBalancerSheddingEnabled"] = True  # type: ignore[assignment]  # JSON true
    r = lbctl(c, "drain", list(c.brokers)[1], "--pause-balancer", "--yes", "-m", "0")
    assert r.exit_code == 0, r.stderr
    assert ("POST", "/admin/v2/brokers/configuration/loadBalancerSheddingEnabled/true") in \
        mutations(c)
    assert c.dynamic == {"loadBalancerSheddingEnabled": "true"}
    assert "True" not in r.stdout


def test_restore_values_from_a_journal_keep_their_json_form() -> None:
    from lbctl.apply.balancer import restore_mutations

    ms = restore_mutations({"loadBalancerSheddingEnabled": True,
                            "loadBalancerAutoBundleSplitEnabled": "false"})
    assert [m.call.url("http://h") for m in ms] == [
        "http://h/admin/v2/brokers/configuration/loadBalancerSheddingEnabled/true",
        "http://h/admin/v2/brokers/configuration/loadBalancerAutoBundleSplitEnabled/false"]
