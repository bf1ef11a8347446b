"""topic_count_equally_divide: cut between the two middle topics.

Mirrors ``org.apache.pulsar.common.naming.TopicCountEquallyDivideBundleSplitAlgorithm``: with at most
one owned topic there is no split; otherwise the sorted CRC-32 hashes ``h`` give
``start = h[max(n // 2 - 1, 0)]``, ``end = h[n // 2]`` and the boundary ``start + (end - start) // 2``.
An odd count puts the extra topic above the boundary (3 topics: 1 below, 2 above). Two middle
topics with the same hash give a boundary equal to that hash, which ``NamespaceBundleFactory``
rejects when it is the bundle's lower bound.
"""

from __future__ import annotations

from lbctl.strategies.registry import SPLIT
from lbctl.strategies.split.base import (
    TOPIC_COUNT_EQUALLY_DIVIDE,
    BoundaryWhy,
    SplitBoundaries,
    SplitOption,
)


@SPLIT.register(TOPIC_COUNT_EQUALLY_DIVIDE)
class TopicCountEquallyDivide:
    name = TOPIC_COUNT_EQUALLY_DIVIDE

    def boundaries(self, option: SplitOption) -> SplitBoundaries:
        n = len(option.topics)
        if n <= 1:
            return SplitBoundaries(self.name, None, BoundaryWhy("few-topics", n))
        hashes = sorted(option.hash(t) for t in option.topics)
        start = hashes[max(n // 2 - 1, 0)]
        end = hashes[n // 2]
        middle = start + (end - start) // 2
        below = sum(1 for h in hashes if h < middle)
        return SplitBoundaries(
            self.name, (middle,),
            BoundaryWhy("topic-middle", n, middle=middle, start=start, end=end,
                        below=below),
            {"topics": n},
        )
