"""`lbctl drain BROKER` (empty a broker before a restart; `--fill` after it; `--restore` the
balancer) and `lbctl rebalance-after BROKER` (the corrective plan after a restart)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

import typer

from lbctl.cli.apply import MaxMoves, PauseTimeout, Reason, VerifyTimeout
from lbctl.cli.common import TABLE, LoadManagerChoice, OutputFormat, Shown, display
from lbctl.cli.groups import Fields, grouped
from lbctl.cli.state import StateArgs
from lbctl.cli.unload import Mutating

if TYPE_CHECKING:
    from lbctl.admin.client import AdminClient
    from lbctl.apply.drain import DrainOptions, DrainReport
    from lbctl.apply.runner import UI
    from lbctl.config import Settings
    from lbctl.model.cluster import ClusterState
    from lbctl.plan import Plan

def _brokers(ctx: typer.Context, incomplete: str) -> list[str]:
    from lbctl.cli.complete import brokers

    return brokers(ctx, incomplete)


BrokerArg = Annotated[str, typer.Argument(metavar="BROKER", show_default=False,
                                          autocompletion=_brokers,
                                          help="The broker id (host:port, as brokers list it).")]
PerInterval = Annotated[int, typer.Option(
    "--per-interval", metavar="N", min=1, max=1000,
    help="Filling: at most N bundles moved per interval (no thundering herd).")]
FillInterval = Annotated[float, typer.Option(
    "--interval", metavar="SECONDS", min=0, max=86400,
    help="Filling: seconds between batches of --per-interval bundles.")]


#: the placement a drain or a fill plans with
Placing = Annotated[LoadManagerChoice, Fields("strategy", "placement", "set_", "seed")]


class Offline(StateArgs, frozen=True):
    """``--snapshot FILE``: plan on a snapshot (an offline preview: nothing is sent), else on the
    live cluster."""

    announce: ClassVar[bool] = False

    snapshot: Annotated[Path | None, typer.Option(
        "--snapshot", metavar="FILE",
        help="Preview the plan on this snapshot (the last state of a sequence), offline: "
             "nothing is sent.")] = None

    @property
    def files(self) -> Sequence[Path]:
        return [self.snapshot] if self.snapshot is not None else []


@grouped
def drain(
    ctx: typer.Context,
    *,
    broker: Annotated[str | None, typer.Argument(
        metavar="BROKER", show_default=False, autocompletion=_brokers,
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
    pause_timeout: PauseTimeout = 300.0,
    lm: Placing,
    reason: Reason = None,
    given: Offline,
    sending: Mutating,
    shown: Shown,
) -> None:
    """Empty a broker before restarting it: every bundle to where placement would put it.

    Plans every bundle of BROKER to the broker the cluster's placement strategy (with its
    filters) would choose without it, and applies the plan as lbctl apply does (shown, confirmed,
    journaled, verified, rollback plan), at most -m unloads per second; then waits until the
    broker owns nothing and says whether it is safe to restart. --pause-balancer stops automatic
    shedding and splitting meanwhile and restores them at the end. --fill moves bundles back onto
    a restarted broker, --per-interval at a time, --interval seconds apart. --snapshot FILE
    previews the plan offline (nothing is sent). Without a terminal and without --yes nothing is
    sent and it exits 12 (--dry-run: exit 0).

    \b
    Examples:
      lbctl drain broker-3:8080 --snapshot snap.json
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
    if given.snapshot is not None:
        _preview(ctx, given, _broker_id(broker), lm, shown, fill=fill, max_moves=max_moves,
                 pace=(per_interval, interval) if fill else None)
        return
    _check_names(lm)
    fill_pace = (per_interval, interval)
    drain_pace = ((max_concurrent, 1.0) if max_concurrent else (1000, 0.0))
    n, every = fill_pace if fill else drain_pace
    opts = ApplyOptions(dry_run=dry_run, yes=yes, force=sending.force, journal=journal,
                        reason=reason, verify_timeout=verify_timeout,
                        pause_timeout=pause_timeout, concurrency=n,
                        interval=every, max_moves=max_moves, max_age=None)
    dopts = DrainOptions(
        broker=_broker_id(broker),
        apply=opts, placement=lm.options(),
        pause_balancer=pause_balancer, keep_paused=keep_paused, timeout=timeout, fill=fill)
    with live_session(ctx) as cluster:
        report = _run(cluster.client, dopts, output)
    _finish(report, shown, dry_run=dry_run)


