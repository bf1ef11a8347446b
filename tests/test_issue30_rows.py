"""benchmarks/issue30_rows.py prints every row of issue 30 next to its baseline, with the growth
exponents (issue 30, "Done when": ``benchmarks/`` prints every row above next to its baseline).

The benchmark runs once, at ``--quick`` sizes, as a user runs it; the test reads what it printed.
No figure is judged: a row may be met, not met, or not measured (its line says why: no
Prometheus, no JVM), but it must be there, with a baseline, a figure and a goal."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "issue30_rows.py"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")]

#: the issue's table, in its order (the fleet row has two parts: the example and the 10M report)
ROWS = ("doctor", "propose", "explain", "replay", "exact", "prometheus", "recommend", "monitor",
        "fleet", "fleet-10M")
SHAPES = ("namespaces", "one-namespace", "brokers", "deep-broker", "policies", "snapshots")
COMMANDS = ("recommend", "explain", "doctor", "propose")


@cache
def quick_output() -> str:
    # --no-spark: the suite keeps to one Spark session per run (tests/fleet's); the fleet rows
    # are still printed, as not run, and their lines checked like the others
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--no-spark"],
                          capture_output=True,
                          text=True, cwd=ROOT, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_every_row_is_printed_with_its_baseline_figure_and_goal() -> None:
    out = quick_output()
    for name in ROWS:
        m = re.search(rf"^\[{re.escape(name)}\] .+\n    baseline: .+\n    figure: +.+\n"
                      rf"    goal: +.+ -> (met|NOT met|not measured)\b.*issue 30 found: .+\)$",
                      out, re.MULTILINE)
        assert m, f"row {name} missing or incomplete in:\n{out}"
    found = re.findall(r"^\[([\w-]+)\]", out, re.MULTILINE)
    assert found == list(ROWS), found  # each once, in the order


def test_every_shape_and_command_has_a_growth_exponent() -> None:
    out = quick_output()
    for shape in SHAPES:
        for cmd in COMMANDS:
            m = re.search(rf"^  {re.escape(shape)} +{cmd} +sizes ([\d,]+/){{3}}[\d,]+ +"
                          rf"(\d+\.\d+ ){{4}} *k=-?\d+\.\d+", out, re.MULTILINE)
            assert m, f"no growth line for {shape} / {cmd} in:\n{out}"


def test_the_load_is_printed_before_and_after() -> None:
    out = quick_output()
    assert re.search(r"^issue 30 rows \(--quick sizes\): load average [\d.]+ [\d.]+ [\d.]+", out,
                     re.MULTILINE)
    assert re.search(r"^load average after: [\d.]+ [\d.]+ [\d.]+", out, re.MULTILINE)


def test_an_unknown_row_is_refused_in_one_line() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--rows", "doctor,nope"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert "unknown row(s) nope" in proc.stderr
    assert "Traceback" not in proc.stderr
