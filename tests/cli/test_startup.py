"""The CLI must start fast: no help path imports pandas, httpx, pyspark, numpy or matplotlib.

Every command's ``--help`` (read from the app itself, so a new command is covered) runs in one
fresh interpreter; none may pull a heavy module in.
"""

import subprocess
import sys

import pytest
import typer

from lbctl.cli.app import app

HEAVY = ("pandas", "httpx", "pyspark", "numpy", "matplotlib")


def command_paths() -> list[list[str]]:
    """Every command and subcommand of the app, as argv prefixes."""
    root = typer.main.get_command(app)
    out: list[list[str]] = [[]]

    def walk(group, prefix: list[str]) -> None:
        for name, cmd in getattr(group, "commands", {}).items():
            out.append([*prefix, name])
            walk(cmd, [*prefix, name])

    walk(root, [])
    return out


def test_every_command_is_found() -> None:
    paths = {" ".join(p) for p in command_paths()}
    assert {"recommend", "explain", "snapshot validate", "fleet report", "monitor-brokers"} <= paths


@pytest.mark.slow
def test_no_help_imports_a_heavy_module() -> None:
    code = (
        "import sys\n"
        "from lbctl.cli.app import app\n"
        f"for argv in {[[*p, '--help'] for p in command_paths()]!r}:\n"
        "    try:\n        app(argv, prog_name='lbctl')\n"
        "    except SystemExit:\n        pass\n"
        f"print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.count("Usage: lbctl") == len(command_paths())
    assert out.stdout.strip().splitlines()[-1] == "HEAVY:"


def test_python_dash_m_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "lbctl", "--version"], capture_output=True,
                         text=True, check=True)
    assert out.stdout.startswith("lbctl ")


@pytest.mark.slow
def test_a_file_recommend_does_not_import_hashlib() -> None:
    """``hashlib`` (and OpenSSL behind it, about 2 ms) serves only a streamed sequence's line
    digests: ``recommend`` on one file, which imports the streaming reader's module, leaves it
    out (issue 30, item 5: the small ``recommend``'s start-up)."""
    from tests.started import modules_after_a_file_recommend

    assert "hashlib" not in modules_after_a_file_recommend("hashlib")
