"""docs/commands/sandbox.md's operator's story, run as the README's walkthroughs are
(tests/apply/test_readme_walkthrough.py): its scenario file drives a living sandbox served as
``lbctl sandbox`` serves it (reports refreshed), at the doc's ``--speed 6``, with the clock moved
on to the cluster times the story names; every ``$ lbctl`` line runs in order and succeeds, and
the cluster does what the prose says. The quoted outputs are checked for what a cluster served
that way shows: no resource over the limit a broker cannot exceed (the hot broker's direct memory
was quoted at 109.6 %), and bundle counts that add up to the cluster's after every move (they
did not, recorded with the reports as written)."""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import TestCluster
from lbctl.sandbox.clock import RunningClock
from lbctl.sandbox.life import Life
from lbctl.sandbox.scenarios import SCENARIOS, living

pytestmark = [pytest.mark.live, pytest.mark.slow]
DOC = Path(__file__).resolve().parents[2] / "docs" / "commands" / "sandbox.md"
SPEED = 6.0
#: the cluster second each `$ lbctl` line of the story runs at, at the latest (the prose: the
#: start, a cluster minute later, 5 min (after the restart), 6 min, then the maintenance)
WHEN = [5, 10, 75, 310, 370, 380, 380, 380, 380, 380]


def _story() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split("## An operator's story", 1)[1].split("\n## ", 1)[0]


def _sessions() -> list[tuple[str, list[str]]]:
    """Each ``$ lbctl`` line of the story's console blocks, with the output quoted under it."""
    out: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", _story(), re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out:
                out[-1][1].append(line)
    return out


class JumpClock(RunningClock):
    """A running clock the test can move on (``jump``) instead of waiting for it."""

    def __init__(self, speed: float):
        super().__init__(speed)
        self.offset = 0.0
        self.start = super().now()

    def now(self) -> float:
        return super().now() + self.offset

    def at_least(self, second: float) -> None:
        self.offset += max(0.0, self.start + second - self.now())


@pytest.fixture
def story(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestCluster, Life,
                                                                               JumpClock]]:
    blocks = re.findall(r"```yaml\n(.*?)```", _story(), re.S)
    events = yaml.safe_load(blocks[0])["events"]
    c = SCENARIOS["hot-broker"].start(3, 0, alive=True)
    c.reports_as_written = False  # as lbctl sandbox serves them
    clock = JumpClock(SPEED)
    life = living(c, clock, events=events)
    c.keep_alive()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))
    yield c, life, clock
    c.stop()


def _run(c: TestCluster, line: str, ids: list[str] | None = None) -> str:
    """Run ``line``; ``ids``: the brokers in their starting order (a restarted broker comes back
    last in the cluster's own order)."""
    ids = ids or list(c.brokers)
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


def _rows(output: str | list[str]) -> dict[str, list[str]]:
    """A monitor-brokers table's rows by broker (its cells split at runs of blanks)."""
    lines = output.splitlines() if isinstance(output, str) else output
    return {cells[0]: cells for line in lines
            if (cells := line.split()) and re.fullmatch(r"127\.0\.0\.1:\d+", cells[0])}


def _catch_up(life: Life, clock: JumpClock, second: float) -> None:
    clock.at_least(second)
    deadline = time.monotonic() + 60
    while life.now < clock.start + second - 5 and time.monotonic() < deadline:
        time.sleep(0.05)


def test_the_story_runs_as_told(story: tuple[TestCluster, Life, JumpClock]) -> None:
    c, life, clock = story
    lines = [cmd for cmd, _ in _sessions() if cmd.startswith("lbctl ")]
    assert [x.split()[1] for x in lines] == [
        "monitor-brokers", "explain", "monitor-brokers", "monitor-brokers", "monitor-brokers",
        "drain", "rebalance-after", "apply", "drain", "monitor-brokers"]
    ids = list(c.brokers)
    outs: list[str] = []
    for line, second in zip(lines, WHEN, strict=True):
        _catch_up(life, clock, second)
        outs.append(_run(c, line, ids))
        if len(outs) == 1:
            rows = _rows(outs[0])
            assert rows[ids[0]][-1] == "overloaded"
            assert all(float(r[5]) <= 100 for r in rows.values())  # MAX %: nothing past a limit
            total = sum(int(r[1]) for r in rows.values())
        if len(outs) == 2:
            assert f"5 bundle(s) unloaded from {ids[0]}" in outs[1]
        if len(outs) == 3:  # the leader acted at its first cycle
            metrics = "\n".join(str(m) for m in c.metrics(ids[0]))
            assert "bundleUnloading" in metrics
            assert int(_rows(outs[2])[ids[0]][1]) < int(_rows(outs[0])[ids[0]][1])
        if len(outs) == 4:  # crashed at 4 min, restarted empty at 5
            assert int(_rows(outs[3])[ids[1]][1]) == 1
        if len(outs) == 5:  # the leader refilled it
            assert int(_rows(outs[4])[ids[1]][1]) > 1
        if len(outs) == 6:
            assert f"{ids[1]} owns no bundle now" in outs[5]
        if len(outs) == 8:
            assert "complete:" in outs[7]
        if len(outs) == 10:
            rows = _rows(outs[9])
            assert sum(int(r[1]) for r in rows.values()) == total  # served refreshed: they add up
            assert int(rows[ids[1]][1]) > 1


def test_the_quoted_outputs_are_what_a_refreshed_sandbox_shows() -> None:
    sessions = _sessions()
    tables = [_rows(out) for cmd, out in sessions if cmd.startswith("lbctl monitor-brokers")]
    assert len(tables) == 5 and all(len(t) == 3 for t in tables)
    totals = {sum(int(r[1]) for r in t.values()) for t in tables}
    assert len(totals) == 1, f"bundle counts that do not add up to one cluster: {totals}"
    for t in tables:
        for row in t.values():
            assert all(float(x) <= 100 for x in row[5:7]), row  # MAX %, LOAD %
    explained = "\n".join("\n".join(out) for cmd, out in sessions if cmd == "lbctl explain")
    quoted = [float(x) for x in re.findall(r"(?:cpu|directMemory|bandwidthIn|bandwidthOut) "
                                            r"([\d.]+)%", explained)]
    assert quoted and max(quoted) <= 100


def _fields(lines: list[str]) -> Any:
    return next((x.split() for x in lines if x.startswith("BROKER")), None)


def test_the_quoted_tables_have_the_columns_lbctl_prints(
        story: tuple[TestCluster, Life, JumpClock]) -> None:
    c, _life, _clock = story
    shown = next(out for cmd, out in _sessions() if cmd.startswith("lbctl monitor-brokers"))
    printed = _run(c, "lbctl monitor-brokers --once --summary")
    assert _fields(shown) == _fields(printed.splitlines())
