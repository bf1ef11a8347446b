"""How the leader's clock frames a cycle, in the words plans and
explanations share (the cycle's decision in one line is :mod:`lbctl.explain.outcome`'s).

* :func:`history_dict` / :func:`history_lines`: how the leader's clock moved before the cycle
  (:mod:`lbctl.loadmanager.clock`).
"""

from __future__ import annotations

from typing import Any

from lbctl.model.cluster import iso_time
from lbctl.model.cycle import Elapsed

#: what ``recommend``/``explain`` say of a live read, which lbctl sees for the first time
NO_HISTORY = ("live read: lbctl starts with no history (hit counts at zero, no usage average, no "
              "grace period but the cluster's own recently unloaded bundles), while the leader "
              "has been running; use --watch to follow the leader, or --assume-steady")


def history_warnings(elapsed: Elapsed) -> list[str]:
    """What a plan must say about how the leader's clock was replayed."""
    out = []
    if elapsed.capped:
        out.append(f"{elapsed.cycles - 1} cycles elapsed since the previous snapshot; only the "
                   f"first {elapsed.replayed} were replayed")
    return out


def history_dict(elapsed: Elapsed) -> dict[str, Any]:
    """``plan@1``'s ``history``: how the leader's clock moved before this cycle."""
    d: dict[str, Any] = {"firstSight": elapsed.first_sight,
                         "intervalMinutes": elapsed.interval_ms // 60_000}
    if elapsed.assumed_steady:
        d["steadyCycles"] = elapsed.steady
    elif not elapsed.first_sight:
        d["cyclesSincePrevious"] = elapsed.cycles
        d["replayedCycles"] = elapsed.replayed
        d["bundleSamples"] = elapsed.samples
    if elapsed.would_act_at is not None:
        d["wouldActAt"] = iso_time(elapsed.would_act_at)
    if elapsed.warm_up:
        d["cyclesFollowed"] = elapsed.followed
        d["warmingUp"] = elapsed.warming_up
    return d


def history_lines(elapsed: Elapsed, *, samples: bool = True) -> list[str]:
    """``explain``'s words for :func:`history_dict`."""
    minutes = elapsed.interval_ms // 60_000
    if elapsed.warm_up:
        state = (f"warming up ({elapsed.followed} of {elapsed.warm_up} cycles): the strategy's "
                 "memory is still shorter than the leader's" if elapsed.warming_up
                 else f"warm ({elapsed.followed} cycles followed)")
        head = [f"Following the leader: {state}"]
    else:
        head = []
    if elapsed.assumed_steady:
        line = (f"--assume-steady: the state is taken as lasting; {elapsed.steady} earlier "
                "cycle(s) of it were replayed first (memory only)")
        if elapsed.would_act_at is not None:
            line += ", up to the one that acts: this one"
        return [*head, line]
    if elapsed.first_sight:
        return [*head, "First sight: the leader's first cycle on this state (hit counts at zero, no "
                "usage history), as in Pulsar's own unit tests; --assume-steady treats it as "
                "having lasted"]
    line = (f"{elapsed.cycles} cycle(s) of {minutes} min elapsed since the previous snapshot; "
            f"{elapsed.replayed} replayed on the earlier state (memory only)")
    if elapsed.would_act_at is not None:
        line += (f"; replaying stopped before the cycle at {iso_time(elapsed.would_act_at)}, "
                 "which would have acted on the earlier state")
    if elapsed.capped:
        line += " (replay capped)"
    lines = [*head, line]
    if samples:
        lines.append(f"Bundle data took {elapsed.samples} sample(s) (one per load report written "
                     "since the previous snapshot)")
    return lines


def projection_line(opens_in: int | None, projected: bool, interval_ms: int) -> list[str]:
    """``explain``'s answer to "how long until the gate opens"."""
    if not projected:
        return []
    if opens_in is None:
        return ["More cycles of this very state would not make the leader act (not within 64 "
                "cycles, the clock moving on: grace periods and cool-downs included)"]
    minutes = opens_in * interval_ms // 60_000
    return [f"The leader would act after {opens_in} more cycle(s) of this state (~{minutes} min); "
            "--assume-steady shows that cycle"]
