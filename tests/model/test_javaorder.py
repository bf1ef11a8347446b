"""Java ``String.hashCode`` and ``HashMap`` iteration order.

The order vector ``{"1/1/0x00000000_0xffffffff", "2/2/0x00000000_0xffffffff"}`` → 2/2 first is the
one ``ModularLoadManagerImplTest#testLoadShedding`` depends on (spec §10); the resize and presizing
rules follow ``java.util.HashMap`` (``putVal``/``resize``, ``putMapEntries``) and
``ConcurrentHashMap.addCount``.
"""

from __future__ import annotations

import pytest

from lbctl.model.javaorder import (
    ConcurrentOrder,
    JavaConcurrentHashMap,
    JavaHashMap,
    concurrent_capacity,
    concurrent_order,
    guava_expected_size_capacity,
    hashmap_capacity,
    hashmap_order,
    java_hash_order,
    java_string_hash,
    multimap_capacity,
    multimap_key_order,
    split_chain,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hello", 99162322),
        ("", 0),
        ("a", 97),
        ("Aa", 2112),  # the classic collision …
        ("BB", 2112),  # … with "Aa"
        ("polygenelubricants", 0x80000000),  # Integer.MIN_VALUE, as unsigned
        ("10", 1567),  # 31 * '1' + '0'
        ("😀", 31 * 0xD83D + 0xDE00),  # a surrogate pair hashes as two UTF-16 code units
    ],
)
def test_string_hash_code(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


def test_string_hash_wraps_to_32_bits() -> None:
    h = java_string_hash("persistent://public/default/a-rather-long-topic-name-partition-17")
    assert 0 <= h <= 0xFFFFFFFF


def test_hash_map_order_of_the_load_shedding_test() -> None:
    """Buckets 13 (1/1) and 5 (2/2) of 16: a HashMap iterates 2/2 first."""
    keys = ["1/1/0x00000000_0xffffffff", "2/2/0x00000000_0xffffffff"]
    assert java_hash_order(keys) == [keys[1], keys[0]]
    assert java_hash_order(reversed(keys)) == [keys[1], keys[0]]  # independent of insertion


def test_same_bucket_keeps_insertion_order() -> None:
    # "0" (hash 48) and "11" (hash 1568) share bucket 0 of 16
    assert java_hash_order(["11", "0"]) == ["11", "0"]
    assert java_hash_order(["0", "11"]) == ["0", "11"]


def test_resize_at_thirteen_keys() -> None:
    """Capacity 16 holds 12 keys (threshold 0.75); the 13th doubles the table to 32."""
    assert hashmap_capacity(0) == 16
    assert hashmap_capacity(12) == 16
    assert hashmap_capacity(13) == 32
    assert hashmap_capacity(24) == 32
    assert hashmap_capacity(25) == 64
    twelve = [str(i) for i in range(12)]
    # 16 buckets: "0" and "11" in bucket 0, "1".."9" in 1..9, "10" (1567) in bucket 15
    assert java_hash_order(twelve) == ["0", "11", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]
    # 32 buckets: "11" → 0, "12" → 1, "0".."9" → 16..25, "10" → 31
    assert java_hash_order([*twelve, "12"]) == [
        "11", "12", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"
    ]


def test_duplicates_are_one_key() -> None:
    assert java_hash_order(["b", "a", "b"]) == ["a", "b"]


def test_concurrent_hash_map_resizes_one_key_earlier() -> None:
    """``ConcurrentHashMap.addCount`` resizes when the size *reaches* 0.75 × capacity."""
    assert concurrent_capacity(11) == 16
    assert concurrent_capacity(12) == 32
    assert hashmap_capacity(12) == 16
    twelve = [str(i) for i in range(12)]
    # 32 buckets already at 12 keys: "11" → 0, "0".."9" → 16..25, "10" → 31
    assert concurrent_order(twelve) == ["11", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]


def test_copied_map_is_presized() -> None:
    """``new HashMap<>(m)`` presizes to ``tableSizeFor((int)(n / 0.75f + 1))`` (JDK 17
    ``putMapEntries``)."""
    caps = []
    for n in (1, 2, 3, 5, 6, 11, 12, 24):
        caps.append(JavaHashMap.copy_of(str(i) for i in range(n)).capacity)
    assert caps == [2, 4, 8, 8, 16, 16, 32, 64]
    keys = ["1/1/0x00000000_0xffffffff", "2/2/0x00000000_0xffffffff"]
    # a copy of the two keys has 4 buckets and both fall in bucket 1: source order (2/2 first)
    assert JavaHashMap.copy_of([keys[1], keys[0]]).keys() == [keys[1], keys[0]]


def test_transfer_reverses_keys_before_the_last_run() -> None:
    """``ConcurrentHashMap.transfer``: [a(lo), b(lo), c(hi)] → lo [b, a], hi [c]; [a(hi), b(lo),
    c(hi), d(lo), e(lo)] → lo [b, d, e] (d, e are the last run), hi [c, a]."""
    assert split_chain(["a", "b", "c"], [0, 0, 1]) == (["b", "a"], ["c"])
    assert split_chain(["a", "b", "c", "d", "e"], [1, 0, 1, 0, 0]) == (["b", "d", "e"], ["c", "a"])
    assert split_chain(["a", "b"], [1, 1]) == ([], ["a", "b"])


def test_concurrent_order_differs_from_bucket_then_insertion() -> None:
    """The reordering the issue reported: 12 StatefulSet-named brokers. From the 12th key the
    map has resized once, and a bin of three keys comes out reversed."""
    brokers = [f"pulsar-broker-{i}.pulsar-broker.pulsar.svc.cluster.local:8080" for i in range(12)]
    naive = java_hash_order(brokers, capacity=concurrent_capacity(12))
    assert concurrent_order(brokers) != naive
    assert sorted(concurrent_order(brokers)) == sorted(brokers)
    m = JavaConcurrentHashMap()
    for b in brokers:
        m.put(b)
    assert m.capacity == 32 and m.keys() == concurrent_order(brokers)


def test_hashmap_model_matches_bucket_order_without_trees() -> None:
    keys = [f"broker-{i}.pulsar.svc:8080" for i in range(200)]
    assert hashmap_order(keys) == java_hash_order(keys)


@pytest.mark.parametrize("n", [1, 11, 12, 13, 47, 48, 500, 5000])
def test_concurrent_order_by_lineage_equals_full_simulation(n: int) -> None:
    keys = [f"tenant-{i % 7}/ns-{i % 13}/0x{(i * 2654435761) & 0xffffffff:08x}_0xffffffff"
            for i in range(n)]
    lazy = ConcurrentOrder(keys, exact_limit=0)
    full = JavaConcurrentHashMap()
    for k in keys:
        full.put(k)
    assert lazy.capacity == full.capacity
    assert [k for b in range(full.capacity) for k in lazy.bucket(b)] == full.keys()


def test_guava_multimap_buckets() -> None:
    """``Maps.capacity(12)``: 17 up to Guava 31.1 (→ 32 buckets), 16 from Guava 32."""
    assert guava_expected_size_capacity(12, 32) == 17
    assert guava_expected_size_capacity(12, 16) == 16
    assert multimap_capacity(12, 16) == 16 and multimap_capacity(13, 16) == 32
    assert multimap_capacity(24, 32) == 32 and multimap_capacity(25, 32) == 64
    # a multimap cleared and reused keeps the table it grew to
    assert multimap_capacity(3, 16, reused=64) == 64
    keys = [f"broker-{i}.pulsar.svc:8080" for i in range(6)]
    order16, cap16 = multimap_key_order(keys, 16)
    order32, cap32 = multimap_key_order(keys, 32)
    assert (cap16, cap32) == (16, 32)
    assert order16 == java_hash_order(keys, capacity=16)
    assert order32 == java_hash_order(keys, capacity=32)


def test_string_hash_non_ascii_uses_utf16_code_units() -> None:
    # Java: "ÄÖü€".hashCode() == 6060866; "😀" is two UTF-16 units (0xd83d, 0xde00).
    assert java_string_hash("ÄÖü€") == 6060866
    assert java_string_hash("😀") == (31 * 0xD83D + 0xDE00) & 0xFFFFFFFF


def test_history_then_puts_is_then() -> None:
    """:meth:`MapHistory.then_puts` (the bulk form the leader's bundle map uses) gives the same
    history as :meth:`MapHistory.then` with the puts, then the removals, one at a time."""
    import random

    from lbctl.model.javaorder import MapHistory

    rng = random.Random(11)
    keys = [f"t/ns/{i}" for i in range(300)]
    a = b = MapHistory()
    for _ in range(30):
        puts = rng.sample(keys, rng.randint(0, 60))
        removes = rng.sample(list(a.live), rng.randint(0, len(a.live)))
        a = a.then([(k, True) for k in puts] + [(k, False) for k in removes])
        b = b.then_puts(puts, removes)
        assert (a.ops, list(a.live), a.capacity) == (b.ops, list(b.live), b.capacity)


def test_history_first_fill_from_a_dict_is_then() -> None:
    """A first fill from a dict (the leader's merged reports) keeps that dict as the live map
    instead of copying its keys; the history is the one :meth:`MapHistory.then` makes (equal,
    the same keys in order, the same capacity), and later puts and removals leave the caller's
    dict untouched; once the map changes, it holds none of that dict's values."""
    from lbctl.model.javaorder import MapHistory

    reports = {f"t/ns-{i}/0x00000000_0xffffffff": i for i in range(50)}
    a = MapHistory().then([(k, True) for k in reports])
    b = MapHistory().then_puts(reports)
    assert a == b and list(b.live) == list(reports) and b.capacity == a.capacity == 128
    gone = list(reports)[:5]
    a2 = a.then([("t/new/0x00000000_0xffffffff", True)] + [(k, False) for k in gone])
    b2 = b.then_puts(["t/new/0x00000000_0xffffffff"], gone)
    assert (a2.ops, list(a2.live), a2.capacity) == (b2.ops, list(b2.live), b2.capacity)
    assert len(reports) == 50 and "t/new/0x00000000_0xffffffff" not in reports
    # a later change keeps no value of the first fill (a replay does not hold old reports alive)
    assert set(b2.live.values()) == {None}


def test_history_first_fill_from_a_table_in_another_order_keeps_the_put_order() -> None:
    """A first fill from a lookup table whose own order is not the put order (the reader's
    one-owner table, in the snapshot's order; ``order`` the leader's puts,
    ``ModularLoadManagerImpl.updateBundleData``): the same history as puts in ``order`` (the
    same operations, capacity and map order, live keys in put order through ``in_order``), the
    table kept as is, and later puts and removals carried on as from the plain fill."""
    import random

    from lbctl.model.javaorder import ConcurrentOrder, MapHistory

    rng = random.Random(5)
    for n in (3, 40, 5000):
        order = [f"t/ns-{i}/0x00000000_0xffffffff" for i in range(n)]
        table = dict.fromkeys(rng.sample(order, n), 0)  # the same keys, another order
        plain = MapHistory().then_puts(order)
        kept = MapHistory().then_puts(table, order=tuple(order))
        assert kept == plain and kept.capacity == plain.capacity and kept.live is table
        assert list(kept.in_order()) == order == list(plain.in_order())
        assert (ConcurrentOrder((), history=kept).order()
                == ConcurrentOrder((), history=plain).order())
        gone = rng.sample(order, n // 3)
        new = [f"u/ns-{i}/0x00000000_0xffffffff" for i in range(n // 2)]
        for a, b in ((kept.then_puts(new, gone), plain.then_puts(new, gone)),
                     (kept.then([(k, False) for k in gone] + [(k, True) for k in new]),
                      plain.then([(k, False) for k in gone] + [(k, True) for k in new]))):
            assert (a.ops, list(a.in_order()), a.capacity) == (b.ops, list(b.live), b.capacity)
            assert list(a.live) == list(b.live) and a.order is None
        assert list(table) != order or n < 4  # the table's own order was another
