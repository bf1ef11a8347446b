"""AvgShedder's score map across cycles, against the JDK.

``brokerScoreMap`` is a field ``HashMap`` that ``calculateScoresAndSort`` ``clear()`` s and refills
every cycle (AvgShedder at d76ae6831a1c; master after PR #24954 too), and the broker sort streams
it, so equal scores keep its iteration order. ``clear()`` keeps the table: after the cluster
shrinks, the brokers come out by the buckets of the largest table the map ever had, which is not
a fresh map's order. ``tests/model/java/MapOrder.java`` (plain JDK ``HashMap``, no Pulsar) replays
the same puts and ``clear()`` s; lbctl's broker order, cycle after cycle with its memory carried,
must be the JDK's. Skipped, with the reason shown by ``pytest -rs``, without ``javac``/``java``.
"""

from __future__ import annotations

import random

import pytest

from lbctl.config import Settings
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.model.decision import SheddingDecision
from lbctl.model.javaorder import hashmap_order
from lbctl.model.loaddata import LoadData
from lbctl.records import replace
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.shedding.avg import AvgShedder, AvgShedderMemory
from lbctl.versions import newest
from tests.factories import broker, load, state, stats
from tests.jdk import needs_jdk, run_java

pytestmark = needs_jdk("AvgShedder's score map order after clear() is not checked against HashMap")


@pytest.fixture(scope="module")
def map_order(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Runs a ``MapOrder`` script; returns ``{id: keys in iteration order}``."""
    build = tmp_path_factory.mktemp("maporder")
    return lambda lines: run_java("MapOrder", build, lines)


def _names(rng: random.Random, n: int) -> list[str]:
    pool = [f"pulsar-broker-{i}.pulsar-broker.pulsar.svc.cluster.local:8080" for i in range(300)]
    return rng.sample(pool, n)


def _equal(names: list[str]) -> LoadData:
    """Brokers of one score (cpu 40 %): the sort keeps the score map's order."""
    return load({n: broker(cpu=(40, 100)) for n in names})


def _ranked(decision: SheddingDecision) -> list[str]:
    ranks = {b: int(v.numbers["rank"]) for b, v in decision.brokers.items()}
    return sorted(ranks, key=ranks.__getitem__)


def test_score_map_order_after_the_cluster_shrinks(map_order) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(14)
    sizes = [[40, 5], [100, 12, 3], [13, 2], [25, 70, 6, 30]]
    sizes += [[rng.randint(2, 120) for _ in range(rng.randint(2, 5))] for _ in range(40)]
    script: list[str] = []
    ours: dict[str, list[str]] = {}
    fresh: dict[str, list[str]] = {}
    for c, seq in enumerate(sizes):
        script.append("NEW\thashmap")  # AvgShedder's field, made once
        mem = AvgShedder().initial_memory()
        for k, n in enumerate(seq):
            data = _equal(_names(rng, n))
            decision, mem = AvgShedder().shed(data, Settings.defaults(), mem)
            cid = f"{c}-{k}"
            script += ["CLEAR", *(f"PUT\t{b}" for b in data.brokers), f"PRINT\t{cid}"]
            ours[cid] = _ranked(decision)
            fresh[cid] = hashmap_order(data.brokers)
    java = map_order(script)
    wrong = [cid for cid in ours if ours[cid] != java[cid]]
    assert not wrong, f"{len(wrong)} of {len(ours)} cycles differ from the JDK: {wrong[:5]}"
    # teeth: after a shrink the JDK's order is often not a fresh map's (what lbctl used before)
    assert java["0-1"] != fresh["0-1"]
    assert sum(java[cid] != fresh[cid] for cid in java) > 15


def test_both_sorts_start_from_the_kept_table(map_order) -> None:  # type: ignore[no-untyped-def]
    """The int-cast sort (before PR #24954) and the exact one (after it) both stream the map."""
    p = newest()
    for order in ("int-cast", "double"):
        settings = Settings.defaults(replace(p, values={**p.values,
                                                         "avgShedderScoreOrder": order}))
        rng = random.Random(3)
        big, small = _equal(_names(rng, 40)), _equal(_names(rng, 5))
        _, mem = AvgShedder().shed(big, settings, AvgShedder().initial_memory())
        assert mem.score_capacity == 64
        decision, mem = AvgShedder().shed(small, settings, mem)
        assert mem.score_capacity == 64  # clear() never shrinks it
        java = map_order(["NEW\thashmap", *(f"PUT\t{b}" for b in big.brokers), "CLEAR",
                          *(f"PUT\t{b}" for b in small.brokers), "PRINT\tx"])
        assert _ranked(decision) == java["x"] != hashmap_order(small.brokers)


def test_the_load_manager_carries_the_table_through_a_sequence(map_order) -> None:  # type: ignore[no-untyped-def]
    """recommend/explain over a .jsonl and simulate run cycles through the modular load manager,
    which carries the shedder's memory: a 40-broker cycle then a 5-broker one."""
    manager = ModularLoadManager(SHEDDING.create("AvgShedder"), PLACEMENT.create("AvgShedder"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)
    rng = random.Random(3)
    cycles = [_names(rng, 40), _names(rng, 5)]
    mem = manager.initial_memory()
    script, ours = ["NEW\thashmap"], []
    for k, names in enumerate(cycles):
        st = state({n: broker(cpu=(40, 100), bundles={f"t/{n}/0x00000000_0xffffffff":
                                                          stats(100, 100)}) for n in names},
                   now=1_763_000_000_000 + k * 60_000)
        r = manager.run_cycle(st, Settings.defaults(), mem)
        mem = r.memory
        assert r.decision is not None
        ours.append(_ranked(r.decision))
        script += ["CLEAR", *(f"PUT\t{b}" for b in r.load.brokers), f"PRINT\t{k}"]
    assert isinstance(mem.shedding, AvgShedderMemory) and mem.shedding.score_capacity == 64
    java = map_order(script)
    assert ours == [java["0"], java["1"]]
    assert java["1"] != hashmap_order(r.load.brokers)
