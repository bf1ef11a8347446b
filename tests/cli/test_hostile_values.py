"""Hostile values (hostile14): flags given a value that means nothing, names that hide on the
terminal or take two columns per character.

* ``--step``/``--cluster``/``--allow-partial`` without ``--prometheus-url`` were silently ignored
  (``recommend SNAP --step nan`` answered 0), unlike ``--since`` and the rest of the group;
* ``--strategy ""``, ``--placement ""``, ``--pulsar-version ""`` (an unset shell variable) were
  taken as no flag at all;
* a broker named ``\\u200b:8080`` printed as nothing (``to:`` and then a blank);
* a CJK, emoji or combining-mark broker name pushed the rest of its table row out of its columns
  (widths counted in characters, not terminal columns).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.render.tables import render_table
from lbctl.safe.text import name_safe, terminal_safe

EXAMPLES = Path(__file__).resolve().parents[2] / "lbctl" / "examples"
SNAP = str(EXAMPLES / "hot-broker.json")
WIDE = str(Path(__file__).resolve().parents[1] / "data" / "hostile" / "wide-names.json")


@pytest.mark.parametrize("command", ["recommend", "explain", "propose", "simulate"])
@pytest.mark.parametrize(("flag", "value"), [("--step", "nan"), ("--step", "5m"),
                                             ("--cluster", ""), ("--cluster", "prod"),
                                             ("--allow-partial", None)])
def test_a_prometheus_flag_without_the_url_is_refused(runner: CliRunner, command: str, flag: str,
                                                      value: str | None) -> None:
    argv = [command, SNAP, flag] + ([] if value is None else [value])
    res = runner.invoke(app, argv)
    assert res.exit_code == 2, res.output
    assert res.stderr == f"lbctl: error: {flag} needs --prometheus-url\n"


def test_the_default_step_given_again_is_still_fine(runner: CliRunner) -> None:
    """``--step 1m`` is the default: it cannot be told from no flag, and needs no refusal."""
    assert runner.invoke(app, ["recommend", SNAP, "--step", "1m"]).exit_code == 0


@pytest.mark.parametrize("command", [["recommend", SNAP], ["explain", SNAP],
                                     ["simulate", SNAP, "--cycles", "1"], ["propose", SNAP]])
@pytest.mark.parametrize("flag", ["--strategy", "--placement", "--pulsar-version"])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_load_manager_choice_is_refused(runner: CliRunner, command: list[str],
                                                 flag: str, value: str) -> None:
    if command[0] == "propose" and flag != "--pulsar-version":
        pytest.skip("propose has no --strategy/--placement")
    res = runner.invoke(app, [*command, flag, value])
    if res.exit_code == 2 and "No such option" in res.stderr:
        pytest.skip(f"{command[0]} has no {flag}")
    assert res.exit_code == 2, res.output
    assert res.stderr == f"lbctl: error: {flag}: empty; give a value or leave the flag out\n"


@pytest.mark.parametrize("ch", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad",
                                "\u061c", "\u2028", "\u2029", "\u2063"])
def test_invisible_characters_in_a_name_are_shown_escaped(ch: str) -> None:
    shown = name_safe(f"b{ch}-2:8080")
    escape = f"\\x{ord(ch):02x}" if ord(ch) <= 0xFF else f"\\u{ord(ch):04x}"
    assert ch not in shown and escape in shown
    assert ch not in terminal_safe(f"a{ch}b")


def test_ordinary_non_ascii_names_are_left_alone() -> None:
    for name in ["bröker-東京-1", "e\u0301", "\U0001f680-4", "курс"]:
        assert name_safe(name) == name


def test_an_invisible_broker_name_is_visible_in_every_view(runner: CliRunner) -> None:
    for argv in (["recommend", WIDE], ["explain", WIDE], ["recommend", WIDE, "-o", "table"],
                 ["monitor-brokers", "--once", "--snapshot", WIDE],
                 ["simulate", WIDE, "--cycles", "2"], ["propose", WIDE]):
        res = runner.invoke(app, argv)
        assert res.exit_code == 0, (argv, res.output)
        assert "\u200b" not in res.output, argv
        assert "\\u200b" in res.output, argv


@pytest.mark.parametrize(("text", "columns"), [("abc", 3), ("東京", 4), ("e\u0301", 1),
                                               ("\U0001f680", 2), ("ｆｕｌｌ", 8), ("", 0)])
def test_display_width_counts_terminal_columns(text: str, columns: int) -> None:
    from lbctl.safe.text import display_width

    assert display_width(text) == columns
    assert _columns(text) == columns


def _columns(text: str) -> int:
    """The test's own count of terminal columns (wide: 2, combining: 0), independent of lbctl's."""
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _starts(line: str, cell: str) -> int:
    """The display column where ``cell`` begins in ``line``."""
    return _columns(line[: line.index(cell)])


def test_a_table_of_wide_names_keeps_its_columns() -> None:
    rows = [{"broker": "東京東京東京-1", "bundles": 7, "state": "ok"},
            {"broker": "b-2", "bundles": 16, "state": "overloaded"},
            {"broker": "e\u0301e\u0301e\u0301-3", "bundles": 7, "state": "ok"},
            {"broker": "\U0001f680\U0001f680-4", "bundles": 7, "state": "ok"}]
    lines = render_table(rows, limit=None).splitlines()
    body = lines[2:]
    assert len({_starts(line, "ok" if "ok" in line else "overloaded") for line in body}) == 1, lines
    ends = {_columns(line.split("  ")[0]) for line in body}
    assert max(ends) == _columns("東京東京東京-1")
    # the number column is right-aligned on one display column
    assert len({_starts(line, "7") + 1 if "16" not in line else _starts(line, "16") + 2
                for line in body}) == 1, lines
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert _columns(lines[1].split("  ")[0]) == _columns("東京東京東京-1")


def test_the_wide_names_snapshot_renders_its_brokers_table_aligned(runner: CliRunner) -> None:
    res = runner.invoke(app, ["recommend", WIDE, "-o", "table"], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    rows = [line for line in res.stdout.splitlines()
            if line.endswith(("Skip/Balanced", "Success/Overloaded"))]
    assert len(rows) == 5
    assert len({_starts(line, "%") for line in rows}) == 1, rows


def test_an_empty_journal_since_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    """``journal --since ""`` showed the whole journal, as if no --since had been given."""
    res = runner.invoke(app, ["journal", "--journal", str(tmp_path / "j.jsonl"), "--since", ""])
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("lbctl: error: --since '': expected a duration")


def test_examples_copy_shows_an_escape_in_the_directory_name_escaped(
        runner: CliRunner, tmp_path: Path) -> None:
    """``examples --copy DIR`` printed DIR raw: a name holding ``ESC ] 0;… BEL`` set the
    terminal's title (the error line was escaped already; the success line was not)."""
    dest = tmp_path / "a\x1b]0;pwned\x07\x1b[2Jb"
    res = runner.invoke(app, ["examples", "--copy", str(dest)])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.stderr and "\x07" not in res.stderr
    assert "a\\e]0;pwned\\x07\\e[2Jb" in res.stderr
    assert (dest / "hot-broker.json").is_file()


@pytest.mark.parametrize("argv", [
    ["examples", "--copy", ""],
    ["examples", "--copy="],
    ["plans", "list", "--history", ""],
    ["watch", "--history", "", "--count", "1"],
    ["journal", "--journal", ""],
])
def test_an_empty_path_option_is_refused_not_read_as_the_working_directory(
        runner, tmp_path, monkeypatch, argv: list[str]) -> None:
    """A variable that expanded to nothing (``examples --copy "$DIR"``) named the working
    directory: 49 files were copied into it, or a watcher's lock left there."""
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, argv)
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and "an empty path names no file or directory" in res.stderr
    assert list(tmp_path.iterdir()) == []
