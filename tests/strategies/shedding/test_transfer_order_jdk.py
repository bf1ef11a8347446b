"""TransferShedder's broker order against the JDK: ``LoadStats.setLoadDataStore`` sorts the store's
entries with ``Comparator.comparingDouble(weightedMaxEMA)`` (TransferShedder at 028ed6295a34), that
is ``Double.compare``: -0.0 before 0.0, NaN equal to NaN and after +Infinity. The JDK's own answer
comes from ``tests/model/java/SortFacts.java`` (plain JDK, no Pulsar: ``Collections.sort`` of
positions with ``Double.compare`` over their values), compiled and run once; lbctl's
``sorted_brokers`` must be the same for every list. Skipped, with the reason shown by
``pytest -rs``, without ``javac``/``java``."""

from __future__ import annotations

import math
import random
from pathlib import Path

from lbctl.records import replace
from lbctl.strategies.shedding.transfer import ShedderInput, TransferShedder
from tests.ext_helpers import NOW, cpu_load, shedder_settings
from tests.jdk import java_double, needs_jdk, run_java

pytestmark = needs_jdk("TransferShedder's order is not checked against Double.compare")

_SPECIAL = [0.0, -0.0, math.nan, math.inf, -math.inf]


def _loads(rng: random.Random) -> list[float]:
    n = rng.randint(2, 40)
    pool = [*_SPECIAL, 0.25, 0.5, 0.75]
    return [rng.choice(pool) if rng.random() < 0.6 else rng.uniform(-0.1, 1.2)
            for _ in range(n)]


def _sorted_brokers(loads: list[float]) -> list[str]:
    settings = shedder_settings()
    base = cpu_load(settings, 50, None)
    names = [f"broker-{i}:8080" for i in range(len(loads))]
    store = {b: replace(base, weightedMaxEMA=v) for b, v in zip(names, loads, strict=True)}
    res = TransferShedder().find_bundles_for_unloading(
        ShedderInput(settings, NOW, store, {}, names))
    return [b.removeprefix("broker-").removesuffix(":8080") for b in res.sorted_brokers]


def test_sorted_brokers_follow_double_compare(tmp_path: Path) -> None:
    rng = random.Random(1428)
    cases = [_loads(rng) for _ in range(300)]
    cases.append([0.0, -0.0, 0.0, -0.0])  # Python's < calls these equal; Java does not
    cases.append([math.nan, 1.0, math.nan, 0.5, math.inf])  # NaN last, after +Infinity
    script = ["\t".join([str(i), "double", *map(java_double, vals)])
              for i, vals in enumerate(cases)]
    java = run_java("SortFacts", tmp_path, script)
    assert len(java) == len(cases)
    wrong = [i for i, vals in enumerate(cases) if _sorted_brokers(vals) != java[str(i)]]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ from the JDK, e.g. {cases[wrong[0]]}"
    # teeth: the JDK's order is not what a plain float key gives on the special values
    plain = [[str(i) for i in sorted(range(len(v)), key=v.__getitem__)] for v in cases]
    assert sum(plain[i] != java[str(i)] for i in range(len(cases))) > 50
