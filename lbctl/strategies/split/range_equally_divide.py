"""range_equally_divide: cut the bundle's hash range in the middle.

Mirrors ``org.apache.pulsar.common.naming.RangeEquallyDivideBundleSplitAlgorithm`` (Pulsar's default
``defaultNamespaceBundleSplitAlgorithm``): one boundary at ``lower + (upper - lower) // 2`` (Java long
division). It looks at no topic, so it splits even an empty bundle. The full range gives
``0x7fffffff``, not the creation-time ``0x80000000``.
"""

from __future__ import annotations

from lbctl.strategies.registry import SPLIT
from lbctl.strategies.split.base import (
    RANGE_EQUALLY_DIVIDE,
    BoundaryWhy,
    SplitBoundaries,
    SplitOption,
)


@SPLIT.register(RANGE_EQUALLY_DIVIDE)
class RangeEquallyDivide:
    name = RANGE_EQUALLY_DIVIDE

    def boundaries(self, option: SplitOption) -> SplitBoundaries:
        b = option.bundle
        middle = b.lower + (b.upper - b.lower) // 2
        return SplitBoundaries(self.name, (middle,), BoundaryWhy(
            "middle", lower=b.lower, upper=b.upper, middle=middle))
