"""`lbctl simulate`: run the load manager cycle after cycle on a model of the cluster."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from msgspec import Struct

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
    from collections.abc import Sequence

    from lbctl.loadmanager.select import Options
    from lbctl.model.cluster import ClusterState
    from lbctl.simulate.engine import SimulationOptions
    from lbctl.simulate.hosts import HostsFile

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
HostsChoice = Annotated[
    str | None,
    typer.Option("--hosts", metavar="MIX|FILE", help="The truth the brokers' reports come from: "
                 "inferred (hosts implied by each broker's report), mixed (8/16/32-core hosts "
                 "with 2-8 % idle usage and their own costs, loaded as the snapshot says) or a "
                 "YAML/JSON hosts file [default: inferred]."),
]
HostSeed = Annotated[
    int,
    typer.Option("--host-seed", metavar="N", help="Seeds --hosts mixed and the reports' noise."),
]
Noise = Annotated[
    float | None,
    typer.Option("--noise", metavar="PERCENT", help="Relative noise of every reported figure "
                 "(standard deviation, percent) [default: the hosts' own: 0 inferred, 2 mixed]."),
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
    if idle_usage is not None and (not math.isfinite(idle_usage) or not 0 <= idle_usage < 100):
        # a broker carrying no traffic at 100 % or more would be overloaded by nothing
        raise UsageError(f"--idle-usage must be a percentage from 0 to below 100, got "
                         f"{idle_usage:g}")
    return SimulationOptions(cycles=cycles, band=band / 100.0, bounce_window=bounce_window,
                             idle_usage=idle_usage)


class Truth(Struct, frozen=True):
    """``--hosts``/``--host-seed``/``--noise`` checked (a hosts file read) before the run."""

    choice: str
    seed: int
    noise: float | None  # fraction
    hosts_file: HostsFile | None = None

    def apply(self, sim: SimulationOptions, states: Sequence[ClusterState]) -> tuple[
            SimulationOptions, list[ClusterState]]:
        """``sim`` running on the hosts chosen for ``states``, and ``states`` as those hosts
        report them (:func:`~lbctl.simulate.hosts.reported_by`; unchanged when inferred)."""
        import random

        from lbctl.records import replace
        from lbctl.simulate.hosts import INFERRED_IDLE, chosen_hosts, reported_by

        idle = INFERRED_IDLE if sim.idle_usage is None else sim.idle_usage / 100
        hosts = chosen_hosts(states, self.choice, self.seed, self.noise, idle, self.hosts_file)
        name = self.hosts_file.name if self.hosts_file is not None else self.choice
        if hosts is None:
            return sim, list(states)
        rng = random.Random(self.seed)
        return (replace(sim, hosts=hosts, seed=self.seed, truth=name),
                [reported_by(st, hosts, rng) for st in states])


def truth_options(hosts: str | None, seed: int, noise: float | None) -> Truth:
    """The truth flags, checked: a named mix, else a hosts file (read and validated now)."""
    import math

    from lbctl.errors import UsageError
    from lbctl.simulate.hosts import HOST_MIXES, INFERRED, MAX_NOISE_PERCENT, read_hosts_file

    if noise is not None and (not math.isfinite(noise) or not 0 <= noise <= MAX_NOISE_PERCENT):
        raise UsageError(f"--noise must be a percentage from 0 to {MAX_NOISE_PERCENT:g}, "
                         f"got {noise:g}")
    if seed < 0:
        raise UsageError(f"--host-seed must be >= 0, got {seed}")
    fraction = None if noise is None else noise / 100
    choice = INFERRED if hosts is None else hosts
    if choice in HOST_MIXES:
        return Truth(choice, seed, fraction)
    if not choice.strip():
        raise UsageError(f"--hosts: expected {' or '.join(HOST_MIXES)} or a hosts file")
    if "/" not in choice and "." not in choice and not os.path.lexists(choice):
        # "--hosts mix" said "mix: no such file", naming neither mix nor what a file would be
        import difflib

        close = difflib.get_close_matches(choice, HOST_MIXES, n=1)
        raise UsageError(f"--hosts {choice!r}: not a mix ({', '.join(HOST_MIXES)}) and no such "
                         "hosts file" + (f" (did you mean {close[0]}?)" if close else ""))
    return Truth("file", seed, fraction, read_hosts_file(choice))


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
    hosts: HostsChoice = None
    host_seed: HostSeed = 0
    noise: Noise = None
    plot: PlotFile = None

    def options(self, strategy: str | None) -> Options:
        return LoadManagerChoice(strategy, self.placement, self.set_, self.broker_conf,
                                 self.seed, self.pulsar_version).options()

    def simulation(self) -> SimulationOptions:
        return sim_options(self.cycles, self.band, self.bounce_window, self.idle_usage)

    def truth(self) -> Truth:
        return truth_options(self.hosts, self.host_seed, self.noise)

    def check_plot(self) -> None:
        if self.plot is not None:
            from lbctl.cli.extras import require_plot
            from lbctl.simulate.plot import check_plot_path

            check_plot_path(self.plot)
            require_plot()


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
    when the load range leaves the --band, and the output says how far the usage after its plans
    predicted landed from the truth. --hosts chooses that truth (hosts inferred from the
    reports, a mixed 8/16/32-core fleet, or a hosts file; docs/commands/simulate.md).

    \b
    Examples:
      lbctl simulate examples/pip364-90-10.json --cycles 10
      lbctl simulate examples/pip364-90-10.json --strategy AvgShedder \\
          --placement AvgShedder --set maxUnloadPercentage=0.5
      lbctl simulate examples/hot-broker.json --cycles 120 -o csv --plot hot.png
      lbctl simulate examples/pip364-90-10.json --strategy lbctl --hosts mixed \\
          --host-seed 3
    """
    from lbctl.cli.extras import names_planner, require_planner
    from lbctl.cli.state import choose
    from lbctl.progress import shown as progress
    from lbctl.render.simulation_view import SimulationView
    from lbctl.simulate.engine import simulate as simulation

    if names_planner([strategy]):  # before any work: one line, not numpy's traceback
        require_planner("--strategy lbctl")
    opts = run.options(strategy)
    sim = run.simulation()
    truth = run.truth()
    run.check_plot()
    states = choose(ctx, given).read().states
    sim, states = truth.apply(sim, states)
    with progress() as bar:
        result = simulation(states, opts, sim, progress=lambda d, t: bar.step("simulating", d, t))
    if run.plot is not None:
        from lbctl.simulate.plot import plot_simulation

        plot_simulation(result, run.plot)
    shown.emit(SimulationView(result))
