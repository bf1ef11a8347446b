"""Every output option on a FIFO (hostile18): one line, a non-zero exit, never a wait.

Each command runs in a subprocess bounded by a timeout, so a regression that opens the FIFO and
waits for a reader fails instead of hanging the suite. Two of them waited before hostile18:
``fleet ingest`` (and ``report``, ``whatif``) with a FIFO as ``OUT/_lbctl_fleet.json`` read the
manifest by name; ``fleet ingest --out FIFO`` said only ``File exists``. The others are guards.
(The full and read-only disks are tests/cli/test_hostile_resources.py's,
test_hostile_watch_disk.py's and tests/fleet/test_fleet_hostile.py's.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
CLOSED = ["--admin-url", "http://127.0.0.1:9", "--request-timeout", "2"]

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULSAR_", "LBCTL_"))}
    env.update(PYTHONPATH=str(ROOT), LBCTL_JOURNAL=str(tmp_path / "state" / "journal.jsonl"),
               LBCTL_SPARK_CLASS_CACHE="off")
    try:
        return subprocess.run([sys.executable, "-m", "lbctl", *args], env=env, text=True,
                              capture_output=True, timeout=90, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"lbctl {' '.join(args)}: still waiting after 90 s (on the FIFO?)")


def _one_error(p: subprocess.CompletedProcess[str]) -> str:
    assert p.returncode not in (0, None), p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("lbctl: error:")]
    assert len(errors) == 1, p.stderr
    return errors[0]


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    [*CLOSED, "snapshot", "export", "-f", "{fifo}.json"],
    [*CLOSED, "snapshot", "export", "--append", "{fifo}.jsonl"],
    [*CLOSED, "snapshot", "from-prometheus", "--prometheus-url", "http://127.0.0.1:9",
     "--since", "10m", "-f", "{fifo}.jsonl"],
    [*CLOSED, "watch", "--history", "{fifo}", "--count", "1", "--listen", ""],
    ["examples", "--copy", "{fifo}"],
    [*CLOSED, "unload", "public/default", "-b", "0x0_0x1", "--yes", "--journal", "{fifo}.jsonl"],
    ["journal", "--journal", "{fifo}.jsonl"],
    ["fleet", "ingest", str(EXAMPLES / "fleet"), "--out", "{fifo}"],
], ids=["export-f", "export-append", "from-prometheus-f", "watch-history", "examples-copy",
        "unload-journal", "journal", "fleet-ingest-out"])
def test_an_output_that_is_a_fifo_is_one_line(tmp_path: Path, args: list[str]) -> None:
    fifo = tmp_path / "fifo"
    given = [a.replace("{fifo}", str(fifo)) for a in args]
    target = next(a for a in given if a.startswith(str(fifo)))
    os.mkfifo(target)
    line = _one_error(_run(tmp_path, *given))
    assert target in line and "File exists" not in line, line
    assert Path(target).exists() and not Path(target).is_file()  # left as it was


@pytest.mark.slow
def test_a_fifo_as_the_fleet_manifest_is_refused_not_waited_on(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "_lbctl_fleet.json")
    line = _one_error(_run(tmp_path, "fleet", "ingest", str(EXAMPLES / "fleet"), "--out", str(out)))
    assert str(out / "_lbctl_fleet.json") in line and "FIFO" in line, line


def test_a_link_as_the_fleet_manifest_is_refused(tmp_path: Path) -> None:
    from lbctl.errors import UsageError
    from lbctl.fleet.files import read_manifest

    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere.json").write_text('{"format": "x", "files": {}}')
    (out / "_lbctl_fleet.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(UsageError, match="is a symbolic link"):
        read_manifest(out)
