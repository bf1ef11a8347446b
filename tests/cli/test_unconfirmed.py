"""Issue 28 item 7: one rule for every command that changes a cluster when there is no terminal to
ask on and no ``--yes`` (shown, nothing sent, exit 12, the same line), ``--dry-run`` exits 0; and
the same failure kind exits with the same code whichever command meets it (docs/exit-codes.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.errors import ExitStatus
from lbctl.executor import NOT_A_TERMINAL
from lbctl.sandbox import TestCluster, hot_cluster
from tests.apply.apply_helpers import lbctl
from tests.paths import EXAMPLES

pytestmark = pytest.mark.live


@pytest.fixture
def hot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestCluster]:
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_LOCK_DIR", str(tmp_path / "locks"))
    c = hot_cluster(3, bundles_per_broker=2)
    c.set_reassignment(delay=0.0)
    yield c
    c.stop()


def _commands(c: TestCluster, tmp_path: Path) -> dict[str, list[str]]:
    ids = list(c.brokers)
    bundle = c.bundles_of(ids[0])[0]
    ns, rng = bundle.rsplit("/", 1)
    plan = tmp_path / "plan.json"
    r = lbctl(c, "rebalance-after", ids[2], "-o", "json")
    plan.write_text(r.stdout)
    return {
        "unload": ["unload", ns, "-b", rng],
        "split-bundle": ["split-bundle", ns, "-b", rng],
        "drain": ["drain", ids[1]],
        "drain --fill": ["drain", ids[2], "--fill"],
        "apply": ["apply", str(plan), "--force-stale"],
    }


def test_no_terminal_no_yes_is_the_same_refusal_everywhere(hot: TestCluster,
                                                            tmp_path: Path) -> None:
    c = hot
    before = dict(c.owners)
    for name, args in _commands(c, tmp_path).items():
        r = lbctl(c, *args)
        assert r.exit_code == ExitStatus.NOT_CONFIRMED, (name, r.stdout, r.stderr)
        assert r.stderr.splitlines()[-1] == f"lbctl: error: {NOT_A_TERMINAL}", name
        assert "would send" in r.stdout or "will send" in r.stdout, name
        dry = lbctl(c, *args, "--dry-run")
        assert dry.exit_code == 0, (name, dry.stderr)
    assert c.owners == before  # nothing was sent by any of them
    assert not [r for r in c.log if r.method != "GET"]


def test_an_unknown_namespace_or_bundle_exits_2_everywhere(hot: TestCluster) -> None:
    c = hot
    snap = str(EXAMPLES / "balanced.json")
    cases = [
        ["unload", "nope/nothing"],
        ["unload", "public/default", "-b", "0x00000000_0x00000010"],
        ["split-bundle", "nope/nothing", "-b", "0x00000000_0x10000000", "--snapshot", snap],
        ["split-bundle", "public/default", "-b", "0x00000000_0x00000010", "--snapshot", snap],
        ["explain", snap, "--bundle", "nope/nothing/0x00000000_0x10000000"],
        ["drain", "10.9.9.9:8080"],
        ["rebalance-after", "10.9.9.9:8080"],
    ]
    for args in cases:
        r = lbctl(c, *args)
        assert r.exit_code == ExitStatus.USAGE, (args, r.stderr)
        assert r.stderr.count("\n") == 1, r.stderr


def test_a_missing_extra_exits_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util
    import sys

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyspark" else real(name, *a))
    for mod in ("matplotlib", "matplotlib.backends.backend_agg", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, mod, None)  # import fails: the extra is not installed
    snap = str(EXAMPLES / "hot-broker.json")
    runs = {
        "fleet": ["fleet", "ingest", snap, "--out", str(tmp_path / "o")],
        "simulate --plot": ["simulate", snap, "--cycles", "2", "--plot", str(tmp_path / "p.png")],
    }
    for name, args in runs.items():
        r = CliRunner().invoke(app, args)
        assert r.exit_code == ExitStatus.USAGE, (name, r.stderr)
        assert "pip install 'lbctl[" in r.stderr, name


def test_exit_codes_page_states_the_rule() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "exit-codes.md").read_text()
    assert NOT_A_TERMINAL.split(";")[0] in page.replace("\n  ", " ")
    assert "exit 0" in page and "exits 2" in page
