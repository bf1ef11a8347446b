"""Issue 28 item 11: ``explain --bundle`` lists the bundle's top topics by traffic (a snapshot's
topic stats, or live the brokers' /admin/v2/broker-stats/topics), and ``--all-cycles`` ends with a
summary across cycles that flags a cycle that made the spread worse."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.model.bundle import topic_hash
from lbctl.sandbox import hot_cluster
from tests.paths import EXAMPLES

FLOW = str(EXAMPLES / "flow-or-qps.json")
BUNDLE = "my-tenant/my-ns/0x00000000_0x80000000"


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_top_topics_of_a_bundle_from_the_snapshot() -> None:
    r = _run("explain", FLOW, "--bundle", BUNDLE)
    assert r.exit_code == 0, r.stderr
    assert f"Top topics of {BUNDLE} by traffic" in r.stdout
    data = json.loads(_run("explain", FLOW, "--bundle", BUNDLE, "-o", "json").stdout)["topTopics"]
    assert data["topicStats"] is True and data["count"] == len(data["topics"]) > 1
    tps = [t["throughput"] for t in data["topics"]]
    assert tps == sorted(tps, reverse=True)  # by traffic, the heaviest first
    assert abs(sum(t["share"] for t in data["topics"]) - 1.0) < 1e-9
    snap = json.loads((EXAMPLES / "flow-or-qps.json").read_text())
    for t in data["topics"]:  # each one hashes into the bundle, with the snapshot's own figures
        assert topic_hash(t["topic"]) < 0x80000000
        st = snap["topics"][t["topic"]]
        assert t["throughput"] == st["msgThroughputIn"] + st["msgThroughputOut"]
    first = data["topics"][0]["topic"]
    assert r.stdout.index(first) < r.stdout.index(data["topics"][-1]["topic"])


def test_without_topic_stats_it_says_so() -> None:
    r = _run("explain", str(EXAMPLES / "hot-broker.json"), "--bundle",
             "acme/clickstream/0xc0000000_0xd0000000")
    assert "the state has no topic stats" in " ".join(r.stdout.split())


@pytest.mark.live
def test_top_topics_live_from_broker_stats() -> None:
    c = hot_cluster(3, bundles_per_broker=2, topics=40)
    try:
        bundle = c.bundles_of(list(c.brokers)[0])[0]
        r = CliRunner().invoke(app, ["--admin-url", c.admin_url, "explain", "--bundle", bundle,
                                     "-o", "json"])
        assert r.exit_code == 0, r.stderr
        top = json.loads(r.stdout)["topTopics"]
        assert top["topicStats"] is True and top["topics"], top
        lo, hi = (int(x, 16) for x in bundle.rsplit("/", 1)[1].split("_"))
        assert all(lo <= topic_hash(t["topic"]) < hi for t in top["topics"])
    finally:
        c.stop()


def test_all_cycles_summary_flags_a_cycle_that_made_the_spread_worse() -> None:
    seq = str(EXAMPLES / "two-brokers-90-10.jsonl")
    r = _run("explain", seq, "--all-cycles")
    assert r.exit_code == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "Summary across 6 cycles" in text
    summary = json.loads(_run("explain", seq, "--all-cycles", "-o", "json").stdout)["summary"]
    assert [s["cycle"] for s in summary] == [1, 2, 3, 4, 5, 6]
    flagged = [s["cycle"] for s in summary if s["worse"]]
    assert flagged and 1 not in flagged  # the first cycle fixes the 90/10 split
    for s in summary:
        if s["worse"]:
            assert s["moves"] > 0 and (s["stdAfterEstimate"] > s["stdBefore"]
                                       or s["stdNext"] > s["stdBefore"])
            assert f"! cycle {s['cycle']} made the spread worse" in text
    nxt = [s["stdNext"] for s in summary[:-1]]
    assert nxt == [s["stdBefore"] for s in summary[1:]]  # "next" is the next cycle's own spread
