"""Every failure becomes one line and an exit code in one place (:mod:`lbctl.cli.failures`, on the
root group): under ``CliRunner`` as in the installed command, whatever a command body raises."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.errors import ExitStatus, SnapshotError, UsageError


def _raise(exc: BaseException):
    def boom() -> None:
        raise exc
    return boom


@pytest.mark.parametrize(("exc", "code", "line"), [
    (SnapshotError("snap.json: $.brokers: expected an object"), 1,
     "lbctl: error: snap.json: $.brokers: expected an object"),
    (UsageError("give a plan file"), 2, "lbctl: error: give a plan file"),
    (KeyboardInterrupt(), 130, "lbctl: error: interrupted"),
    (typer.Abort(), 130, "lbctl: error: aborted at the prompt: nothing was sent"),
    (ValueError("bad\nthing"), 1,
     "lbctl: error: internal error: ValueError: bad (set LBCTL_TRACEBACK=1 for details)"),
])
def test_a_body_that_raises_is_one_line(exc: BaseException, code: int, line: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lbctl.cli.examples.examples_dir", _raise(exc))
    res = CliRunner().invoke(app, ["examples"], env={"LBCTL_TRACEBACK": ""})
    assert res.exit_code == code
    assert res.stderr.splitlines() == [line] and res.stdout == ""


def test_a_closed_pipe_is_silent_success(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lbctl.cli.examples.examples_dir", _raise(BrokenPipeError()))
    res = CliRunner().invoke(app, ["examples"])
    assert res.exit_code == ExitStatus.SUCCESS and res.stderr == ""


def test_traceback_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lbctl.cli.examples.examples_dir", _raise(ValueError("boom")))
    res = CliRunner().invoke(app, ["examples"], env={"LBCTL_TRACEBACK": "1"})
    assert isinstance(res.exception, ValueError) and "internal error" not in res.stderr


def test_a_root_option_error_is_handled_too() -> None:
    """The root callback's own failure (a bad --max-input-size) is the same one line."""
    res = CliRunner().invoke(app, ["--max-input-size", "lots", "examples"], prog_name="lbctl")
    assert res.exit_code == ExitStatus.USAGE  # a bad flag (docs/exit-codes.md)
    assert res.stderr.splitlines() == [
        "lbctl: error: --max-input-size: expected a size like 512M or 2G, got 'lots'"]


def test_a_command_exit_code_passes_through() -> None:
    res = CliRunner().invoke(app, ["examples", "--path"])
    assert res.exit_code == 0 and res.stdout.strip()


@pytest.mark.slow
def test_fleet_run_on_its_own_handles_failures_too() -> None:
    """Under spark-submit, ``lbctl.cli.fleet`` is the program: its group handles failures."""
    code = ("from lbctl.cli.fleet import app\n"
            "app(['report', '/nonexistent/fleet-data'], prog_name='lbctl fleet')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert out.stderr.startswith("lbctl: error: ")
