""":mod:`lbctl.model.javasort` against the JDK: ``java/SortFacts.java`` (plain JDK, no Pulsar)
sorts a ``LinkedList`` with ``Collections.sort`` (and, the same answer required, a sized
``Stream.sorted``, as AvgShedder does), with ``(int) (a - b)`` (its
broker order before PR #24954) and with ``Double.compare``; lbctl's TimSort must give the same
order for every list, and throw exactly where the JDK throws. One JVM runs every case."""

from __future__ import annotations

import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from lbctl.model.javasort import (
    CONTRACT_MESSAGE,
    ComparisonContractViolation,
    int_cast_compare,
    java_sort,
)

JAVA = Path(__file__).parent / "java" / "SortFacts.java"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")),
                       reason="no JDK on the PATH (javac/java)"),
]


def _double_compare(a: float, b: float) -> int:
    return (a > b) - (a < b)  # no NaN in these cases


def _values(rng: random.Random) -> list[float]:
    """Scores as AvgShedder sees them (0‥100-ish), crowded so that many are less than a point
    apart: narrow ranges, coarse grids (exact duplicates), runs that are already (nearly) sorted
    or reversed, and a few outliers."""
    n = rng.choice([0, 1, 2, rng.randint(3, 31), 31, 32, 33, rng.randint(34, 200),
                    rng.randint(34, 200), 200])
    kind = rng.choice(["narrow", "grid", "mixed", "sorted", "reversed", "wide"])
    base = rng.uniform(0, 90)
    width = rng.choice([0.3, 0.9, 1.5, 3.0, 8.0, 25.0])
    if kind == "narrow":
        vals = [base + rng.uniform(0, width) for _ in range(n)]
    elif kind == "grid":
        step = rng.choice([0.25, 0.5, 0.7, 1.0])
        vals = [base + step * rng.randrange(int(width / step) + 2) for _ in range(n)]
    elif kind == "mixed":
        pool = [base + rng.uniform(0, width) for _ in range(max(1, n // 3))]
        vals = [rng.choice(pool) if rng.random() < 0.5 else base + rng.uniform(0, width)
                for _ in range(n)]
    elif kind == "wide":
        vals = [rng.uniform(0, 100) for _ in range(n)]
    else:
        vals = sorted(base + rng.uniform(0, width) for _ in range(n))
        for _ in range(rng.randint(0, max(1, n // 10))):  # a few out of place
            if n > 1:
                i, j = rng.randrange(n), rng.randrange(n)
                vals[i], vals[j] = vals[j], vals[i]
        if kind == "reversed":
            vals.reverse()
    return vals


def _lbctl(vals: list[float], compare: Callable[[float, float], int]) -> list[str]:
    try:
        order = java_sort(range(len(vals)), lambda i, j: compare(vals[i], vals[j]))
    except ComparisonContractViolation as e:
        return ["THROW", str(e)]
    return [str(i) for i in order]


def test_timsort_matches_the_jdk(tmp_path: Path) -> None:
    rng = random.Random(20261128)
    cases = [_values(rng) for _ in range(1500)]
    script, expected = [], {}
    for i, vals in enumerate(cases):
        for mode, cmp in (("int", int_cast_compare), ("double", _double_compare)):
            cid = f"{i}-{mode}"
            script.append("\t".join([cid, mode, *map(repr, vals)]))
            expected[cid] = _lbctl(vals, cmp)
    subprocess.run(["javac", "-d", str(tmp_path), str(JAVA)], check=True, capture_output=True)
    res = subprocess.run(["java", "-cp", str(tmp_path), "SortFacts"],
                         input="\n".join(script) + "\n", capture_output=True, text=True,
                         check=True)
    java = {cid: rest for cid, *rest in (line.split("\t") for line in res.stdout.splitlines())}
    assert len(java) == len(expected)
    wrong = [cid for cid in expected if java[cid] != expected[cid]]
    assert not wrong, f"{len(wrong)} of {len(expected)} differ from the JDK: {wrong[:10]}"
    # the check has teeth: the JDK throws on some of these lists, and the int-cast order differs
    # from Python's stable sort by the same comparator on many more
    throws = [cid for cid, out in java.items() if out[:1] == ["THROW"]]
    assert throws and all(java[c] == ["THROW", CONTRACT_MESSAGE] for c in throws)
    assert all(c.endswith("-int") for c in throws)
    import functools

    differ = sum(
        1 for i, vals in enumerate(cases)
        if java[f"{i}-int"][:1] != ["THROW"]
        and java[f"{i}-int"] != [str(k) for k in sorted(
            range(len(vals)), key=functools.cmp_to_key(
                lambda a, b, v=vals: int_cast_compare(v[a], v[b])))])
    assert differ > 50
