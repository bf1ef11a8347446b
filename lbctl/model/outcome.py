"""What a cycle came to, in the words plans and explanations share.

* :func:`cycle_decision`: the cycle's outcome in one line (``plan@1``'s top-level ``decision``):
  ``Success`` with the reason when a bundle moves, else the gate that held — the load manager's
  own (disabled, one broker) or the strategy's (``HitCount``, ``CoolDown``, ``Balanced``…);
* :func:`history_dict` / :func:`history_lines`: how the leader's clock moved before the cycle
  (:mod:`lbctl.loadmanager.clock`);
* :func:`profile_lines`: the Pulsar release modelled and how it differs from the newest.
"""

from __future__ import annotations

from typing import Any

from lbctl.config import Settings
from lbctl.model.cluster import iso_time
from lbctl.model.cycle import Elapsed, ExtensibleCycle, ModularCycle
from lbctl.model.decision import CycleDecision, Label, Reason


def cycle_decision(cycle: ModularCycle | ExtensibleCycle) -> CycleDecision:
    """:func:`modular_decision` or :func:`extensible_decision`."""
    if isinstance(cycle, ModularCycle):
        return modular_decision(cycle)
    return extensible_decision(cycle)


def modular_decision(cycle: ModularCycle) -> CycleDecision:
    """The cycle's outcome in one line: Success/<reason> when a bundle is unloaded, else the
    gate or the strategy's reason for doing nothing (the first broker skipped for a reason other
    than Balanced, in the order of the brokers; Balanced when all are)."""
    if cycle.gate is not None:
        reason = Reason.NO_BROKERS if cycle.gate.startswith("only ") else Reason.DISABLED
        return CycleDecision(Label.SKIP, reason, cycle.gate)
    unloads = cycle.unloads
    if unloads:
        reasons = [o.selection.reason for o in unloads]
        reason = Reason.OVERLOADED if Reason.OVERLOADED in reasons else reasons[0]
        sources = list(dict.fromkeys(o.selection.broker for o in unloads))
        return CycleDecision(Label.SUCCESS, reason,
                             f"{len(unloads)} bundle(s) unloaded from {', '.join(sources)}")
    if cycle.outcomes:
        first = cycle.outcomes[0]
        why = first.skipped or "no destination"
        reason = (Reason.NO_BUNDLES if "loadBalancerSheddingExcludedNamespaces" in why
                  else Reason.NO_BROKERS)
        return CycleDecision(Label.SKIP, reason,
                             f"{len(cycle.outcomes)} bundle(s) selected, none unloaded: {why}")
    decision = cycle.decision
    verdicts = decision.brokers if decision is not None else {}
    for v in verdicts.values():
        if v.label is Label.SKIP and v.reason is not None and v.reason is not Reason.BALANCED:
            return CycleDecision(Label.SKIP, v.reason, f"{v.broker}: {v.why}")
    notes = decision.notes if decision is not None else ()
    why = next((n for n in notes if n.startswith("nothing selected")),
               notes[-1] if notes else "no broker needs shedding")
    return CycleDecision(Label.SKIP, Reason.BALANCED, why)


def extensible_decision(c: ExtensibleCycle) -> CycleDecision:
    """The cycle's outcome: the gate, else TransferShedder's counter update (``Success`` with the
    decisions' reason, or its Skip/Failure label and reason) and its one-line why."""
    if c.gate is not None:
        reason = Reason.NO_BROKERS if c.gate.startswith("only ") else Reason.DISABLED
        return CycleDecision(Label.SKIP, reason, c.gate)
    shed = c.shed
    if shed is None:
        return CycleDecision(Label.SKIP, Reason.UNKNOWN, "the shedder did not run")
    if c.actions:
        reasons = [a.decision.reason for a in c.actions]
        reason = Reason.OVERLOADED if Reason.OVERLOADED in reasons else reasons[0]
        return CycleDecision(Label.SUCCESS, reason, shed.why)
    label, reason = shed.skip or (Label.SKIP, Reason.HIT_COUNT)
    return CycleDecision(label, reason, shed.why)


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


def profile_lines(settings: Settings) -> list[str]:
    """The release modelled, and each way it differs from the newest profile."""
    p = settings.profile
    lines = [f"Pulsar profile: {p.name}"]
    if p.warning:
        lines.append(f"  {p.warning}")
    for variant, value in p.differences():
        lines.append(f"  {variant.name} = {value}: {variant.what} [{variant.source}]")
    return lines
