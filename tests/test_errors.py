"""The README's exit-code table is lbctl.errors.ExitStatus."""

from pathlib import Path

from lbctl.errors import EXIT_CODES

README = Path(__file__).resolve().parents[1] / "README.md"


def test_docs_table_matches() -> None:
    """The table lives in docs/exit-codes.md (generated, see tests/docs_pages.py); the README
    points to it."""
    text = (README.parent / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    table = {int(r.split("|")[1]): r.split("|")[3].strip() for r in rows}
    assert table == EXIT_CODES
    assert "docs/exit-codes.md" in README.read_text(encoding="utf-8")
