""":mod:`lbctl.model.javaint` against the JDK: ``java/IntFacts.java`` (plain JDK, no Pulsar)
computes ``int * int``, ``int + int + int`` and ``(int) double`` as ``BundleSplitterTask``,
``DefaultNamespaceBundleSplitStrategyImpl``, ``NamespaceBundleStats.compareByTopicConnections`` and
``UniformLoadShedder`` do; the model must give the same figures."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from lbctl.model.javaint import INT_MAX, INT_MIN, d2i, int_add, int_mul

JAVA = Path(__file__).parent / "java" / "IntFacts.java"
MIBI = 1024 * 1024

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")),
                       reason="no JDK on the PATH (javac/java)"),
]


def test_int_arithmetic_matches_the_jdk(tmp_path: Path) -> None:
    rng = random.Random(4)
    lines: list[str] = []
    expected: list[int] = []
    for mb in (1, 100, 2047, 2048, 2049, 4095, 4096, 6000, -1, -2048, INT_MAX, INT_MIN):
        lines.append(f"mul {mb} {MIBI}")
        expected.append(int_mul(mb, MIBI))
    for _ in range(200):
        a, b, c = (rng.randint(0, INT_MAX) for _ in range(3))
        lines.append(f"add {a} {b} {c}")
        expected.append(int_add(a, b, c))
    for x in (2.9, -2.9, 1e20, -1e20, 2147483647.5, -2147483648.9, 0.5):
        lines.append(f"d2i {x!r}")
        expected.append(d2i(x))
    subprocess.run(["javac", "-d", str(tmp_path), str(JAVA)], check=True, capture_output=True)
    res = subprocess.run(["java", "-cp", str(tmp_path), "IntFacts"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True)
    assert [int(x) for x in res.stdout.split()] == expected
