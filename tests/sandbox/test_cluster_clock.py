"""Against a sped-up ``lbctl sandbox`` (``--speed N``) lbctl measures its windows in the cluster's
time: the sandbox sets ``X-Lbctl-Sandbox-Clock`` on every answer (no Pulsar does), the admin client
keeps it from loopback answers only (``AdminClient.cluster_speed``), and apply's duplicate-request
guard and grace check, ``--max-age``, ``--pause-timeout`` and drain's ``--timeout`` divide by the
speed. Before, the 30-minute guard was 30 wall minutes, 30 cluster *hours* at ``--speed 60``. On
a real cluster (no header) every window is as long as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lbctl.admin.client import CLUSTERS, SANDBOX_CLOCK_HEADER, AdminClient, call
from lbctl.apply.runner import in_cluster_time
from lbctl.errors import MutationRefused
from lbctl.executor import Executor, unload_mutation
from lbctl.sandbox import TestCluster, hot_cluster
from lbctl.sandbox.clock import RunningClock, SteppedClock
from tests.apply.apply_helpers import lbctl

pytestmark = pytest.mark.live
httpx = pytest.importorskip("httpx")

T0 = 1_767_225_600.0


@pytest.fixture
def cluster() -> Iterator[TestCluster]:
    c = hot_cluster(2)
    yield c
    c.stop()


def _client(c: TestCluster, speed: float) -> AdminClient:
    c.clock = RunningClock(speed)
    client = AdminClient(c.admin_url, backoff=0)
    client.json(call(CLUSTERS))  # one answer: the client learns the clock
    return client


def test_the_sandbox_says_its_clock_and_the_client_keeps_it(cluster: TestCluster) -> None:
    r = httpx.get(f"{cluster.admin_url}/admin/v2/clusters", timeout=5)
    assert SANDBOX_CLOCK_HEADER.lower() in {k.lower() for k in r.headers}
    with _client(cluster, 60) as client:
        assert client.cluster_speed() == 60
    cluster.clock = SteppedClock()  # a clock that runs only when stepped: wall windows
    with AdminClient(cluster.admin_url, backoff=0) as client:
        client.json(call(CLUSTERS))
        assert client.cluster_speed() == 1


@pytest.mark.parametrize("value", ["now=1; speed=60", "speed=0.5"])
def test_only_a_loopback_answer_is_believed(value: str) -> None:
    client = AdminClient("https://pulsar.example.com:8443")
    client._note_clock("https://pulsar.example.com:8443/admin/v2/clusters", value)
    client._note_clock("http://10.0.0.7:8080/admin/v2/clusters", value)
    client._note_clock("http://127.0.0.1.example.com:8080/x", value)
    assert client.clock.sandbox is None and client.cluster_speed() == 1
    client._note_clock("http://127.0.0.1:8081/admin/v2/clusters", value)
    assert client.cluster_speed() == float(value.rsplit("=", 1)[1])


@pytest.mark.parametrize("value", ["speed=", "speed=0", "speed=-5", "speed=inf", "speed=nan",
                                   "speed=1e999", "now=5", "garbage", "speed=6x0"])
def test_an_unreadable_clock_counts_as_the_wall(value: str) -> None:
    client = AdminClient("http://127.0.0.1:8080")
    client._note_clock("http://127.0.0.1:8080/x", value)
    assert client.cluster_speed() == 1


def _unload(c: TestCluster) -> list:  # type: ignore[type-arg]
    bundle = sorted(c.bundles_of(next(iter(c.brokers))))[0]
    ns, rng = bundle.rsplit("/", 1)
    return [unload_mutation(ns, rng)]


@pytest.mark.parametrize(("speed", "wall_seconds", "refused"), [
    (1, 60, True),      # a real cluster's pace: a minute ago is within the 30 minutes
    (1, 1790, True),
    (1, 1810, False),
    (60, 20, True),     # 20 wall s at 60x: 20 cluster minutes, within the grace period
    (60, 60, False),    # a wall minute at 60x: an hour of the cluster's time, past it
])
def test_the_duplicate_guard_is_cluster_time(cluster: TestCluster, tmp_path: Path, speed: float,
                                              wall_seconds: float, refused: bool) -> None:
    journal = tmp_path / "journal.jsonl"
    with _client(cluster, speed) as client:
        first = Executor(client, yes=True, journal=journal, show=lambda _l: None,
                         clock=lambda: T0)
        unload = _unload(cluster)
        first.run(unload)
        again = Executor(client, yes=True, journal=journal, show=lambda _l: None,
                         clock=lambda: T0 + wall_seconds)
        lines = again.repeats(unload)
        assert bool(lines) == refused, lines
        if refused:
            minutes = round(wall_seconds * speed / 60)
            assert f"was sent {minutes} min ago" in lines[0]
            with pytest.raises(MutationRefused):
                again.run(unload)


def test_journal_times_move_to_the_clusters_scale(cluster: TestCluster) -> None:
    with _client(cluster, 60) as fast, _client(cluster, 1) as real:
        times = {"a": T0 - 10.0, "b": T0}
        assert in_cluster_time(real, T0, times) == times
        assert in_cluster_time(fast, T0, times) == {"a": T0 - 600.0, "b": T0}


def _aged_plan(c: TestCluster, tmp_path: Path, wall_seconds: float) -> Path:
    import json
    import time

    from lbctl.model.cluster import iso_time

    r = lbctl(c, "recommend", "-o", "json")
    assert r.exit_code == 0, r.stderr
    plan = json.loads(r.stdout)
    plan["capturedAt"] = iso_time(int((time.time() - wall_seconds) * 1000))
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return path


@pytest.mark.parametrize(("speed", "stale"), [(1, False), (60, True)])
def test_max_age_is_cluster_time(cluster: TestCluster, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch, speed: float,
                                 stale: bool) -> None:
    """A plan computed 30 wall seconds ago is 30 cluster minutes old at 60x: past the default
    --max-age (600 s), so apply refuses it there, after its first read, and sends nothing."""
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    cluster.clock = RunningClock(speed)
    plan = _aged_plan(cluster, tmp_path, 30)
    before = len(cluster.requests("PUT"))
    r = lbctl(cluster, "apply", str(plan), "--yes", "--interval", "0")
    if stale:
        assert r.exit_code != 0 and "more than --max-age 600 s" in r.stderr, r.stderr
        assert "30 min ago" in r.stderr
        assert len(cluster.requests("PUT")) == before
    else:
        assert r.exit_code == 0, r.stderr


def test_the_pause_for_an_overloaded_destination_is_cluster_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--pause-timeout 60 is a cluster minute: a wall second at 60x. The run stops paused (the
    destination stays overloaded) and says how long that is on the wall; at 1x it would wait a
    wall minute."""
    from lbctl.errors import ExitStatus
    from tests.apply.apply_helpers import (
        busy_cluster,
        plan_doc,
        spread_moves,
        unloads_done,
        write_plan,
    )

    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    c = busy_cluster()
    try:
        c.clock = RunningClock(60)
        ids = list(c.brokers)
        moves: list[tuple[str, str, str | None]] = [
            (b, ids[0], ids[1]) for b, _, _ in spread_moves(c, 3)]
        plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))

        def hot(method: str, path: str, query: dict[str, str]) -> None:
            c.brokers[ids[1]].cpu = (95.0, 100.0)

        c.after_mutation.append(hot)
        r = lbctl(c, "apply", str(plan), "--yes", "--pause-timeout", "60", "--max-age", "0")
        assert r.exit_code == ExitStatus.PARTIAL, r.stderr
        assert "waiting up to 60 s (1 s of wall time at the sandbox's 60x)" in " ".join(
            r.stdout.split())
        assert len(unloads_done(c)) == 1
    finally:
        c.stop()


