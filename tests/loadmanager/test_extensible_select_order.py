"""The extensible placement preview's candidates in the order Pulsar's candidate map iterates.

``ExtensibleLoadManagerImpl.selectAsync`` (3.0.1+, PR #20666) copies the broker registry's
``ConcurrentHashMap`` (``BrokerRegistryImpl.getAvailableBrokerLookupDataAsync``: the sorted
children of ``/loadbalance/brokers``, one ``put`` each) into ``new ConcurrentHashMap<>(...)``,
removes the excluded broker and lets the filters remove theirs, and hands the key set to
``LeastResourceUsageWithWeight``, whose random pick indexes the best brokers in that order. 3.0.0
copied into a ``HashMap`` instead. These tests replay the same maps in plain JDK code
(tests/model/java/MapOrder.java) and compare; lbctl used to iterate a ``HashMap`` of the
candidates in every release.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lbctl.config import resolve
from lbctl.loadmanager.extensible import registry_order, select_candidates
from lbctl.loadmanager.select import Options, run
from lbctl.model.javaorder import java_hash_order, java_sorted
from lbctl.sources.snapshot import read_snapshots
from lbctl.strategies.placement.broker_filters import (
    BrokerLookup,
    FilterContext,
    FilterError,
)
from tests.jdk import needs_jdk, run_java

ROOT = Path(__file__).resolve().parents[2]
SKEWED = ROOT / "examples" / "extensible" / "skewed.json"


def _jdk_script(cid: str, kind: str, brokers: list[str], removed: list[str]) -> list[str]:
    return (["NEW\tchm"] + [f"PUT\t{b}" for b in java_sorted(brokers)] + [f"COPY\t{kind}"]
            + [f"REM\t{b}" for b in removed] + [f"PRINT\t{cid}"])


class _Drop:
    """A filter that removes the given brokers (order-free, as Pulsar's filters are)."""

    name = "Drop"

    def __init__(self, gone: set[str]) -> None:
        self.gone = gone

    def __call__(self, brokers: dict[str, BrokerLookup], bundle: str,
                 ctx: FilterContext) -> dict[str, BrokerLookup]:
        return {b: v for b, v in brokers.items() if b not in self.gone}


class _Fail:
    name = "Fail"

    def __call__(self, brokers: dict[str, BrokerLookup], bundle: str,
                 ctx: FilterContext) -> dict[str, BrokerLookup]:
        raise FilterError("no version")


def _ctx() -> FilterContext:
    return FilterContext(resolve(), {})


@needs_jdk("selectAsync's candidate order")
@pytest.mark.parametrize("concurrent", [True, False], ids=["3.0.1+", "3.0.0"])
def test_select_candidates_iterate_as_the_jdk(tmp_path: Path, concurrent: bool) -> None:
    kind = "chm" if concurrent else "hashmap"
    lines: list[str] = []
    expected: dict[str, list[str]] = {}
    for n in range(1, 60):
        brokers = [f"broker-{(i * 37 + n) % 211}.pulsar.svc:8080" for i in range(n)]
        source = brokers[n // 2]
        gone = set(brokers[::5]) - {source}
        lookups = {b: BrokerLookup() for b in reversed(brokers)}  # the snapshot's order: any
        got = select_candidates(lookups, source, "t/ns/0x00000000_0xffffffff", _ctx(),
                                concurrent, (_Drop(gone),))
        expected[f"{kind}-{n}"] = got
        lines += _jdk_script(f"{kind}-{n}", kind, brokers, [source, *sorted(gone)])
    jdk = run_java("MapOrder", tmp_path, lines)
    wrong = [cid for cid, order in expected.items() if jdk[cid] != order]
    assert not wrong, wrong


def test_a_failing_filter_keeps_the_others_removals() -> None:
    """3.0.1+: the filters share one map and a failing one only logs, so the removals of the
    filters around it stand (lbctl used to drop every filter's removals)."""
    brokers = {f"broker-{i}:8080": BrokerLookup() for i in range(8)}
    gone = {"broker-1:8080", "broker-6:8080"}
    got = select_candidates(brokers, None, "t/ns/0x00000000_0xffffffff", _ctx(), True,
                            (_Drop({"broker-1:8080"}), _Fail(), _Drop({"broker-6:8080"})))
    assert set(got) == set(brokers) - gone


@needs_jdk("3.0.0's restore after a failing filter")
def test_3_0_0_restores_into_a_fresh_hashmap(tmp_path: Path) -> None:
    """3.0.0: a failing filter makes the candidates ``new HashMap<>(availableBrokers)``, the
    registry retained to the brokers that passed so far, in that copy's order (not the
    registry's, nor the first copy's)."""
    brokers = [f"broker-{i}.pulsar.svc:8080" for i in range(20)]
    gone = set(brokers[:9])
    got = select_candidates({b: BrokerLookup() for b in brokers}, None,
                            "t/ns/0x00000000_0xffffffff", _ctx(), False,
                            (_Drop(gone), _Fail()))
    lines = (["NEW\tchm"] + [f"PUT\t{b}" for b in java_sorted(brokers)]
             + [f"REM\t{b}" for b in sorted(gone)] + ["COPY\thashmap", "PRINT\tr"])
    assert got == run_java("MapOrder", tmp_path, lines)["r"]
    assert got != [b for b in registry_order(brokers) if b not in gone]


def _wide(n_idle: int) -> dict:
    """skewed.json with ``n_idle`` more brokers, idle and alike (they tie as best)."""
    doc = json.loads(SKEWED.read_text())
    one = doc["brokers"]["broker-1.pulsar.svc:8080"]
    data = doc["brokerLoadData"]["broker-1.pulsar.svc:8080"]
    for i in range(n_idle):
        name = f"idle-{i}.pulsar.svc:8080"
        doc["brokers"][name] = {**one, "bundles": [], "lastStats": {}, "numBundles": 0,
                                "numTopics": 0}
        doc["brokerLoadData"][name] = {**data, "weightedMaxEMA": 0.01, "bundleCount": 0,
                                       "topics": 0}
        doc["topBundlesLoadData"][name] = {"topBundlesLoadData": []}
    return doc


@needs_jdk("the preview's candidate order")
def test_preview_lists_candidates_in_the_copied_maps_order(tmp_path: Path) -> None:
    """A cycle with 13 brokers in unload mode: the preview's candidates are the JDK's
    ``new ConcurrentHashMap<>(registry)`` order less the owner, not a ``HashMap``'s; the seeded
    pick indexes that order."""
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(_wide(8)))
    (s,) = read_snapshots([path])
    r = run([s], Options(overrides={"loadBalancerTransferEnabled": "false"},
                         pulsar_version="4.0.4"))[-1]
    acts = [a for a in r.actions if a.preview is not None]
    assert acts
    for k, a in enumerate(acts):
        src = a.decision.unload.source
        brokers = list(s.available())
        jdk = run_java("MapOrder", tmp_path, _jdk_script("p", "chm", brokers, [src]))["p"]
        assert list(a.preview.candidates) == jdk, k
        assert list(a.preview.candidates) != [b for b in java_hash_order(brokers) if b != src]


def test_derived_top_bundles_walk_the_reports_own_order(tmp_path: Path) -> None:
    """A modular snapshot read by TransferShedder: each broker's top bundles are
    ``TopKBundles.update`` over its ``PulsarStats.bundleStats``, the ``ConcurrentHashMap`` the
    load report's ``lastStats`` is the walk of (cleared and refilled, so it keeps the table of a
    larger fill: here 64 buckets for 16 bundles). Of 16 equal bundles the partition sort keeps
    5 by that order; a fresh ``HashMap`` of the 16 (32 buckets) would keep others."""
    from lbctl.model.brokerload import top_k_bundles
    from lbctl.model.javaorder import JavaConcurrentHashMap
    from lbctl.model.load import NamespaceBundleStats
    from lbctl.strategies.split.default_namespace_bundle_split_strategy import hash_table_order

    names = [f"t/ns/0x{i:08x}_0x{i + 1:08x}" for i in range(0, 160, 10)]
    kept = JavaConcurrentHashMap()
    for n in [f"x/old/0x{i:08x}_0x{i + 1:08x}" for i in range(40)]:
        kept.put(n)  # an earlier, larger fill grew the table to 64
    kept.clear()
    for n in names:
        kept.put(n)
    report = kept.keys()
    assert kept.capacity == 64 and hash_table_order(report) is not None
    one = {"msgRateIn": 10.0, "msgRateOut": 10.0, "msgThroughputIn": 1000.0,
           "msgThroughputOut": 1000.0, "consumerCount": 1, "producerCount": 1, "topics": 2}
    doc = json.loads((ROOT / "examples" / "hot-broker.json").read_text())
    b = next(iter(doc["brokers"]))
    doc["brokers"][b]["lastStats"] = {n: dict(one) for n in report}
    doc["brokers"][b]["bundles"] = list(report)
    path = tmp_path / "equal.json"
    path.write_text(json.dumps(doc))
    (s,) = read_snapshots([path])
    r = run([s], Options(strategy="TransferShedder", overrides={
        "loadBalancerMaxNumberOfBundlesInBundleLoadReport": "5"}))[-1]
    got = [t.bundleName for t in r.top_bundles[b]]
    stats = s.brokers[b].lastStats
    expect = top_k_bundles(list(stats.items()), 5, r.settings)
    fresh = top_k_bundles([(x, stats[x]) for x in java_hash_order(stats)], 5, r.settings)
    assert got == [t.bundleName for t in expect]
    assert got != [t.bundleName for t in fresh]
    assert isinstance(stats[report[0]], NamespaceBundleStats)
