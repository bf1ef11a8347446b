"""``java_hash_order`` when a bucket's chain becomes a tree bin, against the JDK.

JDK 17 ``HashMap.putVal`` calls ``treeifyBin`` when a chain reaches 9 keys: in a table of 64
buckets or more the chain becomes a red-black tree bin, which iterates its root first
(``TreeNode.treeify`` → ``moveRootToFront``) and links each later key right after its tree parent
(``putTreeVal``); ``resize`` splits a tree bin keeping the link order, and turns a half of 6 keys
or fewer back into a chain. Below 64 buckets the table doubles instead. Strings with equal
``hashCode`` s (``"Aa"``/``"BB"`` blocks) and names that share a bucket by chance get there.
``java/MapOrder.java`` (plain JDK, no Pulsar) gives the JDK's order for fresh, presized and
cleared ``HashSet`` s; :func:`lbctl.model.javaorder.java_hash_order` must give the same (and the
plain bucket-then-insertion order, what it gave before, must not always). Skipped, with the reason
shown by ``pytest -rs``, without ``javac``/``java``."""

from __future__ import annotations

import itertools
import random

import pytest

from lbctl.model.javaorder import (
    hashmap_capacity,
    hashset_copy_capacity,
    hashset_copy_order,
    java_hash_order,
    java_string_hash,
    spread,
)
from tests.jdk import needs_jdk, run_java

pytestmark = needs_jdk("tree bins' iteration order is not checked against HashMap")

#: 64 strings with one hashCode ("Aa" and "BB" hash alike)
SAME_HASH = ["".join(p) for p in itertools.product(["Aa", "BB"], repeat=6)]


@pytest.fixture(scope="module")
def jdk(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    build = tmp_path_factory.mktemp("treebins")
    return lambda lines: run_java("MapOrder", build, lines)


def _plain(keys: list[str], capacity: int | None) -> list[str]:
    """By bucket, then insertion order: a map without tree bins."""
    items = list(dict.fromkeys(keys))
    mask = (capacity or hashmap_capacity(len(items))) - 1
    return [k for _, _, k in sorted((spread(java_string_hash(k)) & mask, i, k)
                                    for i, k in enumerate(items))]


def _bucket_mates(rng: random.Random, n: int, mask: int) -> list[str]:
    """``n`` broker-like names in one bucket of a ``mask + 1`` table, their hashes distinct."""
    by_bucket: dict[int, list[str]] = {}
    while True:
        name = f"broker-{rng.randrange(10**9)}.pulsar.svc:8080"
        mates = by_bucket.setdefault(spread(java_string_hash(name)) & mask, [])
        mates.append(name)
        if len(mates) == n:
            return mates


def test_tree_bins_iterate_as_the_jdk(jdk) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(1803)
    # keys, how the set is made, its table: None fresh, -1 a copy's, -N kept N (may grow)
    cases: dict[str, tuple[list[str], str, int | None]] = {}
    for c in range(120):
        colliding = (rng.sample(SAME_HASH, rng.choice([9, 10, 13, 20, 40]))
                     if c % 2 else _bucket_mates(rng, rng.choice([9, 11, 16, 25]), 63))
        others = [f"pulsar-broker-{rng.randrange(10**6)}:8080"
                  for _ in range(rng.choice([0, 3, 40, 60, 200]))]
        keys = colliding + others
        rng.shuffle(keys)
        keys = list(dict.fromkeys(keys))
        kind = ("fresh", "sized", "copy", "kept")[c % 4]
        if kind == "fresh":  # new HashSet<>(): 16 buckets, doubling (or for a long chain)
            cases[str(c)] = (keys, "NEW\thashset", None)
        elif kind == "sized":  # new HashSet<>(n) with room for every key
            n = max(64, hashmap_capacity(len(keys)))
            cases[str(c)] = (keys, f"NEW\thashset\t{n}", n)
        elif kind == "copy":  # new HashSet<>(list): HashMap(max((int) (n / .75f) + 1, 16))
            cases[str(c)] = (keys, f"NEW\thashset\t{hashset_copy_capacity(len(keys))}", -1)
        else:  # a set kept from a larger fill, cleared and refilled: its table stays
            # (the refill may outgrow it: java_hash_order starts from it)
            earlier = [f"old-{i}" for i in range(rng.choice([60, 100, 300]))]
            cases[str(c)] = (keys, "\n".join(["NEW\thashset", *(f"PUT\t{k}" for k in earlier),
                                              "CLEAR"]), -hashmap_capacity(len(earlier)))
    script: list[str] = []
    for cid, (keys, new, _) in cases.items():
        script += [new, *(f"PUT\t{k}" for k in keys), f"PRINT\t{cid}"]
    java = jdk("\n".join(script).split("\n"))
    ours = {cid: hashset_copy_order(keys) if table == -1
            else java_hash_order(keys, start=-table) if table is not None and table < 0
            else java_hash_order(keys, capacity=table) for cid, (keys, _, table) in cases.items()}
    wrong = [cid for cid in cases if ours[cid] != java[cid]]
    assert not wrong, f"{len(wrong)} of {len(cases)} orders differ from the JDK: {wrong[:5]}"
    # teeth: the order without tree bins (java_hash_order before) differs in most cases
    plain = {cid: _plain(keys, hashset_copy_capacity(len(keys)) if table == -1
                         else max(-table, hashmap_capacity(len(keys))) if table and table < 0
                         else table) for cid, (keys, _, table) in cases.items()}
    assert sum(plain[cid] != java[cid] for cid in cases) > len(cases) // 2


def test_a_long_chain_in_a_short_table_grows_the_table(jdk) -> None:  # type: ignore[no-untyped-def]
    """Nine keys in one bucket of a 16-bucket table: the table doubles instead (twice, to 64),
    and a tenth key of that bucket makes it a tree; the other keys come by the 64 buckets."""
    rng = random.Random(7)
    keys = SAME_HASH[:10] + [f"k{rng.randrange(10**6)}" for _ in range(6)]
    rng.shuffle(keys)
    java = jdk(["NEW\thashset", *(f"PUT\t{k}" for k in keys), "PRINT\tx"])
    assert java_hash_order(keys) == java["x"]
    assert _plain(keys, None) != java["x"]
