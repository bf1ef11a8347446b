"""Why a proposal is what it is: goals before/after, the score, the solver, and each move's reasons.

For every move: where the source and destination stood before and after, and the alternatives
the plan did not take — the next cheaper bundle of the same source (and what taking it instead
would have left), the least loaded other brokers (and why each was not the destination). Plans of
thousands of moves explain the first :data:`DETAILED` moves in full; the JSON lists all moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lbctl.planner.assignment import EPS
from lbctl.planner.confidence import confidence
from lbctl.planner.propose import Proposal, planned_level

DETAILED = 50


@dataclass(frozen=True)
class MoveWhy:
    bundle: str
    source: str
    destination: str
    throughput: float
    msg_rate: float
    reason: str
    why: str
    alternatives: tuple[tuple[str, str], ...]  # (what, why not)

    def to_dict(self) -> dict[str, Any]:
        return {"bundle": self.bundle, "from": self.source, "to": self.destination,
                "throughput": round(self.throughput, 3), "msgRate": round(self.msg_rate, 3),
                "reason": self.reason, "why": self.why,
                "alternatives": [{"instead": w, "whyNot": n} for w, n in self.alternatives]}


def _pct(x: float) -> str:
    return f"{x * 100:.2f} %"


def _mb(x: float) -> str:
    return f"{x / 1048576:,.2f} MB/s"


def _band(p: Proposal) -> tuple[float, float]:
    lo = min(p.after.u)
    return lo, lo + p.solution.width


def _alternatives(p: Proposal, i: int, dst: int,
                  by_owner: dict[int, list[int]]) -> list[tuple[str, str]]:
    view, a = p.view, p.after
    src = view.owner[i]
    lo, hi = _band(p)
    umax = p.targets.max_usage
    out: list[tuple[str, str]] = []
    # the next cheaper bundle of the same source, instead of this one
    cheaper = [k for k in by_owner.get(src, ())
               if k not in a.moved and p.rules.pinned[k] is None
               and p.costs.cost[k] < p.costs.cost[i]]
    for k in sorted(cheaper, key=lambda k: -p.costs.cost[k])[:1]:
        # the plan with k moved instead of i: the source keeps i and loses k, the destination
        # takes k instead of i
        what = f"{view.bundles[k]} ({_mb(view.throughput[k])})"
        refused = p.rules.static_refuses(k, dst)
        if refused is not None:
            out.append((what, f"cheaper, but {view.brokers[dst]} may not take it: {refused}"))
            continue
        us, ud = a.usage_swap(src, k, i), a.usage_swap(dst, i, k)
        others = [u for j, u in enumerate(a.u) if j not in (src, dst)]
        top = max([us, ud, *others])
        low = min([us, ud, *others])
        if us > min(hi, umax) + EPS:
            out.append((what, f"cheaper, but {view.brokers[src]} would stay at {_pct(us)}, "
                              f"above the band's top {_pct(min(hi, umax))}"))
        elif ud < lo - EPS:
            out.append((what, f"cheaper, but {view.brokers[dst]} would stay at {_pct(ud)}, "
                              f"below the band's bottom {_pct(lo)}"))
        elif top - low > p.solution.width + EPS:
            out.append((what, f"cheaper, but the band would not hold: range {_pct(top - low)}"))
        else:
            out.append((what, "cheaper and within the band too; it could replace this move "
                              "(the solver's pick is not unique or not optimal)"))
    # other destinations, least loaded first
    nearest = sorted((j for j in range(len(view.brokers)) if j not in (src, dst)),
                     key=lambda j: a.u[j])[:2]
    for j in nearest:
        what = view.brokers[j]
        refused = p.rules.static_refuses(i, j)
        if refused is not None:
            out.append((what, refused))
            continue
        trial_u = a.usage_if(j, i, 1.0)
        if trial_u > min(hi, umax) + EPS:
            out.append((what, f"would end at {_pct(trial_u)}, above the band's top "
                              f"{_pct(min(hi, umax))}"))
        else:
            out.append((what, f"would end at {_pct(trial_u)}; {view.brokers[dst]} ends at "
                              f"{_pct(a.u[dst])} with it and needed it "
                              f"(it started at {_pct(view.terms[dst].usage())})"))
    return out


def move_reasons(p: Proposal) -> list[MoveWhy]:
    view = p.view
    before = p.usages_before()
    after = p.after.u
    reasons = p.reasons()
    sources = {view.owner[i] for i, _ in p.moves[:DETAILED]}
    by_owner: dict[int, list[int]] = {j: [] for j in sources}
    for i, o in enumerate(view.owner):
        if o in by_owner:
            by_owner[o].append(i)
    out = []
    for k, (i, dst) in enumerate(p.moves):
        src = view.owner[i]
        why = (f"{view.brokers[src]} {_pct(before[src])} -> {_pct(after[src])}, "
               f"{view.brokers[dst]} {_pct(before[dst])} -> {_pct(after[dst])}")
        alts = tuple(_alternatives(p, i, dst, by_owner)) if k < DETAILED else ()
        out.append(MoveWhy(view.bundles[i], view.brokers[src], view.brokers[dst],
                           view.throughput[i], view.msg_rate[i], str(reasons[i]), why, alts))
    return out


def pinned_counts(p: Proposal) -> dict[str, int]:
    counts: dict[str, int] = {}
    for why in p.rules.pinned:
        if why is None:
            continue
        if why.startswith("system namespace"):
            key = "system namespace"
        elif "ExcludedNamespaces" in why:
            key = "loadBalancerSheddingExcludedNamespaces"
        elif "grace period" in why:
            key = "grace period"
        else:
            key = "policies"
        counts[key] = counts.get(key, 0) + 1
    return counts


@dataclass(frozen=True)
class ProposalExplanation:
    proposal: Proposal

    def to_dict(self) -> dict[str, Any]:
        p = self.proposal
        sol = p.solution
        before, after = p.balancedness()
        t = p.targets
        return {
            "planner": {
                "solver": sol.solver,
                "status": sol.status,
                "gap": None if sol.gap is None else round(sol.gap, 6),
                "lowerBound": None if sol.lower_bound is None else round(sol.lower_bound, 3),
                "bandPlanned": round(sol.width, 6),
                "notes": list(p.notes),
            },
            "model": model_quality(p),
            "confidence": confidence(p).to_dict(),
            "targets": {
                "maxUsage": t.max_usage,
                "targetRange": t.target_range,
                "targetStd": t.target_std,
                "maxMoves": t.max_moves,
                "maxThroughput": t.max_throughput,
            },
            "goals": [g.to_dict() for g in p.goals],
            "balancedness": {"before": before, "after": after},
            "cost": p.totals().to_dict(),
            "constraints": {
                "enforced": list(p.rules.enforced),
                "notModelled": list(p.rules.not_modelled),
                "pinnedBundles": pinned_counts(p),
                "closedBrokers": {p.view.brokers[j]: why for j, why in p.rules.closed.items()},
            },
            "moves": [m.to_dict() for m in move_reasons(p)],
            "splits": [{"bundle": a.bundle, "broker": a.broker, "detail": a.detail}
                       for a in p.splits.actions],
            "hotTopics": [{"bundle": h.bundle, "broker": h.broker, "topics": h.topics,
                           "share": round(h.load, 6), "why": h.why} for h in p.splits.hot],
        }


def model_quality(p: Proposal) -> dict[str, Any]:
    """How far the load model behind the plan can be trusted: what it was fitted on, the margin
    the band was planned inside the target by, and per broker its reports, whether its fit was
    learnt from its own history, its out-of-sample error (points), its slope's relative error, and
    whether its CPU cost was borrowed from its host class (one report could not tell its slope from
    its idle usage: docs/propose.md says such a broker is marked, so the mark is in the output)."""
    m = p.view.model
    thin = set(m.thin())
    return {
        "fittedOn": "history" if m.history else "snapshot",
        "margin": round(m.margin(planned_level(p.view, p.usages_before(), p.targets)), 6),
        "brokers": {b: {"reports": q.points, "learnt": q.learnt,
                        "outOfSampleError": None if q.error is None else round(q.error, 3),
                        "slopeError": round(q.slope_error, 4), "thin": b in thin,
                        "borrowed": q.borrowed}
                    for b in p.view.brokers if (q := m.quality.get(b)) is not None},
    }


def explain(p: Proposal) -> ProposalExplanation:
    return ProposalExplanation(p)
