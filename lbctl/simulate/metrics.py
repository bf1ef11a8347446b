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
  later cycle and after the last one;
* the **prediction error** of a strategy that predicts its plans' "usage after" (lbctl's planner;
  Pulsar's strategies predict nothing): each broker's predicted usage against the usage the
  *truth* (the hosts, :mod:`lbctl.simulate.hosts`) reports when the next cycle decides (after the
  last cycle: at the end of the run) — never against lbctl's own model.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
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


@dataclass(frozen=True, slots=True)
class PredictionError:
    """How far a strategy's predicted usage after its plans landed from the truth.

    ``errors`` are (cycle, broker, predicted − true) for every broker of every plan that moved a
    bundle; the figures are absolute errors, fractions (one point = 0.01). Percentiles by nearest
    rank (the smallest error at least ``q`` of the errors do not exceed), so every figure is an
    error that happened."""

    plans: int
    errors: tuple[tuple[int, str, float], ...]

    def _abs(self) -> list[float]:
        return sorted(abs(e) for _, _, e in self.errors)

    def percentile(self, q: float) -> float | None:
        xs = self._abs()
        if not xs:
            return None
        return xs[max(0, math.ceil(q * len(xs)) - 1)]

    def worst(self) -> tuple[int, str, float] | None:
        """The largest miss: (cycle, broker, signed error); the first of equal ones."""
        best: tuple[int, str, float] | None = None
        for e in self.errors:
            if best is None or abs(e[2]) > abs(best[2]):
                best = e
        return best

    def to_dict(self) -> dict[str, object]:
        worst = self.worst()
        return {"plans": self.plans, "brokerFigures": len(self.errors),
                "p50": self.percentile(0.5), "p95": self.percentile(0.95),
                "max": None if worst is None else abs(worst[2]),
                "worstBroker": None if worst is None else worst[1],
                "worstCycle": None if worst is None else worst[0],
                "worstSigned": None if worst is None else worst[2]}


def prediction_errors(predicted: Sequence[Mapping[str, float] | None],
                      truth: Sequence[Mapping[str, float]]) -> PredictionError:
    """``predicted[k]``: cycle k+1's predicted usage after (None: no plan moved anything);
    ``truth[k]``: the true usage once cycle k+1's moves are carried out (the next cycle's loads,
    or the run's final ones). Brokers gone by then are left out."""
    errors = []
    plans = 0
    for k, pred in enumerate(predicted):
        if pred is None:
            continue
        plans += 1
        after = truth[k]
        for b, p in pred.items():
            t = after.get(b)
            if t is not None and math.isfinite(t) and math.isfinite(p):
                errors.append((k + 1, b, p - t))
    return PredictionError(plans, tuple(errors))


def finite(x: float | None) -> float | None:
    return None if x is None or math.isinf(x) or math.isnan(x) else x
