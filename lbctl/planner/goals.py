"""The planner's goals, in priority order, and the balancedness score.

Goals, hard before soft (a hard goal is never traded for a softer one or for cost):

1. **capacity** (hard): no broker's weighted max usage above ``--max-usage`` (default
   ``loadBalancerBrokerOverloadedThresholdPercentage``);
2. **band** (hard): the most and least loaded brokers at most ``--target-range`` points apart
   (default 10, the settle band of ``simulate``), or the brokers' usage standard deviation at most
   ``--target-std`` points;
3. **cpu / bandwidthIn / bandwidthOut spread** (soft, each weighted resource): the same range on the
   resource's own percentage — reported, and counted in the score, never optimised for;
4. then **least cost** (:mod:`lbctl.planner.cost`).

Each goal is reported before and after the plan (max, min, range, std) with a status like Cruise
Control's: ``NO-ACTION`` (met before and after), ``FIXED``, ``VIOLATED`` (not met after).

The **balancedness score** (0–100) follows Cruise Control's ``balancednessCostByGoal``
(``KafkaCruiseControlUtils``): goal *k* of *n* (in priority order) weighs ``1.1^(n-k)``, times 1.5
for a hard goal; the weights are scaled to sum to 100, and the score is 100 minus the weights of
the goals not met.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: Cruise Control's defaults: goal.balancedness.priority.weight, goal.balancedness.strictness.weight
PRIORITY_WEIGHT = 1.1
STRICTNESS_WEIGHT = 1.5
MAX_SCORE = 100.0
DEFAULT_RANGE = 0.10  # 10 points, simulate's default settle band


@dataclass(frozen=True, slots=True)
class Targets:
    """What the plan must reach, and its caps (fractions; throughput in bytes/s)."""

    max_usage: float
    target_range: float | None = DEFAULT_RANGE
    target_std: float | None = None
    max_moves: int | None = None
    max_throughput: float | None = None

    def inside(self, margin: float, ceiling: float) -> Targets:
        """The goals a plan aims at so that the model's error (``margin``, a fraction) cannot
        take it out of these (Cruise Control's balance margin): the band narrowed by the margin
        on each side, and no broker above ``ceiling`` (the cap, or the most loaded broker's
        usage now when lower) less the margin."""
        return Targets(min(self.max_usage, ceiling) - margin,
                       None if self.target_range is None else self.target_range - 2 * margin,
                       None if self.target_std is None else self.target_std - margin,
                       self.max_moves, self.max_throughput)

    def band_words(self) -> str:
        if self.target_std is not None:
            return f"std <= {self.target_std * 100:g} points"
        return f"range <= {(self.target_range or 0) * 100:g} points"


@dataclass(frozen=True, slots=True)
class Stats:
    """max, min, range, std (population) and mean of a set of usages (fractions)."""

    max: float
    min: float
    std: float
    mean: float

    @property
    def range(self) -> float:
        return self.max - self.min

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats:
        vals = [v for v in values if math.isfinite(v)]
        if not vals:
            return cls(0.0, 0.0, 0.0, 0.0)
        mean = statistics.fmean(vals)
        return cls(max(vals), min(vals), statistics.pstdev(vals, mean), mean)

    def to_dict(self) -> dict[str, float]:
        return {"max": round(self.max, 6), "min": round(self.min, 6),
                "range": round(self.range, 6), "std": round(self.std, 6),
                "mean": round(self.mean, 6)}


@dataclass(frozen=True, slots=True)
class GoalResult:
    """One goal, before and after the plan."""

    name: str
    hard: bool
    target: str  # in words: "max <= 85 %"
    before: Stats
    after: Stats
    met_before: bool
    met_after: bool

    @property
    def status(self) -> str:
        if not self.met_after:
            return "VIOLATED"
        return "NO-ACTION" if self.met_before else "FIXED"

    def to_dict(self) -> dict[str, object]:
        return {"goal": self.name, "kind": "hard" if self.hard else "soft",
                "target": self.target, "status": self.status,
                "before": self.before.to_dict(), "after": self.after.to_dict()}


_EPS = 1e-9


def band_met(stats: Stats, targets: Targets) -> bool:
    if targets.target_std is not None:
        return stats.std <= targets.target_std + _EPS
    return stats.range <= (targets.target_range or 0.0) + _EPS


def evaluate(
    before: Sequence[float],
    after: Sequence[float],
    resources_before: dict[str, list[float]],
    resources_after: dict[str, list[float]],
    targets: Targets,
) -> list[GoalResult]:
    """Every goal on usages (fractions) and per-resource percentages before and after."""
    b, a = Stats.of(before), Stats.of(after)
    goals = [
        GoalResult("capacity", True, f"max <= {targets.max_usage * 100:g} %", b, a,
                   b.max <= targets.max_usage + _EPS, a.max <= targets.max_usage + _EPS),
        GoalResult("band", True, targets.band_words(), b, a, band_met(b, targets),
                   band_met(a, targets)),
    ]
    width = targets.target_range if targets.target_std is None else None
    for res, values in resources_before.items():
        rb = Stats.of([v / 100 for v in values])
        ra = Stats.of([v / 100 for v in resources_after[res]])
        if width is not None:
            words = f"range <= {width * 100:g} points"
            met_b, met_a = rb.range <= width + _EPS, ra.range <= width + _EPS
        else:
            std = targets.target_std or 0.0
            words = f"std <= {std * 100:g} points"
            met_b, met_a = rb.std <= std + _EPS, ra.std <= std + _EPS
        goals.append(GoalResult(f"{res} spread", False, words, rb, ra, met_b, met_a))
    return goals


def goal_costs(goals: Sequence[GoalResult]) -> list[float]:
    """Cruise Control's ``balancednessCostByGoal``: the lowest-priority goal weighs 1, each goal
    above it ``PRIORITY_WEIGHT`` times more, hard goals ``STRICTNESS_WEIGHT`` times more; scaled
    so that the costs sum to :data:`MAX_SCORE`."""
    if not goals:
        return []
    raw = []
    weight = 1 / PRIORITY_WEIGHT
    for g in reversed(goals):
        weight *= PRIORITY_WEIGHT
        raw.append(weight * (STRICTNESS_WEIGHT if g.hard else 1.0))
    raw.reverse()
    total = sum(raw)
    return [MAX_SCORE * c / total for c in raw]


def balancedness(goals: Sequence[GoalResult], after: bool) -> float:
    """100 minus the costs of the goals not met (before or after the plan)."""
    costs = goal_costs(goals)
    lost = sum(c for g, c in zip(goals, costs, strict=True)
               if not (g.met_after if after else g.met_before))
    return round(max(0.0, MAX_SCORE - lost), 3)
