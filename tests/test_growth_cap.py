"""benchmarks/growth.py's ``--cap`` counts the CPU of the processes a command starts (issue 30:
``propose --solver exact`` solves in forked children, and the cap read only the parent's CPU)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")

#: a parent that only waits while its forked child burns CPU (at most ``limit`` s of it)
BURNING_CHILD = """
import os, sys, time
limit = float(sys.argv[1])
pid = os.fork()
if pid == 0:
    t = time.process_time()
    while time.process_time() - t < limit:
        pass
    os._exit(0)
os.waitpid(pid, 0)
"""


def _growth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("growth_under_test",
                                                  ROOT / "benchmarks" / "growth.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setattr(sys, "path", list(sys.path))  # growth.py adds benchmarks/ to it
    spec.loader.exec_module(mod)
    monkeypatch.setattr(mod, "OUT", tmp_path)
    monkeypatch.setattr(mod, "STDOUT", tmp_path / "stdout")
    return mod


def test_cap_kills_a_command_whose_child_burns(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's CPU reaches the cap while the parent idles: the run is killed there, not
    after the child's 20 s."""
    growth = _growth(tmp_path, monkeypatch)
    cpu, _, _, killed = growth.run([sys.executable, "-c", BURNING_CHILD, "20"], 0.5)
    assert killed
    assert 0.5 <= cpu < 10  # at least the cap (a lower bound), far from the child's 20 s


def test_a_finished_command_counts_its_children(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the cap, the figure is the whole command's: the waited-for child's CPU included."""
    growth = _growth(tmp_path, monkeypatch)
    cpu, _, _, killed = growth.run([sys.executable, "-c", BURNING_CHILD, "0.4"], 30.0)
    assert not killed
    assert cpu >= 0.4


def test_cpu_of_is_none_for_no_such_session(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    growth = _growth(tmp_path, monkeypatch)
    assert growth._cpu_of(2**22 + 12345) is None
