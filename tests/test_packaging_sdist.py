"""The sdist is a source tree whose tests run, and the builds are quiet (hostile15, walk16's
left-alones).

Before: the sdist held lbctl/ and the 16 ``tests/test*.py`` setuptools picks by default — no
docs/ (which the help texts point to), no tests/ subpackages, no tests/paths.py, no test data and
no ``examples`` — so nothing in it could be tested; and every build warned that the
``lbctl.examples`` folders were "absent from the packages configuration" (pyproject excluded them
from ``packages`` while shipping them as package data). Now MANIFEST.in grafts what a source tree
needs, and ``packages.find`` finds the examples' folders (as namespace packages) instead of
excluding them; the wheel's file list is unchanged.

The slow test builds with PyPA ``build`` in a throwaway venv (the registry, or pip's configured
index, provides build and setuptools>=77), unpacks the sdist and runs some of its own tests in
it with this interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what a source tree must hold besides lbctl/ (README's links, tests/paths.py, the CI script)
NEEDED = ["docs/index.md", "docs/exit-codes.md", "docs/commands/watch.md", "tests/paths.py",
          "tests/conftest.py", "tests/safe/test_files.py", "tests/data", "completions",
          "benchmarks/core_perf.py", ".ci/run", "examples/hot-broker.json", "MANIFEST.in"]


def _tracked() -> list[str]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an unpacked sdist has no git index)")
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return out.splitlines()


def test_manifest_takes_every_tracked_top_level_entry() -> None:
    """Every top-level directory git tracks is grafted (or its files included) by MANIFEST.in,
    so a new one is not silently left out of the sdist."""
    manifest = (ROOT / "MANIFEST.in").read_text().splitlines()
    grafted = {ln.split()[1] for ln in manifest if ln.startswith("graft ")}
    included = {w for ln in manifest if ln.startswith("include ") for w in ln.split()[1:]}
    tops = {p.split("/")[0] for p in _tracked() if "/" in p} | {"examples"}
    missing = sorted(t for t in tops - grafted - {"lbctl"}
                     if not any(i.startswith(t + "/") for i in included))
    assert not missing, f"MANIFEST.in leaves out {missing}"


def test_packages_configuration_finds_the_examples() -> None:
    """pyproject finds ``lbctl.examples`` instead of excluding it while shipping its files (the
    source of the build warning); the files stay package data."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    find = conf["packages"]["find"]
    assert not any(x.startswith("lbctl.examples") for x in find.get("exclude", []))
    assert find.get("namespaces", True)  # folders without __init__.py are packages too
    assert "examples/**/*" in conf["package-data"]["lbctl"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    work = tmp_path_factory.mktemp("sdist")
    venv = work / "bv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "build"], check=True, timeout=600)
    res = subprocess.run([py, "-m", "build", "-o", str(work / "dist"), str(ROOT)],
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    (sdist,) = (work / "dist").glob("lbctl-*.tar.gz")
    (wheel,) = (work / "dist").glob("lbctl-*.whl")
    return sdist, wheel, res.stdout + res.stderr


@pytest.mark.slow
def test_the_build_is_quiet_about_packages(built: tuple[Path, Path, str]) -> None:
    _, wheel, log = built
    assert "absent from the" not in log, [ln for ln in log.splitlines() if "absent" in ln][:3]
    names = zipfile.ZipFile(wheel).namelist()
    assert "lbctl/examples/extensible/skewed.json" in names and "lbctl/py.typed" in names
    assert not any(n.startswith(("tests/", "docs/")) for n in names)


@pytest.mark.slow
def test_the_sdist_is_a_source_tree_whose_tests_run(built: tuple[Path, Path, str],
                                                    tmp_path: Path) -> None:
    sdist, _, _ = built
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    (tree,) = tmp_path.glob("lbctl-*")
    for name in NEEDED:
        assert (tree / name).exists(), f"the sdist lacks {name}"
    docs = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))
    assert all((tree / d).is_file() for d in docs)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                          "tests/safe", "tests/test_packaging_checkout.py",
                          "tests/cli/test_recommend.py", "tests/cli/test_explain.py"],
                         cwd=tree, env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:]
    assert " passed" in res.stdout


def test_root_help_says_where_the_docs_are_in_one_line() -> None:
    """Help texts and messages name docs/*.md pages, which an installed wheel lacks: ``lbctl
    --help`` ends with one line saying they are in the sdist, and how to fetch it."""
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    res = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "80"})
    assert res.exit_code == 0
    lines = [ln for ln in res.stdout.splitlines() if "docs/" in ln]
    assert len(lines) == 1 and "sdist" in lines[0] and "pip download" in lines[0], lines
    assert len(lines[0]) <= 80 and res.stdout.rstrip().endswith("lbctl)")
