"""Directories made and written in by descriptor (hostile16), the rest of hostile15's race.

hostile15 walked every open by descriptor in ``lbctl.safe.files``, but ``private_dir`` still made
its directories with ``os.makedirs`` by path, and the fleet manifest, the Prometheus history and
``fleet ingest``'s temporary history were still made with ``tempfile.mkstemp`` and renamed or
removed by path. A directory anyone can write, swapped for a link between the check and the
write, sent them into the link's target.

The swap is made deterministic as in test_hostile_links_race.py: the first call that looks up a
path through the victim directory (``open``, ``lstat``, ``stat`` or ``mkdir``) renames it away and
puts a link to a "secret" directory in its place, right after that call returns. Each race test
fails on 73ac7a1 (the directories or files land in the secret one)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lbctl.errors import ConfigError, LbctlError
from lbctl.safe import files

VICTIM = "victimdir"


class Swap:
    def __init__(self, shared: Path, secret: Path) -> None:
        self.shared, self.secret, self.moved = shared, secret, shared / "moved"
        self.done = threading.Event()

    def secret_tree(self) -> list[str]:
        return sorted(str(p.relative_to(self.secret)) for p in self.secret.rglob("*"))


@pytest.fixture
def swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Swap:
    """``shared/victimdir`` (``shared`` writable by anyone, not sticky) and ``secret/`` holding
    ``out/_prometheus/keep``; the first call naming a path through ``victimdir`` swaps it for a
    link to ``secret``."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / VICTIM).mkdir()
    secret = tmp_path / "secret"
    (secret / "out" / "_prometheus").mkdir(parents=True)
    (secret / "out" / "_prometheus" / "keep").write_bytes(b"")
    s = Swap(shared, secret)

    def do_swap() -> None:
        s.done.set()
        os.rename(shared / VICTIM, s.moved)
        os.symlink(secret, shared / VICTIM)

    def hooked(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(path: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(path, *args, **kwargs)
            finally:
                if (not s.done.is_set() and isinstance(path, (str, os.PathLike))
                        and VICTIM in os.fspath(path).split("/")):
                    do_swap()
        return wrapper

    for name in ("open", "lstat", "stat", "mkdir"):
        monkeypatch.setattr(os, name, hooked(getattr(os, name)))
    return s


def test_private_dir_makes_every_directory_in_the_one_it_walked(swap: Swap) -> None:
    files.private_dir(str(swap.shared / VICTIM / "new" / "deeper"), error=ConfigError)
    assert swap.done.is_set()
    assert swap.secret_tree() == ["out", "out/_prometheus", "out/_prometheus/keep"]
    assert (swap.moved / "new" / "deeper").is_dir()
    assert (swap.moved / "new" / "deeper").stat().st_mode & 0o777 == 0o700


def test_the_fleet_manifest_is_written_in_the_directory_walked(swap: Swap) -> None:
    from lbctl.fleet.files import MANIFEST, read_manifest, write_manifest

    write_manifest(swap.shared / VICTIM / "out", {"/in/a.json": [1, 2]})
    assert swap.done.is_set()
    assert swap.secret_tree() == ["out", "out/_prometheus", "out/_prometheus/keep"]
    assert sorted(os.listdir(swap.moved / "out")) == [MANIFEST]
    assert read_manifest(swap.moved / "out") == {"/in/a.json": [1, 2]}


def test_a_prometheus_history_never_lands_where_a_swapped_link_leads(swap: Swap) -> None:
    """The walk that checks the name and the one that writes both run by descriptor: the write
    lands in the directory walked, or (the check's walk having swapped it) the link now in a
    directory anyone can write is refused in one line; never the secret directory."""
    from lbctl.admin.prometheus import PrometheusClient
    from lbctl.errors import SnapshotError
    from lbctl.sources.prometheus import write_history
    from tests.sources.test_prometheus_output import REQ, fake

    with PrometheusClient("http://prom", transport=fake()) as c:
        try:
            write_history(c, REQ, str(swap.shared / VICTIM / "h.jsonl"))
        except SnapshotError as e:
            assert "which anyone can write" in str(e) and "\n" not in str(e)
        else:
            assert (swap.moved / "h.jsonl").stat().st_size > 0
    assert swap.done.is_set()
    assert swap.secret_tree() == ["out", "out/_prometheus", "out/_prometheus/keep"]
    assert not [n for n in os.listdir(swap.moved) if n.endswith(".tmp")]


def test_fleet_ingests_temporary_history_is_made_and_removed_in_out(
        swap: Swap, monkeypatch: pytest.MonkeyPatch) -> None:
    """``OUT/_prometheus/history-*.jsonl`` is created and removed relative to descriptors of OUT
    and OUT/_prometheus: nothing is made in, or removed from, the secret directory, and nothing
    is left in OUT; the write itself (by name, through the walk) refuses the link swapped in."""
    import lbctl.cli.prometheus as cli_prometheus
    import lbctl.cli.state as state
    import lbctl.sources.prometheus.source as source_mod
    from lbctl.cli.fleet import history_inputs

    seen: dict[str, Any] = {}

    class FakeRange:
        def write(self, path: str, step: Any) -> str:
            seen["secret"] = swap.secret_tree()
            # as the real writer does (tested above): walked by descriptor, so the link now in
            # place is refused
            files.atomic_write(path, b"{}\n", error=LbctlError)
            return "report"

    class Chosen:
        source = FakeRange()

    monkeypatch.setattr(source_mod, "PrometheusRange", FakeRange)
    monkeypatch.setattr(state, "choose", lambda ctx, given: Chosen())
    monkeypatch.setattr(cli_prometheus, "warn_report", lambda report: None)
    out = swap.shared / VICTIM / "out"
    with pytest.raises(LbctlError) as e, history_inputs(None, None, out):  # type: ignore[arg-type]
        pass
    assert "which anyone can write" in str(e.value)
    assert swap.done.is_set()
    assert seen["secret"] == ["out", "out/_prometheus", "out/_prometheus/keep"]
    assert swap.secret_tree() == ["out", "out/_prometheus", "out/_prometheus/keep"]
    assert os.listdir(swap.moved / "out") == []  # the file and its folder removed


# --- a held directory (--out, --history, examples --copy) ----------------------------------
@pytest.fixture
def held_then_swapped(tmp_path: Path) -> Iterator[tuple[files.HeldDir, Path, Path]]:
    """``d`` held open, then renamed to ``d2`` and replaced by a link to ``secret``."""
    (tmp_path / "d").mkdir()
    (tmp_path / "secret").mkdir()
    held = files.open_dir(str(tmp_path / "d"), error=ConfigError)
    os.rename(tmp_path / "d", tmp_path / "d2")
    (tmp_path / "d").symlink_to(tmp_path / "secret", target_is_directory=True)
    with held:
        yield held, tmp_path / "d2", tmp_path / "secret"


def test_writes_at_a_held_directory_go_to_the_one_checked(
        held_then_swapped: tuple[files.HeldDir, Path, Path]) -> None:
    held, real, secret = held_then_swapped
    files.atomic_write("plan.json", b"p", error=ConfigError, at=held)
    files.append_record("journal.jsonl", b"{}\n", gz=False, error=ConfigError, at=held)
    with files.atomic_file("h.jsonl", error=ConfigError, at=held) as fh:
        fh.write(b"{}\n")
    fd, created = files.open_private("lock", error=ConfigError, at=held)
    os.close(fd)
    with files.open_dir("sub", error=ConfigError, make=0o700, at=held):
        pass
    assert created and os.listdir(secret) == []
    assert sorted(os.listdir(real)) == ["h.jsonl", "journal.jsonl", "lock", "plan.json", "sub"]
    with pytest.raises(ConfigError) as e:
        files.open_private("plan.json", new=True, error=ConfigError, at=held)
    assert str(e.value).startswith(held.join("plan.json") + ": already exists")


def test_an_atomic_file_that_fails_leaves_the_target_and_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "h.jsonl").write_bytes(b"old\n")
    with pytest.raises(RuntimeError), files.atomic_file(str(tmp_path / "h.jsonl"),
                                                        error=ConfigError) as fh:
        fh.write(b"half")
        raise RuntimeError("cut")
    assert os.listdir(tmp_path) == ["h.jsonl"] and (tmp_path / "h.jsonl").read_bytes() == b"old\n"


@pytest.mark.parametrize("case", ["link", "missing", "file", "untrusted-middle"])
def test_open_dir_refuses_in_one_line(tmp_path: Path, case: str) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "a-file").write_bytes(b"")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "via").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "lnk").symlink_to(tmp_path / "real", target_is_directory=True)
    path = {"link": tmp_path / "lnk", "missing": tmp_path / "nope",
            "file": tmp_path / "a-file", "untrusted-middle": shared / "via" / "real"}[case]
    with pytest.raises(LbctlError) as e:
        files.open_dir(str(path), error=LbctlError)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(path) + ": ")
    assert {"link": "is a symbolic link", "missing": "no such directory",
            "file": "Not a directory", "untrusted-middle": "which anyone can write"}[case] in msg


