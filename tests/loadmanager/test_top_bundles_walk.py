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

from typing import Any

import pytest

from lbctl.config import Settings
from lbctl.loadmanager.extensible import ExtensibleLoadManager
from lbctl.model.brokerload import top_k_bundles
from lbctl.model.javaorder import concurrent_order, java_hash_order
from tests.factories import broker, load, state, stats

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


def test_the_sandbox_s_top_bundles_walk_the_split_walk_s_order() -> None:
    """The simulator publishes every broker's ``TopKBundles`` of its true bundle stats; the cycle
    it feeds walks the same ``ConcurrentHashMap`` for its splits (``bundle_stats_walk`` of
    rebuilt stats: a fresh map filled in the stats' order). Both walks are that one map's order,
    not one of them a ``HashMap``'s."""
    from types import SimpleNamespace

    from lbctl.model.cluster import EXTENSIBLE
    from lbctl.records import replace
    from lbctl.simulate.engine import Tick
    from lbctl.simulate.extensible import ExtensibleDriver
    from lbctl.strategies.split.default_namespace_bundle_split_strategy import bundle_stats_walk

    put_order = twelve_bundles("tenant/ns0")
    assert concurrent_order(put_order) != java_hash_order(put_order)
    busy = {b: stats(tp_in=MB) for b in put_order}
    true = broker(bundles=busy, bandwidth_in=(80, 100))
    s0 = replace(state({"b1:8080": true}), load_manager=EXTENSIBLE)
    settings = Settings.defaults()
    run = SimpleNamespace(states=[s0], owned=["b1:8080"], true={"b1:8080": true},
                          written={"b1:8080": true})
    view = ExtensibleDriver().view(run, Tick(2, 60_000, s0, settings, 0))  # type: ignore[arg-type]
    got = view.top_bundles_load_data["b1:8080"].bundles
    walk = bundle_stats_walk(true.lastStats, iterated=False)
    assert [b for b, _ in walk] == concurrent_order(put_order)
    expected = top_k_bundles(walk, 10, settings)
    refilled = top_k_bundles(((b, busy[b]) for b in java_hash_order(put_order)), 10, settings)
    assert [t.bundleName for t in expected] != [t.bundleName for t in refilled]
    assert [t.bundleName for t in got] == [t.bundleName for t in expected]


def test_the_transfer_shedder_adapter_s_top_bundles_walk_the_report_s_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry's TransferShedder (the simulator's and ``compare``'s modular cycles) derives
    each broker's top bundles from its modular report as the extensible cycle does on derived
    data: ``TopKBundles`` over the report's own (``ConcurrentHashMap``) order, not a ``HashMap``
    refill's."""
    from lbctl.strategies.shedding import transfer

    names = twelve_bundles("tenant/ns0")
    report_order = concurrent_order(names)
    busy = {b: stats(tp_in=MB) for b in report_order}
    data = load({"b1:8080": broker(bundles=busy, bandwidth_in=(80, 100)),
                 "b2:8080": broker(bandwidth_in=(10, 100))})
    seen: list[Any] = []

    def capture(self: Any, ctx: Any, hit_count: int) -> Any:
        seen.append(ctx.top_bundles)
        raise _Captured

    monkeypatch.setattr(transfer.TransferShedder, "find_bundles_for_unloading", capture)
    settings = Settings.defaults()
    with pytest.raises(_Captured):
        transfer.TransferShedderAdapter().shed(data, settings, None)
    expected = top_k_bundles(((b, busy[b]) for b in report_order), 10, settings)
    refilled = top_k_bundles(((b, busy[b]) for b in java_hash_order(report_order)), 10,
                             settings)
    assert [t.bundleName for t in expected] != [t.bundleName for t in refilled]
    assert [t.bundleName for t in seen[0]["b1:8080"]] == [t.bundleName for t in expected]


class _Captured(Exception):
    """Stops the adapter once the shedder's input is seen."""


def test_live_extensible_top_bundles_walk_a_fresh_concurrent_map() -> None:
    """Bundle stats rebuilt from a broker's topic stats are in the order ``updateStats`` put them
    into ``PulsarStats.bundleStats``: ``TopKBundles`` walks that fresh ``ConcurrentHashMap``, as
    the split walk does (``bundle_stats_walk`` of rebuilt stats), not a ``HashMap``."""
    from lbctl.sources.live_extensible import top_bundles_load_data

    put_order = twelve_bundles("tenant/ns0")
    raw = {b: {"msgThroughputIn": float(MB)} for b in put_order}
    settings = Settings.defaults()
    got = [t["bundleName"] for t in top_bundles_load_data(raw, settings)["topBundlesLoadData"]]
    as_stats = {b: stats(tp_in=MB) for b in put_order}
    expected = top_k_bundles(((b, as_stats[b]) for b in concurrent_order(put_order)), 10,
                             settings)
    refilled = top_k_bundles(((b, as_stats[b]) for b in java_hash_order(put_order)), 10,
                             settings)
    assert [t.bundleName for t in expected] != [t.bundleName for t in refilled]
    assert got == [t.bundleName for t in expected]
