"""The leader's clock: how many cycles ran between two snapshots, and what they did to its memory.

A snapshot is one observation of a cluster, not one shedding cycle. The leader runs a cycle every
``loadBalancerSheddingIntervalMinutes`` (``LoadSheddingTask`` on the modular load manager, the
``UnloadScheduler`` on the extensible one, both on that key), so between two snapshots captured
``Δt`` apart it ran ``⌊Δt / interval⌋`` cycles (at least one is counted per snapshot). Each of them
advanced its memory: hit counts (TransferShedder, AvgShedder), ThresholdShedder's usage average,
LeastResourceUsageWithWeight's history, the grace period and the cool-down (which follow the
clock itself).

:func:`replay` runs a sequence that way. Before each snapshot's own cycle it replays the cycles
that elapsed since the previous snapshot on the *previous* state (the state held as the earlier
snapshot showed it), keeping their memory, and stops at the first of them that would have acted:
had the leader acted, the state would have changed, and the next snapshot is what shows the
result — so that cycle's decision is the one the next snapshot's cycle makes. Replaying stops
early when a cycle leaves the memory unchanged (every later one would too) and after
:data:`CATCH_UP_LIMIT` cycles (a warning says so).

A single snapshot (and the first of a sequence, and a live read) is the leader's first sight of
the state, as in Pulsar's own unit tests: hit counts at zero, no usage history. ``--assume-steady``
instead treats it as having lasted long enough for every gate: warm-up cycles run on the snapshot
itself, memory only, until the next would act (or nothing changes any more).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.cluster import ClusterState
from lbctl.model.cycle import Elapsed
from lbctl.records import replace

if TYPE_CHECKING:
    from lbctl.loadmanager.base import CycleResult, LoadManager

#: at most this many elapsed cycles are replayed between two snapshots (4 hours of 1-minute cycles)
CATCH_UP_LIMIT = 240
#: at most this many warm-up cycles for ``--assume-steady`` and for ``explain``'s projection
STEADY_LIMIT = 64


def interval_ms(settings: Settings) -> int:
    """``loadBalancerSheddingIntervalMinutes`` in milliseconds (at least one minute)."""
    return max(1, int(settings["loadBalancerSheddingIntervalMinutes"])) * 60_000


def split_runs(settings: Settings, started: bool, waited: int) -> tuple[int, int]:
    """How many times every broker's ``SplitScheduler`` ran during this shedding cycle, and the
    cycle time since its last run to carry to the next (``ExtensibleMemory.split_wait_ms``).

    The extensible load manager schedules the split check on its own timer:
    ``SplitScheduler.start`` calls ``scheduleAtFixedRate`` with ``loadBalancerSplitIntervalMinutes``
    as the period (SplitScheduler at 1a5df8f3962d; ``ServiceConfiguration``: an ``int``, default 1,
    not dynamic), apart from the ``UnloadScheduler``'s ``loadBalancerSheddingIntervalMinutes``. So
    with a shedding interval of 1 minute and a split interval of 5, one shedding cycle in five sees
    a split check; with 5 and 1, each sees five. The two timers' phase is not observable: lbctl
    lines them up on the first cycle it runs (``started`` false: one split run, as before), then
    counts each cycle's interval towards the next run. At equal intervals every cycle runs the
    check once, as lbctl always did, and the setting is not recorded as read (a plan lists it
    only where it changes the cadence). A period of 0 or less: ``scheduleAtFixedRate`` refuses
    it, and no split check ever runs. (The modular load manager has no split timer:
    ``checkNamespaceBundleSplit`` runs in ``updateAll``, on each load-report write.)"""
    shed = interval_ms(settings)
    period = int(settings.peek("loadBalancerSplitIntervalMinutes")) * 60_000
    if period == shed:
        return 1, 0
    settings["loadBalancerSplitIntervalMinutes"]  # it changes the cadence: the plan lists it
    if period <= 0:
        return 0, 0
    if not started:
        return 1, 0
    waited += shed
    return waited // period, waited % period


def cycles_between(earlier: int, later: int, settings: Settings) -> int:
    """Shedding cycles the leader ran in ``(earlier, later]`` (epoch ms): ``⌊Δt / interval⌋``,
    counted as 1 when the snapshots are closer than one interval (each snapshot is one cycle)."""
    return max(1, (later - earlier) // interval_ms(settings))


def reports_written(earlier: ClusterState, later: ClusterState) -> int:
    """Load reports written between two snapshots, as far as the snapshots tell: a broker whose
    ``lastUpdate`` advanced (or that appeared) wrote at least once, and each write made the
    leader sample every bundle (``ModularLoadManagerImpl.updateAll`` on the write
    notification). Without timestamps, a broker whose bundle stats changed counts as one write."""
    n = 0
    for b, local in later.brokers.items():
        old = earlier.brokers.get(b)
        if old is None:
            n += 1
        elif local.lastUpdate or old.lastUpdate:
            n += local.lastUpdate > old.lastUpdate
        elif local.lastStats != old.lastStats:
            n += 1
    return n


class _HeldCycles(Struct, frozen=True):
    """Memory-only cycles to run on one held state (:func:`advance`): the state, its settings, the
    memory they start from, when each runs (the ``j``-th at ``times(j)``, j = 1, 2, …), at most
    how many, and whether one that leaves the memory unchanged ends them even while a timer runs
    (a grace period or a cool-down the clock alone can still end). ``last``, the snapshot's own
    cycle, when only the first acting cycle matters, not the memory (``explain``'s projection):
    the cycles then run as :meth:`~LoadManager.projected_cycle` and end at a fixed point of
    :meth:`~LoadManager.acting_key`."""

    state: ClusterState
    settings: Settings
    memory: Any
    times: Callable[[int], int]
    limit: int
    stop_at_fixed_point: bool = True
    last: Any = None


def advance(lm: LoadManager[Any], held: _HeldCycles) -> tuple[Any, int, int | None]:
    """Run the memory-only cycles of ``held``, stopping before the first that would act (its
    time is returned) or after one that changed nothing. Returns (memory, cycles kept, time of
    the first acting cycle)."""
    kept = 0
    memory = held.memory
    if held.limit < 1:
        return memory, kept, None
    last, settings = held.last, held.settings

    def cycle(state: ClusterState, memory: Any, elapsed: Elapsed) -> CycleResult:
        if last is None:
            return lm.run_cycle(state, settings, memory, elapsed)
        return lm.projected_cycle(state, settings, memory, elapsed, last)

    def key(memory: Any, at: int) -> object:
        return lm.memory_key(memory) if last is None else lm.acting_key(memory, settings, at)

    before = key(memory, held.times(0))
    for j in range(1, 1 + held.limit):
        at = held.times(j)
        result = cycle(lm.held(held.state, at), memory,
                       Elapsed(samples=0, first_sight=False, replaying=True))
        if result.acted:
            return memory, kept, at
        new = result.memory
        kept += 1
        after = key(new, at)
        if (held.stop_at_fixed_point or not lm.timers(new)) and after == before:
            return new, kept, None  # a fixed point: every later cycle is the same
        memory, before = new, after
    return memory, kept, None


class Follower:
    """Runs snapshots one after another on the leader's clock (module docstring), keeping the
    memory in between: :func:`replay` over a file, and ``--watch`` beside a live leader."""

    def __init__(self, lm: LoadManager[Any], *, assume_steady: bool = False):
        self.lm = lm
        self.assume_steady = assume_steady
        self.memory: Any = lm.initial_memory()
        self.prev: tuple[ClusterState, Settings] | None = None
        self.cycles = 0  # cycles the leader ran since lbctl started following, as lbctl counts

    def step(self, st: ClusterState, conf: Settings) -> CycleResult:
        lm, memory = self.lm, self.memory
        step = interval_ms(conf)
        if self.prev is None:
            elapsed = Elapsed(interval_ms=step)
            if self.assume_steady:
                memory, kept, at = advance(lm, _HeldCycles(
                    st, conf, memory, _constant(st.captured_at), STEADY_LIMIT))
                elapsed = Elapsed(steady=kept, assumed_steady=True, first_sight=False,
                                  would_act_at=at, interval_ms=step)
            self.cycles = 1
        else:
            p_state, p_conf = self.prev
            k = cycles_between(p_state.captured_at, st.captured_at, p_conf)
            limit = min(k - 1, CATCH_UP_LIMIT)
            memory, kept, at = advance(lm, _HeldCycles(
                p_state, p_conf, memory, _every(p_state.captured_at, interval_ms(p_conf)), limit))
            elapsed = Elapsed(cycles=k, replayed=kept, capped=k - 1 > CATCH_UP_LIMIT,
                              would_act_at=at, samples=lm.samples(p_state, st),
                              first_sight=False, interval_ms=step)
            self.cycles += k
        result = lm.run_cycle(st, conf, memory, elapsed)
        self.memory = result.memory
        self.prev = (st, conf)
        return result


def replay(lm: LoadManager[Any], states: Sequence[ClusterState], settings: Sequence[Settings], *,
           assume_steady: bool = False) -> list[CycleResult]:
    """Each snapshot's cycle, with the cycles that elapsed before it (module docstring)."""
    follower = Follower(lm, assume_steady=assume_steady)
    return [follower.step(st, conf) for st, conf in zip(states, settings, strict=True)]


def warm_up_cycles(shedding: str, settings: Settings) -> int:
    """Cycles a follower needs before its memory is the leader's (``--watch``'s warm-up): the
    hit-count gates' thresholds (TransferShedder, AvgShedder), the usage average's time constant
    ``1 / (1 − loadBalancerHistoryResourcePercentage)`` (ThresholdShedder), else one."""
    if shedding == "TransferShedder":
        return int(settings["loadBalancerSheddingConditionHitCountThreshold"]) + 1
    if shedding == "AvgShedder":
        return max(int(settings["loadBalancerAvgShedderHitCountLowThreshold"]),
                   int(settings["loadBalancerAvgShedderHitCountHighThreshold"]))
    if shedding == "ThresholdShedder":
        h = float(settings["loadBalancerHistoryResourcePercentage"])
        return max(1, math.ceil(1 / (1 - h) - 1e-9)) if h < 1 else STEADY_LIMIT
    return 1


def project(lm: LoadManager[Any], result: CycleResult) -> CycleResult:
    """``result`` with ``opens_in``: how many more cycles of its state the leader needs before it
    acts (for ``explain``; a cycle that acted or was gated is left as is)."""
    if result.gate is not None or result.acted:
        return result
    n = cycles_to_open(lm, result.state, result.settings, result.memory, last=result)
    return replace(result, opens_in=n, projected=True)


def _constant(at: int) -> Callable[[int], int]:
    return lambda _j: at


def _every(start: int, step: int) -> Callable[[int], int]:
    return lambda j: start + j * step


def cycles_to_open(lm: LoadManager[Any], state: ClusterState, settings: Settings, memory: Any,
                   limit: int = STEADY_LIMIT, *, last: CycleResult | None = None) -> int | None:
    """How many more cycles of this very state the leader needs before it acts, the clock moving
    on by one interval per cycle (so grace periods and cool-downs run out); ``None``: not within
    ``limit``. ``last``: the state's own cycle, whose memory is ``memory`` (the held cycles then
    compute only whether they act: :meth:`~LoadManager.projected_cycle`)."""
    _, kept, at = advance(lm, _HeldCycles(state, settings, memory,
                                          _every(state.captured_at, interval_ms(settings)),
                                          limit, stop_at_fixed_point=False, last=last))
    return kept + 1 if at is not None else None


def shifted(state: ClusterState, at: int) -> ClusterState:
    """The same state observed again at ``at`` (brokers republish the same figures)."""
    return replace(state, captured_at=at)


def latest(carried: Mapping[str, int], seen: Mapping[str, int]) -> dict[str, int]:
    """Recently unloaded bundles (or brokers) the leader remembers and those the snapshot shows,
    each at the later of its two times."""
    out = dict(carried)
    for name, ts in seen.items():
        out[name] = max(ts, out.get(name, ts))
    return out


def expire(recently: dict[str, int], now: int, settings: Settings) -> tuple[str, ...]:
    """Forget, in ``recently``, what was unloaded longer than
    ``loadBalancerSheddingGracePeriodMinutes`` before ``now``; returns what was forgotten."""
    cutoff = now - int(settings["loadBalancerSheddingGracePeriodMinutes"]) * 60_000
    expired = tuple(b for b, ts in recently.items() if ts < cutoff)
    for b in expired:
        del recently[b]
    return expired
