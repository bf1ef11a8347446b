"""The README's two walkthroughs (From recommendation to action; Rolling restart with drain) run
command by command, in order, against a loopback cluster like `lbctl sandbox`'s: every `$ lbctl`
line succeeds, `> FILE` writes the file the next line reads, and the cluster ends as the prose says.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import TestCluster, hot_cluster

pytestmark = pytest.mark.live
README = Path(__file__).resolve().parents[2] / "README.md"


def _block(title: str) -> list[str]:
    text = README.read_text(encoding="utf-8").split(title, 1)[1]
    block = re.search(r"```console\n(.*?)```", text, re.S)
    assert block is not None, title
    return [line[2:] for line in block.group(1).splitlines() if line.startswith("$ lbctl ")]


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestCluster]:
    c = hot_cluster(3)
    c.set_reassignment(delay=0.05)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    yield c
    c.stop()


def _run(c: TestCluster, line: str) -> str:
    ids = list(c.brokers)
    for i in range(3):  # lbctl sandbox's ports → this cluster's
        line = line.replace(f"127.0.0.1:{8080 + i}", ids[i])
    args = shlex.split(line, comments=True)[1:]
    out = None
    if ">" in args:
        out = args[args.index(">") + 1]
        args = args[:args.index(">")]
    r = CliRunner().invoke(app, ["--admin-url", c.admin_url, *args])
    assert r.exit_code == 0, f"{line}\n{r.stderr}\n{r.stdout[-1500:]}"
    if out:
        Path(out).write_text(r.stdout)
    return r.stdout


def test_from_recommendation_to_action(sandbox: TestCluster) -> None:
    c = sandbox
    lines = _block("### From recommendation to action")
    assert [x.split()[1] for x in lines] == ["recommend", "recommend", "apply", "apply",
                                             "monitor-brokers", "apply"]
    before = dict(c.owners)
    outs = []
    for line in lines:
        outs.append(_run(c, line))
        if len(outs) == 3:
            assert "dry run: nothing was sent" in outs[2] and c.owners == before
        if len(outs) == 4:
            assert "complete: 1 done" in outs[3] and c.owners != before
    assert "complete: 1 done" in outs[5]
    assert c.owners == before  # the rollback restored every owner


def test_rolling_restart_with_drain(sandbox: TestCluster) -> None:
    c = sandbox
    ids = list(c.brokers)
    lines = _block("### Rolling restart with `drain`")
    assert [x.split()[1] for x in lines] == ["drain", "drain", "rebalance-after", "apply",
                                             "drain"]
    outs = []
    for line in lines:
        outs.append(_run(c, line))
        if "--keep-paused" in line:
            assert c.bundles_of(ids[1]) == []
            assert c.dynamic == {"loadBalancerSheddingEnabled": "false",
                                 "loadBalancerAutoBundleSplitEnabled": "false"}
            c.brokers[ids[1]].cpu = (3.0, 100.0)  # restarted: idle
    assert "safe to restart it" in outs[1]
    assert c.bundles_of(ids[1])  # filled again
    assert c.dynamic == {}  # restored
