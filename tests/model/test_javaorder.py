"""Java ``String.hashCode`` and ``HashMap`` iteration order.

The order vector ``{"1/1/0x00000000_0xffffffff", "2/2/0x00000000_0xffffffff"}`` → 2/2 first is the
one ``ModularLoadManagerImplTest#testLoadShedding`` depends on (spec §10); the resize and presizing
rules follow ``java.util.HashMap`` (``putVal``/``resize``, ``putMapEntries``) and
``ConcurrentHashMap.addCount``.
"""

from __future__ import annotations

import pytest

from lbctl.model.javaorder import (
    concurrent_capacity,
    concurrent_order,
    copy_capacity,
    copy_order,
    hashmap_capacity,
    java_hash_order,
    java_string_hash,
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
    """``new HashMap<>(m)`` presizes to ``tableSizeFor((int)(n / 0.75f + 1))`` (JDK 8–18)."""
    assert [copy_capacity(n) for n in (1, 2, 3, 5, 6, 11, 12, 24)] == [2, 4, 8, 8, 16, 16, 32, 64]
    keys = ["1/1/0x00000000_0xffffffff", "2/2/0x00000000_0xffffffff"]
    # a copy of the two keys has 4 buckets and both fall in bucket 1: source order (2/2 first)
    assert java_hash_order(keys, copied=True) == [keys[1], keys[0]]
    assert copy_order(keys) == [keys[1], keys[0]]


def test_string_hash_non_ascii_uses_utf16_code_units() -> None:
    # Java: "ÄÖü€".hashCode() == 6060866; "😀" is two UTF-16 units (0xd83d, 0xde00).
    assert java_string_hash("ÄÖü€") == 6060866
    assert java_string_hash("😀") == (31 * 0xD83D + 0xDE00) & 0xFFFFFFFF
