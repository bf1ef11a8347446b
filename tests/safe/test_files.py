"""lbctl.safe.files: no file lbctl writes is opened through a symbolic link (issue 25 item 4)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lbctl.errors import ConfigError, LbctlError
from lbctl.safe.files import append_record, atomic_write, open_private

VICTIM = b"precious\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    v = tmp_path / "victim.txt"
    v.write_bytes(VICTIM)
    return v


def test_open_private_creates_exclusively_0600(tmp_path: Path) -> None:
    fd, created = open_private(str(tmp_path / "new"), error=ConfigError)
    os.close(fd)
    assert created and stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o600
    fd, created = open_private(str(tmp_path / "new"), error=ConfigError)
    os.close(fd)
    assert not created
    with pytest.raises(ConfigError, match="already exists"):
        open_private(str(tmp_path / "new"), new=True, error=ConfigError)


@pytest.mark.parametrize("new", [False, True])
def test_open_private_never_follows_a_link(tmp_path: Path, victim: Path, new: bool) -> None:
    link = tmp_path / "link"
    link.symlink_to(victim)
    with pytest.raises(ConfigError) as e:
        open_private(str(link), new=new, error=ConfigError)
    assert "\n" not in str(e.value)
    assert victim.read_bytes() == VICTIM


def test_open_private_refuses_a_dangling_link_and_creates_nothing(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "planted")
    with pytest.raises(ConfigError, match="symbolic link"):
        open_private(str(link), error=ConfigError)
    assert not (tmp_path / "planted").exists()


def test_open_private_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ConfigError, match="FIFO"):
        open_private(str(tmp_path / "fifo"), error=ConfigError)


@pytest.mark.parametrize("gz", [False, True])
def test_an_append_never_reaches_a_links_target(tmp_path: Path, victim: Path, gz: bool) -> None:
    link = tmp_path / ("history.jsonl.gz" if gz else "journal.jsonl")
    link.symlink_to(victim)
    with pytest.raises(ConfigError, match="symbolic link"):
        append_record(str(link), b"{}\n", gz=gz, error=ConfigError)
    assert victim.read_bytes() == VICTIM and link.is_symlink()


def test_an_atomic_write_refuses_a_link_and_leaves_both_alone(tmp_path: Path, victim: Path) -> None:
    """It used to replace the link with the file: not through it, but the user's link was gone
    without a word. lbctl writes no file through a link, and says so (hostile13)."""
    link = tmp_path / "out.json"
    link.symlink_to(victim)
    with pytest.raises(ConfigError, match="is a symbolic link.*give the path it points to"):
        atomic_write(str(link), b"{}\n", error=ConfigError)
    assert victim.read_bytes() == VICTIM and link.is_symlink()


def test_the_apply_lock_never_truncates_a_links_target(tmp_path: Path, victim: Path) -> None:
    from lbctl.apply.lock import ClusterLock, lock_path

    locks = tmp_path / "locks"
    locks.mkdir()
    lock_path("c", locks).symlink_to(victim)
    with pytest.raises(ConfigError, match="symbolic link"), \
            ClusterLock("c", what="lbctl apply p.json", directory=locks):
        pass
    assert victim.read_bytes() == VICTIM


def test_the_spark_log_name_is_unpredictable_and_created_exclusively(
        tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from lbctl.fleet import session

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(session, "_LOG", [])
    (tmp_path / f"lbctl-spark-{os.getpid()}.log").symlink_to(victim)  # the old, guessable name
    log = session.log_path()
    assert log.parent == tmp_path and log.name != f"lbctl-spark-{os.getpid()}.log"
    assert log.is_file() and not log.is_symlink()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert session.log_path() == log  # one per process
    with session._stderr_to(log):
        os.write(2, b"jvm chatter\n")
    assert log.read_bytes() == b"jvm chatter\n" and victim.read_bytes() == VICTIM
    # swapped for a link after creation: refused, not followed
    log.unlink()
    log.symlink_to(victim)
    with pytest.raises(LbctlError, match="symbolic link"), session._stderr_to(log):
        pass
    assert victim.read_bytes() == VICTIM


def test_the_fleet_manifest_temporary_is_never_followed(tmp_path: Path, victim: Path) -> None:
    from lbctl.fleet.commit import _write_durably

    target = tmp_path / "_PUBLISH.json"
    (tmp_path / "_PUBLISH.json.tmp").symlink_to(victim)
    _write_durably(target, b"{}")
    assert target.read_bytes() == b"{}" and victim.read_bytes() == VICTIM


def test_the_fleet_lock_is_never_followed(tmp_path: Path, victim: Path) -> None:
    from lbctl.errors import UsageError
    from lbctl.fleet.commit import LOCK, locked

    (tmp_path / LOCK).symlink_to(victim)
    with pytest.raises(UsageError, match="symbolic link"), locked(tmp_path, write=True):
        pass
    assert victim.read_bytes() == VICTIM


def test_a_fixed_cap_names_no_flag_that_would_not_raise_it(tmp_path: Path) -> None:
    """Only ``--max-input-size``'s cap suggests that flag: a conf or token file's fixed cap
    does not move with it."""
    from lbctl.safe.files import read_regular

    f = tmp_path / "big.conf"
    f.write_bytes(b"a" * 2048)
    with pytest.raises(ConfigError, match=r"the limit for such a file\)$") as e:
        read_regular(str(f), what="a broker.conf file", limit=1024)
    assert "--max-input-size" not in str(e.value)
