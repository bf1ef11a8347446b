"""Running mutations from a command: terminal detection, the confirmation prompt and the result."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lbctl.cli.common import TABLE, OutputFormat, emit
from lbctl.render.outcomes import OutcomesView
from lbctl.safe.text import terminal_safe

if TYPE_CHECKING:
    from lbctl.admin.client import AdminClient
    from lbctl.executor import Mutation, Outcome


def execute(client: AdminClient, mutations: Sequence[Mutation], *, dry_run: bool, yes: bool,
            journal: Path | None, output: OutputFormat, force: bool = False) -> list[Outcome]:
    """Show, confirm, send and report ``mutations`` through the :class:`~lbctl.executor.Executor`.

    The preview goes to stdout for the table format and to stderr for machine formats, so that
    ``-o json`` prints only JSON."""
    import typer

    from lbctl.cli.connection import is_terminal, warn
    from lbctl.executor import Executor

    stream = sys.stdout if output == TABLE else sys.stderr
    ex = Executor(
        client, dry_run=dry_run, yes=yes,
        interactive=is_terminal(sys.stdin) and is_terminal(sys.stderr),
        confirm=lambda q: typer.confirm(q, default=False, err=True),
        show=lambda line: print(terminal_safe(line), file=stream),
        journal=journal,
        force=force,
        warn=warn,
    )
    outcomes = ex.run(mutations)
    if not dry_run or output != TABLE:
        emit(OutcomesView(outcomes), output)
    return outcomes


def refuse_unconfirmed(dry_run: bool) -> None:
    """The one rule of every command that changes a cluster, after it has shown its requests:
    without a terminal to ask on and without ``--yes`` nothing is sent and the command exits 12
    (``NOT_CONFIRMED``) with the executor's one line — ``--dry-run`` is the way to only look, and
    exits 0 (docs/exit-codes.md). ``unload`` and ``split-bundle`` get it from the executor itself;
    ``apply`` and ``drain``, whose runs stop at a dry run, call this after their report."""
    from lbctl.errors import MutationRefused
    from lbctl.executor import NOT_A_TERMINAL

    if not dry_run:
        raise MutationRefused(NOT_A_TERMINAL)
