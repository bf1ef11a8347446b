"""A name holding a backtick, put into a printed command, keeps the command whole (walk25).

lbctl quotes a runnable command in backticks and keeps it on one line (``_QUOTED`` in
lbctl.render.tables). ``shlex.quote`` makes such a name safe for the shell (``'b`uname -a`'``),
but its backtick ended the command's quote: the rest of the command was prose again, free to
wrap at its blanks, and the operator copied half a command. tests/data/hostile/backtick-*.json
hold a broker and a namespace named with a command substitution.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.render.tables import longest_word, wrap_prose, wrap_words
from tests.paths import DATA

HOSTILE = DATA / "hostile"
BROKER = "broker-4`uname -a`.pulsar.svc:8080"
BUNDLE = "acme/ord`uname -a`ers/0x60000000_0x70000000"


def _commands(snap: Path) -> list[str]:
    q = shlex.quote
    return {"backtick-broker.json": [
                f"lbctl rebalance-after {q(BROKER)} --snapshot {q(str(snap))}",
                f"lbctl rebalance-after {q(BROKER)} -o json > fill.json"],
            "backtick-namespace.json": [
                f"lbctl explain {q(str(snap))} --bundle {q(BUNDLE)}"]}[snap.name]


@pytest.mark.parametrize("width", [80, 60, 40])
@pytest.mark.parametrize("name", ["backtick-broker.json", "backtick-namespace.json"])
def test_doctor_keeps_a_command_with_a_backtick_name_whole(name: str, width: int) -> None:
    snap = HOSTILE / name
    r = CliRunner().invoke(app, ["doctor", str(snap)], env={"COLUMNS": str(width)})
    assert r.exit_code in (1, 2), r.stderr
    lines = r.stdout.splitlines()
    for cmd in _commands(snap):
        assert any(f"`{cmd}`" in line for line in lines), (cmd, r.stdout)
        name_arg = shlex.split(cmd)[2] if "rebalance" in cmd else shlex.split(cmd)[4]
        assert name_arg in (BROKER, BUNDLE)  # the shell gets the name back, not its output


def test_the_printed_commands_run() -> None:
    """What the shell would run: the preview on the hostile broker, explain of the bundle."""
    runner = CliRunner()
    for name in ("backtick-broker.json", "backtick-namespace.json"):
        cmd = _commands(HOSTILE / name)[0]
        r = runner.invoke(app, shlex.split(cmd)[1:])
        assert r.exit_code == 0, (cmd, r.stderr)


@pytest.mark.parametrize("name", ["a`b c`d", "o'b`r x`", 'q"`w e`"', "`x y`"])
def test_wrappers_keep_the_command_whole(name: str) -> None:
    cmd = f"`lbctl drain {shlex.quote(name)} --snapshot snap.json`"
    text = f"fix: first {cmd} then it's done, `lbctl apply fill.json --yes` later"
    wrapped = wrap_prose(text, 20, hang=2).splitlines()
    assert any(cmd in line for line in wrapped), wrapped
    assert longest_word(f"  {cmd} x") == len(cmd)
    assert any(cmd in line for line in wrap_words(text, 20)), wrap_words(text, 20)
