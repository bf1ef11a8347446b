"""Where a command's cluster state comes from: snapshot files, or — when none is given — the live
cluster, which is then said on stderr (a forgotten argument must not silently become a network
read). On a terminal the note comes first, so a slow read is explained while it runs; when stderr
is a file or a pipe it comes once the read succeeded, so that a failed read stays one line
(``lbctl: error: GET <url>…``, which names the cluster itself)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from lbctl.model.cluster import ClusterState


def note_live(ctx: typer.Context | None, stream: Any = None) -> None:
    """``lbctl: no snapshot given: reading the live cluster at URL`` (credentials left out)."""
    from lbctl.admin.clientconf import resolve_connection
    from lbctl.cli.connection import is_terminal, options_of
    from lbctl.safe.redact import url_without_userinfo

    stream = stream or sys.stderr
    url = resolve_connection(options_of(ctx)).admin_url
    if is_terminal(stream):  # erase a progress line (lbctl.cli.progress) the note would run into
        stream.write("\r" + " " * 78 + "\r")
    stream.write(f"lbctl: no snapshot given: reading the live cluster at {url_without_userinfo(url)}\n")


def cluster_states(ctx: typer.Context | None, snapshots: Sequence[Path] | None
                   ) -> list[ClusterState]:
    """The snapshots' states, or the live cluster's (announced on stderr)."""
    if snapshots:
        from lbctl.sources.snapshot import read_snapshots

        return read_snapshots(snapshots)
    return live_cluster_states(ctx)


def live_cluster_states(ctx: typer.Context | None) -> list[ClusterState]:
    """The live cluster's state, announced on stderr (before the read on a terminal, after it
    otherwise)."""
    from lbctl.cli.connection import is_terminal, live_states

    if is_terminal(sys.stderr):
        note_live(ctx)
        return live_states(ctx)
    states = live_states(ctx)
    note_live(ctx)
    return states
