"""`lbctl compare`: the same start and trace through several strategies, side by side."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl.cli.common import (
    TABLE,
    BrokerConf,
    NoColor,
    Output,
    Placement,
    PulsarVersion,
    Seed,
    SetOpt,
    Wide,
    emit,
)
from lbctl.cli.prometheus import (
    AllowPartial,
    Cluster,
    End,
    PrometheusConf,
    PrometheusUrl,
    ReferenceOpt,
    Since,
    SnapshotsOrPrometheus,
    Start,
    Step,
)
from lbctl.cli.simulate import Band, BounceWindow, Cycles, IdleUsage, PlotFile, sim_options

Strategies = Annotated[
    list[str],
    typer.Option("--strategy", metavar="NAME[:PLACEMENT]", show_default=False,
                 help="A shedding strategy to compare (repeatable), optionally with its placement "
                 "strategy, e.g. AvgShedder:AvgShedder; lbctl for lbctl's own planner."),
]


def compare(
    ctx: typer.Context,
    strategy: Strategies,
    snapshots: SnapshotsOrPrometheus = None,
    placement: Placement = None,
    cycles: Cycles = None,
    set_: SetOpt = None,
    broker_conf: BrokerConf = None,
    seed: Seed = None,
    pulsar_version: PulsarVersion = None,
    band: Band = 10.0,
    bounce_window: BounceWindow = None,
    idle_usage: IdleUsage = None,
    plot: PlotFile = None,
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
    """Compare shedding strategies by simulating each from the same snapshot (and trace).

    Prints, per strategy: final load spread, unloads, throughput moved, bounce-backs, placements
    onto above-average brokers and the time to settle. --placement applies to strategies given
    without one; --set applies to every run.

    \b
    Examples:
      lbctl compare examples/pip364-90-10.json --strategy ThresholdShedder \\
          --strategy AvgShedder:AvgShedder --set maxUnloadPercentage=0.5
      lbctl compare examples/hot-broker.json --strategy ThresholdShedder \\
          --strategy UniformLoadShedder --strategy OverloadShedder \\
          --plot spread.png
      lbctl compare examples/rolling-restart.yaml --strategy ThresholdShedder \\
          --strategy lbctl
    """
    from lbctl.cli.prometheus import PrometheusArgs, states_for
    from lbctl.config import parse_assignments
    from lbctl.loadmanager.select import Options
    from lbctl.render.simulation_view import ComparisonView
    from lbctl.simulate.compare import compare as run
    from lbctl.simulate.compare import parse_pairs

    opts = Options(None, placement, parse_assignments(set_ or []), broker_conf, seed,
                   pulsar_version)
    pairs = parse_pairs(strategy, placement)
    sim = sim_options(cycles, band, bounce_window, idle_usage)
    if plot is not None:
        from lbctl.simulate.plot import check_plot_path

        check_plot_path(plot)
    from lbctl.cli.progress import Progress

    bar = Progress()
    with bar.phase("reading the snapshots"):
        states = states_for(ctx, snapshots, PrometheusArgs(
            prometheus_url, since, start, end, step, cluster, reference, prometheus_conf,
            allow_partial), live=False)
    result = run(states, opts, pairs, sim, progress=lambda d, t: bar.step("simulating", d, t))
    if plot is not None:
        from lbctl.simulate.plot import plot_comparison

        plot_comparison(result.runs, plot)
    emit(ComparisonView(result), output, wide=wide, no_color=no_color)
