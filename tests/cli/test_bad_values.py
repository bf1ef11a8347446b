"""A malformed flag value is one line, ``lbctl: error: …``, and exit 2 (docs/exit-codes.md:
'usage error (bad flag, unknown setting, bundle or broker)'), checked before anything is read
from or sent to a cluster (the admin URL here refuses connections: reaching it would be exit 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.paths import DATA

SNAP = str(DATA / "fleet" / "corpus" / "west" / "snap-000.json")
DOWN = ["--admin-url", "http://127.0.0.1:9"]
WATCH = [*DOWN, "watch", "--count", "1", "--listen", ""]
DRAIN = [*DOWN, "drain", "b1:8080", "--dry-run"]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # the machine's context, PULSAR_HOME and client.conf are kept out by tests/conftest.py
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))


@pytest.mark.parametrize("args", [
    # fixed here: exit 1, exit 3 (a read of the cluster first) or accepted before
    ["--max-input-size", "abc", "recommend", SNAP],
    ["--max-response-size", "1", "recommend", SNAP],
    [*WATCH, "--retain-size", "abc"],
    [*WATCH, "--retain-size", "-1"],
    [*WATCH, "--grace", "nope=1m"],
    [*WATCH, "--grace", "broker-dwn=1m"],
    [*DRAIN, "--strategy", "Nope"],
    [*DRAIN, "--placement", "Nope"],
    [*DRAIN, "--set", "x=y"],
    [*DRAIN, "--set", "loadBalancerEnabled=maybe"],
    ["simulate", SNAP, "--idle-usage", "200"],
    ["simulate", SNAP, "--idle-usage", "100"],
    ["plans", "list", "--history", "/dev/null"],
    # already so: kept so
    ["recommend", SNAP, "-o", "xml"],
    ["recommend", SNAP, "--seed", "abc"],
    ["recommend", SNAP, "--set", "loadBalancerEnabled=maybe"],
    [*DOWN, "recommend", "--watch", "--interval", "abc"],
    [*DOWN, "recommend", "--watch", "--count", "0"],
    [*DOWN, "recommend", "--since", "abc", "--prometheus-url", "http://127.0.0.1:9"],
    ["explain", SNAP, "--page", "-1"],
    ["explain", SNAP, "--page", "abc"],
    ["propose", SNAP, "--max-usage", "abc"],
    ["propose", SNAP, "--max-moves", "-1"],
    ["simulate", SNAP, "--cycles", "-1"],
    ["simulate", SNAP, "--noise", "-1"],
    ["compare", SNAP, "--cycles", "abc"],
    ["doctor", SNAP, "--rule", "nope"],
    ["journal", "--since", "abc"],
    [*DOWN, "apply", SNAP, "--dry-run", "--max-age", "abc"],
    [*DOWN, "apply", SNAP, "--dry-run", "--concurrency", "0"],
    [*DRAIN, "--interval", "-1"],
    [*DOWN, "monitor-brokers", "--once", "-i", "abc"],
    [*DOWN, "monitor-brokers", "--once", "--sort", "nope"],
    [*WATCH, "--interval", "abc"],
    [*WATCH, "--retain", "abc"],
    ["sandbox", "--speed", "0"],
    ["sandbox", "-s", "nope"],
    ["snapshot", "validate", SNAP, "-o", "xml"],
    [*DOWN, "--request-timeout", "-1", "recommend"],
], ids=lambda a: " ".join(x for x in a if x not in (SNAP, *DOWN)))
def test_a_bad_value_is_one_usage_line(args: list[str]) -> None:
    r = CliRunner().invoke(app, args, prog_name="lbctl")
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.stderr
    assert len(lines) == 1 and lines[0].startswith("lbctl: error: "), r.stderr
    assert "Traceback" not in r.stderr


def test_grace_knows_every_kind_the_watcher_raises() -> None:
    """``--grace`` refuses an unknown kind; every kind the watch package raises must be known."""
    import re

    from lbctl.watch.anomalies import KINDS

    src = "".join(p.read_text() for p in (Path(__file__).parents[2] / "lbctl" / "watch").glob("*.py"))
    raised = set(re.findall(r'Condition\(\s*"([a-z-]+)"', src))
    assert raised and raised <= set(KINDS), raised - set(KINDS)
