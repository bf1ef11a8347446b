"""`lbctl plans list|show|approve|reject`: the review board of the watcher's healing plans."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Review the healing plans lbctl watch queued (--heal KIND=approve).",
                  no_args_is_help=True, rich_markup_mode=None)

History = Annotated[Path | None, typer.Option(
    "--history", metavar="DIR", help="The watcher's --history directory (default: beside the "
                                     "journal).")]
PlanId = Annotated[str, typer.Argument(metavar="PLAN_ID", show_default=False)]


def _queue(history: Path | None):  # type: ignore[no-untyped-def]
    from lbctl.cli.watcher import default_history, missing_history
    from lbctl.watch.plans import PlanQueue

    if history is not None:
        from lbctl.errors import UsageError
        from lbctl.safe.files import refuse_link

        refuse_link(history, error=UsageError)
    if history is not None and history.exists() and not history.is_dir():
        from lbctl.errors import UsageError

        raise UsageError(f"--history {history}: not a directory (the watcher's --history DIR)")
    directory = history or default_history()
    if not directory.exists():
        # a mistyped --history said "no plan waiting", as a watcher with nothing to heal does;
        # `watch --status` says this of the same directory
        from lbctl.errors import UsageError

        raise UsageError(missing_history(directory, given=history is not None))
    return PlanQueue(directory)


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@app.command("list")
def list_plans(history: History = None,
               all_: Annotated[bool, typer.Option("--all", help="Decided plans too.")] = False,
               wide: Annotated[bool, typer.Option(
                   "--wide", help="Every column, whatever the terminal's width.")] = False,
               ) -> None:
    """The plans waiting for review (--all: every plan, with its outcome)."""
    from lbctl.cli.common import display
    from lbctl.render import table
    from lbctl.render.display import using
    from lbctl.safe.text import terminal_safe

    rows = [m for m in _queue(history).list() if all_ or m.status in ("pending", "approved")]
    if not rows:
        print("no plan waiting" if not all_ else "no plan")
        return
    # lbctl's fitted table, as every command's: ids stay whole, and at 80 columns "planned on",
    # "by" and "outcome" give way (named under it) before the rows turn into records; a
    # tabulate table here was 98 columns wide (110 with --all) whatever the terminal
    table_rows = [{"plan": m.id, "status": m.status, "actions": str(m.actions), "by": m.source,
                   "anomaly": m.anomaly or "-", "planned on": m.created}
                  | ({"outcome": m.note or ""} if all_ else {}) for m in rows]
    with using(display(wide=wide)):
        text = table(table_rows, optional=("outcome", "planned on", "by"))
    print(terminal_safe(text))


class ShowFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


@app.command("show")
def show(plan_id: PlanId, history: History = None,
         output: Annotated[ShowFormat, typer.Option(
             "-o", "--output", case_sensitive=False,
             help="table: the actions, their status and why; json|yaml: the plan@1 document "
                  "(what lbctl apply takes).")] = ShowFormat.table,
         wide: Annotated[bool, typer.Option(
             "--wide", help="Every column, whatever the terminal's width.")] = False,
         ) -> None:
    """A plan: its record, then its actions with their status and why (-o json|yaml: the
    plan@1 document, its record on stderr)."""
    from lbctl.safe.text import name_safe, terminal_safe

    q = _queue(history)
    m = q.get(plan_id)
    # the record's fields come from a file in the history directory: each is escaped whole
    # (a newline in one printed a line of its own: hostile21's sweep), the layout's own newline
    # stays
    head = (f"{name_safe(m.id)}: {name_safe(m.status)}, {m.actions} action(s) by {name_safe(m.source)}, "
            f"for {name_safe(m.anomaly or '-')}, planned on the capture of {name_safe(m.created)}"
            + (f"\noutcome: {name_safe(m.note)}" if m.note and m.status != "pending" else ""))
    if output is ShowFormat.table:
        from lbctl.cli.common import display
        from lbctl.render import table
        from lbctl.render.display import using

        rows = q.actions(m)
        from lbctl.render.tables import wrap_prose

        with using(display(wide=wide)):
            text = table(rows, optional=("#",)) if rows else "no action"
            # the record's line ran to 140 characters over the table fitted to 80 columns:
            # wrapped at spaces (no id is cut), as lbctl's other prose
            head = "\n".join(wrap_prose(x) for x in head.split("\n"))
        print(terminal_safe(head))
        print(terminal_safe(text))
        return
    doc = q.document(plan_id)  # a plan@1 document, or one line (before anything is printed)
    sys.stderr.write(terminal_safe(head) + "\n")
    if output is ShowFormat.json:
        from lbctl.render import json_text

        sys.stdout.write(json_text(q.raw(plan_id)))  # the record's bytes, hidden chars escaped
        return
    from lbctl.render import to_yaml

    sys.stdout.write(to_yaml(doc))


@app.command("approve")
def approve(
    ctx: typer.Context,
    plan_id: PlanId,
    history: History = None,
    max_age: Annotated[float, typer.Option(
        "--max-age", metavar="SECONDS", min=0,
        help="Refuse a plan computed longer ago than this (0: no limit; it is re-validated "
             "against the cluster either way).")] = 3600.0,
) -> None:
    """Approve a plan and carry it out now through lbctl apply's runner (re-validated, journaled
    with its anomaly, refused while another apply holds the lock)."""
    from lbctl.cli.connection import warn
    from lbctl.cli.state import live_session
    from lbctl.errors import LbctlError, PartialRun
    from lbctl.safe.text import terminal_safe
    from lbctl.watch.execute import apply_queued

    def show(line: str) -> None:
        """The runner's lines as ``lbctl apply`` prints them: plain, on stdout (they are the
        command's account of what it does, not warnings)."""
        print(terminal_safe(line), flush=True)

    q = _queue(history)
    gone = q.withdraw_if_resolved(plan_id, when=_now())
    if gone is not None:
        from lbctl.errors import UsageError

        raise UsageError(f"plan {plan_id} withdrawn: {gone.note}; nothing was sent "
                         "(lbctl plans list --all shows it)")
    meta = q.decide(plan_id, "approved", when=_now(), note="approved")
    with live_session(ctx) as reader:
        result = apply_queued(reader.client, q, meta, when=_now(), say=show, warn=warn,
                              max_age=max_age or None)
    print(f"{plan_id}: {result}")
    if result.startswith("partial"):
        raise PartialRun(f"plan {plan_id} {result}")
    if not result.startswith("applied"):
        # nothing of it was carried out (every action refused on re-validation, the lock held,
        # a failed read): not PARTIAL, which says the journal holds part of the plan
        raise LbctlError(f"plan {plan_id} not carried out: {result}")


@app.command("reject")
def reject(plan_id: PlanId, history: History = None,
           reason: Annotated[str | None, typer.Option("--reason", metavar="TEXT")] = None) -> None:
    """Close a plan without carrying it out."""
    m = _queue(history).decide(plan_id, "rejected", when=_now(), note=reason or "rejected")
    print(f"{m.id}: rejected")
