"""`lbctl snapshot export`: the live cluster as a snapshot v1 file, or one more line of a sequence."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer


def export(
    ctx: typer.Context,
    file: Annotated[str | None, typer.Option(
        "-f", "--file", metavar="FILE",
        help="Write the snapshot here (.json, .yaml, .jsonl, optionally .gz), atomically; "
             "'-' writes JSON to stdout.")] = None,
    output_file: Annotated[str | None, typer.Option(
        "-o", "--output", metavar="FILE", hidden=True,
        help="Deprecated: use -f/--file (-o means a format everywhere else).")] = None,
    append: Annotated[Path | None, typer.Option(
        "--append", metavar="FILE.jsonl",
        help="Append one line to this sequence (created when missing).")] = None,
    topics: Annotated[bool, typer.Option(
        "--topics/--no-topics", help="Read per-broker topic stats (/broker-stats/topics).")] = True,
) -> None:
    """Export the live cluster (--admin-url) as a snapshot v1.

    Reads the runtime configuration, every broker's load report and topic stats, and every
    namespace's bundles. A broker that cannot be read is reported and left out. The file is written
    atomically (never half-written, mode 0600); --append adds one line to a .jsonl sequence,
    crash-safely (a line cut short by a crash or a full disk is never glued to the next), so that
    a loop or cron builds history that recommend and explain replay cycle by cycle.

    \b
    Examples:
      lbctl --admin-url http://pulsar:8080 snapshot export -f snap.json
      lbctl snapshot export --append history.jsonl   # e.g. every minute, cron
      lbctl snapshot export -f - | gzip > snap.json.gz
    """
    from lbctl.cli.state import choose
    from lbctl.errors import UsageError
    from lbctl.sources.snapshot import append_snapshot, summarize, write_snapshot

    if output_file is not None:
        if file is not None:
            raise UsageError("give -f/--file only (-o is its deprecated alias)")
        sys.stderr.write("lbctl: warning: snapshot export -o FILE is deprecated (-o means a "
                         "format everywhere else); use -f/--file FILE\n")
        file = output_file
    if (file is None) == (append is None):
        raise UsageError("give exactly one of -f FILE (or -f - for stdout) or "
                         "--append FILE.jsonl")
    from lbctl.errors import SnapshotError
    from lbctl.safe.files import refuse_unwritable

    for named in (file, append):  # before the cluster is read, not after
        if named is not None and str(named) != "-":
            refuse_unwritable(named, what="a snapshot file to write", error=SnapshotError)
    state = choose(ctx, topics=topics).read().last
    target: Path | str
    if append is not None:
        cut = append_snapshot(state, append)
        if cut:
            from lbctl.cli.connection import warn

            warn(f"{append}: removed a partial last line ({cut} bytes) left by an interrupted "
                 "append before appending")
        target = append
    elif file == "-":
        from lbctl.safe.text import json_hidden_escaped
        from lbctl.sources.snapshot import encode_snapshot

        data = json_hidden_escaped(encode_snapshot(state, "json"))  # -f -: a screen, perhaps
        sys.stdout.buffer.write(data if data.endswith(b"\n") else data + b"\n")
        sys.stdout.flush()
        target = "stdout"
    else:
        assert file is not None
        write_snapshot(state, Path(file))
        target = file
    s = summarize(state)
    from lbctl.safe.text import one_line

    sys.stderr.write(one_line(f"lbctl: {'appended to' if append else 'wrote'} {target}: "
                              f"cluster {s['cluster']}, {s['brokers']} broker(s), "
                              f"{s['bundles']} bundle(s)") + "\n")
