"""The cluster lock: one holder, named to the second; released by exit, even kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lbctl.apply.lock import ClusterLock, lock_path
from lbctl.errors import Locked


def test_second_holder_is_refused_with_the_first_named(tmp_path: Path) -> None:
    with ClusterLock("c1", what="lbctl apply plan.json", journal="/j", directory=tmp_path):
        with pytest.raises(Locked) as e, ClusterLock("c1", what="x", directory=tmp_path):
            pass
        msg = str(e.value)
        assert f"pid {os.getpid()}" in msg and "lbctl apply plan.json" in msg and "/j" in msg
        with ClusterLock("c2", what="x", directory=tmp_path):  # another cluster: its own lock
            pass
    with ClusterLock("c1", what="again", directory=tmp_path):
        pass
    assert oct(lock_path("c1", tmp_path).stat().st_mode & 0o777) == "0o600"


def test_lock_names_are_safe(tmp_path: Path) -> None:
    assert lock_path("../../etc/x", tmp_path).parent == tmp_path


def test_kill_9_releases_the_lock(tmp_path: Path) -> None:
    code = ("import sys, time; from pathlib import Path; from lbctl.apply.lock import ClusterLock\n"
            f"l = ClusterLock('c', what='holder', directory=Path({str(tmp_path)!r})); "
            "l.__enter__(); print('held', flush=True); time.sleep(60)")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == b"held"
        with pytest.raises(Locked, match=f"pid {p.pid}"), \
                ClusterLock("c", what="x", directory=tmp_path):
            pass
        p.send_signal(signal.SIGKILL)
        p.wait(10)
        time.sleep(0.05)
        with ClusterLock("c", what="x", directory=tmp_path):
            pass
    finally:
        if p.poll() is None:
            p.kill()
        if p.stdout is not None:
            p.stdout.close()
