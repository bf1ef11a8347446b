"""The committed completion scripts match what the app generates now."""

import importlib.util
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen", ROOT / "completions" / "generate.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_script_is_fresh(shell: str) -> None:
    gen = _generator()
    committed = (ROOT / "completions" / gen.FILES[shell]).read_text(encoding="utf-8")
    assert committed == gen.generate(shell), (
        f"completions/{gen.FILES[shell]} is stale: run python completions/generate.py")
    assert "lbctl" in committed


def test_bash_completion_registers_function() -> None:
    script = ROOT / "completions" / "lbctl.bash"
    out = subprocess.run(["bash", "-c", f"source {script}; complete -p lbctl"],
                         capture_output=True, text=True, check=True)
    assert "_lbctl_completion" in out.stdout
