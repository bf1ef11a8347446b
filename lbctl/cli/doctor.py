"""`lbctl doctor`: the load-balancing traps in a cluster's configuration and state."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl.cli.common import LoadManagerChoice, Shown
from lbctl.cli.groups import Fields, grouped
from lbctl.cli.state import FilesOrLive

Only = Annotated[list[str] | None, typer.Option(
    "--rule", metavar="ID", help="Run only this rule (repeatable); ids in docs/doctor.md.")]
Skip = Annotated[list[str] | None, typer.Option(
    "--skip", metavar="ID", help="Do not run this rule (repeatable).")]


@grouped
def doctor(
    ctx: typer.Context,
    *,
    given: FilesOrLive,
    lm: Annotated[LoadManagerChoice, Fields("broker_conf", "pulsar_version", "set_")],
    only: Only = None,
    skip: Skip = None,
    shown: Shown,
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
    from lbctl.cli.explain import choice_flags
    from lbctl.cli.state import choose
    from lbctl.doctor.run import diagnose
    from lbctl.records import replace
    from lbctl.render.doctor_view import DoctorView

    opts = lm.options()
    chosen = choose(ctx, given)
    opts = replace(opts, live=chosen.source.live)
    if not chosen.source.live:
        # the fixes' commands name the files as given (a .jsonl state's source is FILE:LINE)
        report = diagnose(chosen.read().states, opts, only=only or (), skip=skip or (),
                          files=[str(f) for f in given.files], flags=choice_flags(lm))
    else:
        from lbctl.cli.connection import warn
        from lbctl.doctor.live import read_live
        from lbctl.progress import shown as progress

        with chosen.announced(), progress() as bar, bar.phase("reading the cluster"), \
                chosen.session(bar.step) as cluster:
            got = read_live(cluster)
        for w in got.warnings:
            warn(w)
        report = diagnose([got.state], opts, dynamic=got.dynamic, facts=got.facts,
                          unreachable=got.unreachable, only=only or (), skip=skip or (),
                          flags=choice_flags(lm))
    shown.emit(DoctorView(report))
    raise typer.Exit(int(report.status))
