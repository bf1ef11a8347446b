"""`lbctl doctor`: the load-balancing traps in a cluster's configuration and state."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl.cli.common import (
    TABLE,
    BrokerConf,
    NoColor,
    Output,
    PulsarVersion,
    SetOpt,
    Wide,
    emit,
)
from lbctl.cli.connection import OptionalSnapshots

Only = Annotated[list[str] | None, typer.Option(
    "--rule", metavar="ID", help="Run only this rule (repeatable); ids in docs/doctor.md.")]
Skip = Annotated[list[str] | None, typer.Option(
    "--skip", metavar="ID", help="Do not run this rule (repeatable).")]


def doctor(
    ctx: typer.Context,
    snapshots: OptionalSnapshots = None,
    broker_conf: BrokerConf = None,
    pulsar_version: PulsarVersion = None,
    set_: SetOpt = None,
    only: Only = None,
    skip: Skip = None,
    output: Output = TABLE,
    wide: Wide = False,
    no_color: NoColor = False,
) -> None:
    """Check a cluster for the known load-balancing traps (docs/doctor.md lists every rule).

    With no snapshot, reads the live cluster: the runtime and dynamic configuration, and every
    broker's load report, version and load manager. Each finding gives its rule id, severity,
    what was found, why it matters (citing the Pulsar PR, issue or PIP) and the fix.

    \b
    Exit status when the cluster was examined (a CI gate fails on anything but 0):
        0  no finding, or info only
        1  at least one warning, no error
        2  at least one error

    A failure to examine it (unreadable file, cluster unreachable) prints `lbctl: error: ...`
    and no report, with the codes of `lbctl --help` (1 other error, 2 usage, 3+ network/HTTP).

    \b
    Examples:
      lbctl doctor examples/balanced.json
      lbctl doctor snap.json --broker-conf conf/broker.conf --pulsar-version 3.0.7
      lbctl doctor -o json > findings.json || echo "needs attention"
      lbctl --admin-url http://pulsar:8080 doctor
    """
    from lbctl.config import parse_assignments
    from lbctl.doctor.run import diagnose
    from lbctl.loadmanager.select import Options
    from lbctl.render.doctor_view import DoctorView

    live = not snapshots
    opts = Options(overrides=parse_assignments(set_ or []), broker_conf=broker_conf,
                   pulsar_version=pulsar_version, live=live)
    if snapshots:
        from lbctl.sources.snapshot import read_snapshots

        report = diagnose(read_snapshots(snapshots), opts, only=only or (), skip=skip or ())
    else:
        import sys

        from lbctl.cli.connection import is_terminal, open_client, progress_bar, warn
        from lbctl.cli.inputs import note_live
        from lbctl.doctor.live import read_live

        terminal = is_terminal(sys.stderr)
        if terminal:  # before the read on a terminal; after a successful one otherwise
            note_live(ctx)
        with open_client(ctx) as client:
            got = read_live(client, progress=progress_bar(terminal))
        if not terminal:
            note_live(ctx)
        for w in got.warnings:
            warn(w)
        report = diagnose([got.state], opts, dynamic=got.dynamic, facts=got.facts,
                          unreachable=got.unreachable, only=only or (), skip=skip or ())
    emit(DoctorView(report), output, wide=wide, no_color=no_color)
    raise typer.Exit(int(report.status))
