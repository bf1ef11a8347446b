"""The commands doctor's fixes and explain's hints print run as printed (walk25).

They said ``SNAPSHOT`` (doctor) or left the snapshot out (explain's ``--broker``/``--bundle``
hints, which then read a live cluster) even when the command was run on a file, so a copied
command did not run as is. Each printed command that reads a cluster state now names the files
given, shell-quoted (a ``.jsonl`` sequence by its file, never a state's ``FILE:LINE`` source);
a live read keeps no placeholder: explain reads the cluster again, compare (which needs a
history) is preceded by the export that makes one.

The checks copy the inputs under a directory whose name needs quoting, run doctor and explain on
them at 80 columns, take each command between backticks from what was printed, and run it (a
command that acts on a live cluster is only parsed, ``--help`` appended, as
tests/docs/test_pasted_examples.py does).
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.paths import DATA, EXAMPLES
from tests.render.test_commands_whole import commands_of

ENV = {"COLUMNS": "80", "NO_COLOR": "1"}
#: the commands that read a state, and so must name the file they were printed for
READS = {"compare", "explain", "rebalance-after"}


def _copy(src: Path, tmp_path: Path) -> str:
    """``src`` copied under a directory whose name a shell splits unless quoted."""
    d = tmp_path / "snap shots $HOME"
    d.mkdir(exist_ok=True)
    return str(shutil.copy(src, d / src.name))


def _run_each(text: str, files: list[str]) -> list[list[str]]:
    """Every lbctl command quoted in ``text``: those that read a state name ``files`` and run
    (exit 0); the others parse. Returns the argument lists."""
    runner = CliRunner()
    ran = []
    for cmd in commands_of(text):
        assert "SNAPSHOT" not in cmd, cmd
        argv = shlex.split(cmd)
        if argv[0] != "lbctl":
            continue
        args = argv[1:]
        if args[0] in READS and (args[0] != "rebalance-after" or "--snapshot" in args):
            named = [a for a in args if a in files]
            assert named, f"{cmd!r} does not name {files}"
            if args[0] == "compare":
                args += ["--cycles", "3"]
            r = runner.invoke(app, args, env=ENV)
            assert r.exit_code == 0, f"{cmd}: {r.stderr}"
        else:  # acts on a live cluster (or writes a plan to a file): parsed, never run
            r = runner.invoke(app, [a for a in args if a != ">" and a != "fill.json"]
                              + ["--help"], env=ENV)
            assert r.exit_code == 0, f"{cmd} --help: {r.stderr}"
        ran.append(args)
    return ran


@pytest.mark.parametrize("src, extra, expect", [
    (EXAMPLES / "rolling-restart.yaml", [], "rebalance-after"),
    (DATA / "doctor" / "idle-broker.json", [], "rebalance-after"),
    (DATA / "doctor" / "single-hot-topic.json", [], "explain"),
    (DATA / "doctor" / "mixed-load-managers.json", [], "compare"),
    (EXAMPLES / "two-brokers-90-10.jsonl", [], "compare"),
    (EXAMPLES / "hot-broker.json", [], "compare"),
], ids=lambda v: v.name if isinstance(v, Path) else str(v))
def test_doctor_fixes_run_as_printed(tmp_path: Path, src: Path, extra: list[str],
                                     expect: str) -> None:
    snap = _copy(src, tmp_path)
    r = CliRunner().invoke(app, ["doctor", snap, *extra], env=ENV)
    assert r.exit_code in (0, 1, 2), r.stderr
    ran = _run_each(r.stdout, [snap])
    assert any(a[0] == expect and snap in a for a in ran), r.stdout


def test_a_sequence_of_files_is_named_whole(tmp_path: Path) -> None:
    """Several files are a sequence: compare replays them all; ``--snapshot`` takes the last
    (the state doctor examined)."""
    a = _copy(EXAMPLES / "rolling-restart.yaml", tmp_path)
    b = str(shutil.copy(a, Path(a).with_name("later one.yaml")))
    r = CliRunner().invoke(app, ["doctor", a, b], env=ENV)
    ran = _run_each(r.stdout, [a, b])
    preview = next(x for x in ran if x[0] == "rebalance-after" and "--snapshot" in x)
    assert preview[preview.index("--snapshot") + 1] == b


def test_explain_hints_run_as_printed(tmp_path: Path) -> None:
    """explain on a large cycle points to ``explain --broker``/``--bundle``: on the same file."""
    from tests.cli.test_explain_large import snapshot

    d = tmp_path / "snap shots $HOME"
    d.mkdir()
    f = d / "s.json"
    snapshot(f)
    r = CliRunner().invoke(app, ["explain", str(f)], env=ENV)
    assert r.exit_code == 0, r.stderr
    ran = _run_each(r.stdout, [str(f)])
    flags = {a[2] for a in ran if a[0] == "explain"}
    assert flags == {"--broker", "--bundle"}, ran
    data = CliRunner().invoke(app, ["explain", str(f), "-o", "json"], env=ENV)
    more = [o["placement"]["more"] for o in __import__("json").loads(data.stdout)
            ["explanation"]["outcomes"] if o["placement"] and "more" in o["placement"]]
    assert more and all(shlex.split(m)[2] == str(f) for m in more)


def test_a_live_read_needs_no_snapshot() -> None:
    """After a live read explain reads the cluster again; compare, which cannot, is preceded by
    the export that makes the file it names."""
    from lbctl.doctor.context import make
    from lbctl.doctor.run import context_for
    from lbctl.loadmanager.select import Options
    from lbctl.sources.snapshot import read_snapshots

    states = read_snapshots([EXAMPLES / "hot-broker.json"])
    ctx, _ = context_for(states, Options())
    live = make(ctx.states, ctx.settings, live=True)
    assert live.explain_fix("--bundle b") == "`lbctl explain --bundle b`"
    fix = live.compare_fix("ThresholdShedder", "AvgShedder")
    assert fix == ("`lbctl snapshot export -f snap.json`, then "
                   "`lbctl compare snap.json --strategy ThresholdShedder --strategy AvgShedder`")
    assert "SNAPSHOT" not in fix


def test_the_settings_flags_go_with_the_command(tmp_path: Path) -> None:
    """doctor judged base.json with --broker-conf and --set: compare must judge the same settings
    (without them it compares the snapshot's own placement, not the conf's
    LeastLongTermMessageRate that the finding is about)."""
    snap = _copy(DATA / "doctor" / "base.json", tmp_path)
    conf = _copy(DATA / "doctor" / "threshold-llmr.conf", tmp_path)
    given = ["--broker-conf", conf, "--set", "loadBalancerBrokerThresholdShedderPercentage=5"]
    r = CliRunner().invoke(app, ["doctor", snap, *given], env=ENV)
    ran = _run_each(r.stdout, [snap])
    compare = next(a for a in ran if a[0] == "compare")
    assert compare[compare.index("--broker-conf"):][:4] == given


def test_explain_hints_keep_the_settings_flags(tmp_path: Path) -> None:
    from tests.cli.test_explain_large import snapshot

    f = tmp_path / "s.json"
    snapshot(f)
    given = ["--pulsar-version", "3.0.7", "--set", "loadBalancerBrokerOverloadedThresholdPercentage=85"]
    r = CliRunner().invoke(app, ["explain", str(f), *given], env=ENV)
    assert r.exit_code == 0, r.stderr
    ran = _run_each(r.stdout, [str(f)])
    assert ran and all(a[1:2] == [str(f)] and a[2:6] == given for a in ran), ran
