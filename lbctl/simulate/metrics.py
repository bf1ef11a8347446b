"""Per-cycle figures of a simulation: load spread, moves, bounce-backs, time to settle.

The questions users ask of a shedding strategy (PIP-364, PIP-220, #16059, #21722) are "how uneven
is the load", "how much moves", "does it ping-pong" and "how long until it settles"; these are the
figures that answer them:

* spread of broker load (the weighted max resource usage, as a fraction): mean, population
  standard deviation, coefficient of variation (std / mean), min, max and range (max − min);
* a **bounce-back** is a move of a bundle onto a broker it left less than the bounce window ago
  (default: ``loadBalancerSheddingGracePeriodMinutes``);
* an **above-average placement** sends a bundle to a broker whose load, when the cycle decided, was
  above the cluster mean;
* a run has **settled** at the first cycle from which the range stays within the band for every
  later cycle and after the last one.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Spread:
    """How uneven a set of broker loads (fractions) is."""

    mean: float
    std: float
    cov: float | None  # None when the mean is 0
    min: float
    max: float
    #: loads left out because they are not finite (an infinite or NaN usage, as Pulsar computes
    #: from a report with a huge usage or a limit that rounds to 0 in float)
    excluded: int = 0

    @property
    def range(self) -> float:
        return self.max - self.min

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        finite_values = [v for v in values if math.isfinite(v)]
        excluded = len(values) - len(finite_values)
        if not finite_values:
            return cls(0.0, 0.0, None, 0.0, 0.0, excluded)
        try:
            mean = statistics.fmean(finite_values)
            std = statistics.pstdev(finite_values, mean)
        except (OverflowError, ValueError, AttributeError):  # sums beyond double range
            mean = std = math.inf
        cov = std / mean if mean and math.isfinite(mean) else None
        return cls(mean, std, cov, min(finite_values), max(finite_values), excluded)

    def to_dict(self) -> dict[str, float | None]:
        d: dict[str, float | None] = {"mean": self.mean, "std": self.std, "cov": self.cov,
                                      "min": self.min, "max": self.max, "range": self.range}
        if self.excluded:
            d["nonFinite"] = self.excluded
        return d


def ratio(values: Sequence[float]) -> float | None:
    """max / min, or None when the minimum is 0 (an idle broker: the ratio is unbounded)."""
    if not values:
        return None
    low = min(values)
    return max(values) / low if low > 0 else None


def settle_cycle(ranges: Sequence[float], final_range: float, band: float) -> int | None:
    """First 1-based cycle from which every range (and the state after the run) is ``<= band``."""
    if final_range > band + 1e-12:
        return None
    first = len(ranges) + 1
    for i in range(len(ranges) - 1, -1, -1):
        if ranges[i] > band + 1e-12:
            break
        first = i + 1
    return first if first <= len(ranges) else None


class BounceTracker:
    """Remembers when each bundle left each broker, to spot returns within a window."""

    def __init__(self, window_ms: int):
        self.window_ms = window_ms
        self._left: dict[str, dict[str, int]] = {}

    def move(self, bundle: str, source: str, destination: str, now: int) -> bool:
        """Record the move; True if ``bundle`` left ``destination`` within the window."""
        history = self._left.setdefault(bundle, {})
        left_at = history.get(destination)
        history[source] = now
        return left_at is not None and now - left_at <= self.window_ms


def finite(x: float | None) -> float | None:
    return None if x is None or math.isinf(x) or math.isnan(x) else x
