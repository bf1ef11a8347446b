"""``getBundleDataForLoadShedding()``'s order with colliding bundle names, against the JDK.

``ModularLoadManagerImpl.getBundleDataForLoadShedding`` collects the leader's ``bundleData``
``ConcurrentHashMap`` (system namespaces filtered out) into a ``HashMap`` with
``Collectors.toMap``. Nine bundle names in one bucket of a table under 64 make JDK 17's
``treeifyBin`` double it early (and later make a tree bin), so the order the shedders start
from is not the one the count alone gives. :meth:`lbctl.model.loaddata.LoadData.shedding_order`
fills such small maps put by put (:func:`lbctl.model.javaorder.hash_fill`).
``java/MapOrder.java`` (plain JDK, no Pulsar: ``NEW chm``, ``PUT``, ``TOMAP``, ``PRINT``) gives
the JDK's order. Skipped, with the reason shown by ``pytest -rs``, without ``javac``/``java``."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from lbctl.model.javaorder import java_string_hash, spread
from lbctl.model.loaddata import LoadData
from tests.factories import broker, bundle_data, load
from tests.jdk import needs_jdk, run_java

pytestmark = needs_jdk("the shedding map's order with colliding bundle names is not checked")

#: 32 bundle names of one hashCode ("Aa" and "BB" hash alike): one bucket in every table
SAME = [f"t/ns-{''.join(p)}/0x00000000_0xffffffff" for p in itertools.product(["Aa", "BB"],
                                                                               repeat=5)]


def _mates(mask: int, n: int) -> list[str]:
    """``n`` bundle names in one bucket of a ``mask + 1`` table, their hashes distinct."""
    by_bucket: dict[int, list[str]] = {}
    for i in itertools.count():
        name = f"t/mates/0x{i:08x}_0x{i + 1:08x}"
        mates = by_bucket.setdefault(spread(java_string_hash(name)) & mask, [])
        mates.append(name)
        if len(mates) == n:
            return mates
    raise AssertionError("unreachable")


POOL = SAME + _mates(15, 12) + [f"t/plain/0x{i:08x}_0x{i + 1:08x}" for i in range(30)]


def _data(names: list[str]) -> LoadData:
    """Two brokers owning ``names``; the leader's ``bundleData`` filled in their order."""
    half = len(names) // 2
    return load({"a": broker(bundle_names=tuple(names[:half])),
                 "b": broker(bundle_names=tuple(names[half:]))},
                bundle_data={b: bundle_data() for b in names})


def _script(cid: str, names: list[str]) -> list[str]:
    return ["NEW\tchm", *(f"PUT\t{b}" for b in names), "TOMAP", f"PRINT\t{cid}"]


def test_colliding_bundle_names_come_in_the_jdks_order(tmp_path: Path) -> None:
    """Random bundle sets of up to 40 names (colliding, bucket-mates of 16, plain): the whole
    map's order and each broker's share of it are the JDK's ``Collectors.toMap`` order."""
    rng = random.Random(2404)
    cases: dict[str, list[str]] = {}
    for c in range(250):
        names = rng.sample(POOL, rng.randint(2, 40))
        if c % 3 == 0:  # many colliding names: chains of 9 below 64 buckets
            names = rng.sample(SAME, rng.randint(9, 14)) + rng.sample(POOL[32:], rng.randint(0, 10))
            rng.shuffle(names)
        cases[str(c)] = list(dict.fromkeys(names))
    java = run_java("MapOrder", tmp_path, [ln for cid, ns in cases.items()
                                           for ln in _script(cid, ns)])
    wrong = []
    for cid, names in cases.items():
        data = _data(names)
        whole = data.shedding_order(names)
        part = data.shedding_order(names[::2])
        if whole != java[cid] or part != [b for b in java[cid] if b in set(names[::2])]:
            wrong.append(cid)
    assert not wrong, f"{len(wrong)} of {len(cases)} orders differ from the JDK: {wrong[:5]}"


def test_ten_colliding_names_grow_the_shedding_map_early(tmp_path: Path) -> None:
    """10 colliding names and 4 plain ones: 14 keys, 32 buckets by the count, but the 9th
    colliding put resizes 16 to 32 and the 10th 32 to 64 (``treeifyBin`` below 64), so the
    plain names whose 64-bucket index differs come where the JDK puts them."""
    plain = [b for b in POOL[44:] if spread(java_string_hash(b)) & 32][:4]
    names = SAME[:10] + plain
    java = run_java("MapOrder", tmp_path, _script("x", names))["x"]
    assert _data(names).shedding_order(names) == java
    # teeth: the 32-bucket order the count gives is another one
    by_count = sorted(names, key=lambda b: (spread(java_string_hash(b)) & 31, java.index(b)))
    assert by_count != java
