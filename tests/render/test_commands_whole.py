"""A runnable command printed by lbctl is one unbreakable unit at any terminal width.

walk23 noticed doctor's ``fix:`` break ``pulsar-admin brokers update-dynamic-config --config`` /
``loadBalancer…Enabled --value false`` across lines at 80 columns, and ``lbctl compare SNAPSHOT
--strategy ThresholdShedder`` / ``--strategy …``: an operator copies a command whole, from one
line. The rule (``lbctl.render.tables._QUOTED``): the text quotes a command in backticks, and every
wrapper of render/ moves it whole to a line of its own, overflowing rather than splitting.

The checks read what lbctl prints: each quoted command sits on one line and parses with shlex,
and no ``lbctl SUBCOMMAND`` or ``pulsar-admin`` appears unquoted (so a new fix that forgets the
quotes, and splits, fails here).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.doctor.base import Rule
from lbctl.doctor.builtin import RULES
from lbctl.render.tables import longest_word, wrap_prose, wrap_words
from tests.paths import DATA, EXAMPLES

WIDTHS = (80, 60)
SUBCOMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
#: a command as prose would start it: lbctl and one of its subcommands, or pulsar-admin
_START = re.compile(r"(?<![\w./-])(?:lbctl (?:" + "|".join(map(re.escape, SUBCOMMANDS))
                    + r")\b|pulsar-admin\b)")
_QUOTED = re.compile(r"`([^`\n]*)`")


def commands_of(text: str) -> list[str]:
    """The quoted commands of ``text`` (each must lie on one line); fails on a command that is
    not quoted, or a quote left open at the end of a line (a command split across lines)."""
    found = []
    for line in text.splitlines():
        assert line.count("`") % 2 == 0, f"a quoted command split at the end of: {line!r}"
        bare = _QUOTED.sub(lambda m: " " * len(m.group(0)), line)
        assert not _START.search(bare), f"a command not quoted (so it may split): {line!r}"
        found += [m.group(1) for m in _QUOTED.finditer(line) if _START.match(m.group(1))]
    return found


def _doctor_cases() -> list[list[str]]:
    """Every bundled example, and the doctor test data that fires the rules the examples do not
    (isolation, hot topics, idle brokers, mixed clusters, the settings rules)."""
    snaps = sorted(p for p in [*EXAMPLES.glob("*.json*"), *EXAMPLES.glob("*.yaml"),
                               *(EXAMPLES / "extensible").glob("*.json*")])
    cases = [[str(p)] for p in snaps]
    doctor = DATA / "doctor"
    cases += [[str(p)] for p in sorted(doctor.glob("*.json")) if p.name != "base.json"]
    cases += [[str(doctor / "base.json"), "--broker-conf", str(p)]
              for p in sorted(doctor.glob("*.conf"))]
    return cases


CASES = _doctor_cases()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("args", CASES, ids=[" ".join(Path(a).name for a in c) for c in CASES])
def test_doctor_prints_every_command_whole(args: list[str], width: int) -> None:
    runner = CliRunner()
    env = {"COLUMNS": str(width), "NO_COLOR": "1"}
    data = runner.invoke(app, ["doctor", *args, "-o", "json"], env=env)
    assert data.exit_code in (0, 1, 2), data.stderr
    wanted = [c for f in json.loads(data.stdout)["findings"] for c in commands_of(f["fix"])]
    text = runner.invoke(app, ["doctor", *args], env=env)
    assert text.exit_code == data.exit_code, text.stderr
    printed = commands_of(text.stdout)
    assert printed == wanted  # each one printed, in order, unbroken
    for cmd in printed:
        assert shlex.split(cmd)[0] in ("lbctl", "pulsar-admin")
        # a line that holds a command too long for the width holds it alone (with its
        # punctuation), at the finding's indent
        for line in text.stdout.splitlines():
            if cmd in line and len(line) > width:
                assert re.fullmatch(r" *(fix: +)?\(?`[^`]*`[.,;)]*", line), line


def test_some_commands_are_checked() -> None:
    """The cases above reach the commands of most rules (a broken glob would check none)."""
    env = {"COLUMNS": "80"}
    seen = set()
    for args in CASES:
        r = CliRunner().invoke(app, ["doctor", *args, "-o", "json"], env=env)
        seen |= {f["rule"] for f in json.loads(r.stdout)["findings"]
                 if commands_of(f["fix"])}
    assert {"balancing-disabled", "distribute-evenly", "namespace-few-bundles", "idle-broker",
            "single-hot-topic", "shedder-placement-mismatch", "isolation-primary-unmatched"} <= seen


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("rule", list(RULES), ids=[r.id for r in RULES])
def test_each_rules_documented_fix_keeps_its_commands_whole(rule: Rule, width: int) -> None:
    """docs/doctor.md's fix of each rule, wrapped as doctor wraps a fix."""
    fix = rule.fix
    out = wrap_prose(f"  fix:   {fix}", width, hang=9)
    assert commands_of(out) == commands_of(fix)


