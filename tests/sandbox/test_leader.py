"""An hour of the living sandbox under a diurnal scenario (tests/data/sandbox/day.yaml), exported
minute by minute as ``lbctl snapshot export --append`` does (a live read over HTTP, then
``append_snapshot``) at the cluster's time, replays through ``lbctl recommend --all-cycles`` into
the leader's own decisions, cycle for cycle.

The stepped clock stands for ``--speed 60``: each cycle's export is taken at the instant of the
cycle (before it acts), as a loop beside the running sandbox would; the live read takes the
cluster's clock (LiveSource's ``clock``, which is the wall's in the CLI). The first minute goes
through the CLI itself, to hold the two to the same line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.admin.client import AdminClient
from lbctl.cli.app import app
from lbctl.sandbox import hot_cluster
from lbctl.sandbox.clock import SteppedClock
from lbctl.sandbox.scenarios import living
from lbctl.sandbox.timeline import read
from lbctl.sources.live import LiveSource
from lbctl.sources.snapshot import append_snapshot

pytestmark = [pytest.mark.live, pytest.mark.slow]

DAY = Path(__file__).parent.parent / "data" / "sandbox" / "day.yaml"


def _key(action: dict[str, object]) -> tuple[object, ...]:
    return tuple(action.get(k) for k in ("action", "bundle", "broker", "destinationBroker",
                                          "skipped", "boundaries"))


def test_an_hour_replays_into_the_leaders_own_decisions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = read(DAY)
    c = hot_cluster(int(doc["brokers"]))
    clock = SteppedClock()
    life = living(c, clock, hosts=doc["hosts"], seed=doc["seed"],
                  reconnect=doc["reconnectSeconds"], events=doc["events"])
    monkeypatch.setitem(LiveSource.__init__.__kwdefaults__, "clock", clock.now)
    history = tmp_path / "history.jsonl"
    runner = CliRunner()
    client = AdminClient(c.admin_url)
    try:
        start = clock.now()
        for minute in range(1, 61):
            t = start + 60 * minute
            life.advance(t - 0.001)  # everything before the cycle due at t
            clock.set(t)
            if minute == 1:
                r = runner.invoke(app, ["--admin-url", c.admin_url, "snapshot", "export",
                                        "--append", str(history)])
                assert r.exit_code == 0, r.stderr
                direct = tmp_path / "direct.jsonl"
                append_snapshot(LiveSource(client).read().state, direct)
                assert direct.read_bytes() == history.read_bytes()
            else:
                append_snapshot(LiveSource(client).read().state, history)
            life.advance(t)  # the leader's cycle, on what the export saw
    finally:
        client.close()
        c.stop()
    assert life.leader is not None
    mine = life.leader.decisions
    assert len(mine) == 60
    acted = [d for d in mine if any("skipped" not in a for a in d.actions)]
    kinds = {a["action"] for d in acted for a in d.actions}
    assert len(acted) >= 5 and {"unload", "split"} <= kinds  # the hour had something to decide
    r = runner.invoke(app, ["recommend", str(history), "--all-cycles", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    cycles = json.loads(r.stdout)["cycles"]
    assert len(cycles) == 60
    for d, plan in zip(mine, cycles, strict=True):
        assert plan["shedding"] == d.shedding and plan["placement"] == d.placement
        assert [_key(a) for a in plan["actions"]] == [_key(a) for a in d.actions], d.at


def test_the_extensible_leader_replays_too(tmp_path: Path) -> None:
    """Twenty cycles of TransferShedder on the living extensible cluster: the live reads (which
    rebuild BrokerLoadData from metrics and topic stats) replay into the leader's transfers and
    splits."""
    from lbctl.sandbox.scenarios import extensible_cluster

    c = extensible_cluster()
    clock = SteppedClock()
    life = living(c, clock)
    history = tmp_path / "history.jsonl"
    client = AdminClient(c.admin_url)
    try:
        start = clock.now()
        for minute in range(1, 21):
            t = start + 60 * minute
            life.advance(t - 0.001)
            clock.set(t)
            append_snapshot(LiveSource(client, clock=clock.now).read().state, history)
            life.advance(t)
    finally:
        client.close()
        c.stop()
    assert life.leader is not None
    mine = life.leader.decisions
    assert {a["action"] for d in mine for a in d.actions} >= {"transfer", "split"}
    r = CliRunner().invoke(app, ["recommend", str(history), "--all-cycles", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    cycles = json.loads(r.stdout)["cycles"]
    assert [[_key(a) for a in p["actions"]] for p in cycles] == \
        [[_key(a) for a in d.actions] for d in mine]