@pytest.mark.parametrize(("speed", "wall_seconds", "held"), [
    (1, 60, True),     # a real cluster: a minute ago is within the 30-minute grace period
    (60, 20, True),    # 20 wall s at 60x: 20 cluster minutes, still within it
    (60, 60, False),   # a wall minute at 60x: a cluster hour, past it
])
def test_rebalance_afters_grace_is_cluster_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                speed: float, wall_seconds: float,
                                                held: bool) -> None:
    """``lbctl rebalance-after`` leaves out the bundles the journal unloaded within the grace
    period, as apply would refuse them: at ``--speed 60`` a wall minute is a cluster hour, so
    those bundles may move again. Before, the grace was wall time (30 wall minutes at 60x)."""
    import json
    import time

    from lbctl.sandbox.clock import RunningClock
    from tests.apply.apply_helpers import move_now

    journal = tmp_path / "journal.jsonl"
    monkeypatch.setenv("LBCTL_JOURNAL", str(journal))
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    c = hot_cluster(3, bundles_per_broker=3)
    try:
        c.clock = RunningClock(speed)
        ids = list(c.brokers)
        target = ids[1]
        for b in sorted(c.bundles_of(target)):  # restarted: it owns nothing
            move_now(c, b, ids[2])
        c.brokers[target].cpu = (5.0, 100.0)
        sent = time.time() - wall_seconds
        _journal_unloads(journal, c, sent)
        r = lbctl(c, "rebalance-after", target, "-o", "json")
        assert r.exit_code == 0, r.stderr
        actions = json.loads(r.stdout)["actions"]
        assert (actions == []) == held, actions
        r = lbctl(c, "rebalance-after", target)
        assert r.exit_code == 0, r.stderr
        assert ("stay where they are" in " ".join(r.stdout.split())) == held, r.stdout
    finally:
        c.stop()


