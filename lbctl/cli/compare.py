"""`lbctl compare`: the same start and trace through several strategies, side by side."""

from __future__ import annotations

from typing import Annotated, NoReturn

import typer

from lbctl.cli.common import Shown
from lbctl.cli.groups import grouped
from lbctl.cli.simulate import SimulationRun
from lbctl.cli.state import HistoryInput


def _pairs(incomplete: str) -> list[str]:
    from lbctl.cli.complete import strategy_pairs

    return strategy_pairs(incomplete)


Strategies = Annotated[
    list[str] | None,
    typer.Option("--strategy", metavar="NAME[:PLACEMENT]", show_default=False,
                 autocompletion=_pairs,
                 help="A shedding strategy to compare (repeatable; at least one), optionally with its placement "
                 "strategy, e.g. AvgShedder:AvgShedder; lbctl for lbctl's own planner."),
]


@grouped
def compare(
    ctx: typer.Context,
    *,
    strategy: Strategies = None,
    run: SimulationRun,
    shown: Shown,
    given: HistoryInput,
) -> None:
    """Compare shedding strategies by simulating each from the same snapshot (and trace).

    Prints, per strategy: final load spread, unloads, throughput moved, bounce-backs, placements
    onto above-average brokers and the time to settle, and for lbctl's planner the error of the
    usage after it predicted against the truth (--hosts; Pulsar's strategies predict nothing).
    --placement applies to strategies given without one; --set applies to every run.

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
    from lbctl.cli.extras import names_planner, require_planner
    from lbctl.cli.state import choose
    from lbctl.progress import shown as progress
    from lbctl.render.simulation_view import ComparisonView
    from lbctl.simulate.compare import compare as comparison
    from lbctl.simulate.compare import parse_pairs

    if not strategy:  # Typer's own "Missing option" names neither an example nor the choices
        raise_missing_strategy(ctx)
    if names_planner(strategy):  # before any work: one line, not numpy's traceback
        require_planner("--strategy lbctl")
    opts = run.options(None)
    pairs = parse_pairs(strategy, run.placement)
    sim = run.simulation()
    truth = run.truth()
    run.check_plot()
    states = choose(ctx, given).read().states
    sim, states = truth.apply(sim, states)
    with progress() as bar:
        result = comparison(states, opts, pairs, sim,
                            progress=lambda d, t: bar.step("simulating", d, t))
    if run.plot is not None:
        from lbctl.simulate.plot import plot_comparison

        plot_comparison(result.runs, run.plot)
    shown.emit(ComparisonView(result))


def raise_missing_strategy(ctx: typer.Context) -> NoReturn:
    """One usage line when ``--strategy`` is left out: what to give, an example and every name
    it takes (the shedding strategies lbctl models, and ``lbctl`` for its planner), instead of
    Typer's bare "Missing option '--strategy'"; a usage error of the command's context, so it
    ends as every usage error does ("(try 'lbctl compare -h')", exit 2)."""
    from lbctl.cli.complete import strategies

    raise _MissingStrategy(
        "Missing option '--strategy': give it once per strategy (two or more side by side), "
        "e.g. --strategy ThresholdShedder --strategy AvgShedder; strategies: "
        + ", ".join([*strategies(""), "lbctl"]), ctx=ctx)


class _MissingStrategy(typer.BadParameter):
    """A usage error worded whole (not "Invalid value: …"): lbctl.cli.failures prints it as
    every usage error, one line ending "(try 'lbctl compare -h')", exit 2."""

    def format_message(self) -> str:
        return self.message
