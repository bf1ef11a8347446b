"""`lbctl journal`: what lbctl sent to clusters (unload, split-bundle), as a table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from lbctl.cli.common import Shown
from lbctl.cli.groups import grouped


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
    shown: Shown,
) -> None:
    """Show the journal of changes: every request unload and split-bundle sent, oldest first.

    Each request has a "sending" line written before it goes out and a "done" or "failed" line
    after; a "sending" line alone means lbctl stopped while the request was in flight.

    \b
    Examples:
      lbctl journal
      lbctl journal --since 2h
      lbctl journal --since 2026-03-12 -o jsonl
    """
    from lbctl.executor import default_journal
    from lbctl.render.journal_view import JournalView
    from lbctl.sources.journal import parse_since, read_journal

    path = journal_file or default_journal()
    start = parse_since(since) if since else None
    read = read_journal(path)
    for why in read.skipped:
        sys.stderr.write(f"lbctl: warning: {path}: {why} (skipped)\n")
    entries = tuple(e for e in read.entries if start is None or e.time >= start)
    shown.emit(JournalView(str(path), entries, since))
