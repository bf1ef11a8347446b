"""`lbctl watch`: run beside the cluster (:mod:`lbctl.watch`). Only the wiring lives here."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from lbctl.model.cluster import ClusterState
    from lbctl.watch.anomalies import Event
    from lbctl.watch.plans import PlanMeta

#: default graces: a routine bounce raises nothing, a load out of band must last three cycles
DEFAULT_GRACE = {"broker-down": "2m", "report-stale": "0s", "out-of-band": "3m",
                 "idle-broker": "10m", "leader-divergence": "0s"}


#: the lock file of a history directory: one watcher writes a history at a time
HISTORY_LOCK = ".lbctl-watch.lock"


def _hold_history(directory: Path) -> int:
    """Hold the history's lock (the descriptor holding it, closed when the command ends), or
    refuse (exit 14, ``LOCKED``): two watchers writing one history interleave their captures out
    of order and each prunes files the other is reading, which failed their captures with
    ``FileNotFoundError`` (hostile14)."""
    from lbctl.errors import ConfigError, Locked, UsageError
    from lbctl.safe.files import private_dir, refuse_link, try_lock

    refuse_link(directory, error=UsageError)  # as History does: the lock goes in no link's target
    private_dir(str(directory))
    name = str(directory / HISTORY_LOCK)
    fd = try_lock(name, error=ConfigError)
    if fd is None:
        raise Locked(f"{directory}: another lbctl watch writes this history (it holds {name}); "
                     "give this one another --history, or stop that watcher")
    return fd


def default_history() -> Path:
    from lbctl.executor import default_journal

    return default_journal().parent / "history"


def missing_history(directory: Path, *, given: bool) -> str:
    """What ``plans`` and ``watch --status`` say of a history directory that is not there: the
    directory looked in, and, when it was the default one, where that default comes from (an
    operator who never passed ``--history`` could not tell where lbctl had looked, nor how to
    point it at the watcher's directory)."""
    where = "" if given else (", lbctl's default place (beside its journal; LBCTL_JOURNAL or "
                              "XDG_STATE_HOME move it)")
    return (f"{directory}: no watcher history here{where}; give --history the DIR the watcher "
            f"was started with (lbctl watch --history DIR)")


def _grace(items: list[str], interval_s: float) -> dict[str, int]:
    from lbctl.config import closest
    from lbctl.errors import UsageError
    from lbctl.sources.prometheus.timespec import parse_duration
    from lbctl.watch.anomalies import KINDS

    out: dict[str, int] = {}
    merged = dict(DEFAULT_GRACE)
    for item in items:
        kind, sep, value = item.partition("=")
        if not sep or not kind:
            raise UsageError(f"--grace {item!r}: give KIND=DURATION, e.g. broker-down=5m")
        if kind not in KINDS and not kind.startswith("doctor:"):  # a typo would change nothing
            hint = closest(kind, KINDS)
            raise UsageError(f"--grace {item!r}: unknown anomaly kind {kind!r}"
                             + (f" (did you mean {hint}?)" if hint else "")
                             + f"; one of {', '.join(KINDS)}, doctor:RULE")
        merged[kind] = value
    for kind, value in merged.items():
        out[kind] = 0 if value.strip() in ("0", "0s") else parse_duration(value, f"--grace {kind}")
    return out


def watch(
    ctx: typer.Context,
    history: Annotated[Path | None, typer.Option(
        "--history", metavar="DIR",
        help="Where captures, anomalies and plans are kept (default: a history directory beside "
             "the journal, ~/.local/state/lbctl/history).")] = None,
    interval: Annotated[float, typer.Option(
        "--interval", metavar="SECONDS", min=1, max=86400,
        help="Seconds between captures.")] = 60.0,
    retain: Annotated[str, typer.Option(
        "--retain", metavar="DURATION", help="Keep this much history (7d, 48h).")] = "7d",
    retain_size: Annotated[str | None, typer.Option(
        "--retain-size", metavar="SIZE",
        help="And at most this much disk (500M, 10G; default: no size limit).")] = None,
    listen: Annotated[str, typer.Option(
        "--listen", metavar="HOST:PORT",
        help="Serve /metrics, /healthz and the status page here ('' for none).")]
        = "127.0.0.1:9470",
    webhook: Annotated[list[str] | None, typer.Option(
        "--webhook", metavar="URL", help="POST each anomaly raised and resolved here (repeat).")]
        = None,
    webhook_format: Annotated[str, typer.Option(
        "--webhook-format", metavar="json|slack", help="The webhooks' body.")] = "json",
    webhook_rate: Annotated[int, typer.Option(
        "--webhook-rate", metavar="N", min=1, help="At most N notifications a minute per webhook.")]
        = 20,
    heal: Annotated[list[str] | None, typer.Option(
        "--heal", metavar="KIND=MODE",
        help="Healing per anomaly kind: off, approve (a plan waits for lbctl plans approve) or "
             "apply (applied at once, capped). Off by default. E.g. out-of-band=approve.")] = None,
    heal_max_per_hour: Annotated[int, typer.Option(
        "--heal-max-per-hour", metavar="N", min=0,
        help="At most N plans applied by --heal …=apply in an hour.")] = 2,
    grace: Annotated[list[str] | None, typer.Option(
        "--grace", metavar="KIND=DURATION",
        help="How long a condition lasts before it is raised (broker-down=2m, out-of-band=3m, "
             "idle-broker=10m by default).")] = None,
    doctor: Annotated[bool, typer.Option(
        "--doctor/--no-doctor", help="Raise lbctl doctor's findings as anomalies.")] = True,
    ownership: Annotated[str, typer.Option(
        "--ownership", metavar="admin|reports",
        help="Who owns each bundle: admin asks every broker (ownedNamespaces, one request per "
             "broker per capture: a move shows at once); reports reads the load reports only (a "
             "move shows once both brokers rewrite theirs).")] = "admin",
    reports_as_written: Annotated[bool, typer.Option(
        "--reports-as-written",
        help="The cluster serves each load report as its broker wrote it (lbctl sandbox "
             "--reports-as-written) rather than refreshed with lastUpdate kept, as Pulsar's "
             "load-report endpoint does (the default). Only the first capture needs telling.")
    ] = False,
    count: Annotated[int | None, typer.Option(
        "--count", metavar="N", min=1, help="Stop after N captures (default: run until "
                                             "SIGTERM/Ctrl-C).")] = None,
    status: Annotated[bool, typer.Option(
        "--status", help="Show what a watcher with this --history recorded, and who holds the "
                         "apply lock; read-only.")] = False,
) -> None:
    """Run beside the cluster: history, the leader checked against its own rules, anomalies,
    notifications, metrics, a status page and (when switched on) healing.

    Every --interval it reads the cluster (--admin-url, client.conf) through the same reader as
    every command, appends the capture to --history (rotated .jsonl.gz files that recommend,
    explain, simulate and fleet ingest read as they are), replays lbctl's load manager on the
    leader's clock to check what the leader did against what its rules say, and raises anomalies
    after their grace: broker-down, report-stale, out-of-band, ping-pong, unload-storm,
    split-blocked, balancer-paused, leader-changed, idle-broker, leader-divergence,
    unexpected-unload, manual-unload, unjudged-unload, doctor:<rule>. Each is printed as a JSON
    line on stdout (and sent to --webhook) once when raised and once when resolved. Fits systemd
    and a Kubernetes Deployment (docs/commands/watch.md).

    \b
    Examples:
      lbctl --admin-url http://pulsar:8080 watch --history /var/lib/lbctl
      lbctl watch --webhook https://hooks.example.com/x --webhook-format slack
      lbctl watch --heal out-of-band=approve      # then: lbctl plans list
      lbctl watch --status
    """
    from lbctl.cli.connection import inform, warn
    from lbctl.cli.state import choose
    from lbctl.loadmanager.select import Options
    from lbctl.safe.files import parse_size
    from lbctl.sources.prometheus.timespec import parse_duration
    from lbctl.watch.heal import Healer, parse_heal
    from lbctl.watch.history import Retention
    from lbctl.watch.loop import Watcher, WatchOptions
    from lbctl.watch.notify import Notifier, Webhook
    from lbctl.watch.plans import PlanQueue
    from lbctl.watch.server import StatusServer, parse_listen

    directory = history or default_history()
    if status:
        from lbctl.render.tables import wrap_prose
        from lbctl.watch.report import status_lines

        if not directory.is_dir():
            from lbctl.errors import UsageError

            raise UsageError(missing_history(directory, given=history is not None))

        # wrapped at spaces to the terminal (80 columns piped), as lbctl's other prose: an
        # anomaly's message with its fix ran to 500 characters on one line
        for line in status_lines(directory):
            print(wrap_prose(line))
        return
    if ownership not in ("admin", "reports"):
        from lbctl.errors import UsageError

        raise UsageError(f"--ownership {ownership!r}: one of admin, reports")
    modes = parse_heal(heal or [])
    if any(m != "off" for m in modes.values()):  # a healing plan may be propose's
        from lbctl.cli.extras import require_planner

        require_planner("--heal")
    retention = Retention(parse_duration(retain, "--retain") / 1000,
                          parse_size(retain_size, "--retain-size") if retain_size else None)
    address = parse_listen(listen) if listen else None
    from lbctl.executor import default_journal

    opts = WatchOptions(directory, interval, retention, _grace(grace or [], interval),
                        doctor=doctor, ownership=ownership == "admin", journal=default_journal(),
                        refreshed=not reports_as_written)
    cluster = choose(ctx)
    notifier = Notifier([Webhook(u, webhook_format, directory, max_per_minute=webhook_rate,
                                 warn=warn) for u in (webhook or [])])
    queue = PlanQueue(directory)
    held = _hold_history(directory)
    if held >= 0:
        ctx.call_on_close(lambda: os.close(held))

    def apply(meta: PlanMeta) -> str:
        from lbctl.watch.execute import apply_queued

        with cluster.session() as reader:
            return apply_queued(reader.client, queue, meta, when=meta.created, say=warn)

    healer = Healer(modes, queue, max_per_hour=heal_max_per_hour, apply=apply, say=warn,
                    inform=inform)
    watcher: Watcher | None = None

    def on_state(state: ClusterState, settings: Any, events: list[Event]) -> None:
        import time

        assert watcher is not None
        notifier.flush(time.time())
        if modes and events:
            healer.on_events(events, state, settings, watcher.last_plan)

    watcher = Watcher(cluster, opts, Options(), on_events=notifier.events, on_state=on_state,
                      warn=warn)
    server = None
    if address is not None:
        w = watcher
        server = StatusServer(address, w.current, w.healthy, counters=w.counters)
        # where to look, not a warning: "lbctl: warning:" on every start read as a fault
        sys.stderr.write(f"lbctl: watching {watcher.what}: status page {server.url}/, "
                         f"metrics {server.url}/metrics\n")
        sys.stderr.flush()
    stop = threading.Event()

    def on_term(*_a: Any) -> None:
        """Stop after this tick; a capture still reading is abandoned at once (it only reads): a
        capture of a slow or huge cluster could outlast a service manager's stop timeout, the
        SIGTERM unheard until it ended. Ctrl-C (SIGINT) is the same: Python's default raised
        anywhere in the tick — between the anomalies saved as raised and their notification or
        healing plan, which a restart never makes again."""
        stop.set()
        if watcher.reading:
            raise KeyboardInterrupt

    signals = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # a shell's `&` ignores it: so be it
        signals.append(signal.SIGINT)
    previous = {s: signal.signal(s, on_term) for s in signals}
    try:
        watcher.run(stop, count)
    except KeyboardInterrupt:
        pass
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if server is not None:
            server.close()
        sys.stdout.flush()
    if count is not None and watcher.captures == 0:
        from lbctl.errors import LbctlError

        raise LbctlError(f"no capture succeeded in {count} attempt(s): "
                         f"{watcher.last_error or 'stopped during the capture'}")
