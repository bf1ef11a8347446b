"""`lbctl explain`: the reasoning behind the load manager's decision, in numbers and words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from lbctl.cli.common import (
    TABLE,
    AllCycles,
    AssumeSteady,
    BrokerConf,
    Count,
    Interval,
    NoColor,
    Output,
    Placement,
    PulsarVersion,
    Seed,
    SetOpt,
    Strategy,
    Watch,
    Wide,
    emit,
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

if TYPE_CHECKING:
    from lbctl.model.cluster import ClusterState


def explain(
    ctx: typer.Context,
    snapshots: OptionalSnapshots = None,
    broker: Annotated[str | None, typer.Option(
        "--broker", metavar="BROKER",
        help="Explain one broker only (its id, or its name as tables show it: broker-2).")] = None,
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
    wide: Wide = False,
    no_color: NoColor = False,
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
    chosen or skipped, and the placement scores of each destination. It names the Pulsar release
    modelled, the gate that held and how many more cycles of this state would open it.

    \b
    Examples:
      lbctl explain examples/rolling-restart.yaml
      lbctl explain examples/hot-broker.json --broker broker-1.pulsar.svc:8080
      lbctl explain snap.json -o json

      lbctl explain examples/extensible/skewed.json --pulsar-version 3.1 --assume-steady
    """
    from lbctl.cli.progress import Progress
    from lbctl.cli.prometheus import PrometheusArgs, states_for
    from lbctl.config import parse_assignments
    from lbctl.errors import UsageError
    from lbctl.loadmanager.select import Options, run
    from lbctl.render.views import ExplainView

    opts = Options(strategy, placement, parse_assignments(set_ or []), broker_conf, seed,
                   pulsar_version, assume_steady,
                   live=not snapshots and not prometheus_url, project=True)
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
    bar = Progress()
    with bar.phase("reading the snapshots" if snapshots else "reading the cluster"):
        states = states_for(ctx, snapshots, PrometheusArgs(
            prometheus_url, since, start, end, step, cluster, reference, prometheus_conf,
            allow_partial))
    if broker is not None:
        broker = resolve_broker(broker, list(states[-1].brokers))
    if bundle is not None:
        check_known_bundle(bundle, states)
    with bar.phase(f"running the load manager over {len(states)} cycle(s)"):
        results = run(states, opts)
    emit(ExplainView(results, broker, bundle, all_cycles), output, wide=wide,
         no_color=no_color)


def resolve_broker(name: str, brokers: list[str]) -> str:
    """A broker id as given, or as the tables show it (``broker-2`` for
    ``broker-2.pulsar.svc:8080``: the one id that continues with ``.`` or ``:``)."""
    from lbctl.config import closest
    from lbctl.errors import UsageError
    from lbctl.safe.text import shorten

    if name in brokers:
        return name
    matches = [b for b in brokers if b.startswith(name) and b[len(name):][:1] in (".", ":")]
    if len(matches) == 1:
        return matches[0]
    hint = closest(name, brokers)
    raise UsageError(f"unknown broker {shorten(name, 120)!r}: not in the snapshot"
                     + (f" (did you mean {hint}?)" if hint else
                        f"; it has {', '.join(brokers[:5])}" + (", …" if len(brokers) > 5 else "")))


def check_known_bundle(bundle: str, states: Sequence[ClusterState]) -> None:
    """``--bundle`` must name a bundle of the snapshots (owned, or one of a namespace's ranges)."""
    from lbctl.config import closest
    from lbctl.errors import UsageError
    from lbctl.safe.text import shorten

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


def check_bundle_name(bundle: str) -> str:
    """Validate a ``--bundle`` argument (full name)."""
    from lbctl.errors import UsageError
    from lbctl.model.bundle import BundleName, BundleNameError

    try:
        return str(BundleName.parse(bundle))
    except BundleNameError as e:
        raise UsageError(str(e)) from None
