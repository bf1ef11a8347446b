"""`lbctl propose`: lbctl's own plan for the whole cluster, against goals, with its cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from lbctl.cli.common import TABLE, LoadManagerChoice, Shown
from lbctl.cli.groups import Fields, grouped
from lbctl.cli.state import StateInput

if TYPE_CHECKING:
    from lbctl.admin.client import AdminClient
    from lbctl.config import Settings
    from lbctl.model.cluster import ClusterState

MaxUsage = Annotated[float | None, typer.Option(
    "--max-usage", metavar="PERCENT", show_default=False,
    help="Capacity goal: no broker's weighted usage above this [default: the cluster's "
         "overload threshold, 85 unless set].")]
TargetRange = Annotated[float | None, typer.Option(
    "--target-range", metavar="POINTS", show_default=False,
    help="Band goal: most and least loaded broker at most this many points apart [default: 10].")]
TargetStd = Annotated[float | None, typer.Option(
    "--target-std", metavar="POINTS", show_default=False,
    help="Band goal as a standard deviation of broker usage, in points (instead of "
         "--target-range).")]
MaxMoves = Annotated[int | None, typer.Option(
    "--max-moves", metavar="N", show_default=False,
    help="Move at most N bundles (default: no limit).")]
MaxThroughput = Annotated[float | None, typer.Option(
    "--max-throughput", metavar="MB/S", show_default=False,
    help="Move at most this much traffic (in + out, MB/s; default: no limit).")]
Solver = Annotated[str, typer.Option(
    "--solver", metavar="auto|exact|greedy",
    help="exact: the mixed-integer model on HiGHS (needs scipy: pip install 'lbctl[propose]'); "
         "greedy: greedy + local search; auto: exact up to --exact-limit pairs.")]
TimeLimit = Annotated[float, typer.Option(
    "--time-limit", metavar="SECONDS",
    help="CPU-seconds safety net of the exact solver (its work limit decides the plan).")]
ExactLimit = Annotated[int, typer.Option(
    "--exact-limit", metavar="PAIRS",
    help="auto runs the exact solver up to this many (bundle, destination) pairs.")]
Explain = Annotated[bool, typer.Option(
    "--explain", help="Show why each move was chosen over its alternatives (table output).")]
NoSplits = Annotated[bool, typer.Option(
    "--no-splits", help="Do not propose splits for bundles too big for the band.")]


@grouped
def propose(
    ctx: typer.Context,
    *,
    given: StateInput,
    max_usage: MaxUsage = None,
    target_range: TargetRange = None,
    target_std: TargetStd = None,
    max_moves: MaxMoves = None,
    max_throughput: MaxThroughput = None,
    solver: Solver = "auto",
    time_limit: TimeLimit = 10.0,
    exact_limit: ExactLimit = 1_000,
    lm: Annotated[LoadManagerChoice, Fields("set_", "broker_conf")],
    explain: Explain = False,
    no_splits: NoSplits = False,
    shown: Shown,
) -> None:
    """Propose one plan that brings the cluster into a target band in a single pass.

    Goals, hard before soft: no broker above --max-usage; the most and least loaded brokers
    within --target-range points (or --target-std); then the least disruption (throughput moved,
    topics and connections disturbed, number of moves). Broker load is predicted per resource
    with the model simulate uses. The plan (plan@1, unloads with a destinationBroker) says which
    solver ran, its optimality gap, each goal before/after and a balancedness score (0-100).
    With a sequence (or a --prometheus-url range) the last snapshot is planned and the load model
    is learnt from all of them. See docs/propose.md.

    \b
    Examples:
      lbctl propose examples/pip364-90-10.json
      lbctl propose examples/rolling-restart.yaml --target-range 5 --explain
      lbctl propose snap.json --max-moves 10 --max-throughput 500 \\
          -o json > plan.json
      lbctl propose --prometheus-url http://prometheus:9090 --since 6h --step 5m
    """
    from lbctl.cli.extras import require_planner
    from lbctl.cli.state import choose, keeping_client
    from lbctl.loadmanager.select import resolve_settings
    from lbctl.planner.propose import ProposeOptions
    from lbctl.planner.propose import propose as run
    from lbctl.records import replace
    from lbctl.render.propose_view import ProposeView

    require_planner("lbctl propose")  # before any work: one line, not numpy's traceback
    opts = lm.options()
    options = ProposeOptions(
        max_usage=max_usage, target_range=target_range, target_std=target_std,
        max_moves=max_moves,
        max_throughput=None if max_throughput is None else max_throughput * 1048576,
        solver=solver.strip().lower(), time_limit=time_limit, exact_limit=exact_limit,
        splits=not no_splits)
    options.check()
    read_by: list[AdminClient] = []  # the live read's client: it knows the cluster's clock
    chosen = keeping_client(choose(ctx, given), read_by)
    states = chosen.read().states  # none given: the live cluster, announced
    opts = replace(opts, live=chosen.source.live)  # a live read's release is "(cluster)"
    settings = resolve_settings(states[-1:], opts)[-1]
    held = _held_live(states[-1], settings, read_by[0]) \
        if chosen.source.live and read_by else None
    proposal = run(states[-1], settings, options, history=states, held=held)
    if shown.output != TABLE:  # the table prints every note itself: once, not twice
        for note in proposal.notes:
            if note.startswith("scipy is not installed"):
                typer.echo(f"lbctl: {note}", err=True)
    shown.emit(ProposeView(proposal, explain))


def _held_live(state: ClusterState, settings: Settings, client: AdminClient) -> dict[str, str]:
    """A live plan's bundles that ``apply`` would refuse now, each with why
    (:func:`lbctl.apply.validate.refused_in_grace`), the grace period counted on the cluster's
    clock as apply counts it (:func:`lbctl.apply.runner.unloads_in_grace`)."""
    import time

    from lbctl.apply.runner import unloads_in_grace
    from lbctl.apply.validate import refused_in_grace
    from lbctl.cli.connection import warn
    from lbctl.executor import default_journal

    now = time.time()
    minutes = float(settings["loadBalancerSheddingGracePeriodMinutes"])
    recent = unloads_in_grace(client, default_journal(), minutes * 60, now, warn)
    why = (f"unloaded or gained within the {minutes:g}-minute grace period "
           "(loadBalancerSheddingGracePeriodMinutes; the journal, recentlyUnloaded, its owner's "
           "lastBundleGains): apply would refuse it")
    return dict.fromkeys(sorted(refused_in_grace(state, settings, recent, now)), why)
