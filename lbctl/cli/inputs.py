"""Where a command's cluster state comes from: snapshot files, or — when none is given — the live
cluster, which is then said on stderr when it is a terminal (a forgotten argument must not
silently become a network read; scripts, whose stderr is a file or a pipe, keep one line per
error)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from lbctl.model.cluster import ClusterState


def shown_url(url: str) -> str:
    """``url`` without user info (``http://user:secret@host`` → ``http://***@host``)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


def note_live(ctx: typer.Context | None, stream: Any = None) -> None:
    from lbctl.admin.clientconf import resolve_connection
    from lbctl.cli.connection import is_terminal, options_of

    stream = stream or sys.stderr
    if not is_terminal(stream):
        return
    url = resolve_connection(options_of(ctx)).admin_url
    stream.write(f"lbctl: no snapshot given: reading the live cluster at {shown_url(url)}\n")


def cluster_states(ctx: typer.Context | None, snapshots: Sequence[Path] | None
                   ) -> list[ClusterState]:
    """The snapshots' states, or the live cluster's (announced on stderr)."""
    if snapshots:
        from lbctl.sources.snapshot import read_snapshots

        return read_snapshots(snapshots)
    from lbctl.cli.connection import live_states

    note_live(ctx)
    return live_states(ctx)
