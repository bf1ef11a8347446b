"""A core install (``pip install lbctl``, no extras): every command that needs an extra says so in
one line, with the exact pip command, before it does any work — never ``internal error: No module
named 'numpy'`` after reading the snapshot (lbctl propose did, on a fresh core install).

The extras' modules are made unimportable here (``sys.modules[name] = None``, which makes both
``import`` and :func:`importlib.util.find_spec` fail as on a machine without them). Also: the
getting-started page's table of extras is pyproject's, and every install hint lbctl prints names an
extra that pyproject declares.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.cli.examples import examples_dir

ROOT = Path(__file__).resolve().parents[0].parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
HOT = str(examples_dir() / "hot-broker.json")
PLANNER_HINT = "pip install 'lbctl[propose]'"


def _without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for m in modules:
        for loaded in [k for k in sys.modules if k == m or k.startswith(m + ".")]:
            monkeypatch.delitem(sys.modules, loaded)
        monkeypatch.setitem(sys.modules, m, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("args", [
    ["propose", HOT],
    ["propose", HOT, "--solver", "greedy", "-o", "json"],
    ["simulate", HOT, "--strategy", "lbctl", "--cycles", "2"],
    ["compare", HOT, "--strategy", "ThresholdShedder", "--strategy", " LBCTL", "--cycles", "2"],
], ids=["propose", "propose-json", "simulate-lbctl", "compare-lbctl"])
def test_the_planner_without_numpy_says_the_extra(args: list[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "numpy", "scipy")
    res = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert res.exit_code == 2, res.stderr + res.stdout
    assert res.stdout == ""  # nothing half-written
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and PLANNER_HINT in lines[0] and "numpy" in lines[0], res.stderr


def test_the_extra_is_said_before_any_work(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    """A snapshot that does not exist is not even looked at: the missing extra comes first."""
    _without(monkeypatch, "numpy")
    res = CliRunner().invoke(app, ["propose", str(tmp_path / "nowhere.json")])
    assert res.exit_code == 2 and PLANNER_HINT in res.stderr and "nowhere" not in res.stderr


def test_watch_heal_without_numpy_says_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    _without(monkeypatch, "numpy")
    res = CliRunner().invoke(app, ["--admin-url", "http://127.0.0.1:9", "watch", "--history",
                                   str(tmp_path / "h"), "--heal", "out-of-band=approve",
                                   "--count", "1"])
    assert res.exit_code == 2, res.stderr
    assert res.stderr.count("\n") == 1 and PLANNER_HINT in res.stderr


def test_pulsars_strategies_need_no_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guard: only lbctl's planner needs numpy; Pulsar's strategies run on a core install."""
    _without(monkeypatch, "numpy", "scipy")
    res = CliRunner().invoke(app, ["compare", HOT, "--strategy", "ThresholdShedder",
                                   "--strategy", "AvgShedder:AvgShedder", "--cycles", "2"],
                             env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.stderr


@pytest.mark.parametrize("sub", [["report"], ["whatif"]])
def test_fleet_says_the_extra_before_the_data(sub: list[str], monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    """Without pyspark, ``fleet report DIR`` said "no snapshots table; run ingest first", and
    ingest then said the extra: the newcomer learnt it second."""
    _without(monkeypatch, "pyspark")
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    res = CliRunner().invoke(app, ["fleet", *sub, str(tmp_path / "none")])
    assert res.exit_code == 2, res.stderr
    assert "pip install 'lbctl[fleet]'" in res.stderr and "snapshots table" not in res.stderr


def test_the_check_imports_nothing() -> None:
    """The check locates numpy without importing it: a core command's start-up is unchanged."""
    code = ("import sys\nfrom lbctl.cli.extras import require_planner\nrequire_planner('x')\n"
            "print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def _table_of_extras() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "getting-started.md").read_text()
    rows = re.findall(r"^\| `lbctl\[(\w+)\]` \|.*\| ([^|]+) \|$", text, re.M)
    return {extra: {x.strip() for x in adds.split(",")} for extra, adds in rows}


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].strip().lower() for r in requirements}


def test_getting_started_lists_each_extra_as_pyproject_declares_it() -> None:
    table = _table_of_extras()
    assert table, "the extras table of docs/getting-started.md was not found"
    for extra, adds in table.items():
        assert extra in EXTRAS, f"getting-started names lbctl[{extra}], pyproject has none"
        assert adds == _names(EXTRAS[extra]), (extra, adds, EXTRAS[extra])
    user_facing = set(EXTRAS) - {"test", "spark"}  # spark: fleet's older name, said in fleet's row
    assert user_facing <= set(table), user_facing - set(table)


def test_every_install_hint_names_a_declared_extra() -> None:
    hints = set()
    for f in (ROOT / "lbctl").rglob("*.py"):
        hints |= set(re.findall(r"pip install '?lbctl\[(\w+)\]", f.read_text()))
    assert hints and hints <= set(EXTRAS), hints - set(EXTRAS)


def test_the_planner_extra_brings_numpy() -> None:
    """lbctl's planner imports numpy itself: the propose extra declares it, not only scipy's
    dependency on it."""
    assert "numpy" in _names(EXTRAS["propose"])
    core = _names(PYPROJECT["project"]["dependencies"])
    assert not core & {"numpy", "scipy", "pandas", "pyspark", "matplotlib", "pyarrow"}


def test_the_package_is_marked_typed() -> None:
    """PEP 561: lbctl's types are checked (mypy strict); py.typed ships them to users."""
    assert (ROOT / "lbctl" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["lbctl"]


@pytest.mark.parametrize("args", [
    ["recommend", "--plot", "x.png"],  # no snapshot: the live cluster was asked first
    ["simulate", HOT, "--cycles", "3", "--plot", "x.png"],
    ["compare", HOT, "--strategy", "ThresholdShedder", "--cycles", "3", "--plot", "x.svg"],
], ids=["recommend-live", "simulate", "compare"])
def test_plot_without_matplotlib_is_said_first(args: list[str], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``--plot`` without the plot extra: one line before the cluster is asked or the cycles run
    (recommend with no snapshot said "cannot connect" instead; simulate ran every cycle)."""
    _without(monkeypatch, "matplotlib")
    monkeypatch.chdir(tmp_path)
    calls: list[str] = []
    import lbctl.cli.state as state

    real = state.choose
    monkeypatch.setattr(state, "choose", lambda *a, **k: calls.append("read") or real(*a, **k))
    res = CliRunner().invoke(app, ["--admin-url", "http://127.0.0.1:9", *args])
    assert res.exit_code == 2, res.stderr
    assert res.stderr == "lbctl: error: --plot needs matplotlib: pip install 'lbctl[plot]'\n"
    assert calls == [] and res.stdout == "" and not list(tmp_path.iterdir())
