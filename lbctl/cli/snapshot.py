"""`lbctl snapshot …`: work with snapshot files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lbctl.cli.common import Shown
from lbctl.cli.groups import grouped

app = typer.Typer(help="Work with snapshot files (snapshot v1).", no_args_is_help=True)


@app.command("validate")
@grouped
def validate(
    *,
    files: Annotated[list[Path], typer.Argument(help="Snapshot files to check.", show_default=False, metavar="FILE")],
    shown: Shown,
) -> None:
    """Check snapshot files strictly; print one summary line per file.

    Each malformed file gets one line naming the file, the JSON path and what was expected, and the
    exit code is 1. A snapshot whose config names a strategy lbctl cannot run (an unknown class,
    AvgShedder placement without AvgShedder shedding) is malformed too: recommend would refuse it.

    \b
    Examples:
      lbctl snapshot validate examples/*.json examples/*.yaml examples/*.jsonl
    """
    from lbctl.loadmanager.select import check_runnable
    from lbctl.render.views import ValidateView
    from lbctl.sources.snapshot import read_snapshot_file, summarize

    summaries = []
    for f in files:
        states = read_snapshot_file(f, strict=True)
        check_runnable(states)  # the same selection recommend makes: one validator for both
        for st in states:
            summaries.append({"file": str(f), **summarize(st)})
    shown.emit(ValidateView(summaries))
