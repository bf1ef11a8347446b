"""The leader's ``LoadData`` maps live across cycles (``ModularLoadManagerImpl.updateAllBrokerData``
/ ``updateBundleData``, apache/pulsar master): a bundle put cycles ago keeps its place in the
``bundleData`` ``ConcurrentHashMap``, one no broker reports any more is removed, the table never
shrinks, and ``getBundleDataForLoadShedding()`` copies that map's order into a ``HashMap``. Two
equal bundles sharing a bucket are therefore met in the order they first appeared, cycles ago —
not in today's snapshot order — and a shedder breaking the tie by "first met" picks accordingly.
The orders themselves are checked against the JDK in ``tests/model/test_javaorder_jdk.py``
(``chm-history`` cases)."""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.loadmanager.loaddata import leader_maps_and_reports, map_order
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.model.javaorder import java_string_hash as h
from lbctl.model.javaorder import spread
from lbctl.records import replace
from lbctl.sources.snapshot import parse_snapshot
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from tests.factories import broker, state, stats
from tests.model.test_cluster import random_snapshot

# two bundles in the same bucket of a 16-bucket table (checked below), equal in every figure
X = "t/ns/0x00000000_0x01000000"
Y = "t/ns/0x02000000_0x03000000"
HOT, COLD = "hot:8080", "cold:8080"
MINUTE = 60_000
T0 = 1_763_000_000_000


def _state(cpu: float, bundles: tuple[str, ...], now: int):
    return state({HOT: broker(cpu=(cpu, 100), bundles={b: stats(10, 10, 1e6, 1e6, topics=2)
                                                       for b in bundles}),
                  COLD: broker(cpu=(10, 100), bundles={"u/ns/0x00000000_0xffffffff": stats(1)})},
                 now=now)


def _manager() -> ModularLoadManager:
    return ModularLoadManager(SHEDDING.create("OverloadShedder"),
                              PLACEMENT.create("LeastLongTermMessageRate"),
                              PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)


def _shed(*states) -> list[str]:
    lm, mem, out = _manager(), None, []
    for st in states:
        r = lm.run_cycle(st, Settings.defaults(), mem)
        mem = r.memory
        out = [s.bundle for s in (r.decision.selections if r.decision else ())]
    return out


def test_the_tie_follows_the_maps_history() -> None:
    assert spread(h(X)) & 15 == spread(h(Y)) & 15
    today = _state(95, (X, Y), T0 + MINUTE)  # the snapshot lists X first
    # a leader that starts now fills its map in the snapshot's order: X is met first
    assert _shed(today) == [X]
    # a leader that has known Y for a cycle already: Y keeps its earlier place, X comes after it
    assert _shed(_state(10, (Y,), T0), today) == [Y]
    # Y left and came back: it is put again, after X
    assert _shed(_state(10, (Y,), T0 - MINUTE), _state(10, (X,), T0), today) == [X]


def leader_maps(state, previous=None):  # type: ignore[no-untyped-def]
    return leader_maps_and_reports(state, previous)[0]


def test_maps_keep_places_and_drop_what_left() -> None:
    first = leader_maps(_state(10, (Y,), T0))
    assert set(first.bundles.live) == {Y, "u/ns/0x00000000_0xffffffff"}
    second = leader_maps(_state(10, (X,), T0 + MINUTE), first)
    assert Y not in second.bundles.live and X in second.bundles.live
    assert (Y, False) in second.bundles.ops
    # nothing changed: the very same history, so the map is not replayed
    assert leader_maps(_state(10, (X,), T0 + 2 * MINUTE), second) is second
    assert set(map_order(second.brokers)) == {HOT, COLD}


# --- the extensible broker load-data store (TableViewLoadDataStoreImpl over a TableView whose
# data is a ConcurrentHashMap): TransferShedder walks it, and its order keeps the same history
B0, B5, B17 = "broker-0:8080", "broker-5:8080", "broker-17:8080"


def _ext_state(names: tuple[str, ...], now: int):
    return state({b: broker(cpu=(20, 100), bundles={f"t/{b[:-5]}/0x00000000_0xffffffff": stats(1)})
                  for b in names}, now=now)


