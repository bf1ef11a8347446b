"""`lbctl examples`: the examples ship inside the package and can be listed and copied out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lbctl.cli.app import app
from lbctl.cli.examples import examples_dir
from tests.paths import EXAMPLES


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if "__pycache__" not in p.parts)


def same_examples(shipped: Path) -> None:
    """``shipped`` (the package's examples) is the checkout's ``examples``: the same directory
    where ``examples`` is the checkout's link to it, the same files where it is a copy (an
    unpacked sdist holds the link's target copied, hostile15's MANIFEST.in)."""
    if EXAMPLES.is_symlink():
        assert shipped.resolve() == EXAMPLES.resolve()
    else:
        assert _tree(shipped) == _tree(EXAMPLES)
        assert all((shipped / f).read_bytes() == (EXAMPLES / f).read_bytes()
                   for f in _tree(EXAMPLES) if (EXAMPLES / f).is_file())


def test_the_package_holds_the_examples() -> None:
    same_examples(examples_dir())
    assert (examples_dir() / "hot-broker.json").is_file()


def test_a_copy_is_compared_by_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As in an unpacked sdist (``examples`` a copy, not the link): the same files pass, one file
    missing or changed fails (the check can fail)."""
    import shutil

    import tests.cli.test_examples as me

    copy = tmp_path / "examples"
    shutil.copytree(examples_dir(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(me, "EXAMPLES", copy)
    same_examples(examples_dir())
    (copy / "hot-broker.json").write_bytes(b"{}")
    with pytest.raises(AssertionError):
        same_examples(examples_dir())
    (copy / "hot-broker.json").unlink()
    with pytest.raises(AssertionError):
        same_examples(examples_dir())


def test_list(runner) -> None:
    res = runner.invoke(app, ["examples", "-o", "json"])
    assert res.exit_code == 0, res.output
    files = {f["file"]: f for f in json.loads(res.stdout)["files"]}
    assert files["hot-broker.json"]["brokers"] == 5
    assert files["two-brokers-90-10.jsonl"]["kind"] == "sequence"
    assert files["extensible/skewed.json"]["loadManager"] == "extensible"
    assert not any(f.startswith("fleet/") for f in files)


def test_copy_then_run_as_the_readme_does(runner, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["examples", "--copy", "examples"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "examples" / "fleet").is_dir()
    res = runner.invoke(app, ["recommend", "examples/hot-broker.json", "-o", "json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["summary"]["unloads"] == 5
    assert runner.invoke(app, ["examples", "--copy", "examples"]).exit_code == 0  # same files
    (tmp_path / "examples" / "balanced.json").write_text("{}")
    res = runner.invoke(app, ["examples", "--copy", "examples"])
    assert res.exit_code == 1 and "differs" in res.stderr


def test_path(runner) -> None:
    res = runner.invoke(app, ["examples", "--path"])
    assert res.exit_code == 0, res.output
    same_examples(Path(res.stdout.strip()))


@pytest.mark.parametrize("plant", ["fifo", "dangling-link", "link"])
def test_copy_neither_blocks_on_nor_writes_through_what_is_planted(runner, tmp_path: Path,
                                                                    plant: str) -> None:
    """A FIFO named like an example blocked the comparison forever; a dangling symbolic link had
    the copy written wherever it pointed."""
    import os

    dest, victim = tmp_path / "dest", tmp_path / "victim"
    dest.mkdir()
    if plant == "fifo":
        os.mkfifo(dest / "balanced.json")
    else:
        if plant == "link":
            victim.write_text("mine")
        (dest / "balanced.json").symlink_to(victim)
    res = runner.invoke(app, ["examples", "--copy", str(dest)])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1, res.output
    assert "balanced.json" in res.stderr
    assert not victim.exists() if plant == "dangling-link" else True
    assert victim.read_text() == "mine" if plant == "link" else True
    assert sorted(p.name for p in dest.iterdir()) == ["balanced.json"]  # nothing copied


def test_conflicting_or_impossible_copies_are_one_line(runner, tmp_path: Path) -> None:
    """``--path --copy DIR`` printed the path and copied nothing, silently; ``--copy FILE`` said
    ``FILE: File exists``."""
    dest = tmp_path / "dest"
    res = runner.invoke(app, ["examples", "--path", "--copy", str(dest)])
    assert res.exit_code == 2 and res.stdout == "" and not dest.exists()
    assert res.stderr == "lbctl: error: give --path or --copy, not both\n"
    (a_file := tmp_path / "a-file").write_text("")
    res = runner.invoke(app, ["examples", "--copy", str(a_file)])
    assert res.exit_code == 1 and res.stderr == f"lbctl: error: {a_file}: not a directory; nothing was copied\n"
