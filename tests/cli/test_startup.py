"""The CLI must start fast: help paths import neither pandas, httpx, pyspark nor numpy."""

import subprocess
import sys

import pytest

HEAVY = ("pandas", "httpx", "pyspark", "numpy")


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["--help"], ["recommend", "--help"], ["explain", "--help"],
                                  ["snapshot", "validate", "--help"]])
def test_help_imports_no_heavy_module(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from lbctl.cli.app import app\n"
        f"try:\n    app({argv!r}, prog_name='lbctl')\n"
        "except SystemExit:\n    pass\n"
        f"bad = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print('HEAVY:' + ','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage: lbctl" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "HEAVY:"


def test_python_dash_m_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "lbctl", "--version"], capture_output=True,
                         text=True, check=True)
    assert out.stdout.startswith("lbctl ")
