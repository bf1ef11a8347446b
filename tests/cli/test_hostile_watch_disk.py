"""``watch`` whose history the disk refuses (hostile18).

With ``--count`` and no capture succeeding, ``watch`` printed ``warning: capture failed: <why>``
and then ``error: no capture succeeded …: <why>``: the same reason twice. The last attempt's
warning is now left to the error line, so one attempt is one line; earlier attempts still warn.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import TestCluster, hot_cluster
from tests.tmpfs import refusing_tmpfs


@pytest.fixture(scope="module")
def cluster() -> Iterator[TestCluster]:
    c = hot_cluster(3)
    yield c
    c.stop()


@pytest.fixture(params=["full", "read-only"])
def refusing(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    kind = str(request.param)
    with refusing_tmpfs(tmp_path / "mnt", kind) as mnt:
        yield mnt, ("No space left on device" if kind == "full" else "Read-only file system")


def _watch(cluster: TestCluster, history: Path, count: int) -> tuple[int, list[str]]:
    res = CliRunner().invoke(app, ["--admin-url", cluster.admin_url, "--request-timeout", "5",
                                   "watch", "--history", str(history), "--count", str(count),
                                   "--interval", "1", "--listen", ""])
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr, res.stderr
    return res.exit_code, [ln for ln in res.stderr.splitlines() if ln.strip()]


def test_one_attempt_refused_by_the_disk_is_one_line(cluster: TestCluster,
                                                     refusing: tuple[Path, str]) -> None:
    mnt, reason = refusing
    code, lines = _watch(cluster, mnt / "h", 1)
    assert code == 1
    assert len(lines) == 1, lines
    assert lines[0].startswith("lbctl: error: ") and reason in lines[0], lines


def test_earlier_attempts_still_warn(cluster: TestCluster, refusing: tuple[Path, str]) -> None:
    mnt, reason = refusing
    code, lines = _watch(cluster, mnt / "h", 2)
    assert code == 1
    # a read-only disk refuses the history directory before the first capture: one line
    kinds = ["warning", "error"] if reason.startswith("No space") else ["error"]
    assert [ln.split(":")[1].strip() for ln in lines] == kinds, lines
    assert all(reason in ln for ln in lines), lines