@pytest.mark.parametrize(("speed", "wall_seconds", "held"), [
    (1, 60, True),     # a wall minute at 1x: within the default 30 minutes
    (60, 20, True),    # 20 wall s at 60x: 20 cluster minutes, still within it
    (60, 60, False),   # a wall minute at 60x: a cluster hour, past it
])
def test_proposes_held_bundles_are_counted_in_cluster_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, speed: float, wall_seconds: float,
        held: bool) -> None:
    """``lbctl propose`` on a live cluster pins the bundles the journal unloaded within the grace
    period (apply would refuse them), counted on the cluster's clock as apply counts it
    (``unloads_in_grace``): at ``--speed 60`` a wall minute is a cluster hour, so a hot broker's
    bundles unloaded then may move again. Before, propose counted the grace in wall time (30
    wall minutes at 60x) and pinned every one of them."""
    import json
    import time

    from lbctl.sandbox.clock import RunningClock

    journal = tmp_path / "journal.jsonl"
    monkeypatch.setenv("LBCTL_JOURNAL", str(journal))
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    c = hot_cluster(3, bundles_per_broker=3)
    try:
        c.clock = RunningClock(speed)
        sent = time.time() - wall_seconds
        _journal_unloads(journal, c, sent)
        r = lbctl(c, "propose", "-o", "json")
        assert r.exit_code == 0, r.stderr
        actions = [a for a in json.loads(r.stdout)["actions"] if a.get("action") == "unload"]
        assert (actions == []) == held, actions
    finally:
        c.stop()


def _journal_unloads(journal: Path, c: TestCluster, sent: float) -> None:
    """A journal of one done unload of every bundle ``c`` owns, each sent at ``sent`` (wall)."""
    import json

    journal.write_text("".join(
        json.dumps({"run": "r", "time": sent, "state": "done", "method": "PUT",
                    "url": f"{c.admin_url}/admin/v2/namespaces/{b}/unload"}) + "\n"
        for b in sorted(c.owners)))
