"""Ported: ``TopKBundlesTest#testPartitionSortCompareToContractViolationIssue`` (apache/pulsar
``pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/extensions/models/``, the
stored version that has it; Pulsar issue #24754, fixed by PR #24772).

The Java test fills 1000 ``NamespaceBundleStats`` from ``new Random(0)`` — figures straddling
the old comparator's thresholds (100 kB/s, 100 msg/s, 500 topics + connections, 100 kB of
cache) — and asks ``TopKBundles.partitionSort`` for the top 100: with
``NamespaceBundleStats.compareTo`` after PR #24772 (figures rounded to a resolution, an order)
it must not throw. lbctl sorts the same entries the same way
(:func:`lbctl.model.brokerload.partition_sort`, JDK 17's TimSort for the prefix). With the
threshold comparator of the releases before the fix (``topKComparator``) the same sort throws
"Comparison method violates its general contract!", and the broker publishes no top bundles.

The draws are ``java.util.Random``'s (its documented 48-bit linear congruential generator,
written out below), checked against the JDK when one is on the PATH.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from lbctl.config import Settings
from lbctl.model.brokerload import (
    compare_stats,
    compare_stats_threshold,
    partition_sort,
    top_k_bundles,
)
from lbctl.model.javasort import ComparisonContractViolation
from lbctl.model.load import NamespaceBundleStats
from lbctl.versions import resolve
from tests.jdk import needs_jdk, run_java

_MASK = (1 << 48) - 1


class JavaRandom:
    """``java.util.Random``: ``setSeed``'s scramble, ``next(bits)``, ``nextDouble`` and
    ``nextInt(bound)`` as the JDK documents them."""

    def __init__(self, seed: int) -> None:
        self.seed = (seed ^ 0x5DEECE66D) & _MASK

    def next(self, bits: int) -> int:
        self.seed = (self.seed * 0x5DEECE66D + 0xB) & _MASK
        r = (self.seed >> (48 - bits)) & 0xFFFFFFFF
        return r - (1 << 32) if r >= 1 << 31 else r

    def next_double(self) -> float:
        return ((self.next(26) << 27) + self.next(27)) * 2.0 ** -53

    def next_int(self, bound: int) -> int:
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if ((u - r + m + (1 << 31)) % (1 << 32)) - (1 << 31) >= 0:  # int overflow test
                return r
            u = self.next(31)


def _draws(seed: int, rows: int) -> list[tuple[float, float, float, float, int, int]]:
    rnd = JavaRandom(seed)
    return [(rnd.next_double(), rnd.next_double(), rnd.next_double(), rnd.next_double(),
             rnd.next_int(375), rnd.next_int(4 * 75000)) for _ in range(rows)]


def _entries() -> list[tuple[str, NamespaceBundleStats]]:
    """The Java test's 1000 bundles, keyed by their inbound throughput as it keys them."""
    out = []
    for i, (a, b, c, d, producers, cache) in enumerate(_draws(0, 1000)):
        s = NamespaceBundleStats(msgThroughputIn=4 * 75000 * a,
                                 msgThroughputOut=75000000 - (4 * (75000 * b)),
                                 msgRateIn=4 * 75 * c, msgRateOut=75000 - (4 * 75 * d),
                                 topics=i, consumerCount=i, producerCount=4 * producers,
                                 cacheSize=75000000 - cache)
        out.append((f"bundle-{s.msgThroughputIn!r}", s))
    return out


def test_partition_sort_compare_to_contract_violation_issue() -> None:
    arr = _entries()
    partition_sort(arr, 100, compare_stats)  # does not throw
    top = [s for _, s in arr[:100]]
    rest = [s for _, s in arr[100:]]
    assert all(compare_stats(t, r) >= 0 for t in top for r in rest)
    tops = top_k_bundles(_entries(), 100, Settings.defaults(resolve("4.2.5")))
    assert len(tops) == 100


def test_partition_sort_compare_to_contract_violation_issue_before_24772() -> None:
    """The threshold comparator (4.0.6, one release before the fix on the 4.0 line) is not an
    order, and the JDK's TimSort notices on these figures."""
    with pytest.raises(ComparisonContractViolation):
        partition_sort(_entries(), 100, compare_stats_threshold)
    assert top_k_bundles(_entries(), 100, Settings.defaults(resolve("4.0.6"))) == ()


@needs_jdk("java.util.Random's draws behind the ported TopKBundlesTest case")
def test_the_draws_are_java_util_randoms(tmp_path: Path) -> None:
    rows = 1000
    got = run_java("RandomDraws", tmp_path, [f"0\t{rows}", f"42\t{rows}"],
                   where=Path(__file__).parent / "java")

    def bits(x: float) -> str:
        return str(struct.unpack("<q", struct.pack("<d", x))[0])

    for seed in (0, 42):
        mine = [v for row in _draws(seed, rows)
                for v in (*map(bits, row[:4]), str(row[4]), str(row[5]))]
        assert got[str(seed)] == mine
