"""`lbctl recommend`: what the modular load manager would do with a snapshot, as a plan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lbctl.cli.common import AllCycles, LoadManagerChoice, Shown, Watching
from lbctl.cli.groups import grouped
from lbctl.cli.state import StateInput

PlanPlotFile = Annotated[
    Path | None,
    typer.Option("--plot", metavar="FILE", help="Also draw each broker's usage before and after "
                 "the (last) plan to FILE, a .png or .svg (needs matplotlib: pip install "
                 "'lbctl[plot]')."),
]


@grouped
def recommend(
    ctx: typer.Context,
    *,
    lm: LoadManagerChoice,
    all_cycles: AllCycles = False,
    watching: Watching,
    shown: Shown,
    given: StateInput,
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
    from lbctl.cli.state import choose
    from lbctl.errors import UsageError
    from lbctl.loadmanager.select import plans, stream_cycles, stream_last_plan, stream_plans
    from lbctl.progress import shown as progress
    from lbctl.records import replace
    from lbctl.render.plan_stream import STREAMED, write_cycles
    from lbctl.render.views import RecommendView
    from lbctl.sources.base import Streamed

    opts = lm.options()
    if plot is not None:
        from lbctl.cli.extras import require_plot
        from lbctl.simulate.plot import check_plot_path

        check_plot_path(plot)
        require_plot()
    if watching.asked:
        if plot is not None:
            raise UsageError("--plot draws one plan: give a snapshot, not --watch")
        from lbctl.cli.watch import run_watch

        run_watch(ctx, opts, lambda r: RecommendView([r.plan()]), shown.output, watching, given)
        return
    chosen = choose(ctx, given, stream=True)  # a large .jsonl: validated now, replayed one by one
    opts = replace(opts, live=chosen.source.live)
    seq = chosen.read().sequence
    with progress() as bar, bar.phase(f"running the load manager over {len(seq)} cycle(s)"):
        cycles = None
        if isinstance(seq, Streamed) and not all_cycles:  # only the last plan is printed
            cycles, last = stream_last_plan(seq.headers, seq.states(), opts)
            result = [last] if last is not None else []
        elif isinstance(seq, Streamed) and shown.output.value in STREAMED:
            # every plan written as its cycle ends, none kept (issue 30: 858 MB at 10k)
            import sys

            from lbctl.cli.common import display
            from lbctl.render.display import using

            with using(display(wide=shown.wide, no_color=shown.no_color)):
                last = write_cycles(stream_cycles(seq.headers, seq.states(), opts), len(seq),
                                    shown.output.value, sys.stdout)
            sys.stdout.flush()
            if plot is not None and last is not None:
                from lbctl.render.plan_plot import plot_plan

                plot_plan(last, plot, wide=shown.wide)
            return
        elif isinstance(seq, Streamed):
            result = stream_plans(seq.headers, seq.states(), opts)
        else:
            result = plans(seq, opts)
    if plot is not None and result:
        from lbctl.render.plan_plot import plot_plan

        plot_plan(result[-1], plot, wide=shown.wide)
    shown.emit(RecommendView(result, all_cycles, cycles))
    if not isinstance(seq, Streamed) and seq:
        from lbctl.cli.exiting import keep_until_exit

        keep_until_exit(seq[-1].bundle_count(), seq, result)  # not freed one by one at exit
