import sys
from pathlib import Path

# tests import their shared builders as plain modules (tests/factories.py)
sys.path.insert(0, str(Path(__file__).parent))

import pytest


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests that read a table's content see a 200-column terminal, so that a long strategy or
    bundle name is never wrapped; the width itself is tested at 80 columns (test_golden_outputs,
    tests/render/test_fit.py), with COLUMNS set explicitly."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("NO_COLOR", raising=False)
