"""A directory swapped for a link *during* a run (hostile15): the middle-link rule of
``lbctl.safe.files`` (hostile14) was checked up front with ``lstat`` and the file then opened by
its path, so a directory in a place anyone can write, replaced by a link between the check and
the open, sent the read (or the write) wherever the link led.

Now every open walks the directories by descriptor (``open_parent``) and opens, creates and
renames relative to the last one, so a swap after the walk has reached a directory changes
nothing. The swap is made deterministic here: the first time the victim directory is looked up
(by ``lstat`` in the up-front check, or by ``open`` in the walk) it is renamed away and a link to
a "secret" directory put in its place, right after the lookup returns, as a racing process could.
Each test fails on the up-front check (the read returns the secret; the write lands in it)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lbctl.errors import ConfigError
from lbctl.safe import files

VICTIM = "victimdir"


@pytest.fixture
def swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """``shared/victimdir`` (``shared`` writable by anyone, not sticky) holding ``data.json``, and
    ``secret/`` holding a file of the same name; the first lookup of ``victimdir`` swaps it for a
    link to ``secret``."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / VICTIM).mkdir()
    (shared / VICTIM / "data.json").write_bytes(b'{"real": true}\n')
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "data.json").write_bytes(b'{"secret": true}\n')
    real_open, real_lstat = os.open, os.lstat
    done = threading.Event()

    def do_swap() -> None:
        done.set()
        os.rename(shared / VICTIM, shared / "moved")
        os.symlink(secret, shared / VICTIM)

    def hooked(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(path: Any, *args: Any, **kwargs: Any) -> Any:
            out = fn(path, *args, **kwargs)
            if not done.is_set() and os.path.basename(os.fspath(path).rstrip("/")) == VICTIM:
                do_swap()
            return out
        return wrapper

    monkeypatch.setattr(os, "open", hooked(real_open))
    monkeypatch.setattr(os, "lstat", hooked(real_lstat))
    return {"shared": shared, "secret": secret, "moved": shared / "moved", "done": done}  # type: ignore[dict-item]


def test_a_read_never_follows_a_link_swapped_in_after_the_walk(swap: dict[str, Path]) -> None:
    path = str(swap["shared"] / VICTIM / "data.json")
    data = files.read_regular(path, what="a snapshot")
    assert swap["done"].is_set()  # type: ignore[attr-defined]
    assert data == b'{"real": true}\n'


def test_a_relative_read_is_walked_the_same(swap: dict[str, Path],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(swap["shared"])
    data = files.read_regular(os.path.join(VICTIM, "data.json"), what="a snapshot")
    assert swap["done"].is_set()  # type: ignore[attr-defined]
    assert data == b'{"real": true}\n'


def test_atomic_write_renames_in_the_directory_walked(swap: dict[str, Path]) -> None:
    files.atomic_write(str(swap["shared"] / VICTIM / "out.json"), b"plan\n", error=ConfigError)
    assert swap["done"].is_set()  # type: ignore[attr-defined]
    assert sorted(os.listdir(swap["secret"])) == ["data.json"]
    assert (swap["moved"] / "out.json").read_bytes() == b"plan\n"
    assert not [n for n in os.listdir(swap["moved"]) if n.endswith(".tmp")]


def test_an_append_lands_in_the_directory_walked(swap: dict[str, Path]) -> None:
    files.append_record(str(swap["shared"] / VICTIM / "journal.jsonl"), b'{"a": 1}\n', gz=False,
                        error=ConfigError)
    assert swap["done"].is_set()  # type: ignore[attr-defined]
    assert sorted(os.listdir(swap["secret"])) == ["data.json"]
    assert (swap["moved"] / "journal.jsonl").read_bytes() == b'{"a": 1}\n'


def test_a_link_already_there_is_still_refused(tmp_path: Path) -> None:
    """The walk applies hostile14's rule itself: a link in a directory anyone can write is refused
    in one line, exit 1, naming the link (a guard: this held before too)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "s.json").write_bytes(b"{}")
    (shared / "via").symlink_to(tmp_path / "real", target_is_directory=True)
    with pytest.raises(ConfigError) as e:
        files.read_regular(str(shared / "via" / "s.json"), what="a snapshot")
    assert "which anyone can write" in str(e.value) and str(shared / "via") in str(e.value)
    assert e.value.exit_code == 1


def test_dot_dot_after_a_trusted_link_goes_up_from_where_it_led(tmp_path: Path) -> None:
    """``a/lnk/../f`` with ``lnk -> b/c`` (yours, relative, below its directory) reads ``a/b/f``,
    as the kernel resolves it (a guard for the descriptor walk's ``..``)."""
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_bytes(b"b's")
    (tmp_path / "a" / "f").write_bytes(b"a's")
    (tmp_path / "a" / "lnk").symlink_to("b/c", target_is_directory=True)
    got = files.read_regular(str(tmp_path / "a" / "lnk" / ".." / "f"), what="x")
    assert got == b"b's" == Path(tmp_path / "a" / "lnk" / ".." / "f").read_bytes()


def test_no_descriptor_is_left_open(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"x")
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    if before is None:
        pytest.skip("no /proc")
    for _ in range(50):
        files.read_regular(str(tmp_path / "d" / "f"), what="x")
        files.atomic_write(str(tmp_path / "d" / "g"), b"y", error=ConfigError)
        files.append_record(str(tmp_path / "d" / "h.jsonl"), b"{}\n", gz=False, error=ConfigError)
        with pytest.raises(ConfigError):
            files.read_regular(str(tmp_path / "d" / "missing" / "f"), what="x")
    assert len(os.listdir("/proc/self/fd")) == before
