"""``lbctl watch --ownership admin|reports`` and its note in ``lbctl watch --status``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.sandbox.life_helpers import living_hot

pytestmark = pytest.mark.live


@pytest.fixture()
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))


@pytest.mark.usefixtures("_isolated")
@pytest.mark.parametrize(("mode", "note", "read"), [
    ("admin", "ownership: each broker's ownedNamespaces (--ownership admin)", True),
    ("reports", "ownership: from the load reports (--ownership reports)", False),
])
def test_ownership_flag_and_its_note_in_status(tmp_path: Path, mode: str, note: str,
                                                read: bool) -> None:
    """``--ownership reports`` sends no ownedNamespaces request at all; ``watch --status`` says
    which the watcher used."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    history = tmp_path / "h"
    try:
        r = CliRunner().invoke(app, [
            "--admin-url", c.admin_url, "watch", "--history", str(history), "--count", "1",
            "--interval", "1", "--listen", "", "--no-doctor", "--ownership", mode])
        asked = [x for x in c.log if x.path.endswith("/ownedNamespaces")]
    finally:
        c.stop()
    assert r.exit_code == 0, r.stderr
    assert bool(asked) is read
    s = CliRunner().invoke(app, ["watch", "--status", "--history", str(history)],
                           env={"COLUMNS": "200"})
    assert s.exit_code == 0, s.stderr
    assert note in s.stdout, s.stdout
    [line] = [json.loads(x) for x in _records(history)]
    assert line["ownership"] == mode and line.get("read", False) is read


@pytest.mark.usefixtures("_isolated")
def test_a_bad_ownership_is_refused_in_one_line(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["--admin-url", "http://127.0.0.1:9", "watch", "--history",
                                 str(tmp_path / "h"), "--count", "1", "--ownership", "zk"])
    assert r.exit_code != 0
    assert "one of admin, reports" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def _records(history: Path) -> list[str]:
    import gzip

    out: list[str] = []
    for f in sorted(history.glob("lbctl-watch-*.jsonl.gz")):
        out += gzip.decompress(f.read_bytes()).decode().splitlines()
    return out


