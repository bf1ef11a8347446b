"""The order the extensible split strategy walks a broker's bundle stats, against the JDK.

``DefaultNamespaceBundleSplitStrategyImpl.findBundlesToSplit`` walks ``PulsarStats.bundleStats``,
a ``ConcurrentHashMap`` that each stats update ``clear()`` s (keeping its table) and refills
(PulsarStats at 1710bfdaa85f); the walk decides which bundles are taken first under
``loadBalancerMaxNumberOfBundlesToSplitPerCycle``. A load report's ``lastStats`` is that very map
(``LocalBrokerData.update`` keeps it), written by iterating it, so a report's order *is* the
walk's. ``tests/model/java/MapOrder.java`` (plain JDK ``ConcurrentHashMap``, no Pulsar) fills,
clears and refills a map as ``updateStats`` does and prints it; lbctl must walk a report in that
order (:func:`~lbctl.strategies.split.default_namespace_bundle_split_strategy.bundle_stats_walk`),
not put it again into a fresh map as if it were the order the bundles were put. Skipped, with the
reason shown by ``pytest -rs``, without ``javac``/``java``."""

from __future__ import annotations

import random

import pytest

from lbctl.config import resolve
from lbctl.loadmanager.extensible import ExtensibleLoadManager
from lbctl.model.javaorder import concurrent_order
from lbctl.model.load import NamespaceBundleStats
from lbctl.strategies.split.default_namespace_bundle_split_strategy import (
    bundle_stats_walk,
    hash_table_order,
)
from tests.factories import broker, state, stats
from tests.jdk import needs_jdk, run_java

pytestmark = needs_jdk("the split walk's order is not checked against ConcurrentHashMap")


@pytest.fixture(scope="module")
def jdk(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    build = tmp_path_factory.mktemp("splitwalk")
    return lambda lines: run_java("MapOrder", build, lines)


def _bundle(rng: random.Random) -> str:
    return (f"tenant/ns{rng.randint(0, 30)}/0x{rng.getrandbits(31):08x}"
            f"_0x{0x80000000 + rng.getrandbits(31):08x}")


def _refills(rng: random.Random, cases: int) -> list[str]:
    """Scripts of maps filled like ``updateStats``: sometimes a larger fill first, cleared (the
    table kept), then this update's bundles in the order the topics map gives them."""
    script: list[str] = []
    for c in range(cases):
        n = rng.choice([3, 5, 11, 12, 13, 24, 40, 48, 100, rng.randint(2, 200)])
        script.append("NEW\tchm")
        if rng.random() < 0.3:
            script += [f"PUT\t{_bundle(rng)}" for _ in range(n * rng.randint(2, 5))]
            script.append("CLEAR")
        keys = list(dict.fromkeys(_bundle(rng) for _ in range(n)))
        script += [*(f"PUT\t{k}" for k in keys), f"PRINT\t{c}"]
    return script


def test_report_order_is_the_walk(jdk) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(16)
    script = _refills(rng, 300)
    java = jdk(script)
    st = NamespaceBundleStats(topics=3)
    wrong = differ = 0
    for keys in java.values():
        report = dict.fromkeys(keys, st)  # the report: the map serialized by iterating it
        wrong += [b for b, _ in bundle_stats_walk(report, iterated=True)] != keys
        # teeth: putting the report again into a fresh map (lbctl's walk before) often reorders
        differ += [b for b, _ in bundle_stats_walk(report, iterated=False)] != keys
    assert wrong == 0
    assert all(hash_table_order(keys) is not None for keys in java.values())
    assert differ > len(java) // 5, differ  # 300 maps: see the figure in the report


def test_fresh_fill_in_put_order_is_the_walk(jdk) -> None:  # type: ignore[no-untyped-def]
    """Rebuilt stats (the order the bundles were put) walk as a fresh map filled in that order."""
    rng = random.Random(61)
    script: list[str] = []
    puts: dict[str, list[str]] = {}
    for c in range(100):
        keys = list(dict.fromkeys(_bundle(rng) for _ in range(rng.randint(2, 150))))
        script += ["NEW\tchm", *(f"PUT\t{k}" for k in keys), f"PRINT\t{c}"]
        puts[str(c)] = keys
    java = jdk(script)
    st = NamespaceBundleStats(topics=3)
    assert all([b for b, _ in bundle_stats_walk(dict.fromkeys(puts[c], st), iterated=False)]
               == java[c] for c in java)


def test_extensible_splits_the_first_bundles_of_the_report(jdk) -> None:  # type: ignore[no-untyped-def]
    """Through the extensible load manager on load reports (derived data): with at most 3
    splits per cycle, the 3 split are the first hot bundles of the broker's map in the JDK's
    order, which is the report's."""
    rng = random.Random(5)
    keys = [f"t/ns{i}/0x00000000_0x40000000" for i in range(40)]
    rng.shuffle(keys)
    bigger = [f"t/old{i}/0x00000000_0x40000000" for i in range(90)]
    script = ["NEW\tchm", *(f"PUT\t{k}" for k in bigger), "CLEAR",
              *(f"PUT\t{k}" for k in keys), "PRINT\tmap"]
    java = jdk(script)["map"]
    hot = {b: stats(50000, topics=5) for b in java}  # the report, in the map's order
    st = state({"b1:8080": broker(bundles=hot),
                "b2:8080": broker(bundles={"t/cold/0x40000000_0x80000000": stats(10)})},
               now=1_763_000_000_000)
    settings = resolve(st.config, {}, {
        "loadBalancerNamespaceBundleSplitConditionHitCountThreshold": "0",
        "loadBalancerMaxNumberOfBundlesToSplitPerCycle": "3"})
    r = ExtensibleLoadManager(seed=0).run_cycle(st, settings)
    got = [d.bundle for res in r.splits for d in res.decisions if d.broker == "b1:8080"]
    assert got == java[:3]
    # teeth: a fresh map filled in the report's order (lbctl's walk before) starts elsewhere
    before = [b for b, _ in bundle_stats_walk(hot, iterated=False)]
    assert before[:3] != java[:3]


def test_a_report_lbctl_edited_is_put_into_a_fresh_map() -> None:
    """Not a hash map's order (children of a simulated split appended at the end, out of bucket
    order): the walk puts the report into a fresh map, as for rebuilt stats."""
    rng = random.Random(9)
    st = NamespaceBundleStats(topics=3)
    keys = concurrent_order(list(dict.fromkeys(_bundle(rng) for _ in range(60))))
    assert hash_table_order(keys) is not None
    edited = [*keys[1:], keys[0]]  # the first bucket's key moved to the end
    assert hash_table_order(edited) is None
    walk = [b for b, _ in bundle_stats_walk(dict.fromkeys(edited, st), iterated=True)]
    assert walk == concurrent_order(edited)
