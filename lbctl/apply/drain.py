"""``lbctl drain``: empty a broker before a restart, through ``apply``'s runner; and put it back.

The rolling-restart procedure, automated:

1. optionally pause the balancer (:mod:`lbctl.apply.balancer`; the previous values journaled);
2. plan every bundle of the broker to where the cluster's placement would put it
   (:func:`lbctl.loadmanager.drain.drain_plan`), write the plan next to the journal
   (``drain-<broker>-<time>.json``, so ``apply --resume`` works on a drain too), and apply it with
   ``apply``'s runner — re-validated, shown, confirmed once, journaled, verified, with a rollback
   plan — paced like ``pulsar-admin brokers shutdown --max-concurrent-unload-per-sec N``: at most N
   unloads started per second;
3. wait until the broker owns nothing (``ownedNamespaces`` less its heartbeat and SLA-monitor
   namespaces, which never move) or ``--timeout``; bundles that landed on it meanwhile (a lookup
   may still assign to it: it is an active broker) are planned and moved in a further round, up to
   three rounds in all;
4. restore the balancer settings it changed (unless ``--keep-paused``: then ``drain --restore``
   does it later, from the journal) — also when the run stops early; a restore that fails is
   said loudly and leaves the journal's pause as the visible, restorable state (exit 13);
5. say whether the broker is safe to restart.

The lock of the cluster is held from the plan to the restore.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lbctl.admin.client import AdminClient
from lbctl.apply import balancer
from lbctl.apply.journal import RunHistory
from lbctl.apply.live import read_live
from lbctl.apply.planfile import PlanFile, parse_plan
from lbctl.apply.runner import UI, ApplyOptions, ApplyReport, ApplyRun, fit_line, step_ranges
from lbctl.apply.verify import owned_by
from lbctl.executor import Executor, default_journal
from lbctl.loadmanager.select import Options

MAX_ROUNDS = 3


@dataclass
class DrainOptions:
    broker: str
    apply: ApplyOptions
    placement: Options = field(default_factory=Options)
    pause_balancer: bool = False
    keep_paused: bool = False
    timeout: float = 600.0  # waiting for the broker to own nothing
    poll: float = 1.0
    fill: bool = False


@dataclass
class DrainReport:
    broker: str
    rounds: list[ApplyReport] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)
    balancer: str | None = None  # "paused" | "restored" | "kept paused"
    safe: bool = False
    message: str = ""


def write_plan(plan: Any, journal: Path, stem: str) -> PlanFile:
    """Write a :class:`~lbctl.plan.Plan` beside the journal and read it back as a plan file."""
    import hashlib

    import orjson

    from lbctl.errors import ConfigError
    from lbctl.safe.files import atomic_write, private_dir

    private_dir(str(journal.parent))
    path = journal.parent / f"{stem}.json"
    data = orjson.dumps(plan.to_dict(), option=orjson.OPT_INDENT_2) + b"\n"
    atomic_write(str(path), data, error=ConfigError)
    return parse_plan(orjson.loads(data), str(path), hashlib.sha256(data).hexdigest())


def _stem(kind: str, broker: str) -> str:
    import re

    return f"{kind}-{re.sub(r'[^A-Za-z0-9._-]', '_', broker)}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"


def drain(client: AdminClient, o: DrainOptions, ui: UI, *, stop: threading.Event,
          arm: Callable[[], None]) -> DrainReport:
    from lbctl.apply.lock import ClusterLock
    from lbctl.loadmanager.drain import drain_plan, fill_plan, not_active
    from lbctl.loadmanager.select import settings_for

    journal = o.apply.journal or default_journal()
    o.apply.journal = journal
    report = DrainReport(o.broker)
    live = read_live(client)
    if o.broker not in live.brokers:
        raise not_active(o.broker, live.cluster, list(live.brokers))
    settings = settings_for(live.state, o.placement, {})  # the release's defaults
    left = left_paused(journal, live.cluster)
    if left:
        ui.warn(left)
    kind = "fill" if o.fill else "drain"
    o.apply.kind = kind
    lock = contextlib_null() if o.apply.dry_run else ClusterLock(
        live.cluster, what=f"lbctl {kind} {o.broker}", journal=journal)
    with lock:
        if o.fill:
            from lbctl.apply.runner import unloads_in_grace

            now = time.time()
            grace = float(settings["loadBalancerSheddingGracePeriodMinutes"]) * 60  # cluster time
            recent = unloads_in_grace(client, journal, grace, now, ui.warn)
            plan = write_plan(fill_plan(live.state, settings, o.broker, o.placement,
                                        max_moves=o.apply.max_moves, recent=recent, now=now),
                              journal, _stem(kind, o.broker))
            o.apply.max_moves = None
            r = ApplyRun(client, plan, o.apply, ui, stop=stop, arm=arm, live=live,
                         locked=True).run()
            report.rounds.append(r)
            report.safe = r.result in ("complete", "nothing")
            report.message = (f"{o.broker} filled: {r.counts()}" if report.safe
                              else f"fill of {o.broker} stopped: {r.why}")
            return report
        previous: dict[str, str | None] = {}
        if o.pause_balancer:
            previous = balancer.to_pause(Executor(client, journal=journal, show=ui.show))
        paused = {"done": False}

        def on_start(ex: Executor) -> None:
            if previous:
                balancer.pause(ex, live.cluster, previous)
                paused["done"] = True
                report.balancer = "paused"

        try:
            for rnd in range(1, MAX_ROUNDS + 1):
                if rnd > 1:
                    live = read_live(client)
                plan_obj = drain_plan(live.state, settings, o.broker, o.placement)
                plan = write_plan(plan_obj, journal, _stem(kind, o.broker) + f"-{rnd}")
                opts = o.apply if rnd == 1 else _again(o.apply)
                r = ApplyRun(client, plan, opts, ui, stop=stop, arm=arm, live=live, locked=True,
                             prelude=balancer.pause_mutations(previous) if rnd == 1 else (),
                             on_start=on_start if rnd == 1 else None).run()
                report.rounds.append(r)
                if r.result == "dry-run":
                    report.message = (f"dry run: {o.broker} would be drained"
                                      + (" (balancer paused first)" if previous else ""))
                    return report
                if r.result == "partial" or stop.is_set():
                    report.message = (f"drain of {o.broker} stopped: {r.why or 'stopped'}"
                                      + stopped_note(r, o.broker, o.pause_balancer))
                    report.remaining = _owned(client, live.cluster, o.broker)
                    return report
                unplaced = [x for x in plan.actions if x.skipped is not None]
                if unplaced:
                    report.remaining = _owned(client, live.cluster, o.broker)
                    report.message = (f"{len(unplaced)} bundle(s) of {o.broker} have nowhere to "
                                      f"go ({unplaced[0].skipped}): not safe to restart")
                    return report
                moving = {x.action.bundle for x in r.steps if x.state in ("done", "done-elsewhere")}
                report.remaining = _wait_empty(client, live.cluster, o.broker, moving, o, stop)
                if not report.remaining:
                    report.safe = True
                    report.message = f"{o.broker} owns no bundle now: it is safe to restart it"
                    return report
                _say(ui, f"{o.broker} still owns {len(report.remaining)} bundle(s)"
                         + (": planning them again" if rnd < MAX_ROUNDS else ""))
            report.message = (f"{o.broker} still owns {len(report.remaining)} bundle(s) after "
                              f"{MAX_ROUNDS} rounds: not safe to restart")
            return report
        finally:
            if paused["done"]:
                if o.keep_paused:
                    report.balancer = "kept paused"
                    _say(ui, "the balancer stays paused (--keep-paused): lbctl drain --restore "
                             "puts it back")
                else:
                    restorer = Executor(client, yes=True, journal=journal, show=ui.show,
                                        warn=ui.warn)
                    failed = balancer.restore(restorer, live.cluster, previous)
                    if failed:
                        report.balancer = balancer.RESTORE_FAILED
                        loud = (f"THE BALANCER IS STILL PAUSED: restoring it failed ("
                                f"{'; '.join(failed)}); the journal {journal} keeps the values "
                                "to put back: lbctl drain --restore --yes")
                        ui.warn(loud)
                        report.message = f"{report.message}; {loud}" if report.message else loud
                    else:
                        report.balancer = "restored"
                        _say(ui, "balancer settings restored: " + ", ".join(
                            f"{k}={'(broker.conf)' if v is None else balancer.value_text(v)}"
                            for k, v in previous.items()))


#: the step states a resume sends again (a confirmed step is already done; a failed or in-doubt one
#: only with --force, which the runner's rows say)
_LEFT = ("not-sent", "deferred", "declined", "pending")


def stopped_note(r: ApplyReport, broker: str, paused: bool) -> str:
    """What resuming a stopped drain does and does not do, for the end of its last line: the
    "resume with:" line sends this round's unloads left, and only them. Before, a newcomer read
    "partial … resume with: …" as "run that and the drain goes on", but the balancer pause and the
    wait until the broker owns nothing are the drain's, not the resumed plan's (walk23)."""
    left = [s.action.step for s in r.steps if s.state in _LEFT]
    if not left:
        return ""
    again = f"lbctl drain {broker}" + (" --pause-balancer" if paused else "")
    return (f"; resuming sends the {len(left)} unload(s) left ({step_ranges(left)}) and "
            f"nothing more (it does not wait until the broker owns nothing; {again} does)")


def resume_note(kind: str, broker: str | None, run: str, pf: PlanFile, history: RunHistory,
                paused_now: bool, paused_by_run: bool) -> str:
    """The line ``apply --resume JOURNAL --run ID`` prints first when the run is a drain's or a
    fill's: which of its steps remain (never confirmed), that only those are sent, and what of
    the drain is not resumed (the balancer pause, the wait until the broker owns nothing)."""
    steps = [a.step for a in pf.actions if a.skipped is None]
    done = [n for n in steps if (h := history.steps.get(n)) is not None and h.confirmed]
    left = [n for n in steps if n not in done]
    what = "unload(s)" if kind == "drain" else "move(s)"
    who = f"the {kind} of {broker}" if broker else f"the {kind}"
    line = (f"resuming {who} (run {run}): {len(left)} of its {len(steps)} {what} left"
            + (f" ({step_ranges(left)})" if left else "") + f", {len(done)} done; only those are "
            "sent")
    if kind == "fill":
        return line + ", paced by this command's --concurrency and --interval"
    if paused_now:
        line += "; the balancer is still paused (put it back with lbctl drain --restore --yes)"
    elif paused_by_run:
        line += "; the balancer is not paused again (the drain restored it when it stopped)"
    target = f"lbctl drain {broker}" if broker else "lbctl drain BROKER"
    return line + f"; this does not wait until the broker owns nothing (then run {target})"


def _say(ui: UI, line: str) -> None:
    """The drain's own line through ``ui.show``, fitted to ``ui.width`` as the runner fits its
    lines (:func:`~lbctl.apply.runner.fit_line`): "balancer settings restored: …" lists every
    setting and ran past the terminal (walk20)."""
    for part in fit_line(line, ui.width):
        ui.show(part)


def left_paused(journal: Path, cluster: str) -> str:
    """A line about a balancer pause the journal shows never restored (a drain killed, or
    ``--keep-paused``, or a restore that failed), or "". Said before a drain starts: pausing
    again would read the paused values as the ones to put back."""
    from lbctl.apply.journal import paused_balancer, read_records
    from lbctl.errors import ConfigError

    if not journal.exists():
        return ""
    try:
        rec = paused_balancer(read_records(journal, tail_bytes=16 << 20), cluster)
    except ConfigError:
        return ""
    if rec is None:
        return ""
    previous = rec.get("previous") if isinstance(rec.get("previous"), dict) else {}
    return (f"the journal {journal} shows the balancer of {cluster} paused by run "
            f"{rec.get('run')} at {rec.get('time')} and never restored ("
            + ", ".join(f"{k} was {'(broker.conf)' if v is None else balancer.value_text(v)}"
                        for k, v in (previous or {}).items())
            + "): it is still paused unless someone changed it; lbctl drain --restore puts it "
            "back")


def _again(o: ApplyOptions) -> ApplyOptions:
    """A further round of a confirmed drain: not asked again (the drain was confirmed)."""
    from lbctl.records import replace

    return replace(o, yes=True, max_age=None)


def _owned(client: AdminClient, cluster: str, broker: str) -> list[str]:
    from lbctl.admin.errors import AdminError

    try:
        return owned_by(client, cluster, broker)
    except AdminError:
        return []


def _wait_empty(client: AdminClient, cluster: str, broker: str, moving: set[str],
                o: DrainOptions, stop: threading.Event) -> list[str]:
    """Until the broker owns nothing, or the timeout; at once when what it still owns is none of
    the bundles this round moved (they arrived since, or could not be sent: plan them again)."""
    # --timeout is cluster time (clients reconnecting): 1/N of it on a sandbox running N times
    # as fast as the wall
    deadline = time.monotonic() + o.timeout / client.cluster_speed()
    while True:
        left = owned_by(client, cluster, broker)
        if (not left or not set(left) & moving or time.monotonic() >= deadline
                or stop.is_set()):
            return left
        stop.wait(min(o.poll, max(0.0, deadline - time.monotonic())))


def contextlib_null() -> Any:
    import contextlib

    return contextlib.nullcontext()


def restore_from_journal(client: AdminClient, journal: Path, ui: UI, *, yes: bool,
                         interactive: bool, dry_run: bool) -> dict[str, Any]:
    """``drain --restore``: put back the balancer settings the journal's last pause changed."""
    from lbctl.apply.journal import paused_balancer, read_records
    from lbctl.errors import ConfigError
    from lbctl.sources.live import LiveSource

    cluster = LiveSource(client, topics=False, namespaces=False).discover().cluster
    rec = paused_balancer(read_records(journal), cluster) if journal.exists() else None
    if rec is None:
        raise ConfigError(f"the journal {journal} shows no paused balancer of cluster {cluster} "
                          "that was not restored: nothing to restore")
    previous = rec.get("previous")
    if not isinstance(previous, dict) or not previous:
        raise ConfigError(f"the journal {journal}: the balancer-paused record has no previous "
                          "values")
    from lbctl.sources.live_dynamic import read_dynamic_config

    todo = balancer.still_paused(read_dynamic_config(client), previous)
    # no grace-period guard: what is sent is what the live configuration still lacks
    # (still_paused), never a repeat by accident; the guard, meant for unloads, refused the
    # restore of a second pause within 30 minutes of the first one's restore (walk21: the
    # sandbox session, drained twice)
    ex = Executor(client, dry_run=dry_run, yes=yes, interactive=interactive, confirm=ui.confirm,
                  show=ui.show, journal=journal, warn=ui.warn, grace_minutes=0)
    if todo:
        ex.run(balancer.restore_mutations(todo))
    else:
        _say(ui, "the balancer settings are as before the pause already: nothing to send")
    if not dry_run:
        ex.note({"state": "balancer-restored", "cluster": cluster, "previous": previous})
    return previous
