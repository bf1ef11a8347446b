"""Where the tests find the project's files (imported as a plain module, like factories.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DATA = ROOT / "tests" / "data"


def example_files() -> list[Path]:
    """The bundled modular examples (``examples/*``; the extensible ones live in a subfolder)."""
    return sorted(p for p in EXAMPLES.iterdir()
                  if p.suffix in (".json", ".yaml", ".yml", ".jsonl", ".gz"))
