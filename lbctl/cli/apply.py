"""`lbctl apply`: carry out a plan@1 file on the live cluster — re-validated, shown, confirmed,
capped, paced, verified, journaled, resumable and reversible (:mod:`lbctl.apply.runner`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lbctl.cli.common import TABLE, OutputFormat, Shown
from lbctl.cli.groups import Fields, grouped
from lbctl.cli.unload import Mutating

if TYPE_CHECKING:
    from lbctl.admin.client import AdminClient
    from lbctl.apply.journal import RunHistory
    from lbctl.apply.planfile import PlanFile
    from lbctl.apply.runner import ApplyOptions, ApplyReport

Reason = Annotated[str | None, typer.Option(
    "--reason", metavar="TEXT", help="Why (a ticket, a name): journaled with every action.")]
Interval = Annotated[float, typer.Option(
    "--interval", metavar="SECONDS", min=0, max=86400,
    help="Seconds between batches of actions.")]
Concurrency = Annotated[int, typer.Option(
    "--concurrency", metavar="N", min=1, max=1000,
    help="Actions in flight at once (sent, then verified together).")]
VerifyTimeout = Annotated[float, typer.Option(
    "--verify-timeout", metavar="SECONDS", min=0, max=86400,
    help="How long to wait for a moved bundle to be owned again (lookup API).")]
#: drain has it too (walk21): its "paused 300 s … (--pause-timeout)" named a flag it lacked
PauseTimeout = Annotated[float, typer.Option(
    "--pause-timeout", metavar="SECONDS", min=0, max=86400,
    help="How long to wait for a destination that turned overloaded to fall back below the "
         "overload threshold (85 % by default) before stopping.")]
MaxMoves = Annotated[int | None, typer.Option(
    "--max-moves", metavar="N", min=0, help="Move at most N bundles in this run (default: no limit).")]


@grouped
def apply(
    ctx: typer.Context,
    *,
    plan: Annotated[Path | None, typer.Argument(
        metavar="PLAN", show_default=False,
        help="A plan@1 file (JSON or YAML): recommend -o json, propose, rebalance-after, a "
             "rollback plan. With --resume: taken from the journal when omitted.")] = None,
    resume: Annotated[Path | None, typer.Option(
        "--resume", metavar="JOURNAL",
        help="Continue the last run of this journal: actions it sent and the broker confirmed "
             "are not sent again.")] = None,
    run_id: Annotated[str | None, typer.Option(
        "--run", metavar="ID", help="With --resume or --rollback: that run (default: the last).")]
        = None,
    rollback: Annotated[bool, typer.Option(
        "--rollback", help="Apply the rollback plan of the journal's last run (--journal, else "
                           "the default journal): every bundle it moved back to its owner.")]
        = False,
    max_age: Annotated[float, typer.Option(
        "--max-age", metavar="SECONDS", min=0,
        help="Refuse a plan computed longer ago than this (0: no limit).")] = 600.0,
    force_stale: Annotated[bool, typer.Option(
        "--force-stale", help="Apply a plan older than --max-age (still re-validated).")] = False,
    confirm_each: Annotated[bool, typer.Option(
        "--confirm-each", help="Ask before each action instead of once for the batch.")] = False,
    max_moves: MaxMoves = None,
    max_per_broker: Annotated[int | None, typer.Option(
        "--max-per-broker", metavar="N", min=0,
        help="At most N moves touching one broker (as source or destination; default: no "
             "limit).")] = None,
    max_throughput: Annotated[float | None, typer.Option(
        "--max-throughput", metavar="MB/S", min=0,
        help="At most this much bundle throughput moved in this run (MB/s, 1 MB = 1024² "
             "bytes; default: no limit).")] = None,
    interval: Interval = 0.0,
    concurrency: Concurrency = 1,
    verify_timeout: VerifyTimeout = 60.0,
    pause_timeout: PauseTimeout = 300.0,
    reason: Reason = None,
    status: Annotated[bool, typer.Option(
        "--status", help="Show the apply or drain running now (progress, who holds the lock) "
                         "and exit; reads nothing else.")] = False,
    stop: Annotated[bool, typer.Option(
        "--stop", help="Ask the apply or drain running on this host to stop after the action "
                       "in flight (it exits 13; the 'resume with:' line it prints continues it).")] = False,
    sending: Mutating,
    shown: Annotated[Shown, Fields("output")],
) -> None:
    """Carry out a plan on the live cluster, safely.

    Every action is re-validated against the cluster first (bundle still there with that range,
    owner still the plan's source, destination active and not overloaded, not unloaded within the
    grace period) and the diff is printed; then the exact requests. Without a terminal and
    without --yes nothing is sent and it exits 12 (--dry-run: exit 0). On a terminal it asks once
    (--confirm-each: per action).
    Actions are sent --concurrency at a time, --interval seconds apart, within the caps; each move
    is verified through the lookup API (done, done-elsewhere, not-reassigned, failed); everything
    is journaled, and a rollback plan is written next to the journal. Ctrl-C or SIGTERM finishes
    the action in flight and stops (exit 13, partial); --resume JOURNAL continues without sending
    a confirmed action again.

    \b
    Examples:
      lbctl recommend -o json > plan.json
      lbctl apply plan.json --dry-run            # shown, nothing sent
      lbctl apply plan.json --yes --max-moves 5 --interval 30 --reason CHG-1234
      lbctl apply --resume ~/.local/state/lbctl/journal.jsonl --yes
      lbctl apply --rollback --yes               # the last run's moves, undone
      lbctl apply --status                       # what runs now, how far
    """
    from lbctl.apply.runner import ApplyOptions
    from lbctl.cli.state import live_session
    from lbctl.errors import UsageError

    if status or stop:
        from lbctl.watch.executor_state import status_lines
        from lbctl.watch.executor_state import stop as ask_to_stop

        if plan is not None or resume is not None or rollback:
            raise UsageError("--status and --stop take no plan, --resume or --rollback")
        from lbctl.apply.runner import fit_line

        # fitted as the run's own lines are (a journal path stays whole): "run ID: 2 of 6
        # step(s) sent, …; journal PATH" ran to 130 columns (walk23)
        for line in (ask_to_stop() if stop else status_lines()):
            for part in fit_line(line, -1):
                print(part)
        return
    journal, output = sending.journal, shown.output
    if rollback:
        if plan is not None or resume is not None:
            raise UsageError("--rollback takes no plan file and no --resume")
        plan = _rollback_plan(journal, run_id)
        run_id = None
    if plan is None and resume is None:
        raise UsageError("give a plan file, or --resume JOURNAL, or --rollback")
    opts = ApplyOptions(
        dry_run=sending.dry_run, yes=sending.yes, confirm_each=confirm_each, force=sending.force,
        force_stale=force_stale, max_age=max_age or None, max_moves=max_moves,
        max_per_broker=max_per_broker, max_throughput=max_throughput, interval=interval,
        concurrency=concurrency, verify_timeout=verify_timeout, pause_timeout=pause_timeout,
        reason=reason, journal=resume or journal, rollback=rollback)
    plan_file, history = _plan_and_history(plan, resume, run_id)
    if history is not None and opts.reason is None:
        opts.reason = history.reason
    if history is not None and resume is not None and run_id is not None:
        _say_resumed(resume, run_id, plan_file, history, output)
    with live_session(ctx) as cluster:
        report = run_plan(cluster.client, plan_file, opts, output, history=history)
    finish(report, output, dry_run=sending.dry_run)


def _rollback_plan(journal: Path | None, run_id: str | None) -> Path:
    """The rollback plan the journal's last run (or run ``run_id``) wrote."""
    from lbctl.apply.journal import read_records
    from lbctl.errors import ConfigError
    from lbctl.executor import default_journal

    j = journal or default_journal()
    ends = [r for r in read_records(j) if r.get("state") == "apply-end" and r.get("rollback")
            and (run_id is None or r.get("run") == run_id)]
    if not ends:
        raise ConfigError(f"the journal {j} has no run with a rollback plan"
                          + (f" with id {run_id}" if run_id else ""))
    return Path(str(ends[-1]["rollback"]))


