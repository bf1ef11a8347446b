"""The greedy shedders' bundle order against the JDK.

OverloadShedder and ThresholdShedder (and UniformLoadShedder) stream
``getBundleDataForLoadShedding()``'s entries and sort them with ``Double.compare(e2, e1)``
(OverloadShedder at 085e7b8f428f): largest first, stably, NaN before everything and ``0.0`` before
``-0.0``. ``tests/model/java/SortFacts.java`` (plain JDK, no Pulsar; its ``desc`` mode) sorts the
same values in the same starting order (the shedding map's, :meth:`LoadData.shedding_order`);
lbctl's ranking must be the JDK's. Skipped, with the reason shown by ``pytest -rs``, without
``javac``/``java``."""

from __future__ import annotations

import math
import random
from pathlib import Path

from lbctl.strategies.shedding._select import _ranking, _short_term_throughput_of
from tests.factories import broker, bundle_data, load
from tests.jdk import java_double, needs_jdk, run_java

pytestmark = needs_jdk("the bundle sort is not checked against Double.compare")


def test_bundle_ranking_follows_double_compare(tmp_path: Path) -> None:
    rng = random.Random(1405)
    pool = [0.0, -0.0, math.nan, 5.0, 5.0, 1e6, math.inf]
    script, ours, plain = [], {}, {}
    for c in range(150):
        n = rng.randint(2, 40)
        names = [f"t/ns-{c}/0x{i:08x}_0x{i + 1:08x}" for i in range(n)]
        tps = [rng.choice(pool) if rng.random() < 0.7 else float(rng.randint(0, 9))
               for _ in range(n)]
        # both throughput figures carry the value: -0.0 + -0.0 stays -0.0
        data = load({"b": broker(bundle_names=tuple(names))},
                    bundle_data={b: bundle_data(v, v, v, v) for b, v in zip(names, tps,
                                                                             strict=True)})
        value = _short_term_throughput_of(data)
        start = data.shedding_order(names, value)  # the stream's order before the sort
        ranked, _, _ = _ranking(data, data.brokers["b"].local.bundles)
        script.append("\t".join([str(c), "desc", *(java_double(value(b)) for b in start)]))
        ours[str(c)] = [str(start.index(b)) for b in ranked]
        plain[str(c)] = [str(i) for i in sorted(range(n), key=lambda i: -value(start[i])
                                                if value(start[i]) == value(start[i]) else 0)]
    java = run_java("SortFacts", tmp_path, script)
    wrong = [cid for cid in ours if ours[cid] != java[cid]]
    assert not wrong, f"{len(wrong)} of {len(ours)} rankings differ from the JDK: {wrong[:5]}"
    assert sum(plain[cid] != java[cid] for cid in java) > 50  # teeth: zeros and NaN matter
