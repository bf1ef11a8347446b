"""`lbctl sandbox`: runs in the foreground, prints the admin URL, serves every command, stops on
SIGTERM/Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox.scenarios import SCENARIOS, equal_boundaries, fmt

pytestmark = pytest.mark.live


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "lbctl", "sandbox", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("admin URL: "):
            return proc, line.split()[2]
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"no admin URL: {proc.stderr.read() if proc.stderr else ''}")


def _stop(proc: subprocess.Popen[str], sig: int) -> tuple[int, str]:
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_foreground_until_stopped(sig: int) -> None:
    proc, url = _start("--brokers", "4")
    try:
        runner = CliRunner()
        res = runner.invoke(app, ["--admin-url", url, "monitor-brokers", "--once", "-o", "json"])
        assert res.exit_code == 0, res.stderr
        assert len(json.loads(res.stdout)["brokers"]) == 4
        res = runner.invoke(app, ["--admin-url", url, "recommend", "-o", "json"])
        assert res.exit_code == 0 and json.loads(res.stdout)["summary"]["unloads"] >= 1
        first = equal_boundaries(4 * SCENARIOS["hot-broker"].alive_bundles)[:2]
        res = runner.invoke(app, ["--admin-url", url, "unload", "public/default", "-b",
                                  "_".join(map(fmt, first)), "--dry-run"])
        assert res.exit_code == 0 and "nothing was sent" in res.stdout
    finally:
        code, err = _stop(proc, sig)
    assert code == 0 and "stopped" in err


def test_extensible_and_scenarios() -> None:
    proc, url = _start("--scenario", "rolling-restart", "--extensible")
    try:
        res = CliRunner().invoke(app, ["--admin-url", url, "brokers", "-o", "json"])
        data = json.loads(res.stdout)
        assert len(data["brokers"]) == SCENARIOS["rolling-restart"].default_brokers
        assert all(b["loadManager"].endswith("ExtensibleLoadManagerImpl") for b in data["brokers"])
    finally:
        _stop(proc, signal.SIGTERM)


def test_busy_port_is_one_line() -> None:
    proc, url = _start("--brokers", "1")
    try:
        port = url.rsplit(":", 1)[1]
        res = CliRunner().invoke(app, ["sandbox", "--port", port, "--brokers", "1"])
        assert res.exit_code == 1 and "cannot listen on 127.0.0.1:" in res.stderr
        assert "--port 0" in res.stderr
    finally:
        _stop(proc, signal.SIGTERM)


def test_the_banner_names_every_brokers_port() -> None:
    """With ``--port 0`` the ports are the system's picks, not a range: the first line names each
    broker's (it printed first-last, two random ports, as if the brokers sat between them)."""
    proc = subprocess.Popen([sys.executable, "-m", "lbctl", "sandbox", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = next(x for x in iter(proc.stdout.readline, "") if x.startswith("admin URL: "))
        res = CliRunner().invoke(app, ["--admin-url", url.split()[2], "brokers", "-o", "json"])
        ports = [b["broker"].rsplit(":", 1)[1] for b in json.loads(res.stdout)["brokers"]]
        listed = first.rsplit("127.0.0.1:", 1)[1].strip()
        if "-" in listed:
            lo, hi = map(int, listed.split("-"))
            assert sorted(map(int, ports)) == list(range(lo, hi + 1))
        else:
            assert sorted(listed.split(",")) == sorted(ports)
    finally:
        _stop(proc, signal.SIGTERM)


def test_unknown_scenario_suggests() -> None:
    res = CliRunner().invoke(app, ["sandbox", "--scenario", "hot-brokers"])
    assert res.exit_code == 2 and "hot-broker" in res.stderr


@pytest.mark.slow
def test_a_living_sandbox_at_speed_60() -> None:
    """At --speed 60 a cluster minute passes per wall second: within a few seconds the leader's
    first cycles have run (its counters on /metrics), and the reports' lastUpdate and each
    answer's Date run ahead of the wall clock."""
    from email.utils import parsedate_to_datetime

    import httpx

    proc, url = _start("--speed", "60")
    try:
        started = time.time()
        deadline = time.monotonic() + 20
        moved = 0.0
        while time.monotonic() < deadline and not moved:
            time.sleep(0.5)
            text = httpx.get(url + "/metrics", timeout=5).text
            line = next(x for x in text.splitlines()
                        if x.startswith("pulsar_lb_unload_bundle_total"))
            moved = float(line.rsplit(" ", 1)[1])
        assert moved >= 1  # the leader unloaded from the hot broker
        time.sleep(1.0)
        r = httpx.get(url + "/admin/v2/broker-stats/load-report", timeout=5)
        ahead = parsedate_to_datetime(r.headers["date"]).timestamp() - time.time()
        elapsed = time.time() - started
        assert ahead > 30 * elapsed  # the cluster's clock: about 59 s ahead per wall second
        assert r.json()["lastUpdate"] / 1000 > time.time() + 10
    finally:
        code, _ = _stop(proc, signal.SIGTERM)
    assert code == 0


def test_brokers_help_names_every_scenarios_default() -> None:
    """--brokers' help gives each scenario's broker count (skewed was left out)."""
    res = CliRunner().invoke(app, ["sandbox", "--help"], env={"COLUMNS": "80"})
    text = " ".join(res.stdout.split())
    line = text[text.index("-n, --brokers N"):text.index("-s, --scenario")]
    for name, sc in SCENARIOS.items():
        assert f"{name} is always {sc.default_brokers}" in line or \
            f"{name} {sc.default_brokers}" in line, name
