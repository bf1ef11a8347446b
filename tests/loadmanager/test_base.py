"""The one load-manager protocol: every implementation is one, mypy rejects one that drifts, and a
cycle's result offers what every command reads (memory, acted, plan, explanation, effect)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from lbctl.config import resolve
from lbctl.loadmanager.base import LoadManager
from lbctl.loadmanager.extensible import ExtensibleLoadManager
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.model.cluster import EXTENSIBLE, MODULAR
from lbctl.model.cycle import CycleMemory, Effect, ExtensibleMemory
from lbctl.planner.cycle import PlannerLoadManager
from lbctl.planner.propose import ProposeOptions
from lbctl.sources.snapshot import read_snapshots
from lbctl.strategies.builtin import PLACEMENT, SHEDDING

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _modular() -> ModularLoadManager:
    return ModularLoadManager(SHEDDING.create("ThresholdShedder"),
                              PLACEMENT.create("LeastLongTermMessageRate"),
                              PLACEMENT.create("RoundRobinBrokerSelector"))


@pytest.mark.parametrize(("lm", "kind", "label", "memory"), [
    (_modular(), MODULAR, "ThresholdShedder + LeastLongTermMessageRate", CycleMemory),
    (ExtensibleLoadManager(), EXTENSIBLE, "TransferShedder + LeastResourceUsageWithWeight",
     ExtensibleMemory),
    (PlannerLoadManager(ProposeOptions(solver="greedy")), MODULAR, "lbctl", CycleMemory),
])
def test_every_load_manager_is_one(lm: LoadManager[Any], kind: str, label: str,
                                   memory: type) -> None:
    assert LoadManager in type(lm).__mro__  # subclassed explicitly: mypy checks each method
    assert lm.kind == kind and lm.label == label
    assert isinstance(lm.initial_memory(), memory)
    shedding, placement = lm.strategies
    assert label in (shedding, f"{shedding} + {placement}")


@pytest.mark.parametrize(("lm", "snapshot"), [
    (_modular(), "pip364-90-10.json"),
    (ExtensibleLoadManager(), "extensible/skewed.json"),
    (PlannerLoadManager(ProposeOptions(solver="greedy")), "pip364-90-10.json"),
])
def test_a_result_offers_what_every_command_reads(lm: LoadManager[Any], snapshot: str) -> None:
    """One cycle on a state that needs a move: it acts, carries its memory into the next cycle,
    and its plan, explanation and effect agree on what moved."""
    st = read_snapshots([EXAMPLES / snapshot])[-1]
    settings = resolve(st.config)
    result = lm.run_cycle(st, settings)
    assert result.acted and result.gate is None
    effect = result.effect()
    assert isinstance(effect, Effect) and effect.moves and effect.skipped == 0
    moved = {a.bundle for a in result.plan().actions if a.action in ("unload", "transfer")}
    assert moved == {m.bundle for m in effect.moves}
    assert result.explanation().to_text().startswith(f"Cluster {st.cluster}")
    assert isinstance(result.memory, type(lm.initial_memory()))
    later = lm.run_cycle(lm.held(st, st.captured_at + 60_000), settings, result.memory)
    assert later.state.captured_at == st.captured_at + 60_000


DRIFTED = """
from lbctl.config import Settings
from lbctl.loadmanager.base import LoadManager
from lbctl.loadmanager.modular import ModularCycleResult
from lbctl.model.cluster import ClusterState
from lbctl.model.cycle import CycleMemory


class Drifted(LoadManager[CycleMemory]):
    def run_cycle(self, state: ClusterState, settings: Settings) -> ModularCycleResult:
        raise NotImplementedError  # no memory carried in: not a load manager any more
"""


@pytest.mark.slow
def test_mypy_rejects_an_implementation_that_drifts(tmp_path: Path) -> None:
    """An implementation subclasses the protocol: a method whose signature no longer matches it
    is a type error."""
    pytest.importorskip("mypy")
    module = tmp_path / "drifted.py"
    module.write_text(textwrap.dedent(DRIFTED))
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
         "--cache-dir", str(tmp_path / "cache"),
         "--config-file", str(ROOT / "pyproject.toml"), str(module)],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "MYPYPATH": str(ROOT)},
        check=False)
    assert out.returncode == 1, out.stdout + out.stderr
    assert 'Signature of "run_cycle" incompatible with supertype' in out.stdout
    assert 'LoadManager' in out.stdout
