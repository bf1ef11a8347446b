"""README's "Try it", run in a checkout: ``lbctl examples --copy examples`` where ``examples`` is
the repository's link to ``lbctl/examples``. lbctl writes nothing through a link, and the
command README gives first stopped there with exit 1 ("is a symbolic link"); the link is the
bundled examples themselves, so there is nothing to copy and the command succeeds (still without
writing through it). A link anywhere else is still refused.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.cli.examples import examples_dir

ROOT = Path(__file__).resolve().parents[1]


def test_the_checkout_has_the_link_readme_meets() -> None:
    """What the next test stands for: the repository's ``examples`` is a link to the package's.
    An unpacked sdist (MANIFEST.in's ``graft examples``) holds a copy of the same files instead."""
    link = ROOT / "examples"
    if (ROOT / "PKG-INFO").is_file():
        names = sorted(str(p.relative_to(link)) for p in link.rglob("*") if p.is_file())
        assert names == sorted(str(p.relative_to(examples_dir())) for p in
                               examples_dir().rglob("*") if p.is_file())
        return
    assert link.is_symlink() and link.resolve() == examples_dir().resolve()


def test_readme_copy_in_a_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the checkout itself, as README runs it: its link is relative and leads below its
    directory, the kind lbctl follows (an absolute link to the package, which this test used
    before, leads out of its directory and has been refused since the rule was tightened)."""
    if not (ROOT / "examples").is_symlink() or (ROOT / "examples").resolve() != \
            examples_dir().resolve():
        pytest.skip("not a checkout whose examples link is the imported package's (an sdist "
                    "holds a copy, and copying into it would change the tree)")
    monkeypatch.chdir(ROOT)
    before = sorted(p.name for p in examples_dir().iterdir())
    res = CliRunner().invoke(app, ["examples", "--copy", "examples"])
    assert res.exit_code == 0, res.stderr
    assert "nothing to copy" in res.stderr and res.stderr.count("\n") == 1
    assert sorted(p.name for p in examples_dir().iterdir()) == before
    res = CliRunner().invoke(app, ["recommend", "examples/hot-broker.json", "-o", "json"])
    assert res.exit_code == 0, res.stderr


def test_the_examples_directory_given_by_path(tmp_path: Path) -> None:
    """``--copy "$(lbctl examples --path)"``: the directory itself, nothing to copy."""
    res = CliRunner().invoke(app, ["examples", "--copy", str(examples_dir())])
    assert res.exit_code == 0 and "nothing to copy" in res.stderr


def test_a_link_elsewhere_is_still_refused(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["examples", "--copy", "examples"])
    assert res.exit_code == 1 and "symbolic link" in res.stderr
    assert not any((tmp_path / "real").iterdir())
