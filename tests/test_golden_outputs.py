"""A few representative outputs, byte for byte, against stored copies; every table fits 80 columns.

The stored copies (``tests/data/golden/``) pin what lbctl prints for the cases of
``tests.cli_cases.GOLDEN_LINES``: every command in every format at least once, the extensible load
manager, a sequence with ``--all-cycles``, ``--wide``, explain narrowed to a broker or a bundle, each
registered strategy, each split algorithm, the refusals. Every other case of the matrix
(``tests.cli_cases.CASES``) is checked for behaviour by ``tests/cli/test_outputs_*.py``, which say
which decision changed rather than that some bytes did.

A refactoring leaves the stored copies untouched; a change that means to alter an output
regenerates them on purpose and shows the difference in review:

    LBCTL_UPDATE_GOLDEN=1 pytest tests/test_golden_outputs.py
"""

from __future__ import annotations

import importlib
import os

import pytest

from tests.cli_cases import CASES, GOLDEN_CASES, ROOT, WIDTH, command, output_format, run, scenario
from tests.output_checks import CHECKED
from tests.output_facts import FACTS_DIR, expected

GOLDEN = ROOT / "tests" / "data" / "golden"


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_output(name: str) -> None:
    got = run(CASES[name]).transcript()
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("LBCTL_UPDATE_GOLDEN"):
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(got)
    assert path.exists(), f"no stored output for {name}: run with LBCTL_UPDATE_GOLDEN=1"
    assert got == path.read_text(), f"output of lbctl {' '.join(CASES[name])} changed"


def _is_table(args: list[str]) -> bool:
    return output_format(args) == "table" and "--wide" not in args


TABLES = sorted(name for name, args in CASES.items() if _is_table(args))


@pytest.mark.parametrize("name", TABLES)
def test_tables_fit_80_columns(name: str) -> None:
    """Every table view of every case fits an 80-column terminal (each runs with COLUMNS=80;
    the run is shared with the case's other checks)."""
    out = run(CASES[name])
    wide = [line for line in out.stdout.splitlines() if len(line) > WIDTH]
    assert not wide, f"{name}: {len(wide)} line(s) wider than {WIDTH}: {wide[0]!r}"


def test_no_stale_golden_files() -> None:
    stored = {p.stem for p in GOLDEN.glob("*.txt")}
    assert stored == set(GOLDEN_CASES), (f"stale: {sorted(stored - set(GOLDEN_CASES))[:3]}, "
                                         f"missing: {sorted(set(GOLDEN_CASES) - stored)[:3]}")


def test_every_other_case_is_checked() -> None:
    """Each case without a golden file is some ``tests/cli/test_outputs_*.py`` test's case."""
    for path in sorted((ROOT / "tests" / "cli").glob("test_outputs_*.py")):
        importlib.import_module(f"tests.cli.{path.stem}")
    unchecked = [n for n, a in CASES.items()
                 if n not in GOLDEN_CASES and (command(a), output_format(a)) not in CHECKED]
    assert not unchecked, f"{len(unchecked)} case(s) checked by no test: {unchecked[:3]}"


def test_no_stale_facts() -> None:
    """The stored facts are exactly those of the cases without a golden file."""
    wanted = {(command(a), scenario(a)) for n, a in CASES.items() if n not in GOLDEN_CASES}
    stored = {(p.stem, key) for p in FACTS_DIR.glob("*.json") for key in expected(p.stem)}
    assert stored == wanted, (f"stale: {sorted(stored - wanted)[:3]}, "
                              f"missing: {sorted(wanted - stored)[:3]}")
