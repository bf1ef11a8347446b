"""``/broker-stats/load-report`` of the living sandbox answers as Pulsar's does
(``ModularLoadManagerWrapper.generateLoadReport`` → ``updateLocalBrokerData``): the broker's bundles
now, ``lastUpdate`` of its last write. Before, it served the report as written, and a split left
the parent bundle in the owner's report for up to 15 cluster minutes: every live read dropped the
namespace (``snapshot export`` warned "changed while reading"), ``apply`` found each of its
actions "gone" and ``drain`` gave up ("not safe to restart")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lbctl.sandbox import TestCluster
from tests.apply.apply_helpers import lbctl
from tests.sandbox.life_helpers import living_hot, run_for

pytestmark = pytest.mark.live
httpx = pytest.importorskip("httpx")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))
    monkeypatch.delenv("LBCTL_LOCK_DIR", raising=False)


def _report(c: TestCluster, broker: str) -> dict[str, object]:
    r = httpx.get(f"http://{broker}/admin/v2/broker-stats/load-report", timeout=5)
    assert r.status_code == 200
    doc: dict[str, object] = r.json()
    return doc


def _split_first_bundle_of(c: TestCluster, broker: str) -> str:
    """Split the broker's first bundle with ``lbctl split-bundle``; the parent's name."""
    bundle = sorted(c.bundles_of(broker))[0]
    ns, rng = bundle.rsplit("/", 1)
    r = lbctl(c, "split-bundle", ns, "-b", rng, "--yes")
    assert r.exit_code == 0, r.stderr + r.stdout
    assert bundle not in c.bundles_of(broker)
    return bundle


def test_a_split_shows_at_once_and_lastupdate_stays_the_last_write(tmp_path: Path) -> None:
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    c.reports_as_written = False  # as lbctl sandbox serves them
    try:
        assert life.leader is not None
        life.leader.fault.stuck = True
        run_for(life, clock, 5)
        hot = next(iter(c.brokers))
        written = life.report(hot)
        assert written is not None
        parent = _split_first_bundle_of(c, hot)
        served = _report(c, hot)
        bundles = served["bundles"]
        assert isinstance(bundles, list)
        assert parent not in bundles and parent in written["bundles"]
        assert set(bundles) == {*c.bundles_of(hot), f"pulsar/{c.cluster}/{hot}/0x00000000_0xffffffff"}
        assert served["lastUpdate"] == written["lastUpdate"]  # not written since
        assert served["numBundles"] == len(bundles)
        # and the bundle metrics with it (updateLoadBalancingBundlesMetrics at each update)
        text = httpx.get(f"http://{hot}/metrics", timeout=5).text
        metric_bundles = {ln.split('bundle="', 1)[1].split('"', 1)[0] for ln in text.splitlines()
                          if ln.startswith("pulsar_bundle_msg_rate_in{")}
        assert metric_bundles == set(bundles)
        # the live read keeps the namespace, and a plan for it is valid
        snap = tmp_path / "s.json"
        r = lbctl(c, "snapshot", "export", "-f", str(snap))
        assert r.exit_code == 0 and "changed while reading" not in r.stderr, r.stderr
        assert "public/default" in json.loads(snap.read_text())["namespaces"]
        r = lbctl(c, "drain", hot, "--yes", "--timeout", "10", "--verify-timeout", "5",
                  "-m", "100")
        assert r.exit_code == 0, r.stderr + r.stdout[-2000:]
        assert c.bundles_of(hot) == []
    finally:
        c.stop()


def test_a_frozen_broker_still_shows_how_old_its_report_is() -> None:
    c, life, clock = living_hot(3)
    c.reports_as_written = False
    try:
        run_for(life, clock, 5)
        cool = list(c.brokers)[1]
        before = _report(c, cool)["lastUpdate"]
        life.freeze(cool)
        run_for(life, clock, 20 * 60)  # past loadBalancerReportUpdateMaxIntervalMinutes
        assert _report(c, cool)["lastUpdate"] == before
    finally:
        c.stop()


def test_the_replay_tests_can_still_read_the_reports_as_written() -> None:
    c, life, clock = living_hot(3, loadBalancerAutoBundleSplitEnabled="false")
    try:
        assert life.leader is not None
        life.leader.fault.stuck = True
        run_for(life, clock, 5)
        hot = next(iter(c.brokers))
        parent = _split_first_bundle_of(c, hot)
        assert _report(c, hot) == life.report(hot)
        assert parent in _report(c, hot)["bundles"]  # type: ignore[operator]
    finally:
        c.stop()


@pytest.mark.slow
@pytest.mark.parametrize("flag", [[], ["--reports-as-written"]])
def test_lbctl_sandbox_serves_them_refreshed_unless_asked(flag: list[str]) -> None:
    """``lbctl sandbox`` (a subprocess, real HTTP): after a split the owner's load-report names
    the children at once — or, with ``--reports-as-written``, still the parent."""
    import os
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "lbctl", "sandbox", "--port", "0", *flag],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "100"})
    try:
        assert proc.stdout is not None
        deadline, url = time.monotonic() + 30, None
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line.startswith("admin URL: "):
                url = line.split()[2]
            elif not line and proc.poll() is not None:
                break
        assert url is not None, proc.stderr.read() if proc.stderr else ""
        hot = url.removeprefix("http://")
        bundles = httpx.get(f"{url}/admin/v2/broker-stats/load-report", timeout=5).json()["bundles"]
        parent = sorted(b for b in bundles if b.startswith("public/default/"))[0]
        ns, rng = parent.rsplit("/", 1)
        r = httpx.put(f"{url}/admin/v2/namespaces/{ns}/{rng}/split", timeout=5)
        assert r.status_code == 204
        after = httpx.get(f"http://{hot}/admin/v2/broker-stats/load-report", timeout=5).json()
        assert (parent in after["bundles"]) == bool(flag)
    finally:
        proc.terminate()
        proc.communicate(timeout=10)  # reads and closes its pipes


def test_the_usage_is_the_hosts_last_sample_written_or_not() -> None:
    """A change under loadBalancerReportUpdateThresholdPercentage is sampled but not written:
    the endpoint shows it (updateLocalBrokerData), the written report does not."""
    c, life, clock = living_hot(3, loadBalancerAutoBundleSplitEnabled="false")
    c.reports_as_written = False
    try:
        assert life.leader is not None
        life.leader.fault.stuck = True
        run_for(life, clock, 5)
        hot = next(iter(c.brokers))
        written = life.report(hot)
        assert written is not None
        life.namespace_factor["public/default"] = 1.04  # +4 %: no write
        run_for(life, clock, 5)
        assert life.report(hot) is written
        served = _report(c, hot)
        cpu = served["cpu"]
        assert isinstance(cpu, dict)
        assert cpu["usage"] == life.sampled[hot].cpu.usage != written["cpu"]["usage"]
        assert served["lastUpdate"] == written["lastUpdate"]
    finally:
        c.stop()
