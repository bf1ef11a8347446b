"""Every ``--help`` fits an 80-column terminal: the global help with its exit-code epilog, and
each command's and subcommand's (their examples keep their lines, so a long one would spill)."""

from __future__ import annotations

import re

import click
import pytest
import typer.main
from typer.testing import CliRunner

from lbctl.cli.app import app

WIDTH = 80


def _paths() -> list[list[str]]:
    root = typer.main.get_command(app)
    out: list[list[str]] = [[]]

    def walk(cmd: click.Command, path: list[str]) -> None:
        for name, sub in getattr(cmd, "commands", {}).items():
            out.append([*path, name])
            walk(sub, [*path, name])

    walk(root, [])
    return out


@pytest.mark.parametrize("path", _paths(), ids=lambda p: " ".join(p) or "lbctl")
def test_help_fits_80_columns(path: list[str]) -> None:
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)})
    assert res.exit_code == 0, res.output
    wide = [line for line in res.stdout.splitlines() if len(line) > WIDTH]
    assert not wide, f"{len(wide)} line(s) wider than {WIDTH}: {wide[0]!r}"


def test_every_command_is_walked() -> None:
    names = {" ".join(p) for p in _paths()}
    assert {"", "recommend", "apply", "doctor", "snapshot export", "fleet ingest"} <= names


@pytest.mark.parametrize("path", _paths(), ids=lambda p: " ".join(p) or "lbctl")
def test_help_never_cuts_a_word_at_its_hyphen(path: list[str]) -> None:
    """``--dry-run``, ``rebalance-after``, ``pulsar-admin`` stay whole on one line: Click's
    wrapper broke at hyphens, leaving ``--dry-`` at a line's end (lbctl.cli.helptext)."""
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)})
    assert res.exit_code == 0, res.output
    cut = [line for line in res.stdout.splitlines() if re.search(r"\w-$", line)]
    assert not cut, f"{len(cut)} line(s) end inside a hyphenated word: {cut[0]!r}"


def _said(cmd: click.Command) -> str:
    texts = [cmd.help or "", cmd.epilog or ""]
    texts += [getattr(p, "help", None) or "" for p in cmd.params]
    return " ".join(texts)


@pytest.mark.parametrize("path", _paths(), ids=lambda p: " ".join(p) or "lbctl")
def test_help_keeps_every_setting_name_whole(path: list[str]) -> None:
    """A camelCase name the help mentions (a Pulsar setting, a class) is on one line: one
    longer than the option column was cut mid-word ('loadBalancerBrokerT' /
    'hresholdShedderPercentage')."""
    cmd: click.Command = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    names = set(re.findall(r"\b[a-z]+(?:[A-Z][a-z0-9]+){2,}\b", _said(cmd)))
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)})
    assert res.exit_code == 0, res.output
    cut = sorted(n for n in names if n not in res.stdout)
    assert not cut, f"cut across lines: {cut}"
