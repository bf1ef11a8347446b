"""The order of the modular automatic splits across cycles, against the JDK.

``checkNamespaceBundleSplit`` walks ``bundlesToBeSplit.keySet()``, the map
``BundleSplitterTask.findBundlesToSplit`` returns: a field ``HashMap`` (``bundleCache``,
BundleSplitterTask at 0f6f07c8ef06 and master) that each call ``clear()`` s and refills, so it keeps
the largest table it grew to. ``tests/model/java/MapOrder.java`` (plain JDK ``HashMap``, no Pulsar)
replays the puts and the ``clear()``; lbctl's split order in a cycle after a busier one must be
the JDK's, not a fresh map's. Skipped, with the reason shown by ``pytest -rs``, without
``javac``/``java``."""

from __future__ import annotations

from pathlib import Path

from lbctl.config import Settings
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.model.javaorder import java_hash_order
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.split.bundle_splitter_task import find_bundles_to_split
from tests.factories import broker, state, stats
from tests.jdk import needs_jdk, run_java

pytestmark = needs_jdk("the split order is not checked against HashMap")


def test_split_order_after_a_busier_cycle(tmp_path: Path) -> None:
    manager = ModularLoadManager(SHEDDING.create("ThresholdShedder"),
                                 PLACEMENT.create("LeastLongTermMessageRate"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)
    settings = Settings.defaults()
    mem = manager.initial_memory()
    script, ours, fresh = ["NEW\thashmap"], [], []
    for k, (first, n) in enumerate(((0, 20), (100, 7))):
        hot = {f"t/ns{first + i}/0x00000000_0x40000000": stats(40000, topics=5)
               for i in range(n)}
        st = state({"b1:8080": broker(bundles=hot),
                    "b2:8080": broker(bundles={"t/cold/0x40000000_0x80000000": stats(10)})},
                   now=1_763_000_000_000 + k * 60_000)
        r = manager.run_cycle(st, settings, mem)
        mem = r.memory
        puts = [c.bundle for c in find_bundles_to_split(r.load, settings,
                                                        st.namespace_bundle_count)
                if c.selected]
        assert len(puts) == n
        script += ["CLEAR", *(f"PUT\t{b}" for b in puts), f"PRINT\t{k}"]
        ours.append([s.candidate.bundle for s in r.splits])
        fresh.append(java_hash_order(puts))
    assert mem.split_capacity == 32
    java = run_java("MapOrder", tmp_path, script)
    assert ours == [java["0"], java["1"]]
    assert java["1"] != fresh[1]  # teeth: a fresh map (lbctl before) splits in another order
