"""What to read (a time range, a step, a cluster, a reference) and what the build saw
(:class:`Report`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lbctl.errors import UsageError
from lbctl.model.cluster import iso_time

if TYPE_CHECKING:
    from lbctl.model.cluster import ClusterState


@dataclass(frozen=True)
class Reference:
    """Bundle boundaries (namespace → positions) and settings of the cluster, from a snapshot or
    the admin API: topic metrics need the boundaries; the settings go into every snapshot."""

    namespaces: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""
    #: the cluster it was taken of ("": not known): another cluster's boundaries and settings
    #: are no reference for this one
    cluster: str = ""

    @classmethod
    def of(cls, state: ClusterState, origin: str) -> Reference:
        return cls(dict(state.namespaces), dict(state.config), origin, state.cluster)


#: snapshots one range may make (one per step): a year at one-minute steps is 525,600; checked
#: before any request, so that ``--since 3y --step 1ms`` is a one-line error, not 95 billion steps
MAX_STEPS = 1_000_000


@dataclass(frozen=True)
class HistoryRequest:
    start_ms: int
    end_ms: int
    step_ms: int = 60_000
    cluster: str | None = None
    reference: Reference | None = None
    #: the instant the range was asked at (``--since``: now), else None (a range in the past).
    #: The step after the end, read only for the last snapshot's observed decisions, must have
    #: passed by then: a step not yet over would count what the leader did in part of it only
    horizon_ms: int | None = None

    @property
    def read_end_ms(self) -> int:
        """The last instant read: one step past the end (the last snapshot's ``observed``)
        when that step is over by :attr:`horizon_ms`, else the end."""
        after = self.end_ms + self.step_ms
        return after if self.horizon_ms is None or after <= self.horizon_ms else self.end_ms

    def __post_init__(self) -> None:
        if self.end_ms < self.start_ms:
            raise UsageError(f"the end ({iso_time(max(self.end_ms, 0))}) is before the start "
                             f"({iso_time(max(self.start_ms, 0))})")
        if self.step_ms <= 0:
            raise UsageError("--step must be more than zero")
        if self.start_ms < 0:
            raise UsageError(f"the range starts before 1970 ({self.start_ms / 1000:.0f} s)")
        steps = (self.end_ms - self.start_ms) // self.step_ms + 1
        if steps > MAX_STEPS:
            raise UsageError(f"the range holds {steps:,} steps of {self.step_ms:,} ms (one snapshot "
                             f"each); at most {MAX_STEPS:,}: use a longer --step or a shorter "
                             "range")


@dataclass
class Report:
    """What the build saw: snapshots written, gaps, warnings (one line each)."""

    snapshots: int = 0
    steps: int = 0
    empty_steps: int = 0
    broker_gaps: dict[str, int] = field(default_factory=dict)  # broker → steps missing
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = list(dict.fromkeys(self.warnings))
        if self.empty_steps:
            out.append(f"{self.empty_steps} of {self.steps} step(s) had no sample at all and "
                       "were left out (marked under the next snapshot's \"gaps\")")
        if self.broker_gaps:
            worst = sorted(self.broker_gaps.items(), key=lambda kv: (-kv[1], kv[0]))
            shown = ", ".join(f"{b} at {n} step(s)" for b, n in worst[:5])
            more = f" and {len(worst) - 5} more" if len(worst) > 5 else ""
            out.append(f"brokers missing from some steps (left out there, marked under "
                       f"\"gaps\"): {shown}{more}")
        return out
