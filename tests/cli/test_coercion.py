"""lbctl's parameter coercion (:mod:`lbctl.cli.coercion`) gives what Typer's own gives — the same
value, or the same error — for every parameter of every command, on plain and odd values alike;
and a command given only plain values imports no pydantic."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer._coercion import build_runtime_param
from typer.core import _TyperParameter

from lbctl.cli.app import app
from lbctl.cli.coercion import _DirectParam
from tests.paths import EXAMPLES

VALUES: list[Any] = [
    "", " ", "abc", "5", "-3", "0", "007", "1.5", "-0.25", "1e3", " 5", "5 ", "+5", "1_000",
    "99999999999999999999", "nan", "-", "true", "no", "JSON", "json", "table", "yaml",
    str(EXAMPLES / "hot-broker.json"), "/nonexistent/file.json", str(EXAMPLES), 5, 2.5, True,
    Path("x.json"), ("a", "b"), ["5", "x"],
]


def parameters() -> list[tuple[str, _TyperParameter]]:
    root = typer.main.get_command(app)
    out: list[tuple[str, _TyperParameter]] = []

    def walk(group: Any, prefix: str) -> None:
        for name, cmd in getattr(group, "commands", {}).items():
            for p in cmd.params:
                if isinstance(p, _TyperParameter):
                    out.append((f"{prefix}{name} {p.name}", p))
            walk(cmd, f"{prefix}{name} ")

    walk(root, "")
    return out


def outcome(runtime: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        got = runtime.coerce(value, param=param, ctx=ctx)
        return "ok", (type(got).__name__, repr(got))  # repr: nan equals nan
    except Exception as e:  # the error, by type and message
        return type(e).__name__, str(e)


@pytest.mark.parametrize(("where", "param"), parameters(), ids=lambda x: x if isinstance(x, str)
                         else "")
def test_same_outcome_as_typers_coercion(where: str, param: _TyperParameter) -> None:
    ctx = typer.Context(typer.main.get_command(app))
    ours = _DirectParam(param.type_descriptor)
    theirs = build_runtime_param(param.type_descriptor)
    for value in [None, *VALUES]:
        assert outcome(ours, value, param, ctx) == outcome(theirs, value, param, ctx), (
            where, value)


def test_recommend_on_a_small_snapshot_imports_no_pydantic() -> None:
    code = ("import sys\nfrom lbctl.cli.app import main\nsys.argv = ['lbctl', 'recommend', '-o', "
            f"'json', {str(EXAMPLES / 'hot-broker.json')!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('MODULES:' + ','.join(m for m in ('pydantic', 'yaml', 'tabulate', "
            "'lbctl.loadmanager.extensible') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "MODULES:"
