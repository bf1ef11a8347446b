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
        from lbctl.cli.connection import live_states
        from lbctl.config import parse_assignments
        from lbctl.errors import UsageError
        from lbctl.loadmanager.select import Options, run
        from lbctl.render.views import ExplainView
        from lbctl.sources.snapshot import read_snapshots

        opts = Options(strategy, placement, parse_assignments(set_ or []), broker_conf, seed)
        if bundle:
            bundle = check_bundle_name(bundle)
        states = read_snapshots(snapshots) if snapshots else live_states(ctx)  # live: --admin-url
        from lbctl.config import closest
        from lbctl.safe.text import shorten

        if broker is not None and broker not in states[-1].brokers:
            hint = closest(broker, states[-1].brokers)
            raise UsageError(f"unknown broker {shorten(broker, 120)!r}: not in the snapshot"
                             + (f" (did you mean {hint}?)" if hint else
                                f"; it has {', '.join(list(states[-1].brokers)[:5])}"
                                + (", …" if len(states[-1].brokers) > 5 else "")))
        if bundle is not None:
            known = {b for st in states for b in st.owners()} | {
                f"{ns}/{a}_{b}" for st in states for ns, bounds in st.namespaces.items()
                for a, b in zip([f"0x{x:08x}" for x in bounds],
                                [f"0x{x:08x}" for x in bounds[1:]], strict=False)}
            if bundle not in known:
                ns = bundle.rsplit("/", 1)[0] + "/"
                near = sorted(k for k in known if k.startswith(ns)) or sorted(known)
                hint = closest(bundle, near[:5000])
                raise UsageError(f"unknown bundle {shorten(bundle, 120)!r}: not in the snapshot"
                                 + (f" (did you mean {hint}?)" if hint else ""))
        emit(ExplainView(run(states, opts), broker, bundle, all_cycles), output)


def check_bundle_name(bundle: str) -> str:
    """Validate a ``--bundle`` argument (full name)."""
    from lbctl.errors import UsageError
    from lbctl.model.bundle import BundleName, BundleNameError

    try:
        return str(BundleName.parse(bundle))
    except BundleNameError as e:
        raise UsageError(str(e)) from None
