"""Resources running out, and signals (hostile17).

* **The output into a full disk** (``> /dev/full``, a quota, ``ulimit -f``): the write's
  ``OSError`` names no file, so it was ``internal error: OSError: [Errno 28] No space left on
  device``; now ``cannot write the output: No space left on device``, exit 1.
* **A directory lbctl makes, refused by the system** (a read-only file system, a file in the
  way): the walk of :func:`lbctl.safe.files.open_parent` opens and makes each component relative
  to its parent's descriptor, so the system named the bare component (``lbctl: error: h:
  Read-only file system``); the error now names the path.
* **Every writer on a full and on a read-only file system** (small tmpfs mounts; root only): one
  line naming the file, a non-zero exit, nothing left behind, an existing sequence or journal
  unchanged.
* **SIGTERM** during a command without a handler of its own (``snapshot export``, ``unload``):
  the default action killed it silently (exit -15) wherever it was; it is now raised where
  Ctrl-C's ``KeyboardInterrupt`` is, so the same clean-ups run (an unload in flight is journaled
  ``interrupted``), and it ends with one line, exit 130. A rerun appends exactly one record.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import Fault, TestCluster, hot_cluster
from tests.paths import EXAMPLES
from tests.tmpfs import fill, make_read_only, tmpfs

ROOT = Path(__file__).resolve().parents[2]
CLOSED = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULSAR_", "LBCTL_"))}
    env["PYTHONPATH"] = str(ROOT)
    env["LBCTL_JOURNAL"] = str(tmp_path / "state" / "journal.jsonl")
    env.update(extra)
    return env


def _lbctl(*args: str) -> list[str]:
    return [sys.executable, "-m", "lbctl", *args]


def _one_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("lbctl: error:")]
    assert len(errors) == 1, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr
    return errors[0]


# -- the output into a full disk -----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [
    ["recommend", str(EXAMPLES / "hot-broker.json")],
    ["explain", str(EXAMPLES / "hot-broker.json"), "-o", "json"],
    ["examples"],
    ["journal"],
], ids=lambda a: a[0])
def test_the_output_into_a_full_disk_is_one_line(tmp_path: Path, args: list[str]) -> None:
    journal = tmp_path / "state" / "journal.jsonl"
    journal.parent.mkdir()
    journal.write_text(json.dumps({"time": "2026-01-01T00:00:00Z", "run": "r", "state": "done",
                                   "action": "unload a/b/0x0_0x1", "method": "PUT",
                                   "url": "http://h:1/x"}) + "\n")
    with open("/dev/full", "w") as full:
        p = subprocess.run(_lbctl(*args), env=_env(tmp_path), stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    assert p.returncode == 1, p.stderr
    assert _one_line(p.stderr) == "lbctl: error: cannot write the output: No space left on device"


def test_a_write_error_naming_no_file_is_not_an_internal_error(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import errno

    from lbctl.cli.failures import exit_status

    for code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        assert exit_status(OSError(code, os.strerror(code))) == 1
        assert capsys.readouterr().err == f"lbctl: error: cannot write the output: {os.strerror(code)}\n"
    assert exit_status(OSError(errno.EPERM, "x")) == 1  # anything else: still an internal error
    assert "internal error" in capsys.readouterr().err


# -- a directory the system refuses to make: the message names it -------------------------------


def test_a_component_refused_is_named_by_its_path(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from lbctl.safe.files import private_dir

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "afile").write_text("x")
    monkeypatch.chdir(tmp_path)
    for given in ("sub/afile/h/deeper", str(tmp_path / "sub" / "afile" / "h")):
        with pytest.raises(NotADirectoryError) as e:
            private_dir(given)
        assert e.value.filename == str(tmp_path / "sub" / "afile")


def test_watch_names_the_history_directory_it_cannot_make(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "afile").write_text("x")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["--admin-url", CLOSED, "watch", "--history", "afile/h",
                                   "--count", "1", "--listen", ""])
    assert res.exit_code == 1, res.stderr
    assert _one_line(res.stderr) == f"lbctl: error: {tmp_path / 'afile'}: Not a directory"


# -- every writer on a full and on a read-only file system (root: tmpfs mounts) ------------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[TestCluster]:
    c = hot_cluster(3)
    yield c
    c.stop()


@pytest.fixture(params=["full", "read-only"])
def refusing(request: Any, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A directory on a tmpfs with no room left, or mounted read-only; each holds ``seq.jsonl``
    and ``journal.jsonl`` of one line already."""
    kind = request.param
    with tmpfs(tmp_path / "mnt") as mnt:
        for name in ("seq.jsonl", "journal.jsonl"):
            (mnt / name).write_text('{"first": 1}\n')
        if kind == "full":
            fill(mnt)
        else:
            make_read_only(mnt)
        yield kind, mnt


def _listing(d: Path) -> list[str]:
    return sorted(os.listdir(d))


