"""``--plot`` onto a name that is not a regular file (hostile19).

Before, a FIFO (or a socket) at the ``--plot`` name of ``simulate``, ``compare`` or
``recommend`` was replaced by the PNG or SVG (the write renames over the name) and the command
exited 0, and a directory there was said only after the whole run, as the rename's ``Is a
directory``. ``snapshot export -f`` refuses all of them before any work; now every plot does, in
one line, exit 1, and leaves the name as it was. The writer (``atomic_write``, which the plots and
most of lbctl's outputs use) refuses them too, for a name that turns into one during the run.
"""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.errors import LbctlError
from lbctl.safe.files import atomic_write

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytest.importorskip("matplotlib")

COMMANDS = {
    "simulate": ["simulate", str(EXAMPLES / "hot-broker.json"), "--cycles", "2"],
    "compare": ["compare", str(EXAMPLES / "hot-broker.json"), "--cycles", "2",
                "--strategy", "ThresholdShedder"],
    "recommend": ["recommend", str(EXAMPLES / "hot-broker.json")],
}


def _fifo(p: Path) -> str:
    os.mkfifo(p)
    return "is a FIFO (named pipe)"


def _directory(p: Path) -> str:
    p.mkdir()
    return "is a directory"


def _socket(p: Path) -> str:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(p))
    except OSError as e:  # a path too long for sun_path
        pytest.skip(f"cannot bind a socket here: {e}")
    finally:
        s.close()
    return "is a socket"


KINDS: dict[str, Callable[[Path], str]] = {"fifo": _fifo, "directory": _directory,
                                           "socket": _socket}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_a_plot_onto_something_not_a_regular_file_is_refused(
        tmp_path: Path, command: str, kind: str, suffix: str) -> None:
    target = tmp_path / f"plot{suffix}"
    words = KINDS[kind](target)
    before = os.lstat(target)
    res = CliRunner().invoke(app, [*COMMANDS[command], "--plot", str(target)])
    assert res.exit_code == 1, (res.stdout, res.stderr)
    assert res.stderr == f"lbctl: error: {target}: {words} (expected a plot file to write)\n"
    assert res.stdout == ""  # refused before the run, not after it
    after = os.lstat(target)  # left as it was: not replaced by the image
    assert (after.st_ino, stat.S_IFMT(after.st_mode)) == (before.st_ino,
                                                          stat.S_IFMT(before.st_mode))
    assert os.listdir(tmp_path) == [target.name]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_plot_onto_a_link_is_still_refused(tmp_path: Path, command: str) -> None:
    target = tmp_path / "plot.png"
    target.symlink_to(tmp_path / "elsewhere.png")
    res = CliRunner().invoke(app, [*COMMANDS[command], "--plot", str(target)])
    assert res.exit_code == 1
    assert res.stderr.startswith(f"lbctl: error: {target}: is a symbolic link")
    assert len(res.stderr.splitlines()) == 1
    assert target.is_symlink() and not (tmp_path / "elsewhere.png").exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_plot_onto_a_regular_file_replaces_it(tmp_path: Path, command: str) -> None:
    target = tmp_path / "plot.png"
    target.write_bytes(b"old")
    res = CliRunner().invoke(app, [*COMMANDS[command], "--plot", str(target)])
    assert res.exit_code == 0, res.stderr
    assert target.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_writer_refuses_what_appeared_at_the_name_during_the_run(
        tmp_path: Path, kind: str) -> None:
    """A name checked before the work can become a FIFO by the time the image is written: the
    writer itself refuses it, and writes nothing next to it."""
    target = tmp_path / "plot.png"
    words = KINDS[kind](target)
    with pytest.raises(LbctlError) as e:
        atomic_write(str(target), b"image", error=LbctlError)
    assert str(e.value) == f"{target}: {words} (expected a regular file to replace)"
    assert e.value.exit_code == 1
    assert os.listdir(tmp_path) == [target.name]
    assert not stat.S_ISREG(os.lstat(target).st_mode)


def test_the_plot_writer_refuses_a_fifo_that_appeared_after_the_check(tmp_path: Path) -> None:
    from lbctl.simulate.plot import check_plot_path, new_figure, save

    target = tmp_path / "plot.svg"
    check_plot_path(target)  # nothing there yet
    os.mkfifo(target)
    fig, _ = new_figure(1, 2)
    with pytest.raises(LbctlError, match="is a FIFO"):
        save(fig, target)
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
