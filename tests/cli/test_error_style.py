"""One error style everywhere (issue 13 item 11): click's own usage errors read like lbctl's,
``lbctl: error: <what> (try 'lbctl CMD -h')`` on one line, exit 2; help on no arguments stays."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.paths import EXAMPLES


@pytest.mark.parametrize("args, text, path", [
    (["recommend", "--bogus"], "No such option: --bogus", "lbctl recommend"),
    (["simulate", str(EXAMPLES / "hot-broker.json"), "--cycles", "x"],
     "Invalid value for '--cycles'", "lbctl simulate"),
    (["compare", str(EXAMPLES / "hot-broker.json")], "Missing option '--strategy'", "lbctl compare"),
    (["snapshot", "validate", "--nope"], "No such option: --nope", "lbctl snapshot validate"),
    (["nosuch"], "No such command 'nosuch'", "lbctl"),
    (["--request-timeout", "abc", "recommend"], "Invalid value for '--request-timeout'", "lbctl"),
])
def test_click_usage_errors_are_one_lbctl_line(args: list[str], text: str, path: str) -> None:
    res = CliRunner().invoke(app, args, prog_name="lbctl")
    assert res.exit_code == 2, res.output
    [line] = res.stderr.splitlines()
    assert line.startswith("lbctl: error: ") and text in line
    assert line.endswith(f"(try '{path} -h')")
    assert res.stdout == "" and "Usage:" not in res.stderr


def test_no_arguments_still_shows_help() -> None:
    res = CliRunner().invoke(app, [], prog_name="lbctl")
    assert "Usage: lbctl [OPTIONS] COMMAND" in res.output and "lbctl: error" not in res.output
