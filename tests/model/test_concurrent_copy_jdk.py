"""Copies of hash maps (``new ConcurrentHashMap<>(map)``, ``new HashMap<>(map)``) against the JDK.

``ExtensibleLoadManagerImpl.selectAsync`` copies the broker registry's ``ConcurrentHashMap`` into
a new one (3.0.1+; a ``HashMap`` in 3.0.0) and hands its key set to the selection strategy. The
copy constructor presizes (``putAll`` → ``tryPresize``), so the copy's table is not the
source's, and its order differs from both the source's and a ``HashMap``'s. A few lines of plain
JDK code (``java/MapOrder.java``, its ``COPY`` command) replay random registries: the children
sorted, put one at a time, copied, some brokers removed; :mod:`lbctl.model.javaorder` must give
the JDK's order. Skipped without a JDK (``pytest -rs`` says so).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lbctl.model.javaorder import (
    JavaHashMap,
    concurrent_copy_order,
    concurrent_order,
    hashmap_copy_capacity,
    hashmap_copy_order,
    java_hash_order,
    java_sorted,
)
from tests.jdk import needs_jdk, run_java


def _brokers(rng: random.Random) -> list[str]:
    n = rng.choice([rng.randint(1, 11), rng.randint(12, 40), rng.randint(41, 130)])
    style = rng.randrange(4)
    names: dict[str, None] = {}
    while len(names) < n:
        i = rng.randrange(1000)
        names[[f"broker-{i}.pulsar.svc:8080",
               f"pulsar-broker-{i}.pulsar-broker.pulsar.svc.cluster.local:8080",
               f"10.0.{rng.randrange(256)}.{rng.randrange(256)}:8080",
               f"b{i}"][style]] = None
    return list(names)


def _colliding(k: int) -> list[str]:
    """``k`` names of one ``String.hashCode`` (``Aa`` and ``BB`` collide, so do their words)."""
    out = []
    for i in range(k):
        word = "".join("Aa" if (i >> j) & 1 else "BB" for j in range(4))
        out.append(f"broker-{word}:8080")
    return out


def _script(cid: str, kind: str, keys: list[str], removed: list[str]) -> list[str]:
    return (["NEW\tchm"] + [f"PUT\t{k}" for k in java_sorted(keys)] + [f"COPY\t{kind}"]
            + [f"REM\t{k}" for k in removed] + [f"PRINT\t{cid}"])


@needs_jdk("the ConcurrentHashMap and HashMap copy orders")
def test_copies_of_a_registry_iterate_as_the_jdk(tmp_path: Path) -> None:
    rng = random.Random(20666)
    lines: list[str] = []
    expected: dict[str, list[str]] = {}
    for i in range(240):
        keys = _colliding(rng.randint(9, 16)) + _brokers(rng) if i % 6 == 0 else _brokers(rng)
        removed = rng.sample(keys, rng.randint(0, len(keys) // 3)) if i % 2 else []
        kind = "chm" if i % 3 else "hashmap"
        registry = concurrent_order(java_sorted(keys))
        copy = concurrent_copy_order(registry) if kind == "chm" else hashmap_copy_order(registry)
        cid = f"{kind}-{i}"
        lines += _script(cid, kind, keys, removed)
        expected[cid] = [k for k in copy if k not in set(removed)]
    got = run_java("MapOrder", tmp_path, lines)
    wrong = [cid for cid, order in expected.items() if got[cid] != order]
    assert not wrong, f"{len(wrong)} of {len(expected)} copies differ from the JDK: {wrong[:5]}"


@needs_jdk("the ConcurrentHashMap copy's presized table")
def test_a_copy_is_not_the_registry_nor_a_hashmap(tmp_path: Path) -> None:
    """Twelve brokers: the registry's map (12 single puts) has 32 buckets, its copy 64
    (``tryPresize`` goes on past its target), a ``HashMap`` 16 — three orders; the JDK's copy
    is the 64-bucket one. A model that iterated a ``HashMap`` (or the registry itself) fails."""
    keys = [f"broker-{i}.pulsar.svc:8080" for i in range(12)]
    registry = concurrent_order(java_sorted(keys))
    copy = concurrent_copy_order(registry)
    got = run_java("MapOrder", tmp_path, _script("c", "chm", keys, []))["c"]
    assert got == copy
    assert copy != java_hash_order(keys)
    assert copy != registry


@pytest.mark.parametrize("n", [0, 1, 5, 11, 12, 13, 24, 25, 48, 49, 96, 97, 1000])
def test_hashmap_copy_capacity_is_the_copy_constructors(n: int) -> None:
    assert hashmap_copy_capacity(n) == JavaHashMap.copy_of(f"k{i}" for i in range(n)).capacity


def test_java_sorted_orders_by_utf16_units() -> None:
    """``String.compareTo`` compares UTF-16 units: U+FFFD sorts after an astral character's
    high surrogate (U+D83D), where Python's code points put it before."""
    astral, bmp = "b\U0001f600", "b\ufffd"
    assert java_sorted([bmp, astral]) == [astral, bmp]
    assert sorted([bmp, astral]) == [bmp, astral]