def _plan_and_history(plan: Path | None, resume: Path | None, run_id: str | None
                      ) -> tuple[PlanFile, RunHistory | None]:
    import shlex

    from lbctl.apply.journal import last_run, read_records
    from lbctl.apply.planfile import read_plan
    from lbctl.errors import UsageError

    if resume is None:
        if run_id is not None:
            raise UsageError("--run needs --resume JOURNAL")
        assert plan is not None
        return read_plan(plan), None
    history = last_run(read_records(resume), run_id, journal=shlex.quote(str(resume)))
    path = plan or Path(history.plan)
    pf = read_plan(path)
    if history.digest and pf.digest != history.digest:
        raise UsageError(f"{path} is not the plan the journal's run carried out (its SHA-256 "
                         "differs): nothing was sent")
    return pf, history


def _say_resumed(journal: Path, run_id: str, pf: PlanFile, history: RunHistory,
                 output: OutputFormat) -> None:
    """Before a drain's or a fill's run is resumed (``--run ID``): which of its steps remain and
    what of the drain this does not do (:func:`lbctl.apply.drain.resume_note`), fitted, where the
    run's own lines go. Apply's own runs say nothing more: their plan table says it all."""
    from lbctl.apply.drain import resume_note
    from lbctl.apply.journal import paused_balancer, read_records, run_kind
    from lbctl.apply.runner import fit_line
    from lbctl.safe.text import terminal_safe

    records = read_records(journal)
    start = next((r for r in reversed(records)
                  if r.get("state") == "apply-start" and r.get("run") == run_id), None)
    kind = run_kind(start) if start is not None else "apply"
    if kind == "apply":
        return
    ends = {a.broker if kind == "drain" else a.destination for a in pf.actions if a.is_move}
    broker = next(iter(ends)) if len(ends) == 1 else None
    paused_by_run = any(r.get("state") == "balancer-paused" and r.get("run") == run_id
                        for r in records)
    line = resume_note(kind, broker, run_id, pf, history,
                       paused_now=paused_balancer(records, history.cluster or None) is not None,
                       paused_by_run=paused_by_run)
    stream = sys.stdout if output == TABLE else sys.stderr
    for part in fit_line(terminal_safe(line), -1):
        print(part, file=stream, flush=True)


