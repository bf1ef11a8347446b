"""`lbctl recommend`: what the modular load manager would do with a snapshot, as a plan."""

from __future__ import annotations

import typer

from lbctl.cli.common import (
    TABLE,
    AllCycles,
    AssumeSteady,
    BrokerConf,
    Count,
    Interval,
    Output,
    Placement,
    PulsarVersion,
    Seed,
    SetOpt,
    Strategy,
    Watch,
    emit,
    handled,
)
from lbctl.cli.connection import OptionalSnapshots


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
) -> None:
    """Recommend unloads: run Pulsar's shedding and placement strategies over a snapshot.

    A sequence (several files, or a .jsonl) is replayed cycle by cycle, carrying the strategies'
    history on the leader's clock (the cycles that elapsed between snapshots count); the plan of
    the last cycle is printed (--all-cycles: every cycle). A single snapshot, or a live read, is the
    leader's first sight of the state (--assume-steady: a state that has lasted). Live, --watch
    follows the leader, carrying the strategies' memory from refresh to refresh.

    Examples:

      lbctl recommend examples/hot-broker.json

      lbctl recommend examples/two-brokers-90-10.jsonl --all-cycles -o json

      lbctl recommend snap.json --strategy AvgShedder --placement AvgShedder --set maxUnloadPercentage=0.5

      lbctl recommend snap.json --pulsar-version 3.0.6 --assume-steady

      lbctl --admin-url http://pulsar:8080 recommend --watch --interval 60
    """
    with handled():
        from lbctl.cli.connection import live_states
        from lbctl.config import parse_assignments
        from lbctl.errors import UsageError
        from lbctl.loadmanager.select import Options, plans
        from lbctl.render.views import RecommendView
        from lbctl.sources.snapshot import read_snapshots

        opts = Options(strategy, placement, parse_assignments(set_ or []), broker_conf, seed,
                       pulsar_version, assume_steady, live=not snapshots)
        if watch or interval is not None or count is not None:
            if snapshots:
                raise UsageError("--watch follows a live cluster: give no snapshot")
            if not watch:
                raise UsageError("--interval and --count go with --watch")
            from lbctl.cli.watch import run_watch

            run_watch(ctx, opts, lambda r: RecommendView([r.plan()]), output,
                      interval=interval, count=count)
            return
        states = read_snapshots(snapshots) if snapshots else live_states(ctx)  # live: --admin-url
        emit(RecommendView(plans(states, opts), all_cycles), output)
