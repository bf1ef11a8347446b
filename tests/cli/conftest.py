from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def example_files() -> list[Path]:
    return sorted(p for p in EXAMPLES.iterdir()
                  if p.suffix in (".json", ".yaml", ".yml", ".jsonl", ".gz"))


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()