def test_the_extensible_store_keeps_its_history() -> None:
    from lbctl.loadmanager.extensible import ExtensibleLoadManager

    assert spread(h(B0)) & 15 == spread(h(B17)) & 15
    lm, conf = ExtensibleLoadManager(), Settings.defaults()
    today = _ext_state((B0, B17, B5), T0 + MINUTE)
    fresh = list(lm.run_cycle(today, conf).store)
    assert fresh.index(B0) < fresh.index(B17)  # filled in the snapshot's order
    first = lm.run_cycle(_ext_state((B17, B5), T0), conf)
    later = list(lm.run_cycle(today, conf, first.memory).store)
    assert later.index(B17) < later.index(B0)  # B17 published first and kept its place
    gone = lm.run_cycle(_ext_state((B0, B5), T0 + 2 * MINUTE), conf, first.memory)
    assert B17 not in gone.memory.store_map.live  # a tombstone removes it


def test_the_merged_reports_are_every_lastStats_in_the_bundle_maps_put_order() -> None:
    """The reports map the cycle's bundle data is built from holds every broker's ``lastStats``
    and iterates as ``updateBundleData`` puts them: a first fill's history is its keys in order;
    a later cycle's new keys come in that order after the known ones."""
    st = state({HOT: broker(bundles={f"t/ns/0x{k:08x}_0x{k + 1:08x}": stats(k) for k in range(40)}),
                COLD: broker(bundles={f"u/ns/0x{k:08x}_0x{k + 1:08x}": stats(k) for k in range(40)})},
               now=T0)
    maps, reports, order = leader_maps_and_reports(st)
    assert order is None  # no reader's table: the reports merged in the put order
    assert reports == {b: s for local in st.brokers.values() for b, s in local.lastStats.items()}
    assert list(maps.bundles.keys) == list(reports) == list(maps.bundles.live)
    assert list(reports)[:1] == [next(iter(st.brokers[map_order(maps.brokers)[0]].lastStats))]
    grown = state({**st.brokers, HOT: broker(bundles={
        **st.brokers[HOT].lastStats, "t/ns2/0x00000000_0xffffffff": stats(1)})}, now=T0 + MINUTE)
    later, reports2, _ = leader_maps_and_reports(grown, maps)
    assert reports2.keys() == {*reports, "t/ns2/0x00000000_0xffffffff"}
    assert later.bundles.keys == maps.bundles.keys + ("t/ns2/0x00000000_0xffffffff",)


def test_the_readers_table_is_the_merged_reports_with_their_put_order_apart() -> None:
    """A snapshot read from its text takes the reader's one-owner table (every ``lastStats``,
    in the snapshot's order) as the first fill's bundle map: the same entries as the reports
    merged without the reader's index, their put order returned apart and kept by the history
    (the same operations, capacity, live keys in the same order, the same next cycle), while
    the table stays the reader's own."""
    differs = 0
    for seed in range(8):
        st = parse_snapshot(random_snapshot(seed), "s")
        index = st.name_index()
        assert index is not None and index.owned is not None
        for b, local in st.brokers.items():
            assert list(index.stats[b].items()) == list(local.lastStats.items())
        maps, reports, order = leader_maps_and_reports(st)
        bare_maps, bare, bare_order = leader_maps_and_reports(replace(st, names=None))
        assert bare_order is None and reports is index.owned and order is not None
        assert list(order) == list(bare) and dict(reports) == bare
        assert maps == bare_maps and list(maps.bundles.in_order()) == list(bare_maps.bundles.live)
        assert map_order(maps.bundles) == map_order(bare_maps.bundles)
        differs += list(reports) != list(bare)  # the table's own order is another
        # the next cycle carries either history on alike (one report fewer, one bundle more)
        first = next(iter(st.brokers))
        later = replace(st, brokers={
            **{b: v for b, v in st.brokers.items() if b != first},
            "extra:8080": broker(bundles={"zz/new/0x00000000_0xffffffff": stats(3)})})
        nxt, nxt_reports, nxt_order = leader_maps_and_reports(later, maps)
        bare_nxt, bare_nxt_reports, _ = leader_maps_and_reports(later, bare_maps)
        assert nxt_order is None and list(nxt_reports) == list(bare_nxt_reports)
        assert nxt == bare_nxt and list(nxt.bundles.live) == list(bare_nxt.bundles.live)
        assert map_order(nxt.bundles) == map_order(bare_nxt.bundles)
    assert differs  # the test sees a table whose order is not the put order
