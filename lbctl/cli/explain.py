"""`lbctl explain`: the reasoning behind the load manager's decision, in numbers and words."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl.cli.common import (
    TABLE,
    AllCycles,
    BrokerConf,
    Output,
    Placement,
    Seed,
    SetOpt,
    Strategy,
    emit,
    handled,
)
from lbctl.cli.connection import OptionalSnapshots
from lbctl.cli.prometheus import (
    AllowPartial,
    Cluster,
    End,
    PrometheusConf,
    PrometheusUrl,
    ReferenceOpt,
    Since,
    Start,
    Step,
)


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
    all_cycles: AllCycles = False,
    output: Output = TABLE,
    prometheus_url: PrometheusUrl = None,
    since: Since = None,
    start: Start = None,
    end: End = None,
    step: Step = "1m",
    cluster: Cluster = None,
    reference: ReferenceOpt = None,
    prometheus_conf: PrometheusConf = None,
    allow_partial: AllowPartial = False,
) -> None:
    """Explain why the load manager unloads what it unloads — or why nothing happens.

    Shows each broker's resource usage and which resource won the weighted max, raw usage against
    the history-smoothed score, the average and threshold, every candidate bundle with why it was
    chosen or skipped, and the placement scores of each destination.

    Examples:

      lbctl explain examples/rolling-restart.yaml

      lbctl explain examples/hot-broker.json --broker broker-1.pulsar.svc:8080

      lbctl explain snap.json -o json
    """
    with handled():
        from lbctl.cli.prometheus import PrometheusArgs, states_for
        from lbctl.config import parse_assignments
        from lbctl.errors import UsageError
        from lbctl.loadmanager.select import Options, run
        from lbctl.render.views import ExplainView

        opts = Options(strategy, placement, parse_assignments(set_ or []), broker_conf, seed)
        if bundle:
            bundle = check_bundle_name(bundle)
        states = states_for(ctx, snapshots, PrometheusArgs(
            prometheus_url, since, start, end, step, cluster, reference, prometheus_conf,
            allow_partial))
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
