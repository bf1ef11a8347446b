"""The order the extensible cycle's top bundles are taken in, on derived data.

``TopBundleLoadDataReporter.generateLoadData`` gives ``TopKBundles.update`` the broker's
``BrokerService.getBundleStats()``: ``PulsarStats.bundleStats``, a ``ConcurrentHashMap`` (at
1710bfdaa85f), walked in its own iteration order; the walk decides which of equal bundles fill the
``loadBalancerMaxNumberOfBundlesInBundleLoadReport`` slots and their order in the top list, which
TransferShedder follows. A modular load report's ``lastStats`` is that very map
(``LocalBrokerData.update`` keeps it), written by iterating it, so on derived data the walk is the
report's own order — as the split walk already takes it (``bundle_stats_walk``), not the order a
fresh ``HashMap`` refilled from it would iterate (a ``ConcurrentHashMap`` doubles at 12 keys where
a ``HashMap`` waits for 13, so twelve bundles sit in 32 buckets, not 16).
"""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.loadmanager.extensible import ExtensibleLoadManager
from lbctl.model.brokerload import top_k_bundles
from lbctl.model.javaorder import concurrent_order, java_hash_order
from tests.factories import broker, state, stats

MB = 1024 * 1024


def twelve_bundles(ns: str) -> list[str]:
    """Twelve bundles of ``ns`` covering the hash range."""
    step = 0x100000000 // 12
    edges = [i * step for i in range(12)] + [0xFFFFFFFF]
    return [f"{ns}/0x{edges[i]:08x}_0x{edges[i + 1]:08x}" for i in range(12)]


def test_derived_top_bundles_walk_the_report_s_order() -> None:
    """Twelve bundles of 1 MB/s each, put into the broker's map in range order: the report lists
    them as that ``ConcurrentHashMap`` iterates (32 buckets). The cycle's top ten are
    ``TopKBundles`` over that order; a ``HashMap`` refill (16 buckets) would keep other bundles
    or the same ones in another order."""
    names = twelve_bundles("tenant/ns0")
    report_order = concurrent_order(names)
    assert report_order != java_hash_order(report_order)  # the case tells the two walks apart
    busy = {b: stats(tp_in=MB) for b in report_order}
    st = state({"b1:8080": broker(bundles=busy, bandwidth_in=(80, 100)),
                "b2:8080": broker(bandwidth_in=(10, 100))})
    assert list(st.brokers["b1:8080"].lastStats) == report_order
    settings = Settings.defaults()
    got = ExtensibleLoadManager().run_cycle(st, settings).top_bundles["b1:8080"]
    expected = top_k_bundles(((b, busy[b]) for b in report_order), 10, settings)
    refilled = top_k_bundles(((b, busy[b]) for b in java_hash_order(report_order)), 10,
                             settings)
    assert [t.bundleName for t in expected] != [t.bundleName for t in refilled]
    assert [t.bundleName for t in got] == [t.bundleName for t in expected]
    assert len(got) == 10