@pytest.mark.slow
def test_every_writer_refused_by_the_disk_is_one_line(cluster: TestCluster, tmp_path: Path,
                                                      refusing: tuple[str, Path]) -> None:
    kind, mnt = refusing
    before = _listing(mnt)
    reason = "No space left on device" if kind == "full" else "Read-only file system"
    rng = cluster.ranges("public/default")[0]
    # (args, environment, the path the error names, what may be left: the directory or the
    # journal asked for, as the command made it before the write was refused)
    cases: list[tuple[list[str], dict[str, str], Path, set[str]]] = [
        (["snapshot", "export", "-f", str(mnt / "s.json")], {}, mnt / "s.json", set()),
        (["snapshot", "export", "-f", str(mnt / "s.json.gz")], {}, mnt / "s.json.gz", set()),
        (["snapshot", "export", "--append", str(mnt / "seq.jsonl")], {}, mnt / "seq.jsonl",
         set()),
        (["watch", "--history", str(mnt / "h"), "--count", "1", "--listen", ""], {}, mnt / "h",
         {"h"}),
        (["examples", "--copy", str(mnt / "ex")], {}, mnt / "ex", {"ex"}),
        # (a new journal: a line may still fit in the last page of a full tmpfs's file)
        (["unload", "public/default", "-b", rng, "--yes"],
         {"LBCTL_JOURNAL": str(mnt / "new-journal.jsonl")}, mnt / "new-journal.jsonl",
         {"new-journal.jsonl"}),
    ]
    owners = dict(cluster.owners)
    for args, env, named, may_stay in cases:
        p = subprocess.run(_lbctl("--admin-url", cluster.admin_url, "--request-timeout", "5",
                                  *args),
                           env=_env(tmp_path, **env), capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        assert p.returncode != 0, (args, p.stderr)
        errors = [ln for ln in p.stderr.splitlines() if ln.startswith("lbctl: error:")]
        assert len(errors) == 1 and "internal error" not in p.stderr, (args, p.stderr)
        assert str(named) in errors[0] and reason in errors[0], (args, errors[0])
        new = set(_listing(mnt)) - set(before)
        assert new <= may_stay, (args, new)  # no temporary file left
        before = _listing(mnt)
        for name in ("seq.jsonl", "journal.jsonl"):
            assert (mnt / name).read_text() == '{"first": 1}\n'
    assert cluster.owners == owners  # the unload was not sent: its journal line could not be


# -- SIGTERM -------------------------------------------------------------------------------------


def _wait_for(cluster: TestCluster, path: str, method: str = "GET", timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cluster.requests(method, path):
        assert time.monotonic() < deadline, f"{method} {path} never asked"
        time.sleep(0.05)


@pytest.mark.slow
def test_sigterm_during_a_capture_appends_nothing_and_a_rerun_appends_one(
        tmp_path: Path) -> None:
    cluster = hot_cluster(3)
    try:
        seq = tmp_path / "out" / "seq.jsonl"
        seq.parent.mkdir()
        seq.write_text('{"first": 1}\n')
        cluster.faults.append(Fault(r"/partitioned$", kind="hang", seconds=60, times=1))
        args = _lbctl("--admin-url", cluster.admin_url, "--request-timeout", "120",
                      "snapshot", "export", "--append", str(seq))
        p = subprocess.Popen(args, env=_env(tmp_path), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        try:
            _wait_for(cluster, "partitioned")
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert p.returncode == 130, (p.returncode, err)
        assert _one_line(err) == "lbctl: error: terminated (SIGTERM)"
        assert seq.read_text() == '{"first": 1}\n'
        assert _listing(seq.parent) == ["seq.jsonl"]
        cluster.faults.clear()
        again = subprocess.run(args, env=_env(tmp_path), capture_output=True, text=True,
                               timeout=120, stdin=subprocess.DEVNULL)
        assert again.returncode == 0, again.stderr
        lines = seq.read_text().splitlines()
        assert len(lines) == 2 and lines[0] == '{"first": 1}'
        json.loads(lines[1])
    finally:
        cluster.stop()


@pytest.mark.slow
def test_sigterm_during_an_unload_journals_it_interrupted(tmp_path: Path) -> None:
    cluster = hot_cluster(3)
    try:
        rng = cluster.ranges("public/default")[0]
        cluster.faults.append(Fault(r"/unload$", kind="hang", seconds=60, method="PUT",
                                    times=1))
        journal = tmp_path / "state" / "journal.jsonl"
        p = subprocess.Popen(_lbctl("--admin-url", cluster.admin_url, "--request-timeout",
                                    "120", "unload", "public/default", "-b", rng, "--yes"),
                             env=_env(tmp_path), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        try:
            _wait_for(cluster, "unload", "PUT")
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert p.returncode == 130, (p.returncode, err)
        line = _one_line(err)
        assert "interrupted while sending" in line and "may have been applied" in line
        states = [json.loads(ln)["state"] for ln in journal.read_text().splitlines()]
        assert states[-1] == "interrupted", states
    finally:
        cluster.stop()


def test_sigterm_is_put_back_after_a_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process (the tests' runner): the handler is installed for the command only."""
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    seen: list[Any] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(signal.getsignal(signal.SIGTERM))
        raise SystemExit(0)

    monkeypatch.setattr("lbctl.cli.examples.examples_dir", spy)
    CliRunner().invoke(app, ["examples"])
    assert seen and seen[0] is not signal.SIG_DFL
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