def run_plan(client: AdminClient, plan: PlanFile, opts: ApplyOptions, output: OutputFormat, *,
             history: RunHistory | None = None) -> ApplyReport:
    """Run ``plan`` with the terminal's prompt, progress on stdout (stderr for machine formats)
    and SIGINT/SIGTERM finishing the action in flight."""
    from lbctl.apply.runner import UI, ApplyRun
    from lbctl.apply.signals import stop_on_signals
    from lbctl.cli.connection import is_terminal, warn, warn_fitted
    from lbctl.safe.text import terminal_safe

    stream = sys.stdout if output == TABLE else sys.stderr
    ui = UI(show=lambda line: print(terminal_safe(line), file=stream, flush=True),
            warn=warn_fitted,
            confirm=lambda q: typer.confirm(q, default=False, err=True),
            interactive=is_terminal(sys.stdin) and is_terminal(sys.stderr))
    with stop_on_signals(warn) as stop:
        def arm() -> None:
            stop.armed = True

        return ApplyRun(client, plan, opts, ui, stop=stop.event, history=history,
                        arm=arm).run()


def finish(report: ApplyReport, output: OutputFormat, extra: dict[str, object] | None = None,
           *, dry_run: bool = False) -> None:
    """Print the report; a partial run exits 13 after it, and a run that only showed its requests
    because there was no terminal to ask on (no ``--yes``, no ``--dry-run``) exits 12 — the rule
    of every command that changes a cluster (:func:`lbctl.cli.actions.refuse_unconfirmed`)."""
    from lbctl.cli.actions import refuse_unconfirmed
    from lbctl.cli.common import emit
    from lbctl.errors import PartialRun
    from lbctl.render.apply_view import ApplyView

    emit(ApplyView(report, dict(extra or {})), output)
    deferred = report.counts().get("deferred", 0)
    if deferred and report.result == "complete" and output == TABLE:
        # "complete: 1 deferred, 5 done" left a newcomer with no next step: the same plan again
        # sends what the caps held back (the moves made show as changed and are skipped)
        import shlex

        from lbctl.render.tables import wrap_prose
        from lbctl.safe.text import terminal_safe

        again = shlex.quote(report.plan.path)
        print(wrap_prose(terminal_safe(
            f"next: {deferred} action(s) held back by the caps; lbctl apply {again} again "
            "sends them (the moves made are skipped; a plan older than --max-age is refused: "
            "plan again)")))
    if report.result == "dry-run":
        refuse_unconfirmed(dry_run)
    if report.result == "partial":
        raise PartialRun(f"partial run: {report.why}; journal {report.journal}"
                         + (f"; resume with lbctl apply --resume {report.journal}"
                            + (f" --run {report.run_id}" if report.kind != "apply" else "")
                            + (f" {report.pace}" if report.pace else "")
                            if report.journal else ""))