def test_make_creates_no_directory_through_a_dangling_link(tmp_path: Path) -> None:
    """``make`` creates the path's own components, never a link's missing target (``mkdir -p``
    through a dangling link fails too)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "lnk").symlink_to("gone/x", target_is_directory=True)
    with pytest.raises(FileNotFoundError):
        files.private_dir(str(tmp_path / "a" / "lnk" / "y"), error=ConfigError)
    assert not (tmp_path / "a" / "gone").exists()


def test_no_descriptor_is_left_open(tmp_path: Path) -> None:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc")
    before = len(os.listdir("/proc/self/fd"))
    for i in range(30):
        files.private_dir(str(tmp_path / f"p{i}" / "q"), error=ConfigError)
        with files.open_dir(str(tmp_path / f"p{i}"), error=ConfigError) as held:
            with files.atomic_file("f", error=ConfigError, at=held) as fh:
                fh.write(b"x")
            with contextlib.suppress(ConfigError):
                files.open_dir("missing", error=ConfigError, at=held)
    assert len(os.listdir("/proc/self/fd")) == before


def test_examples_copy_writes_in_the_directory_it_checked(tmp_path: Path, runner: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``examples --copy DEST`` holds DEST once checked: DEST renamed and replaced (after the
    check, at the first comparison) by a link the rule would follow (yours, relative, staying in
    its directory) gets nothing; every file lands in the directory checked. On 73ac7a1 the files
    were written by path, so through the new link."""
    from lbctl.cli.app import app

    dest, moved, other = tmp_path / "dest", tmp_path / "moved", tmp_path / "other"
    dest.mkdir()
    other.mkdir()
    done = threading.Event()
    real_lstat = os.lstat

    def lstat(path: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return real_lstat(path, *args, **kwargs)  # a missing name raises: swapped all the same
        finally:
            if not done.is_set() and os.path.basename(os.fspath(path)).endswith(".json"):
                done.set()
                os.rename(dest, moved)
                os.symlink("other", dest)

    monkeypatch.setattr(os, "lstat", lstat)
    res = runner.invoke(app, ["examples", "--copy", str(dest)])
    monkeypatch.undo()
    assert done.is_set(), res.output
    assert res.exit_code == 0, res.output
    assert os.listdir(other) == []
    assert (moved / "hot-broker.json").is_file() and (moved / "extensible").is_dir()
