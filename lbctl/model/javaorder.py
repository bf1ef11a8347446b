"""Java ``HashMap`` iteration order, so that ties break the way Pulsar breaks them.

Pulsar's load manager keeps brokers and bundles in ``ConcurrentHashMap``/``HashMap``/``HashSet``
and resolves many ties by "first encountered" (UniformLoadShedder's max broker, the placement
strategies' best list) or by stable sorts over such maps (the greedy bundle selectors). To give the
same answer, lbctl iterates keys in the order a Java ``HashMap`` of ``String`` keys would:

* ``h = String.hashCode()`` (``h = 31*h + c`` over UTF-16 code units, 32-bit),
* bucket ``(h ^ (h >>> 16)) & (capacity - 1)``, buckets in ascending index,
* within a bucket, insertion order,
* capacity 16, doubled whenever the size exceeds 0.75 × capacity (insertion one by one), or
  ``tableSizeFor(ceil(n / 0.75))`` for a copy (``new HashMap<>(map)``), which may be smaller
  than 16 (a copy of 2 keys has 4 buckets). That is the JDK 19+ presizing (JDK-8281631) of the
  Java 21 runtime current Pulsar images ship; JDK 8–18 used ``tableSizeFor(n / 0.75 + 1)``,
  which differs when ``n`` is a multiple of 3.

``ConcurrentHashMap`` uses the same bucket rule; it may order entries of one bin differently after
a resize, a difference lbctl does not model (documented in the README).
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def java_string_hash(s: str) -> int:
    """``String.hashCode()`` as an unsigned 32-bit value."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def _spread(h: int) -> int:
    return h ^ (h >> 16)


def _table_size_for(cap: int) -> int:
    n = 1
    while n < cap:
        n <<= 1
    return n


def hashmap_capacity(size: int, *, copied: bool = False) -> int:
    """Table capacity of a ``HashMap`` holding ``size`` keys.

    ``copied``: the map was built by ``new HashMap<>(other)`` (presized) instead of one ``put`` at a
    time.
    """
    if copied:
        # HashMap.putMapEntries presizes an empty table to tableSizeFor(ceil(s / loadFactor));
        # an empty source leaves the table unallocated, i.e. the default 16 on first use.
        if size == 0:
            return 16
        return _table_size_for(math.ceil(size / 0.75))
    cap = 16
    while size > cap * 0.75:
        cap <<= 1
    return cap


def java_hash_order(keys: Iterable[str], *, copied: bool = False) -> list[str]:
    """``keys`` (in insertion order) re-ordered as a Java ``HashMap`` would iterate them."""
    items = list(dict.fromkeys(keys))
    cap = hashmap_capacity(len(items), copied=copied)
    mask = cap - 1
    decorated = [(_spread(java_string_hash(k)) & mask, i, k) for i, k in enumerate(items)]
    decorated.sort()
    return [k for _, _, k in decorated]
