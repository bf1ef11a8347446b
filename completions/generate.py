"""Regenerate the shell completion scripts in this folder from the lbctl app.

    python completions/generate.py

Typer's completion scripts are small shims that call `lbctl` back on each TAB; they depend only on
the program name, so they are committed here and a test fails when they go stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = {"bash": "lbctl.bash", "zsh": "_lbctl", "fish": "lbctl.fish"}


def generate(shell: str) -> str:
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    result = CliRunner().invoke(app, [], prog_name="lbctl",
                                env={"_LBCTL_COMPLETE": f"source_{shell}"})
    if result.exit_code != 0:
        raise SystemExit(f"completion for {shell} failed: {result.output}")
    return result.output


def main() -> int:
    for shell, name in FILES.items():
        (HERE / name).write_text(generate(shell), encoding="utf-8")
        print(f"wrote completions/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
