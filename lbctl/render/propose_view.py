"""The view of ``lbctl propose``: a plan@1 with the planner's explanation.

JSON/YAML: the plan (``to_dict(explained=True)``: each broker's ``usageAfter``, resources and
why) plus ``explanation`` (solver, gap, goals before/after, balancedness, cost, constraints, every
move with its alternatives; ``docs/propose.md``). CSV: one row per action. Table: the plan, the
goals, the solver line and notes; with ``--explain`` also each move's reasons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.planner.explain import DETAILED, explain, move_reasons, pinned_counts
from lbctl.planner.goals import Stats
from lbctl.planner.propose import Proposal
from lbctl.render import table
from lbctl.render.schema import Schema
from lbctl.render.views import RECOMMEND_SCHEMA, plan_text

#: the plan's actions, as recommend writes them (without the cycle columns: one plan)
PROPOSE_SCHEMA = Schema("propose", "action of lbctl's plan", tuple(
    c for c in RECOMMEND_SCHEMA.columns if c.name not in ("cycle", "capturedAt")))


def _mb(x: float) -> str:
    return f"{x / 1048576:,.2f} MB/s"


def _stats(s: Stats) -> str:
    return f"{s.max * 100:.1f}/{s.min * 100:.1f}/{s.range * 100:.1f}/{s.std * 100:.1f}"


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
        for h in p.splits.hot:
            lines.append(f"Hot bundle: {h.bundle} on {h.broker}: {h.why}")
        for a in p.splits.actions:
            lines.append(f"Split proposed: {a.bundle} ({a.algorithm} at "
                         f"{', '.join(a.boundaries or ())}): {a.detail}")
        return lines

    def moves_text(self) -> list[str]:
        p = self.proposal
        moves = move_reasons(p)
        parts: list[str] = []
        if moves:
            parts += ["", "Moves:"]
            for k, m in enumerate(moves[:DETAILED], 1):
                parts.append(f"{k:>3}. {m.bundle}  {m.source} -> {m.destination}  "
                             f"({_mb(m.throughput)}, {m.reason})")
                parts.append(f"     {m.why}")
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
        title = f"{plan.cluster} at {plan.captured_at}: lbctl's planner ({p.targets.band_words()}"
        title += f", max usage {p.targets.max_usage * 100:g} %)"
        parts = [plan_text(plan, title=title), "", "Goals:", self.goals_text(), "",
                 *self.summary_lines()]
        if self.detailed:
            parts += self.moves_text()
        return "\n".join(parts)
