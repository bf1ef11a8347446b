"""`lbctl compare`: the same start and trace through several strategies, side by side."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl.cli.common import (
    TABLE,
    BrokerConf,
    Output,
    Placement,
    Seed,
    SetOpt,
    Snapshots,
    emit,
    handled,
)
from lbctl.cli.simulate import Band, BounceWindow, Cycles, IdleUsage, PlotFile, sim_options

Strategies = Annotated[
    list[str],
    typer.Option("--strategy", metavar="NAME[:PLACEMENT]", show_default=False,
                 help="A shedding strategy to compare (repeatable), optionally with its placement "
                 "strategy, e.g. AvgShedder:AvgShedder; lbctl for lbctl's own planner."),
]


def compare(
    snapshots: Snapshots,
    strategy: Strategies,
    placement: Placement = None,
    cycles: Cycles = None,
    set_: SetOpt = None,
    broker_conf: BrokerConf = None,
    seed: Seed = None,
    band: Band = 10.0,
    bounce_window: BounceWindow = None,
    idle_usage: IdleUsage = None,
    plot: PlotFile = None,
    output: Output = TABLE,
) -> None:
    """Compare shedding strategies by simulating each from the same snapshot (and trace).

    Prints, per strategy: final load spread, unloads, throughput moved, bounce-backs, placements
    onto above-average brokers and the time to settle. --placement applies to strategies given
    without one; --set applies to every run.

    Examples:

      lbctl compare examples/pip364-90-10.json --strategy ThresholdShedder --strategy AvgShedder:AvgShedder --set maxUnloadPercentage=0.5

      lbctl compare examples/hot-broker.json --strategy ThresholdShedder --strategy UniformLoadShedder --strategy OverloadShedder --plot spread.png

      lbctl compare examples/rolling-restart.yaml --strategy ThresholdShedder --strategy lbctl
    """
    with handled():
        from lbctl.config import parse_assignments
        from lbctl.loadmanager.select import Options
        from lbctl.render.simulation_view import ComparisonView
        from lbctl.simulate.compare import compare as run
        from lbctl.simulate.compare import parse_pairs
        from lbctl.sources.snapshot import read_snapshots

        opts = Options(None, placement, parse_assignments(set_ or []), broker_conf, seed)
        pairs = parse_pairs(strategy, placement)
        sim = sim_options(cycles, band, bounce_window, idle_usage)
        result = run(read_snapshots(snapshots), opts, pairs, sim)
        if plot is not None:
            from lbctl.simulate.plot import plot_comparison

            plot_comparison(result.runs, plot)
        emit(ComparisonView(result), output)
