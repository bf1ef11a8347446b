"""What a run of a plan did (``lbctl apply``, ``lbctl drain``): one row per action with its
verdict, the request, the verified outcome and the owner found; JSON ``lbctl/apply-run@1``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lbctl.apply.drain import DrainReport
from lbctl.apply.runner import ApplyReport

RUN_FORMAT = "lbctl/apply-run@1"


@dataclass
class ApplyView:
    report: ApplyReport
    extra: dict[str, Any] = field(default_factory=dict)  # drain: the broker, what it still owns

    def to_data(self) -> Any:
        r = self.report
        return {
            "format": RUN_FORMAT,
            "plan": r.plan.path,
            "planDigest": r.plan.digest,
            "cluster": r.cluster,
            "run": r.run_id,
            "result": r.result,
            "why": r.why or None,
            "journal": str(r.journal) if r.journal else None,
            "rollback": str(r.rollback) if r.rollback else None,
            "resumes": r.resumed or None,
            "outcomes": r.counts(),
            "actions": [s.to_dict() for s in r.steps],
            **self.extra,
        }

    def to_rows(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.report.steps]

    def to_text(self) -> str:
        r = self.report
        counts = ", ".join(f"{n} {k}" for k, n in sorted(r.counts().items())) or "no action"
        lines = [f"{r.result}: {counts}" + (f" — {r.why}" if r.why and r.result != "dry-run"
                                             else "")]
        if r.journal and r.result not in ("dry-run", "nothing"):
            lines.append(f"journal: {r.journal} (run {r.run_id})")
        if r.rollback:
            lines.append(f"rollback plan: {r.rollback}  (lbctl apply {r.rollback})")
        if r.result == "partial" and r.journal:
            lines.append(f"resume with: lbctl apply --resume {r.journal}")
        for k, v in self.extra.items():
            if isinstance(v, str):
                lines.append(f"{k}: {v}")
        return "\n".join(lines)


@dataclass
class DrainView:
    """A drain: each round's run, what the broker still owns, the balancer, safe or not."""

    report: DrainReport

    def to_data(self) -> Any:
        r = self.report
        return {"format": "lbctl/drain@1", "broker": r.broker, "safe": r.safe,
                "message": r.message, "remaining": list(r.remaining), "balancer": r.balancer,
                "rounds": [ApplyView(x).to_data() for x in r.rounds]}

    def to_rows(self) -> list[dict[str, Any]]:
        return [{"round": i + 1, **s.to_dict()} for i, x in enumerate(self.report.rounds)
                for s in x.steps]

    def to_text(self) -> str:
        r = self.report
        lines = [ApplyView(x).to_text() for x in r.rounds]
        if r.remaining:
            lines.append(f"{r.broker} still owns: " + ", ".join(r.remaining[:10])
                         + (" …" if len(r.remaining) > 10 else ""))
        if r.balancer:
            lines.append(f"balancer: {r.balancer}")
        lines.append(r.message)
        return "\n".join(x for x in lines if x)
