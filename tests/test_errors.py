"""The README's exit-code table is lbctl.errors.ExitStatus."""

from pathlib import Path

from lbctl.errors import EXIT_CODES

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_table_matches() -> None:
    text = README.read_text(encoding="utf-8").split("### Exit codes", 1)[1]
    rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    table = {int(r.split("|")[1]): r.split("|")[2].strip() for r in rows}
    assert table == EXIT_CODES
