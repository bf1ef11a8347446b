"""`lbctl explain`: the reasoning behind the load manager's decision, in numbers and words."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl.cli.common import (
    TABLE,
    AllCycles,
    AssumeSteady,
    BrokerConf,
    Count,
    Interval,
    Output,
    Placement,
    PulsarVersion,
    Seed,
    SetOpt,
    Strategy,
    Watch,
    emit,
    handled,
)
from lbctl.cli.connection import OptionalSnapshots


def explain(
    ctx: typer.Context,
    snapshots: OptionalSnapshots = None,
    broker: Annotated[str | None, typer.Option("--broker", metavar="BROKER", help="Explain one broker only.")] = None,
    bundle: Annotated[
        str | None, typer.Option("-b", "--bundle", metavar="BUNDLE", help="Explain one bundle (tenant/ns/0x…_0x…).")
    ] = None,
    strategy: Strategy = None,
    placement: Placement = None,
    set_: SetOpt = None,
    broker_conf: BrokerConf = None,
    seed: Seed = None,
    pulsar_version: PulsarVersion = None,
    assume_steady: AssumeSteady = False,
    all_cycles: AllCycles = False,
    watch: Watch = False,
    interval: Interval = None,
    count: Count = None,
    output: Output = TABLE,
) -> None:
    """Explain why the load manager unloads what it unloads — or why nothing happens.

    Shows each broker's resource usage and which resource won the weighted max, raw usage against
    the history-smoothed score, the average and threshold, every candidate bundle with why it was
    chosen or skipped, and the placement scores of each destination. It names the Pulsar release
    modelled, the gate that held and how many more cycles of this state would open it.

    Examples:

      lbctl explain examples/rolling-restart.yaml

      lbctl explain examples/hot-broker.json --broker broker-1.pulsar.svc:8080

      lbctl explain snap.json -o json

      lbctl explain examples/extensible/skewed.json --pulsar-version 3.1 --assume-steady
    """
    with handled():
        from lbctl.cli.connection import live_states
        from lbctl.config import parse_assignments
        from lbctl.errors import UsageError
        from lbctl.loadmanager.select import Options, run
        from lbctl.render.views import ExplainView
        from lbctl.sources.snapshot import read_snapshots

        opts = Options(strategy, placement, parse_assignments(set_ or []), broker_conf, seed,
                       pulsar_version, assume_steady, live=not snapshots, project=True)
        if bundle:
            bundle = check_bundle_name(bundle)
        if watch or interval is not None or count is not None:
            if snapshots:
                raise UsageError("--watch follows a live cluster: give no snapshot")
            if not watch:
                raise UsageError("--interval and --count go with --watch")
            from lbctl.cli.watch import run_watch

            run_watch(ctx, opts, lambda r: ExplainView([r], broker, bundle), output,
                      interval=interval, count=count)
            return
        states = read_snapshots(snapshots) if snapshots else live_states(ctx)  # live: --admin-url
        if broker and broker not in states[-1].brokers:
            from lbctl.config import closest

            hint = closest(broker, states[-1].brokers)
            raise UsageError(f"unknown broker {broker!r}" + (f" (did you mean {hint}?)" if hint else ""))
        emit(ExplainView(run(states, opts), broker, bundle, all_cycles), output)


def check_bundle_name(bundle: str) -> str:
    """Validate a ``--bundle`` argument (full name)."""
    from lbctl.errors import UsageError
    from lbctl.model.bundle import BundleName, BundleNameError

    try:
        return str(BundleName.parse(bundle))
    except BundleNameError as e:
        raise UsageError(str(e)) from None