def _check_names(lm: LoadManagerChoice) -> None:
    """``--strategy``/``--placement`` name registered strategies: checked before the live read,
    as every other flag is (the plan's load manager is built only after the cluster is read)."""
    from lbctl.strategies.builtin import PLACEMENT, SHEDDING

    if lm.strategy:
        SHEDDING.short_name(lm.strategy)
    if lm.placement:
        PLACEMENT.short_name(lm.placement)


def _ui(output: OutputFormat) -> UI:
    from lbctl.apply.runner import UI
    from lbctl.cli.connection import is_terminal, warn_fitted
    from lbctl.safe.text import terminal_safe

    stream = sys.stdout if output == TABLE else sys.stderr
    return UI(show=lambda line: print(terminal_safe(line), file=stream, flush=True),
              warn=warn_fitted,
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


def _finish(report: DrainReport, shown: Shown, *, dry_run: bool) -> None:
    from lbctl.cli.actions import refuse_unconfirmed
    from lbctl.errors import PartialRun
    from lbctl.render.apply_view import DrainView

    shown.emit(DrainView(report))
    from lbctl.apply.balancer import RESTORE_FAILED

    dry = bool(report.rounds) and report.rounds[-1].result == "dry-run"
    if dry:
        refuse_unconfirmed(dry_run)
    if (not report.safe or report.balancer == RESTORE_FAILED) and not dry:
        raise PartialRun(report.message)


def _restore(client: AdminClient, journal: Path | None, *, yes: bool, dry_run: bool) -> None:
    from lbctl.apply.drain import restore_from_journal
    from lbctl.executor import default_journal

    ui = _ui(TABLE)
    previous = restore_from_journal(client, journal or default_journal(), ui,
                                    yes=yes, interactive=ui.interactive, dry_run=dry_run)
    if not dry_run:  # fitted as the drain's own "balancer settings restored" is (walk21)
        from lbctl.apply.balancer import value_text
        from lbctl.apply.runner import fit_line

        for part in fit_line("balancer settings restored: " + ", ".join(
                f"{k}={'(broker.conf)' if v is None else value_text(v)}"
                for k, v in previous.items()), ui.width):
            ui.show(part)


@grouped
def rebalance_after(
    ctx: typer.Context,
    *,
    broker: BrokerArg,
    max_moves: MaxMoves = None,
    per_interval: PerInterval = 2,
    interval: FillInterval = 60.0,
    lm: Placing,
    given: Offline,
    shown: Shown,
) -> None:
    """The corrective plan after a restart: fill BROKER toward the cluster's mean usage.

    From the most loaded broker above the cluster's mean usage, the largest bundle whose estimated
    share fits both what that broker has above the mean and what BROKER lacks below it (lbctl's
    own rule; the target must pass the placement filters); when none fits, one last move — the one
    that leaves the most loaded broker and BROKER closest — which may take its source below the
    mean: the table output says so, with each move's estimates before → after. Prints the plan
    (-o json for lbctl apply) and, on stderr, the apply command that paces it: at most
    --per-interval bundles every --interval seconds. --snapshot FILE plans on a snapshot.

    \b
    Examples:
      lbctl rebalance-after broker-3:8080
      lbctl rebalance-after broker-3:8080 --snapshot snap.json
      lbctl rebalance-after broker-3:8080 -o json > fill.json
    """
    _preview(ctx, given, _broker_id(broker), lm, shown, fill=True, max_moves=max_moves,
             pace=(per_interval, interval))


def _broker_id(broker: str) -> str:
    return broker.removeprefix("http://").removeprefix("https://").rstrip("/")


def _preview(ctx: typer.Context, given: Offline, target: str, lm: LoadManagerChoice,
             shown: Shown, *, fill: bool, max_moves: int | None,
             pace: tuple[int, float] | None) -> None:
    """A drain's or a fill's plan, printed (never sent): the live cluster's, or with --snapshot a
    snapshot's; a fill's moves explained in the table (:mod:`lbctl.render.fill_words`). Its
    warnings fit the terminal as a drain's do (walk21)."""
    from lbctl.cli.connection import warn_fitted as warn
    from lbctl.cli.state import choose, keeping_client
    from lbctl.loadmanager.drain import drain_plan, fill_plan
    from lbctl.loadmanager.select import settings_for
    from lbctl.render.display import using
    from lbctl.render.views import RecommendView

    opts = lm.options()
    chosen = choose(ctx, given)
    read_by: list[AdminClient] = []  # the live read's client: it knows the cluster's clock
    chosen = keeping_client(chosen, read_by)
    state = chosen.read().last
    settings = settings_for(state, opts, {})  # the modelled release's defaults, as recommend
    recent: dict[str, float] = {}
    now: float | None = None
    if fill and read_by:  # the journal's unloads: apply refuses those in grace
        import time

        from lbctl.apply.runner import unloads_in_grace
        from lbctl.executor import default_journal

        now = time.time()
        # the grace period is cluster time, the journal wall time: as apply's own check, so a
        # sped-up sandbox's fill is what apply allows
        grace = float(settings["loadBalancerSheddingGracePeriodMinutes"]) * 60
        recent = unloads_in_grace(read_by[0], default_journal(), grace, now, warn)
    plan = (fill_plan(state, settings, target, opts, max_moves=max_moves, recent=recent, now=now)
            if fill else drain_plan(state, settings, target, opts))
    shown.emit(RecommendView([plan]))
    if fill and shown.output == TABLE:
        with using(display(wide=shown.wide, no_color=shown.no_color)):
            _explain_fill(state, settings, plan, target, recent, now)
    if given.snapshot is not None:
        warn(f"offline preview on {given.snapshot}: nothing was sent; on the cluster: "
             + (f"lbctl rebalance-after {target} -o json > fill.json, then lbctl apply fill.json"
                if fill else f"lbctl drain {target}"))
    elif plan.actions and pace is not None:
        n, every = pace
        warn(f"apply it paced: lbctl apply PLAN.json --concurrency {n} --interval {every:g} "
             f"(at most {n} bundle(s) every {every:g} s)")


def _explain_fill(state: ClusterState, settings: Settings, plan: Plan, target: str,
                  recent: dict[str, float], now: float | None) -> None:
    from lbctl.loadmanager.drain import in_grace
    from lbctl.render.fill_words import fill_reasons
    from lbctl.render.tables import wrap_prose
    from lbctl.render.views import plan_names

    names = plan_names(plan)  # broker names as the table above gives them (--wide: whole)
    lines = [names.text(line) for line in fill_reasons(state, settings, plan, target)]
    staying = in_grace(state, settings, recent, state.captured_at / 1000 if now is None else now)
    held = sum(1 for b, local in state.brokers.items() if b != target
               for x in local.lastStats if x in staying)
    if held:
        lines.append(f"{held} bundle(s) unloaded within the "
                     f"{float(settings['loadBalancerSheddingGracePeriodMinutes']):g}-minute grace "
                     "period (loadBalancerSheddingGracePeriodMinutes; the journal, the "
                     "snapshot's recentlyUnloaded) stay where they are: apply would refuse them.")
    if lines:
        print()
        print("\n".join(wrap_prose(line) for line in lines))