@pytest.mark.parametrize("width", WIDTHS)
def test_explain_hints_keep_their_commands_whole(tmp_path: Path, width: int) -> None:
    """explain on a large cycle points to ``explain --broker``/``--bundle`` for what it cut."""
    from tests.cli.test_explain_large import snapshot

    f = tmp_path / "s.json"
    snapshot(f)
    r = CliRunner().invoke(app, ["explain", str(f)], env={"COLUMNS": str(width)})
    assert r.exit_code == 0, r.stderr
    printed = commands_of(r.stdout)
    assert any(c.startswith(f"lbctl explain {f} --broker ") for c in printed)
    assert any(c.startswith(f"lbctl explain {f} --bundle ") for c in printed)
    for cmd in printed:
        assert len(shlex.split(cmd)) == 5 and shlex.split(cmd)[2] == str(f)


LONG = ("`pulsar-admin brokers update-dynamic-config --config "
        "loadBalancerDistributeBundlesEvenlyEnabled --value false`")


@pytest.mark.parametrize("width", [40, 60, 80])
def test_wrap_prose_moves_a_long_command_whole_to_its_own_line(width: int) -> None:
    out = wrap_prose(f"  fix:   turn it off: {LONG} (or the same key in broker.conf)", width,
                     hang=9).splitlines()
    own = [line for line in out if LONG in line]
    assert own == [" " * 11 + LONG]  # alone, at the hang, overflowing
    assert all(len(line) <= width for line in out if line not in own)


@pytest.mark.parametrize("width", [30, 60])
def test_table_cells_keep_a_command_whole(width: int) -> None:
    cell = f"turn it off with {LONG}, then restart"
    lines = wrap_words(cell, width)
    assert sum(LONG in line for line in lines) == 1
    assert longest_word(cell) == len(LONG) + 1  # with its comma
    assert " ".join(lines) == cell


_UNIT_LEADS = re.compile(r"^ *(?:[KMGT]?B/s|msg/s|[kM]bit/s|min)(?![\w/])")


@pytest.mark.parametrize("width", [40, 60, 80])
def test_wrap_prose_keeps_a_figure_with_its_unit(width: int) -> None:
    """walk24: explain's "selected: 206.0" / "MB/s so far < 215.3 MB/s needed" at 80 columns."""
    text = ("  [chosen ] acme/clickstream/0xa0000000_0xb0000000 on broker-2: selected: 206.0 "
            "MB/s so far < 215.3 MB/s needed, 13,416.2 msg/s, 10,485,760 B/s in 1 min")
    out = wrap_prose(text, width, hang=4).splitlines()
    assert not [x for x in out if _UNIT_LEADS.match(x)], out
    assert " ".join(x.strip() for x in out) == " ".join(text.split())


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("args", [["explain", "hot-broker.json"],
                                  ["explain", "hot-broker.json", "--strategy", "OverloadShedder"],
                                  ["explain", "two-brokers-90-10.jsonl", "--all-cycles"],
                                  ["explain", "extensible/skewed.json"]], ids=" ".join)
def test_explain_never_starts_a_line_with_a_unit(args: list[str], width: int) -> None:
    cmd = [args[0], str(EXAMPLES / args[1]), *args[2:]]
    r = CliRunner().invoke(app, cmd, env={"COLUMNS": str(width)})
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert not [x for x in lines if _UNIT_LEADS.match(x)]
