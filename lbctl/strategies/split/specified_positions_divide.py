"""specified_positions_divide: cut where the operator says.

Mirrors ``org.apache.pulsar.common.naming.SpecifiedPositionsBundleSplitAlgorithm``: no positions is
an error (before anything else); with at most one owned topic there is no split; the positions are
sorted and those not strictly inside the bundle are silently dropped (duplicates are kept); none
left means no split.
"""

from __future__ import annotations

from lbctl.strategies.registry import SPLIT
from lbctl.strategies.split.base import (
    SPECIFIED_POSITIONS_DIVIDE,
    BoundaryWhy,
    SplitBoundaries,
    SplitError,
    SplitOption,
)


@SPLIT.register(SPECIFIED_POSITIONS_DIVIDE)
class SpecifiedPositionsDivide:
    name = SPECIFIED_POSITIONS_DIVIDE

    def boundaries(self, option: SplitOption) -> SplitBoundaries:
        if not option.positions:
            raise SplitError("with specified_positions_divide split algorithm, split boundaries "
                             "must not be empty (-sb/--split-boundaries)")
        positions = sorted(option.positions)
        n = len(option.topics)
        if n <= 1:
            return SplitBoundaries(self.name, None, BoundaryWhy("few-topics", n))
        b = option.bundle
        inside = tuple(p for p in positions if b.lower < p < b.upper)
        dropped = tuple(p for p in positions if not b.lower < p < b.upper)
        if not inside:
            return SplitBoundaries(self.name, None, BoundaryWhy(
                "none-inside", range=b, dropped=dropped))
        return SplitBoundaries(self.name, inside, BoundaryWhy(
            "inside", range=b, positions=inside, dropped=dropped))
