"""Java hash-map iteration order, so that ties break the way Pulsar breaks them.

Pulsar's load manager keeps brokers and bundles in ``ConcurrentHashMap``/``HashMap``/``HashSet``
and resolves many ties by "first encountered" (UniformLoadShedder's max broker, the placement
strategies' best list) or by stable sorts over such maps (the greedy bundle selectors). To give the
same answer, lbctl iterates keys in the order Java would:

* ``h = String.hashCode()`` (``h = 31*h + c`` over UTF-16 code units, 32-bit);
* bucket ``(h ^ (h >>> 16)) & (capacity - 1)``, buckets in ascending index, and within a bucket the
  order of insertion;
* the capacity depends on how the map was filled:

  - ``HashMap``/``HashSet`` filled one ``put`` at a time: 16, doubled whenever the size exceeds
    0.75 × capacity (:func:`hashmap_capacity`);
  - ``ConcurrentHashMap``: 16, doubled when the size reaches 0.75 × capacity
    (:func:`concurrent_capacity`);
  - a copy ``new HashMap<>(map)``: ``tableSizeFor((int)(n / 0.75f + 1))`` (JDK 17's rule), its
    buckets filled in the source map's order (:func:`copy_order`);
  - a map collected from another one (``Collectors.toMap`` over ``chm.entrySet()``): a ``HashMap``
    filled one ``put`` at a time, in the source's order (:func:`rehashed_order`).

Not modelled: ``ConcurrentHashMap`` may reorder the entries of one bin when it resizes, and bins of
eight or more entries become trees. Both only matter for keys that share a bucket.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from operator import mul

_POWERS: list[int] = [1]  # 31**k mod 2**32, highest power first once reversed per call


def _powers(n: int) -> list[int]:
    while len(_POWERS) < n:
        _POWERS.append((_POWERS[-1] * 31) & 0xFFFFFFFF)
    return _POWERS


@lru_cache(maxsize=1 << 16)
def java_string_hash(s: str) -> int:
    """``String.hashCode()`` as an unsigned 32-bit value.

    ``h = s[0]*31^(n-1) + … + s[n-1]`` (mod 2^32) over UTF-16 code units, summed in C with
    ``map`` rather than one Python step per character.
    """
    if s.isascii():
        units: bytes | list[int] = s.encode("ascii")
    else:
        data = s.encode("utf-16-be")
        units = [(data[i] << 8) | data[i + 1] for i in range(0, len(data), 2)]
    n = len(units)
    powers = _powers(n)
    total: int = sum(map(mul, units, reversed(powers[:n])))
    return total & 0xFFFFFFFF


def spread(h: int) -> int:
    """``HashMap.hash``: the high half folded into the low half."""
    return h ^ (h >> 16)


def _table_size_for(cap: int) -> int:
    n = 1
    while n < cap:
        n <<= 1
    return n


def hashmap_capacity(size: int) -> int:
    """Capacity of a ``HashMap`` after ``size`` single ``put`` calls."""
    cap = 16
    while size > cap * 3 // 4:
        cap <<= 1
    return cap


def concurrent_capacity(size: int) -> int:
    """Capacity of a ``ConcurrentHashMap`` (default constructor) holding ``size`` keys."""
    cap = 16
    while size >= cap * 3 // 4:
        cap <<= 1
    return cap


def copy_capacity(size: int) -> int:
    """Capacity of ``new HashMap<>(map)`` with ``size`` entries (JDK 17)."""
    return _table_size_for(max(1, int(size / 0.75 + 1.0)))


def java_hash_order(
    keys: Iterable[str], *, capacity: int | None = None, copied: bool = False,
    size: int | None = None,
) -> list[str]:
    """``keys`` (given in insertion order) in the order a Java hash map iterates them.

    ``capacity``: the table size; by default that of a ``HashMap`` filled one ``put`` at a time
    with ``size`` keys (``len(keys)`` unless given, e.g. when ``keys`` is a subset of a larger map).
    ``copied=True``: the keys are those of a ``new HashMap<>(map)`` copy of a ``ConcurrentHashMap``
    of ``size`` keys — see :func:`copy_order`.
    """
    items = list(dict.fromkeys(keys))
    n = len(items) if size is None else size
    if copied:
        return copy_order(items, n)
    mask = (capacity or hashmap_capacity(n)) - 1
    decorated = [(spread(java_string_hash(k)) & mask, i, k) for i, k in enumerate(items)]
    decorated.sort()
    return [k for _, _, k in decorated]


def concurrent_order(keys: Iterable[str], size: int | None = None) -> list[str]:
    """Iteration order of a ``ConcurrentHashMap`` of ``size`` keys (default: ``len(keys)``)."""
    items = list(dict.fromkeys(keys))
    n = len(items) if size is None else size
    return java_hash_order(items, capacity=concurrent_capacity(n))


def copy_order(keys: Iterable[str], size: int | None = None) -> list[str]:
    """Order of ``new HashMap<>(chm)`` where ``chm`` is a ``ConcurrentHashMap`` of ``size`` keys."""
    items = list(dict.fromkeys(keys))
    n = len(items) if size is None else size
    return rehashed_order(items, capacity=copy_capacity(n), source_capacity=concurrent_capacity(n))


def rehashed_order(
    keys: Iterable[str], *, capacity: int, source_capacity: int
) -> list[str]:
    """Order of a hash map of ``capacity`` filled by iterating another one of ``source_capacity``.

    Keys sharing a bucket of the new map keep the source's order, so the sort key is
    (new bucket, source bucket, insertion). ``keys`` may be a subset of the map's keys: the order
    of a subset depends only on its own hashes and the two capacities.
    """
    copy_mask, src_mask = capacity - 1, source_capacity - 1
    decorated = []
    for i, k in enumerate(dict.fromkeys(keys)):
        h = spread(java_string_hash(k))
        decorated.append((h & copy_mask, h & src_mask, i, k))
    decorated.sort()
    return [d[3] for d in decorated]
