"""What a cycle came to, in one line: ``plan@1``'s top-level ``decision`` and the first line of
every explanation.

``Success`` with the reason when a bundle moves, else the gate that held — the load manager's own
(disabled, one broker) or the strategy's (``HitCount``, ``CoolDown``, ``Balanced``…) — with its
detail in words.
"""

from __future__ import annotations

from lbctl.explain.words import text
from lbctl.model.cycle import ExtensibleCycle, ModularCycle
from lbctl.model.decision import CycleDecision, CycleWhy, Label, Reason


def cycle_decision(cycle: ModularCycle | ExtensibleCycle) -> CycleDecision:
    """:func:`modular_decision` or :func:`extensible_decision`."""
    if isinstance(cycle, ModularCycle):
        return modular_decision(cycle)
    return extensible_decision(cycle)


def _gate(gate: str) -> CycleDecision:
    reason = Reason.NO_BROKERS if gate.startswith("only ") else Reason.DISABLED
    return CycleDecision(Label.SKIP, reason, gate)


def modular_decision(cycle: ModularCycle) -> CycleDecision:
    """The cycle's outcome in one line: Success/<reason> when a bundle is unloaded, else the
    gate or the strategy's reason for doing nothing (the first broker skipped for a reason other
    than Balanced, in the order of the brokers; Balanced when all are)."""
    if cycle.gate is not None:
        return _gate(cycle.gate)
    if cycle.decision is not None and cycle.decision.failure:  # LoadSheddingTask caught it
        notes = [text(n) for n in cycle.decision.notes]
        return CycleDecision(Label.FAILURE, Reason.UNKNOWN,
                             notes[-1] if notes else cycle.decision.failure)
    unloads = cycle.unloads
    if unloads:
        reasons = [o.selection.reason for o in unloads]
        reason = Reason.OVERLOADED if Reason.OVERLOADED in reasons else reasons[0]
        sources = list(dict.fromkeys(o.selection.broker for o in unloads))
        return CycleDecision(Label.SUCCESS, reason,
                             f"{len(unloads)} bundle(s) unloaded from {', '.join(sources)}")
    if cycle.outcomes:
        first = cycle.outcomes[0].skipped
        excluded = isinstance(first, CycleWhy) and first.code == "excluded-namespace"
        return CycleDecision(Label.SKIP, Reason.NO_BUNDLES if excluded else Reason.NO_BROKERS,
                             f"{len(cycle.outcomes)} bundle(s) selected, none unloaded: "
                             f"{text(first) or 'no destination'}")
    decision = cycle.decision
    verdicts = decision.brokers if decision is not None else {}
    for v in verdicts.values():
        if v.label is Label.SKIP and v.reason is not None and v.reason is not Reason.BALANCED:
            return CycleDecision(Label.SKIP, v.reason, f"{v.broker}: {text(v.why)}")
    notes = [text(n) for n in decision.notes] if decision is not None else []
    why = next((n for n in notes if n.startswith("nothing selected")),
               notes[-1] if notes else "no broker needs shedding")
    return CycleDecision(Label.SKIP, Reason.BALANCED, why)


def extensible_decision(c: ExtensibleCycle) -> CycleDecision:
    """The cycle's outcome: the gate, else TransferShedder's counter update (``Success`` with the
    decisions' reason, or its Skip/Failure label and reason) and its one-line why."""
    if c.gate is not None:
        return _gate(c.gate)
    shed = c.shed
    if shed is None:
        return CycleDecision(Label.SKIP, Reason.UNKNOWN, "the shedder did not run")
    if c.actions:
        reasons = [a.decision.reason for a in c.actions]
        reason = Reason.OVERLOADED if Reason.OVERLOADED in reasons else reasons[0]
        return CycleDecision(Label.SUCCESS, reason, text(shed.why))
    label, reason = shed.skip or (Label.SKIP, Reason.HIT_COUNT)
    return CycleDecision(label, reason, text(shed.why))
