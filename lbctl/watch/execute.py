"""Carrying out a queued plan through ``lbctl apply``'s runner (the one code path that changes a
cluster): re-validated against the cluster as it is now, journaled with the anomaly as its
reason, refused while another apply or drain holds the cluster's lock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lbctl.watch.plans import PlanMeta, PlanQueue


def apply_queued(client: Any, queue: PlanQueue, meta: PlanMeta, *, when: str,
                 say: Callable[[str], None], max_age: float | None = None,
                 yes: bool = True, warn: Callable[[str], None] | None = None) -> str:
    """Run plan ``meta``; record the outcome in the queue; a one-line result.

    ``say`` gets the runner's lines (the plan against the cluster, each request, each outcome)
    and ``warn`` its warnings (``say`` too when not given: the watcher logs both alike)."""
    from lbctl.apply.planfile import read_plan
    from lbctl.apply.runner import UI, ApplyOptions, ApplyRun
    from lbctl.errors import LbctlError

    reason = f"lbctl watch plan {meta.id}" + (f" for anomaly {meta.anomaly}" if meta.anomaly else "")
    opts = ApplyOptions(yes=yes, reason=reason, max_age=max_age, force_stale=max_age is None)
    try:
        report = ApplyRun(client, read_plan(queue.plan_path(meta.id)), opts,
                          UI(show=say, warn=warn or say, width=None)).run()
    except LbctlError as e:
        queue.decide(meta.id, "failed", when=when, note=str(e), allowed_from=("approved",))
        return f"failed: {e}"
    status = {"complete": "applied", "partial": "partial"}.get(report.result, "failed")
    tally = report.counts()
    counts = ", ".join(f"{k} {v}" for k, v in sorted(tally.items()))
    skipped = tally.get("skipped", 0)
    outcome = report.result
    if status == "applied" and skipped:
        # the runner's run was complete, but the plan was not: actions the cluster had changed
        # since the plan (re-validation) were skipped — "applied (done 1, skipped 6)" read as
        # success; it is a plan carried out in part (docs/exit-codes.md: PARTIAL)
        status = outcome = "partial"
        total = sum(tally.values())
        counts = (f"{total - skipped} of {total} action(s) carried out, {skipped} skipped on "
                  f"re-validation (the cluster changed since the plan): {counts}")
    queue.decide(meta.id, status, when=when, note=f"{outcome}: {counts}"
                 + (f"; journal {report.journal}" if report.journal else ""),
                 allowed_from=("approved",))
    return f"{status} ({counts})"
