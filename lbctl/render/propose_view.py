"""The view of ``lbctl propose``: a plan@1 with the planner's explanation.

JSON/YAML: the plan (``to_dict(explained=True)``: each broker's ``usageAfter``, resources and
why) plus ``explanation`` (solver, gap, goals before/after, balancedness, cost, constraints, every
move with its alternatives; ``docs/propose.md``). CSV: one row per action. Table: the moves, each
with its destination's estimated usage before → after *that* move; the brokers after the whole
plan, separately; the goals, the solver line and notes (once each); with ``--explain`` also each
move's reasons.

The table speaks the planner's words, not Pulsar's: Pulsar decided nothing here, so no broker is
labelled ``Success/Overloaded`` (the plan@1 file keeps its ``reason`` fields for ``apply``), and
each sanity warning of :func:`lbctl.plan.plan_warnings` that lbctl's own plan triggers says why
the planner made it so (:data:`BY_DESIGN`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.plan import Plan
from lbctl.planner.confidence import confidence, note
from lbctl.planner.explain import DETAILED, explain, move_reasons, pinned_counts
from lbctl.planner.goals import Stats
from lbctl.planner.propose import Proposal
from lbctl.render import table
from lbctl.render.display import paint
from lbctl.render.schema import Schema
from lbctl.render.tables import wrap_prose
from lbctl.render.views import RECOMMEND_SCHEMA, plan_names
from lbctl.safe.text import name_safe
from lbctl.units import mb, pct

#: the plan's actions, as recommend writes them (without the cycle columns: one plan)
PROPOSE_SCHEMA = Schema("propose", "action of lbctl's plan", tuple(
    c for c in RECOMMEND_SCHEMA.columns if c.name not in ("cycle", "capturedAt")))


def _mb(x: float) -> str:
    return f"{x / 1048576:,.2f} MB/s"


def _stats(s: Stats) -> str:
    return f"{s.max * 100:.1f}/{s.min * 100:.1f}/{s.range * 100:.1f}/{s.std * 100:.1f}"


#: why lbctl's planner makes a plan that trips one of lbctl's sanity warnings (code → words)
BY_DESIGN = {
    "destination-shed": "by design: the planner chooses every move at once, so a broker may "
                        "send one bundle and take others (an exchange that lands both inside the "
                        "band); Pulsar's shedder-then-placement never plans such a pair",
    "concentrated": "the planner sends bundles where the band has room: here mostly to the least "
                    "loaded broker(s)",
    "over-threshold": "the capacity goal could not be met with the moves allowed (see Goals); "
                      "this is the nearest plan found",
    "split-and-unload": "the move is planned on the bundle as it is now; the split is proposed "
                        "for afterwards. apply refuses a plan that acts on a bundle twice: "
                        "propose --no-splits gives the moves alone; split once they are done, "
                        "then re-run propose",
}


class Step(tuple[float, float, float, float]):
    """One move's estimates: source before, source after, destination before, destination after
    (usage fractions, the planner's load model, moves applied in the plan's order)."""


def steps(p: Proposal) -> list[Step]:
    """Each move's source and destination usage just before and just after *it*, replaying the
    plan's moves in order on the planner's own model (:class:`lbctl.planner.load.LoadView`)."""
    view = p.view
    delta = [[0.0, 0.0, 0.0] for _ in view.brokers]
    out = []
    for i, dst in p.moves:
        src = view.owner[i]
        s0, d0 = view.terms[src].usage(delta[src]), view.terms[dst].usage(delta[dst])
        for r in range(3):
            delta[src][r] -= view.drivers[i][r]
            delta[dst][r] += view.drivers[i][r]
        out.append(Step((s0, view.terms[src].usage(delta[src]), d0,
                         view.terms[dst].usage(delta[dst]))))
    return out


def _arrow(a: float, b: float) -> str:
    return f"{a * 100:.1f}→{b * 100:.1f}%"


@dataclass(frozen=True)
class ProposeView:
    proposal: Proposal
    detailed: bool = False
    schema: ClassVar[Schema] = PROPOSE_SCHEMA

    def to_data(self) -> Any:
        data = self.proposal.plan().to_dict(explained=True)
        data["explanation"] = explain(self.proposal).to_dict()
        return data

    def to_rows(self) -> list[dict[str, Any]]:
        rows = []
        for a in self.proposal.plan().actions:
            row = a.to_dict()
            row.setdefault("skipped", None)
            rows.append(row)
        return rows

    def goals_text(self) -> str:
        rows = [{"goal": g.name, "kind": "hard" if g.hard else "soft", "target": g.target,
                 "before max/min/range/std": _stats(g.before), "after": _stats(g.after),
                 "status": g.status} for g in self.proposal.goals]
        return table(rows)

    def summary_lines(self) -> list[str]:
        p = self.proposal
        sol = p.solution
        before, after = p.balancedness()
        tot = p.totals()
        gap = "n/a" if sol.gap is None else f"{sol.gap:.2%}"
        lines = [f"Solver: {sol.solver} — {sol.status}; optimality gap {gap}",
                 f"Balancedness: {before:.1f} -> {after:.1f} (0-100)",
                 f"Cost: {tot.moves} move(s), {_mb(tot.throughput)}, {tot.topics} topic(s), "
                 f"{tot.connections} producer/consumer connection(s) disturbed"]
        lines += [f"Note: {n}" for n in p.notes]
        sure = confidence(p)
        lines.append(sure.line())
        if (said := note(sure)) is not None:
            lines.append(f"Note: {said}")
        for h in p.splits.hot:
            lines.append(f"Hot bundle: {h.bundle} on {h.broker}: {h.why}")
        for a in p.splits.actions:
            lines.append(f"Split proposed: {a.bundle} ({a.algorithm} at "
                         f"{', '.join(a.boundaries or ())}): {a.detail}")
        return lines

    def moves_text(self) -> list[str]:
        p = self.proposal
        moves = move_reasons(p)
        figures = steps(p)
        parts: list[str] = []
        if moves:
            parts += ["", "Moves:"]
            for k, (m, st) in enumerate(zip(moves[:DETAILED], figures, strict=False), 1):
                parts.append(f"{k:>3}. {m.bundle}  {m.source} -> {m.destination}  "
                             f"({_mb(m.throughput)})")
                parts.append(f"     this move: {m.destination} {_arrow(st[2], st[3])}, "
                             f"{m.source} {_arrow(st[0], st[1])}")
                for what, why_not in m.alternatives:
                    parts.append(f"     not {what}: {why_not}")
            if len(moves) > DETAILED:
                parts.append(f"     … and {len(moves) - DETAILED} more (-o json lists them all)")
        rules = p.rules
        parts += ["", "Constraints enforced: " + "; ".join(rules.enforced)]
        pinned = pinned_counts(p)
        if pinned:
            parts.append("Bundles that stay: " + ", ".join(f"{v} ({k})" for k, v in pinned.items()))
        for j, why in rules.closed.items():
            parts.append(f"Broker closed: {p.view.brokers[j]}: {why}")
        parts += [f"Not modelled: {nm}" for nm in rules.not_modelled]
        return parts

    def to_text(self) -> str:
        p = self.proposal
        plan = p.plan()
        title = f"{name_safe(plan.cluster)} at {plan.captured_at}: lbctl's planner ({p.targets.band_words()}"
        title += f", max usage {p.targets.max_usage * 100:g} %)"
        parts = [self.plan_text(plan, title), "", "Goals:", self.goals_text(), "",
                 *self.summary_lines()]
        if self.detailed:
            # the account of each move names brokers as the tables above it do (short, said in
            # their note; whole with --wide): full names here wrapped every line in two
            names = plan_names(plan)
            parts += [names.text(line) for line in self.moves_text()]
        return "\n".join(parts)

    def plan_text(self, plan: Plan, title: str) -> str:
        """The moves (each with its own before → after), then the brokers after the whole plan,
        in the planner's words (module docstring)."""
        p = self.proposal
        names = plan_names(plan)
        parts = [wrap_prose(title), f"Modelled as {plan.settings.profile.name}", ""]
        figures = steps(p)
        moves = [a for a in plan.actions if a.action != "split"]
        if moves:
            rows = [{"#": str(k), "bundle": a.bundle, "from": names(a.broker),
                     "to": names(a.destinationBroker) if a.destinationBroker else "-",
                     "to: before → after": _arrow(st[2], st[3]), "MB/s": mb(a.throughput)}
                    for k, (a, st) in enumerate(zip(moves, figures, strict=True), 1)]
            parts += [wrap_prose("Moves, in order (to: the destination's estimated usage just "
                                 "before → just after that move):"),
                      table(rows, optional=["MB/s", "#"]), ""]
        else:
            parts += [wrap_prose(f"Moves: none — {_why_none(p, plan)}"), ""]
        sends: dict[str, int] = {}
        takes: dict[str, int] = {}
        for a in moves:
            sends[a.broker] = sends.get(a.broker, 0) + 1
            if a.destinationBroker:
                takes[a.destinationBroker] = takes.get(a.destinationBroker, 0) + 1
        brokers = []
        for b in plan.brokers:
            n_after = b.bundles - sends.get(b.broker, 0) + takes.get(b.broker, 0)
            brokers.append({
                "broker": names(b.broker), "now": pct(b.usage), "after plan": pct(b.usage_after),
                "change": f"{(b.usage_after - b.usage) * 100:+.1f}",
                "sends": str(sends.get(b.broker, 0) or "-"),
                "takes": str(takes.get(b.broker, 0) or "-"),
                "bundles": f"{b.bundles}→{n_after}" if n_after != b.bundles else str(b.bundles)})
        parts += ["Brokers after the whole plan (estimates):", table(brokers)]
        s = plan.summary()
        parts += ["", wrap_prose(
            f"{s['unloads']} move(s); usage spread (std) {pct(s['before']['std'])} -> "
            f"{pct(s['after']['std'])}, max {pct(s['before']['max'])} -> "
            f"{pct(s['after']['max'])}")]
        warnings = plan.all_warnings()
        if warnings:
            parts += ["", "Warnings (lbctl's sanity checks of any plan, and why this one trips "
                      "them):"]
            for w in warnings:
                why = BY_DESIGN.get(w.code)
                text = names.text(w.message) + (f" — {why}" if why else "")
                parts.append(paint(wrap_prose(f"  ! {text}"), "warn"))
        note = names.note()
        if note:
            parts += ["", wrap_prose(note)]
        return "\n".join(parts)


def _why_none(p: Proposal, plan: Plan) -> str:
    """Why a plan moves nothing, on its own line: the solver's word (the plan's gate), and how
    many bundles the rules keep put when any do (``--explain`` lists why)."""
    why = plan.gate or p.solution.status
    held = sum(1 for x in p.rules.pinned if x is not None)
    if held:
        why += (f"; {held} of {len(p.rules.pinned)} bundles may not move, as --explain "
                "lists")
    return why
