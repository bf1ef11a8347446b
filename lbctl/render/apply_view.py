"""What a run of a plan did (``lbctl apply``, ``lbctl drain``): one row per action with its
verdict, the request, the verified outcome and the owner found; JSON ``lbctl/apply-run@1``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from lbctl.apply.drain import DrainReport
from lbctl.apply.runner import ApplyReport, fit_line
from lbctl.render.display import current
from lbctl.render.schema import Schema, col

RUN_FORMAT = "lbctl/apply-run@1"

_STEP_COLUMNS = (
    col("step", "integer", "the action's step in the plan, from 1"),
    col("action", "string", "unload, transfer or split"),
    col("bundle", "string", "the bundle, tenant/namespace/0xLOWER_0xUPPER"),
    col("broker", "string", "the owner the plan expected"),
    col("destinationBroker", "string", "where the plan sends it (empty: the next lookup decides)"),
    col("verdict", "string", "re-validation against the live cluster: valid, changed, gone or "
                             "skipped"),
    col("why", "string", "why the verdict (empty when valid)"),
    col("request", "string", "the admin request sent (or that would be sent)"),
    col("outcome", "string", "done, done-elsewhere, not-reassigned, not-moved, failed, "
                             "already-done, skipped, deferred, declined, not-sent, in-doubt or "
                             "dry-run"),
    col("owner", "string", "the owner a lookup found after the request"),
    col("seconds", "number", "how long the action took, seconds"),
    col("error", "string", "the error of a failed request"),
)
APPLY_SCHEMA = Schema("apply", "action of the plan, as carried out", _STEP_COLUMNS)
DRAIN_SCHEMA = Schema("drain", "action of a drain round, as carried out", (
    col("round", "integer", "the drain's round, from 1"), *_STEP_COLUMNS))


@dataclass
class ApplyView:
    report: ApplyReport
    extra: dict[str, Any] = field(default_factory=dict)  # drain: the broker, what it still owns
    schema: ClassVar[Schema] = APPLY_SCHEMA

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
        # a dry run's steps are all "dry-run": say what that means ("dry-run: 5 dry-run" did not)
        counts = ", ".join(f"{n} {'would be sent' if k == 'dry-run' else k}"
                           for k, n in sorted(r.counts().items())) or "no action"
        if r.result == "dry-run":  # one line: why nothing was sent, and what would have been
            head, said, tail = (r.why or "dry run: nothing was sent").partition("nothing was sent")
            lines = [f"{head}{said} ({counts}){tail}" if said else f"{head}: {counts}"]
        else:
            # the why's own counts ("stopped by a signal; 4 not-sent") are the line's already:
            # "partial: 2 done, 4 not-sent — stopped by a signal; 4 not-sent" said it twice
            said_already = {f"{n} {k}" for k, n in r.counts().items()}
            why = "; ".join(p for p in r.why.split("; ") if p not in said_already)
            lines = [f"{r.result}: {counts}" + (f" — {why}" if why else "")]
        if r.journal and r.result not in ("dry-run", "nothing"):
            lines.append(f"journal: {r.journal} (run {r.run_id})")
        if r.rollback:
            lines.append(f"rollback plan: {r.rollback}  (lbctl apply {r.rollback})")
        if r.result == "partial" and r.journal:
            # a drain's run is resumed by its id: apply --resume alone takes apply's runs only
            lines.append(f"resume with: lbctl apply --resume {r.journal}"
                         + (f" --run {r.run_id}" if r.kind != "apply" else "")
                         + (f" {r.pace}" if r.pace else ""))
        for k, v in self.extra.items():
            if isinstance(v, str):
                lines.append(f"{k}: {v}")
        # fitted as the runner's lines are (walk20): a path stays whole, so it can be copied
        return "\n".join(part for line in lines for part in fit_line(line, current().limit))


@dataclass
class DrainView:
    """A drain: each round's run, what the broker still owns, the balancer, safe or not."""

    report: DrainReport
    schema: ClassVar[Schema] = DRAIN_SCHEMA

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
        lines = [line for x in r.rounds for line in ApplyView(x).to_text().split("\n")]
        if r.remaining:
            lines.append(f"{r.broker} still owns: " + ", ".join(r.remaining[:10])
                         + (" …" if len(r.remaining) > 10 else ""))
        if r.balancer:
            lines.append(f"balancer: {r.balancer}")
        lines.append(r.message)
        limit = current().limit  # the rounds' lines are fitted by ApplyView already
        return "\n".join(part for x in lines if x for part in fit_line(x, limit))
