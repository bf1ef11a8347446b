"""`lbctl recommend`: what the modular load manager would do with a snapshot, as a plan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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

PlanPlotFile = Annotated[
    Path | None,
    typer.Option("--plot", metavar="FILE", help="Also draw each broker's usage before and after "
                 "the (last) plan to FILE, a .png or .svg (needs matplotlib: pip install "
                 "'lbctl[plot]')."),
]


def recommend(
    ctx: typer.Context,
    snapshots: OptionalSnapshots = None,
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
    plot: PlanPlotFile = None,
) -> None:
    """Recommend unloads: run Pulsar's shedding and placement strategies over a snapshot.

    A sequence (several files, or a .jsonl) is replayed cycle by cycle, carrying the strategies'
    history on the leader's clock (the cycles that elapsed between snapshots count); the plan of
    the last cycle is printed (--all-cycles: every cycle). A single snapshot, or a live read, is the
    leader's first sight of the state (--assume-steady: a state that has lasted). Live, --watch
    follows the leader, carrying the strategies' memory from refresh to refresh.

    \b
    Examples:
      lbctl recommend examples/hot-broker.json
      lbctl recommend examples/two-brokers-90-10.jsonl --all-cycles -o json
      lbctl recommend snap.json --strategy AvgShedder --placement AvgShedder \\
          --set maxUnloadPercentage=0.5
      lbctl recommend snap.json --pulsar-version 3.0.6 --assume-steady
      lbctl recommend examples/hot-broker.json --plot hot.png
      lbctl --admin-url http://pulsar:8080 recommend --watch --interval 60
    """
    from lbctl.cli.prometheus import PrometheusArgs, states_for
    from lbctl.config import parse_assignments
    from lbctl.errors import UsageError
    from lbctl.loadmanager.select import Options, plans
    from lbctl.render.views import RecommendView

    opts = Options(strategy, placement, parse_assignments(set_ or []), broker_conf, seed,
                   pulsar_version, assume_steady,
                   live=not snapshots and not prometheus_url)
    if plot is not None:
        from lbctl.simulate.plot import check_plot_path

        check_plot_path(plot)
    if watch or interval is not None or count is not None:
        if plot is not None:
            raise UsageError("--plot draws one plan: give a snapshot, not --watch")
        if snapshots:
            raise UsageError("--watch follows a live cluster: give no snapshot")
        if not watch:
            raise UsageError("--interval and --count go with --watch")
        from lbctl.cli.watch import run_watch

        run_watch(ctx, opts, lambda r: RecommendView([r.plan()]), output,
                  interval=interval, count=count)
        return
    from lbctl.cli.progress import Progress

    bar = Progress()
    history = PrometheusArgs(prometheus_url, since, start, end, step, cluster, reference,
                             prometheus_conf, allow_partial)
    with bar.phase("reading the snapshots" if snapshots else "reading the cluster"):
        if snapshots and not history.given:
            # a large .jsonl is validated now and replayed a snapshot at a time
            from lbctl.sources.snapshot_stream import open_sequence

            history.check_alone(snapshots)
            seq = open_sequence(snapshots)
        else:
            seq = states_for(ctx, snapshots, history)
    with bar.phase(f"running the load manager over {len(seq)} cycle(s)"):
        if isinstance(seq, list):
            result = plans(seq, opts)
        else:
            from lbctl.loadmanager.select import stream_plans

            result = stream_plans(seq.headers, seq.states(), opts)
    if plot is not None and result:
        from lbctl.render.plan_plot import plot_plan

        plot_plan(result[-1], plot, wide=wide)
    emit(RecommendView(result, all_cycles), output, wide=wide, no_color=no_color)
