"""Scenario files of the living sandbox (lbctl.sandbox.timeline): each event at its cluster time
on a stepped clock, and a malformed file refused with one line (also by `lbctl sandbox`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import hot_cluster
from lbctl.sandbox.clock import SteppedClock
from lbctl.sandbox.scenarios import living
from lbctl.sandbox.timeline import TimelineError, read, schedule, seconds
from tests.sandbox.life_helpers import run_for

pytestmark = pytest.mark.live


def test_durations() -> None:
    assert [seconds(x, "at") for x in (90, "90s", "10m", "2h", "1d", "1.5m")] == \
        [90.0, 90.0, 600.0, 7200.0, 86400.0, 90.0]
    with pytest.raises(TimelineError, match=r"^events\[0\]\.at: expected a duration"):
        seconds("soon", "events[0].at")


@pytest.mark.parametrize("events,message", [
    ("nope", "events: expected a list of events"),
    ([{"crash": 1}], r"events\[0\]: expected a mapping with 'at'"),
    ([{"at": "1m", "meteor": {}}], r"events\[0\]: expected one of wave, drift"),
    ([{"at": "1m", "crash": 7}], r"events\[0\]\.crash: broker index 7 out of range \(0-2\)"),
    ([{"at": "1m", "freeze": "nobody"}], r"events\[0\]\.freeze: no broker 'nobody'"),
    ([{"at": "1m", "hotNamespace": {"namespace": "flat"}}],
     r"events\[0\]\.hotNamespace\.namespace: expected tenant/namespace"),
    ([{"at": "1m", "burst": {"namespace": "public/default", "factor": "x"}}],
     r"events\[0\]\.burst\.factor: expected a number"),
    ([{"at": "1m", "config": {"loadBalancerShedingEnabled": "false"}}],
     r"events\[0\]\.config: unknown setting\(s\) loadBalancerShedingEnabled"),
])
def test_a_malformed_event_is_refused_with_one_line(events: object, message: str) -> None:
    c = hot_cluster(3)
    try:
        life = living(c, SteppedClock())
        with pytest.raises(TimelineError, match=message):
            schedule(life, events)
    finally:
        c.stop()


def test_events_run_at_their_cluster_time() -> None:
    c = hot_cluster(3)
    try:
        clock = SteppedClock()
        life = living(c, clock, hosts="uniform", reconnect=1.0, events=[
            {"at": "30s", "config": {"loadBalancerSheddingEnabled": False}},
            {"at": "2m", "hotNamespace": {"namespace": "tenant-b/hot", "bundles": 2,
                                          "topics": 8}},
            {"at": "3m", "join": {}},
            {"at": "4m", "rollingRestart": {"every": "1m", "down": "20s"}},
            {"at": "10m", "drift": {"sigma": 0.1, "every": "1m"}},
        ])
        ids = list(c.brokers)
        run_for(life, clock, 29)
        assert "loadBalancerSheddingEnabled" not in c.dynamic
        run_for(life, clock, 1)
        assert c.dynamic["loadBalancerSheddingEnabled"] == "false"
        run_for(life, clock, 89)
        assert "tenant-b/hot" not in c.namespaces
        run_for(life, clock, 1)  # at 2 min it appears, its clients look its bundles up at once
        assert sum(1 for b in c.owners if b.startswith("tenant-b/hot/")) == 2
        run_for(life, clock, 60)  # 3 min: a broker joined
        joined = [b for b in c.brokers if b not in ids]
        assert len(joined) == 1 and life.report(joined[0]) is not None
        run_for(life, clock, 65)  # 4 min 5 s: the first broker is down for 20 s
        assert ids[0] not in c.brokers and ids[0] in life.down
        run_for(life, clock, 20)  # 4 min 25 s: back; the next one goes down at 5 min
        assert ids[0] in c.brokers and ids[1] in c.brokers
        run_for(life, clock, 40)
        assert ids[1] not in c.brokers
        before = dict(life.topic_traffic)
        run_for(life, clock, 6 * 60)
        assert set(life.topic_traffic) == set(before) and life.topic_traffic != before
        assert life.leader is not None and all(
            d.gate and "loadBalancerSheddingEnabled" in d.gate for d in life.leader.decisions)
    finally:
        c.stop()


def test_the_bundled_day_reads() -> None:
    doc = read(Path(__file__).parent.parent / "data" / "sandbox" / "day.yaml")
    assert doc["base"] == "hot-broker" and len(doc["events"]) == 5


def test_lbctl_sandbox_refuses_a_bad_scenario_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("events:\n  - at: soon\n    crash: 0\n")
    r = CliRunner().invoke(app, ["sandbox", "--port", "0", "--timeline", str(bad)])
    assert r.exit_code != 0
    assert r.stderr.strip().splitlines() == [
        "lbctl: error: events[0].at: expected a duration such as 90s, 10m or 2h, got 'soon'"]
    missing = tmp_path / "missing.yaml"
    r = CliRunner().invoke(app, ["sandbox", "--port", "0", "--timeline", str(missing)])
    assert r.exit_code != 0 and len(r.stderr.strip().splitlines()) == 1
    assert "no such file" in r.stderr
