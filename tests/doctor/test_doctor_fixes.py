"""Issue 28 item 5: a fix doctor prints names the lbctl command for the case, and running that
command, as printed, on the loopback cluster makes the finding go away."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import TestCluster, hot_cluster
from tests.apply.apply_helpers import lbctl
from tests.paths import EXAMPLES

pytestmark = pytest.mark.live


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestCluster]:
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    monkeypatch.setenv("LBCTL_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.chdir(tmp_path)  # where a fix's "> fill.json" lands
    c = hot_cluster(3, bundles_per_broker=2)
    c.set_reassignment(delay=0.0)
    yield c
    c.stop()


def _finding(c: TestCluster, rule: str) -> dict[str, Any] | None:
    r = lbctl(c, "doctor", "--rule", rule, "-o", "json")
    assert r.exit_code in (0, 1, 2), r.stderr
    found = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == rule]
    return found[0] if found else None


def _run_fix(c: TestCluster, fix: str) -> list[str]:
    """Every quoted ```lbctl …``` command of the fix's first alternative (up to "; else" /
    "; ", and before its condition: "… if `lbctl drain --pause-balancer` left it off"), run in
    order as printed (a ``> FILE`` redirect written); their outputs."""
    first = re.split(r";| if | when ", fix)[0]
    outs = []
    for cmd in re.findall(r"`lbctl ([^`]+)`", first):
        args = shlex.split(cmd)
        out = None
        if ">" in args:
            out, args = args[args.index(">") + 1], args[:args.index(">")]
        r = lbctl(c, *args)
        assert r.exit_code == 0, (cmd, r.stderr)
        if out:
            Path(out).write_text(r.stdout)
        outs.append(r.stdout)
    assert outs, fix
    return outs


def test_idle_broker_fix_fills_it(cluster: TestCluster) -> None:
    c = cluster
    ids = list(c.brokers)
    for i, b in enumerate(c.bundles_of(ids[2])):  # the restarted broker: empty
        c.owners[b] = ids[i % 2]
    assert c.bundles_of(ids[2]) == []
    f = _finding(c, "idle-broker")
    assert f is not None and f"`lbctl rebalance-after {ids[2]} -o json > fill.json`" in f["fix"]
    assert "`lbctl apply fill.json --yes`" in f["fix"]
    _run_fix(c, f["fix"])
    assert c.bundles_of(ids[2]), "the fill moved nothing"
    assert _finding(c, "idle-broker") is None


def test_paused_balancer_fix_is_drain_restore(cluster: TestCluster) -> None:
    c = cluster
    ids = list(c.brokers)
    r = lbctl(c, "drain", ids[1], "--pause-balancer", "--keep-paused", "--yes", "-m", "0",
               "--timeout", "10")
    assert r.exit_code == 0, r.stderr
    f = _finding(c, "balancing-disabled")
    assert f is not None and f["fix"].startswith("`lbctl drain --restore --yes`")
    _run_fix(c, f["fix"])
    assert c.dynamic == {}
    assert _finding(c, "balancing-disabled") is None


def test_offline_fix_previews_on_the_snapshot() -> None:
    snap = str(EXAMPLES / "rolling-restart.yaml")
    r = CliRunner().invoke(app, ["doctor", snap, "--rule", "idle-broker", "-o", "json"])
    fix = json.loads(r.stdout)["findings"][0]["fix"]
    preview = f"lbctl rebalance-after broker-6.pulsar.svc:8080 --snapshot {shlex.quote(snap)}"
    assert fix.startswith(f"preview with `{preview}`")  # the file doctor read (walk25)
    r = CliRunner().invoke(app, shlex.split(preview)[1:])
    assert r.exit_code == 0, r.stderr
    assert "offline preview" in r.stderr and "nothing was sent" in r.stderr
    # it explains each move, and says where the plan leaves its documented rule
    assert "#1 acme/clickstream/0x30000000_0x40000000" in r.stdout
    assert "within the rule" in r.stdout
    assert "Rule kept by every move but #6" in r.stdout
    assert "the source ends below the mean (the rule's one exception)" in " ".join(
        r.stdout.split())
    r = CliRunner().invoke(app, ["drain", "broker-1.pulsar.svc:8080", "--snapshot", snap,
                                 "-o", "json"])
    assert r.exit_code == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["actions"] and all(a["broker"] == "broker-1.pulsar.svc:8080"
                                   for a in plan["actions"])


def test_drain_pause_keys_are_the_ones_doctor_names() -> None:
    from lbctl.apply.balancer import SETTINGS
    from lbctl.doctor.rules.balancing_disabled import DRAIN_PAUSES

    assert tuple(SETTINGS) == DRAIN_PAUSES


def test_a_lone_hot_topic_bundle_points_to_explain_bundle() -> None:
    """single-hot-topic: the fix names lbctl explain --bundle, which lists that bundle's topics."""
    from tests.paths import DATA

    snap = str(DATA / "doctor" / "single-hot-topic.json")
    r = CliRunner().invoke(app, ["doctor", snap, "--rule", "single-hot-topic", "-o", "json"])
    fixes = [f["fix"] for f in json.loads(r.stdout)["findings"]]
    named = [re.search(r"`lbctl (explain [^`]+ --bundle [^`]+)`", f) for f in fixes]
    cmd = next(m.group(1) for m in named if m)
    assert shlex.split(cmd)[1] == snap  # run as printed: it names the file (walk25)
    out = CliRunner().invoke(app, shlex.split(cmd))
    assert out.exit_code == 0, out.stderr
    assert "Top topics of" in out.stdout
