"""`lbctl simulate`: run the load manager cycle after cycle on a model of the cluster."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lbctl.cli.common import (
    BrokerConf,
    LoadManagerChoice,
    Placement,
    PulsarVersion,
    Seed,
    SetOpt,
    Shown,
    Strategy,
)
from lbctl.cli.groups import OptionGroup, grouped
from lbctl.cli.state import HistoryInput

if TYPE_CHECKING:
    from lbctl.loadmanager.select import Options
    from lbctl.simulate.engine import SimulationOptions

Cycles = Annotated[
    int | None,
    typer.Option("--cycles", metavar="N", help="Cycles to simulate, loadBalancerSheddingIntervalMinutes "
                 "apart [default: 60, or as many as a sequence spans]."),
]
Band = Annotated[
    float,
    typer.Option("--band", metavar="POINTS", help="Settled = broker load range (max - min, in "
                 "percentage points) stays within this."),
]
BounceWindow = Annotated[
    int | None,
    typer.Option("--bounce-window", metavar="CYCLES", help="A bundle returning to a broker it left "
                 "within this many cycles is a bounce-back [default: the grace period]."),
]
IdleUsage = Annotated[
    float | None,
    typer.Option("--idle-usage", metavar="PERCENT", help="Resource usage of a broker carrying no "
                 "traffic [default: fitted from the snapshot]."),
]
PlotFile = Annotated[
    Path | None,
    typer.Option("--plot", metavar="FILE", help="Also draw the run to FILE, a .png or .svg "
                 "(needs matplotlib: pip install 'lbctl[plot]')."),
]


def sim_options(cycles: int | None, band: float, bounce_window: int | None,
                idle_usage: float | None) -> SimulationOptions:
    """The simulation's own flags, checked."""
    import math

    from lbctl.errors import UsageError
    from lbctl.simulate.engine import SimulationOptions

    if not math.isfinite(band) or band < 0:
        raise UsageError(f"--band must be a percentage >= 0, got {band:g}")
    if idle_usage is not None and (not math.isfinite(idle_usage) or idle_usage < 0):
        raise UsageError(f"--idle-usage must be a percentage >= 0, got {idle_usage:g}")
    return SimulationOptions(cycles=cycles, band=band / 100.0, bounce_window=bounce_window,
                             idle_usage=idle_usage)


class SimulationRun(OptionGroup, frozen=True):
    """What simulate and compare share after the strategy: the load manager's placement and
    settings, the run's length and measures, and the plot."""

    placement: Placement = None
    cycles: Cycles = None
    set_: SetOpt = None
    broker_conf: BrokerConf = None
    seed: Seed = None
    pulsar_version: PulsarVersion = None
    band: Band = 10.0
    bounce_window: BounceWindow = None
    idle_usage: IdleUsage = None
    plot: PlotFile = None

    def options(self, strategy: str | None) -> Options:
        return LoadManagerChoice(strategy, self.placement, self.set_, self.broker_conf,
                                 self.seed, self.pulsar_version).options()

    def simulation(self) -> SimulationOptions:
        return sim_options(self.cycles, self.band, self.bounce_window, self.idle_usage)

    def check_plot(self) -> None:
        if self.plot is not None:
            from lbctl.simulate.plot import check_plot_path

            check_plot_path(self.plot)


@grouped
def simulate(
    ctx: typer.Context,
    *,
    strategy: Strategy = None,
    run: SimulationRun,
    shown: Shown,
    given: HistoryInput,
) -> None:
    """Simulate load balancing over time: shed, place, move, recompute load, repeat.

    Starts from the first snapshot; with a sequence, bundle rates follow it over time. Broker CPU
    and bandwidth follow the traffic of the bundles they carry (see README, "Simulation"). Prints
    per-cycle load spread, unloads, throughput moved, bounce-backs and the time to settle.
    --strategy lbctl runs lbctl's own planner (lbctl propose): it plans once and re-plans only
    when the load range leaves the --band.

    \b
    Examples:
      lbctl simulate examples/pip364-90-10.json --cycles 10
      lbctl simulate examples/pip364-90-10.json --strategy AvgShedder \\
          --placement AvgShedder --set maxUnloadPercentage=0.5
      lbctl simulate examples/hot-broker.json --cycles 120 -o csv --plot hot.png
    """
    from lbctl.cli.state import choose
    from lbctl.progress import shown as progress
    from lbctl.render.simulation_view import SimulationView
    from lbctl.simulate.engine import simulate as simulation

    opts = run.options(strategy)
    sim = run.simulation()
    run.check_plot()
    states = choose(ctx, given).read().states
    with progress() as bar:
        result = simulation(states, opts, sim, progress=lambda d, t: bar.step("simulating", d, t))
    if run.plot is not None:
        from lbctl.simulate.plot import plot_simulation

        plot_simulation(result, run.plot)
    shown.emit(SimulationView(result))
