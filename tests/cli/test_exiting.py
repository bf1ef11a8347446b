"""A one-shot command over a large snapshot ends without freeing its result object by object
(``lbctl.cli.exiting``): the same output, status 0, and the ordinary exit otherwise."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from lbctl.cli import exiting
from lbctl.cli.app import main

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "hot-broker.json")


class _Exited(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


@pytest.fixture
def process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``main`` as the process runs it, with ``os._exit`` observed rather than taken."""
    def fake_exit(code: int) -> None:
        raise _Exited(code)

    monkeypatch.setattr(exiting.os, "_exit", fake_exit)
    monkeypatch.setattr(exiting, "_KEPT", [])
    monkeypatch.setattr(exiting, "_ARMED", [False])


def _run(monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[object, str]:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "argv", ["lbctl", *argv])
    try:
        main()
    except _Exited as e:
        return ("os._exit", e.code), out.getvalue()
    except SystemExit as e:
        return ("SystemExit", e.code), out.getvalue()
    return ("return", None), out.getvalue()


def test_large_result_exits_without_freeing(process: None,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    how, ordinary = _run(monkeypatch, "recommend", "-o", "json", EXAMPLE)
    assert how[0] == "SystemExit" and how[1] in (0, None)  # small: the ordinary exit
    monkeypatch.setattr(exiting, "KEEP_FROM", 1)  # the example counts as large
    how, fast = _run(monkeypatch, "recommend", "-o", "json", EXAMPLE)
    assert how == ("os._exit", 0)
    assert fast == ordinary and fast.startswith("{")
    assert exiting._KEPT  # the states and plans, alive until the end


def test_failed_command_takes_the_ordinary_exit(process: None, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exiting, "KEEP_FROM", 1)
    exiting._KEPT.append(object())  # even with something kept
    how, _ = _run(monkeypatch, "recommend", "-o", "json", str(tmp_path / "missing.json"))
    assert how[0] == "SystemExit" and how[1] not in (0, None)


def test_nothing_is_kept_unless_armed(monkeypatch: pytest.MonkeyPatch) -> None:
    """An in-process runner (a test's CliRunner) never arms: large results are freed as ever."""
    monkeypatch.setattr(exiting, "_KEPT", [])
    monkeypatch.setattr(exiting, "_ARMED", [False])
    exiting.keep_until_exit(10**9, object())
    assert exiting._KEPT == []
    exiting.arm()
    exiting.keep_until_exit(exiting.KEEP_FROM - 1, object())
    assert exiting._KEPT == []
    exiting.keep_until_exit(exiting.KEEP_FROM, "kept")
    assert exiting._KEPT == ["kept"]
