"""`lbctl journal`: what lbctl sent to clusters (unload, split-bundle, apply, drain), as an audit
trail: one row per action with its final outcome (:mod:`lbctl.render.journal_view`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lbctl.cli.common import Shown
from lbctl.cli.connection import warn
from lbctl.cli.groups import grouped

#: torn lines named one by one on stderr; a journal with more says how many more
_SHOWN_SKIPS = 5


@grouped
def journal(
    *,
    since: Annotated[str | None, typer.Option(
        "--since", metavar="WHEN",
        help="Only lines from then on: a duration back from now (30m, 2h, 7d) or a date/time "
             "(2026-03-12, 2026-03-12T14:00:00Z).")] = None,
    journal_file: Annotated[Path | None, typer.Option(
        "--journal", metavar="FILE",
        help="The journal to read (default $LBCTL_JOURNAL, else "
             "$XDG_STATE_HOME/lbctl/journal.jsonl, as unload writes it).")] = None,
    steps: Annotated[bool, typer.Option(
        "--steps", help="Tables: every line (sending, done, verified, …) instead of one row "
                        "per action.")] = False,
    shown: Shown,
) -> None:
    """Show the journal of changes: everything unload, split-bundle, apply and drain sent.

    Oldest first, per run (when, what kind, the --reason, the result), one row per action (the
    bundle, the destination) with its final outcome and its steps: s sent, d done (answered),
    v verified (apply and drain follow each move until the bundle is owned again). An action
    sent but never answered ("in-flight?") means lbctl stopped while the request was out.
    --steps shows every line instead; -o csv/jsonl are one row per line.

    \b
    Examples:
      lbctl journal
      lbctl journal --since 2h
      lbctl journal --steps
      lbctl journal --since 2026-03-12 -o jsonl
    """
    from lbctl.executor import default_journal
    from lbctl.render.journal_view import JournalView
    from lbctl.sources.journal import parse_since, read_journal

    path = journal_file or default_journal()
    start = parse_since(since) if since is not None else None  # "" is refused, not "all"
    read = read_journal(path)
    for why in read.skipped[:_SHOWN_SKIPS]:
        warn(f"{path}: {why} (skipped)")
    if len(read.skipped) > _SHOWN_SKIPS:
        warn(f"{path}: {len(read.skipped) - _SHOWN_SKIPS} more line(s) skipped")
    entries = tuple(e for e in read.entries if start is None or e.time >= start)
    shown.emit(JournalView(str(path), entries, since, steps=steps))
