"""`lbctl drain BROKER` (empty a broker before a restart; `--fill` after it; `--restore` the
balancer) and `lbctl rebalance-after BROKER` (the corrective plan after a restart)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lbctl.cli.apply import MaxMoves, Reason, VerifyTimeout
from lbctl.cli.common import TABLE, LoadManagerChoice, OutputFormat, Shown, emit
from lbctl.cli.groups import Fields, grouped
from lbctl.cli.unload import Mutating

if TYPE_CHECKING:
    from lbctl.admin.client import AdminClient
    from lbctl.apply.drain import DrainOptions, DrainReport
    from lbctl.apply.runner import UI

BrokerArg = Annotated[str, typer.Argument(metavar="BROKER", show_default=False,
                                          help="The broker id (host:port, as brokers list it).")]
PerInterval = Annotated[int, typer.Option(
    "--per-interval", metavar="N", min=1, max=1000,
    help="Filling: at most N bundles moved per interval (no thundering herd).")]
FillInterval = Annotated[float, typer.Option(
    "--interval", metavar="SECONDS", min=0, max=86400,
    help="Filling: seconds between batches of --per-interval bundles.")]


#: the placement a drain or a fill plans with
Placing = Annotated[LoadManagerChoice, Fields("strategy", "placement", "set_", "seed")]


@grouped
def drain(
    ctx: typer.Context,
    *,
    broker: Annotated[str | None, typer.Argument(
        metavar="BROKER", show_default=False,
        help="The broker to empty (host:port, as brokers list it).")] = None,
    pause_balancer: Annotated[bool, typer.Option(
        "--pause-balancer",
        help="Turn loadBalancerSheddingEnabled and loadBalancerAutoBundleSplitEnabled off "
             "during the drain (dynamic config; previous values journaled and restored).")]
        = False,
    keep_paused: Annotated[bool, typer.Option(
        "--keep-paused", help="Leave the balancer paused at the end (drain --restore later).")]
        = False,
    restore: Annotated[bool, typer.Option(
        "--restore", help="Put back the balancer settings the journal's last pause changed.")]
        = False,
    fill: Annotated[bool, typer.Option(
        "--fill", help="The other way: move bundles onto the (restarted) broker, paced "
                       "(same plan as rebalance-after).")] = False,
    max_concurrent: Annotated[int, typer.Option(
        "-m", "--max-concurrent-unload-per-sec", metavar="N", min=0, max=1000,
        help="At most N unloads started per second, as pulsar-admin brokers shutdown "
             "(0: no limit).")] = 1,
    timeout: Annotated[float, typer.Option(
        "--timeout", metavar="SECONDS", min=0, max=86400,
        help="How long to wait for the broker to own nothing.")] = 600.0,
    per_interval: PerInterval = 2,
    interval: FillInterval = 60.0,
    max_moves: MaxMoves = None,
    verify_timeout: VerifyTimeout = 60.0,
    lm: Placing,
    reason: Reason = None,
    sending: Mutating,
    shown: Annotated[Shown, Fields("output")],
) -> None:
    """Empty a broker before restarting it: every bundle to where placement would put it.

    Plans every bundle of BROKER to the broker the cluster's placement strategy (with its
    filters) would choose without it, and applies the plan as lbctl apply does (shown, confirmed,
    journaled, verified, rollback plan), at most -m unloads per second; then waits until the
    broker owns nothing and says whether it is safe to restart. --pause-balancer stops automatic
    shedding and splitting meanwhile and restores them at the end. --fill moves bundles back onto
    a restarted broker, --per-interval at a time, --interval seconds apart.

    \b
    Examples:
      lbctl drain broker-3:8080 --dry-run
      lbctl drain broker-3:8080 --pause-balancer --keep-paused --yes
      lbctl drain broker-3:8080 --fill --per-interval 2 --interval 60 --yes
      lbctl drain --restore --yes
    """
    from lbctl.apply.drain import DrainOptions
    from lbctl.apply.runner import ApplyOptions
    from lbctl.cli.state import live_session
    from lbctl.errors import UsageError

    dry_run, yes, journal, output = sending.dry_run, sending.yes, sending.journal, shown.output
    if restore:
        if broker or fill or pause_balancer:
            raise UsageError("--restore takes no broker, --fill or --pause-balancer")
        with live_session(ctx) as cluster:
            _restore(cluster.client, journal, yes=yes, dry_run=dry_run)
        return
    if not broker:
        raise UsageError("give the broker to drain (host:port), or --restore")
    if fill and (pause_balancer or keep_paused):
        raise UsageError("--fill does not pause the balancer")
    fill_pace = (per_interval, interval)
    drain_pace = ((max_concurrent, 1.0) if max_concurrent else (1000, 0.0))
    n, every = fill_pace if fill else drain_pace
    opts = ApplyOptions(dry_run=dry_run, yes=yes, force=sending.force, journal=journal,
                        reason=reason, verify_timeout=verify_timeout, concurrency=n,
                        interval=every, max_moves=max_moves, max_age=None)
    dopts = DrainOptions(
        broker=broker.removeprefix("http://").removeprefix("https://").rstrip("/"),
        apply=opts, placement=lm.options(),
        pause_balancer=pause_balancer, keep_paused=keep_paused, timeout=timeout, fill=fill)
    with live_session(ctx) as cluster:
        report = _run(cluster.client, dopts, output)
    _finish(report, output, dry_run=dry_run)


def _ui(output: OutputFormat) -> UI:
    from lbctl.apply.runner import UI
    from lbctl.cli.connection import is_terminal, warn
    from lbctl.safe.text import terminal_safe

    stream = sys.stdout if output == TABLE else sys.stderr
    return UI(show=lambda line: print(terminal_safe(line), file=stream, flush=True), warn=warn,
              confirm=lambda q: typer.confirm(q, default=False, err=True),
              interactive=is_terminal(sys.stdin) and is_terminal(sys.stderr))


def _run(client: AdminClient, dopts: DrainOptions, output: OutputFormat) -> DrainReport:
    from lbctl.apply.drain import drain as run_drain
    from lbctl.apply.signals import stop_on_signals
    from lbctl.cli.connection import warn

    with stop_on_signals(warn) as stop:
        def arm() -> None:
            stop.armed = True

        return run_drain(client, dopts, _ui(output), stop=stop.event, arm=arm)


def _finish(report: DrainReport, output: OutputFormat, *, dry_run: bool) -> None:
    from lbctl.cli.actions import refuse_unconfirmed
    from lbctl.errors import PartialRun
    from lbctl.render.apply_view import DrainView

    emit(DrainView(report), output)
    dry = bool(report.rounds) and report.rounds[-1].result == "dry-run"
    if dry:
        refuse_unconfirmed(dry_run)
    if not report.safe and not dry:
        raise PartialRun(report.message)


def _restore(client: AdminClient, journal: Path | None, *, yes: bool, dry_run: bool) -> None:
    from lbctl.apply.drain import restore_from_journal
    from lbctl.executor import default_journal

    ui = _ui(TABLE)
    previous = restore_from_journal(client, journal or default_journal(), ui,
                                    yes=yes, interactive=ui.interactive, dry_run=dry_run)
    if not dry_run:
        print("balancer settings restored: " + ", ".join(
            f"{k}={'(broker.conf)' if v is None else v}" for k, v in previous.items()))


@grouped
def rebalance_after(
    ctx: typer.Context,
    *,
    broker: BrokerArg,
    max_moves: MaxMoves = None,
    per_interval: PerInterval = 2,
    interval: FillInterval = 60.0,
    lm: Placing,
    shown: Annotated[Shown, Fields("output")],
) -> None:
    """The corrective plan after a restart: fill BROKER toward the cluster's mean usage.

    From the most loaded brokers, the bundles whose estimated load brings the restarted broker
    to about the average without pushing their source below it (lbctl's own rule; the target
    must pass the placement filters). Prints the plan (-o json for lbctl apply) and, on stderr,
    the apply command that paces it: at most --per-interval bundles every --interval seconds.

    \b
    Examples:
      lbctl rebalance-after broker-3:8080
      lbctl rebalance-after broker-3:8080 -o json > fill.json
    """
    from lbctl.cli.connection import warn
    from lbctl.cli.state import choose
    from lbctl.config import resolve
    from lbctl.loadmanager.drain import fill_plan
    from lbctl.render.views import RecommendView

    opts = lm.options()
    state = choose(ctx).read().last
    settings = resolve(state.config, {}, dict(opts.overrides or {}))
    target = broker.removeprefix("http://").removeprefix("https://").rstrip("/")
    plan = fill_plan(state, settings, target, opts, max_moves=max_moves)
    shown.emit(RecommendView([plan]))
    if plan.actions:
        warn(f"apply it paced: lbctl apply PLAN.json --concurrency {per_interval} "
             f"--interval {interval:g} (at most {per_interval} bundle(s) every "
             f"{interval:g} s)")
