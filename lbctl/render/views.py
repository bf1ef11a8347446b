"""Result objects of the commands, each able to show itself as data, rows or text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lbctl.loadmanager.base import CycleResult
from lbctl.plan import Plan
from lbctl.render import table
from lbctl.units import mb, pct, rate


def plan_text(plan: Plan, *, title: str | None = None) -> str:
    head = title or (f"{plan.cluster} at {plan.captured_at}: {plan.shedding} + {plan.placement}")
    parts = [head, f"Modelled as {plan.settings.profile.name}", ""]
    if plan.decision is not None:
        d = plan.decision
        parts += [f"Decision: {d.label}/{d.reason} — {d.detail}", ""]
    elif plan.gate:
        parts.append(f"No load shedding: {plan.gate}.")
    actions = [
        {
            "action": a.action,
            "bundle": a.bundle,
            "from": a.broker,
            "to": a.destinationBroker or "-",
            "reason": a.reason,
            "msg/s": rate(a.msgRate),
            "MB/s": mb(a.throughput),
            "skipped": a.skipped or "",
        }
        for a in plan.actions
    ]
    if actions:
        parts += ["Actions:", table(actions), ""]
    elif not plan.gate:
        parts += ["Actions: none", ""]
    brokers = [
        {
            "broker": b.broker,
            "usage": pct(b.usage),
            "score": pct(b.score),
            "after": pct(b.usage_after),
            "msg/s": rate(b.msg_rate),
            "MB/s": mb(b.throughput),
            "bundles": str(b.bundles),
            "decision": f"{b.label}/{b.reason}" if b.label else "",
        }
        for b in plan.brokers
    ]
    parts += ["Brokers:", table(brokers)]
    s = plan.summary()
    parts += [
        "",
        f"{s['unloads']} unload(s), {s['skipped']} skipped; usage spread (std) "
        f"{pct(s['before']['std'])} -> {pct(s['after']['std'])}, max "
        f"{pct(s['before']['max'])} -> {pct(s['after']['max'])} (after = estimate)",
    ]
    parts += [f"Warning: {w}" for w in plan.all_warnings()]
    return "\n".join(parts)


@dataclass(frozen=True)
class RecommendView:
    plans: Sequence[Plan]
    all_cycles: bool = False

    def _shown(self) -> Sequence[Plan]:
        return self.plans if self.all_cycles else self.plans[-1:]

    def to_data(self) -> Any:
        if self.all_cycles:
            return {"cycles": [p.to_dict() for p in self.plans]}
        return self.plans[-1].to_dict()

    def to_rows(self) -> list[dict[str, Any]]:
        rows = []
        for i, p in enumerate(self.plans):
            if not self.all_cycles and i != len(self.plans) - 1:
                continue
            for a in p.actions:
                row: dict[str, Any] = {}
                if self.all_cycles:
                    row["cycle"] = i + 1
                    row["capturedAt"] = p.captured_at
                row.update(a.to_dict())
                row.setdefault("skipped", None)
                rows.append(row)
        return rows

    def to_text(self) -> str:
        out = []
        n = len(self.plans)
        for i, p in enumerate(self.plans):
            if not self.all_cycles and i != n - 1:
                continue
            title = None
            if n > 1:
                title = (f"Cycle {i + 1}/{n} — {p.cluster} at {p.captured_at}: "
                         f"{p.shedding} + {p.placement}")
            out.append(plan_text(p, title=title))
        return "\n\n".join(out)


@dataclass(frozen=True)
class ExplainView:
    """The plan and the reasoning of each cycle: JSON/YAML are plans with an ``explanation``."""

    results: Sequence[CycleResult]
    broker: str | None = None
    bundle: str | None = None
    all_cycles: bool = False

    def _shown(self) -> Sequence[CycleResult]:
        return self.results if self.all_cycles else self.results[-1:]

    def _explained(self, r: CycleResult) -> dict[str, Any]:
        data = r.plan().to_dict(explained=True)
        data["explanation"] = r.explanation().to_dict()
        return data

    def to_data(self) -> Any:
        if self.all_cycles:
            return {"cycles": [self._explained(r) for r in self.results]}
        return self._explained(self.results[-1])

    def to_rows(self) -> list[dict[str, Any]]:
        rows = []
        for r in self._shown():
            p = r.plan()
            for b in p.brokers:
                if self.broker and b.broker != self.broker:
                    continue
                row = {
                    "capturedAt": p.captured_at,
                    "broker": b.broker,
                    "usage": round(b.usage, 6),
                    "score": None if b.score is None else round(b.score, 6),
                    "label": b.label,
                    "reason": b.reason,
                    "why": b.why,
                }
                row.update({k: round(v, 4) for k, v in b.resources.items()})
                rows.append(row)
        return rows

    def to_text(self) -> str:
        shown = self._shown()
        texts = []
        for i, r in enumerate(shown):
            text = r.explanation(self.broker, self.bundle).to_text()
            if len(shown) > 1:
                text = f"=== Cycle {i + 1}/{len(shown)} ===\n" + text
            texts.append(text)
        return "\n\n".join(texts)


@dataclass(frozen=True)
class ValidateView:
    summaries: Sequence[dict[str, Any]]

    def to_data(self) -> Any:
        return list(self.summaries)

    def to_rows(self) -> list[dict[str, Any]]:
        return list(self.summaries)

    def to_text(self) -> str:
        return "\n".join(
            f"{s['file']}: OK — cluster {s['cluster']}, {s['capturedAt']}, {s['brokers']} brokers, "
            f"{s['bundles']} bundles ({s['loadManager']})"
            for s in self.summaries
        )
