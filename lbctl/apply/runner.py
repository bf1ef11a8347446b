"""Carrying out a plan: ``lbctl apply`` (and the drains, which apply the plans they build).

A run, in order — each step stops the run or narrows what is sent, never widens it:

1. **Age.** A plan whose ``capturedAt`` is older than ``--max-age`` (10 min) — or as far in the
   future — is refused (:class:`~lbctl.errors.StalePlan`) unless ``--force-stale``; a plan of
   another cluster is refused outright.
2. **Re-validation** of every action against a fresh read of the cluster
   (:mod:`lbctl.apply.validate`); the diff (valid / changed / gone / skipped) is printed.
3. **Resume** (``--resume JOURNAL``): steps an earlier run of the same plan (same SHA-256) had sent
   and the broker confirmed are not sent again; a step sent but never answered (killed in flight)
   is checked on the live state — moved: counted as done; still on its source: not sent unless
   ``--force``; a step that failed is not sent again unless ``--force``.
4. **Caps**, in plan order: ``--max-moves`` unloads/transfers, ``--max-per-broker`` moves touching
   one broker (as source or destination), ``--max-throughput`` MB/s of bundle throughput moved
   (the plan's figure, else the live one); actions past a cap are deferred, not sent.
5. **Show** exactly what will be sent (method, URL with query, body). Without a terminal and
   without ``--yes`` — or with ``--dry-run`` — that is all: a dry run sends nothing.
6. **Not twice**: a request the journal shows within the grace period is refused unless
   ``--force`` (:class:`~lbctl.executor.Executor`).
7. **Lock** the cluster (:mod:`lbctl.apply.lock`): a second apply against it is refused.
8. **Confirm** once for the batch on a terminal (``--yes`` skips it), or per action with
   ``--confirm-each`` (an action answered no is skipped).
9. **Send, paced**: ``--concurrency N`` actions at a time (sent one after the other, then verified
   together), ``--interval S`` seconds between batches. Each request is journaled before it is
   sent and after (with the plan, its digest, the step, the bundle, source, destination and
   ``--reason``); immediately before a move is sent its source is asked whether it still owns
   the bundle (moved since validation: skipped, not sent); each outcome is verified (:mod:`lbctl.apply.verify`) and journaled; the rollback
   plan is rewritten after every verified move (:mod:`lbctl.apply.rollback`).
10. **Between batches** the brokers' loads are read again: a broker of the remaining actions that
    left the cluster stops the run; a destination that turned overloaded pauses it until it is
    not (``--pause-timeout``, then the run stops).
11. **Stop**: a 409 or 412 fails that action and the run goes on (the bundle's state changed);
    any other failure — a 5xx, a broker that does not answer — stops the run. SIGINT/SIGTERM
    (the ``stop`` event) let the in-flight action finish, journal it, and stop. A run that
    stopped early, or whose actions failed, were not reassigned or did not move (a 2xx with the
    bundle still on its source), is *partial* (exit 13).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lbctl.admin.client import AdminClient
from lbctl.apply import validate as V
from lbctl.apply.journal import RunHistory, journal_unloads
from lbctl.apply.live import LiveView, bundle_throughput, read_live
from lbctl.apply.planfile import PlanFile, PlannedAction
from lbctl.apply.rollback import Rollback, rollback_path
from lbctl.apply.verify import (
    DONE,
    ELSEWHERE,
    FAILED,
    NOT_MOVED,
    NOT_REASSIGNED,
    Verifier,
    topic_in,
)
from lbctl.errors import Interrupted, LbctlError, NotJournaled, StalePlan, UsageError
from lbctl.executor import (
    Executor,
    Mutation,
    default_journal,
    request_lines,
    split_mutation,
    unload_mutation,
)
from lbctl.safe.text import display_width
from lbctl.units import MB, pct

#: a failed request with one of these statuses fails its action only; any other stops the run
CONTINUE_ON = (409, 412)


@dataclass
class ApplyOptions:
    dry_run: bool = False
    yes: bool = False
    confirm_each: bool = False
    force: bool = False
    force_stale: bool = False
    max_age: float | None = 600.0  # seconds; None: no limit
    max_moves: int | None = None
    max_per_broker: int | None = None
    max_throughput: float | None = None  # MB/s
    interval: float = 0.0
    concurrency: int = 1
    verify_timeout: float = 60.0
    pause_timeout: float = 300.0
    reason: str | None = None
    journal: Path | None = None
    kind: str = "apply"  # the journal's and the lock's word for the run: apply, drain, fill
    #: the operator asked for a rollback (``apply --rollback``): the grace period does not apply
    #: and an overloaded original owner is said, not refused. Decided by the flag, never by the
    #: plan file's ``shedding`` (a file naming itself a rollback gets every check)
    rollback: bool = False


@dataclass
class UI:
    show: Callable[[str], None] = print
    warn: Callable[[str], None] = lambda _line: None
    confirm: Callable[[str], bool] | None = None
    interactive: bool = False
    #: the columns ``show``'s lines are fitted to (:func:`fit_line`): -1 the terminal's (as
    #: :func:`~lbctl.executor.request_lines`), None whole lines (a log: one record a line)
    width: int | None = -1


def fit_line(line: str, width: int | None, hang: int = 4) -> list[str]:
    """``line`` in lines of at most ``width`` columns, broken at spaces only, as the tables break
    their cells (lbctl.render.tables): a bundle, a broker or a path is never split, and a line is
    longer than ``width`` only when one such word is. Continued ``hang`` columns in (a row's
    description column), at most half the width. -1: the terminal's width (``$COLUMNS``, else
    80 when piped, never below 40); None: the line whole. walk19: the plan line and each
    action's row ran to 150 columns. walk20: columns are screen columns
    (:func:`~lbctl.safe.text.display_width`, the tables' measure), not characters: a broker
    named ``東京-1`` takes 6, not 4."""
    if width is not None and width < 0:
        width = max(40, shutil.get_terminal_size((80, 24)).columns)
    if width is None or display_width(line) <= width:
        return [line]
    indent = line[:len(line) - len(line.lstrip(" "))]
    lead = " " * min(hang, width // 2)
    lines: list[str] = []
    cur = indent
    words = re.findall(r"\S+\s*", line[len(indent):])  # a word and the blanks after it
    for word in _commands_whole(words, width - len(lead)):
        if cur.strip() and display_width(cur + word.rstrip()) > width:
            lines.append(cur.rstrip())
            cur = lead
        cur += word
    lines.append(cur.rstrip())
    return lines


def _commands_whole(words: list[str], room: int) -> list[str]:
    """``words`` with each ``lbctl …`` command a line names joined into one word when it fits in
    ``room`` columns, so that :func:`fit_line` moves it whole to the next line rather than split
    it (walk22: "lbctl apply PLAN.json --concurrency 2 --interval" / "60", "(lbctl apply" /
    "PATH)"): it can be copied from one line. A command starts at the word ``lbctl`` (after an
    opening bracket or quote) and runs until a word that closes it (``)``, ``;``, ``,``, a
    backtick) or before one that opens an aside (``(``); one longer than ``room`` is left in
    words, broken at its blanks as before."""
    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i].strip().lstrip("(`'\"") != "lbctl":
            out.append(words[i])
            i += 1
            continue
        j = i + 1
        while (j < len(words) and not words[j - 1].rstrip().endswith((")", ";", ",", "`"))
               and not words[j].startswith("(")):
            j += 1
        command = "".join(words[i:j])
        if display_width(command.rstrip()) <= room:
            out.append(command)
        else:
            out.extend(words[i:j])
        i = j
    return out


@dataclass
class Step:
    """One action of the plan, what re-validation said and what became of it."""

    action: PlannedAction
    verdict: str
    why: str = ""
    request: str | None = None
    state: str = "pending"
    owner: str | None = None
    seconds: float | None = None
    error: str | None = None
    origin: str | None = None  # the owner observed immediately before the send

    def to_dict(self) -> dict[str, Any]:
        a = self.action
        return {"step": a.step, "action": a.action, "bundle": a.bundle, "broker": a.broker,
                "destinationBroker": a.destination, "verdict": self.verdict, "why": self.why,
                "request": self.request, "outcome": self.state, "owner": self.owner,
                "seconds": self.seconds, "error": self.error}


@dataclass
class ApplyReport:
    plan: PlanFile
    cluster: str
    run_id: str
    steps: list[Step]
    result: str = "complete"  # complete | partial | dry-run | nothing
    why: str = ""
    journal: Path | None = None
    rollback: Path | None = None
    resumed: list[str] = field(default_factory=list)
    #: the command the run belongs to (``ApplyOptions.kind``): a drain's resume line names its run
    kind: str = "apply"
    #: the run's pace as apply's flags (``--concurrency N --interval S``), for its resume line:
    #: ``apply --resume`` alone sends at apply's defaults, back to back, so a fill (or an apply
    #: run with ``--interval 30``) resumed from that line lost the pace it was given (walk23);
    #: "" for apply's default pace
    pace: str = ""

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.steps:
            out[s.state] = out.get(s.state, 0) + 1
        return out


def pace_flags(opts: ApplyOptions) -> str:
    """The apply flags that keep a run's pace on resume: a drain's (``-m``), a fill's
    (``--per-interval``, ``--interval``) or apply's own; "" for apply's default pace (one at a
    time, no wait)."""
    flags = []
    if opts.concurrency != 1:
        flags.append(f"--concurrency {opts.concurrency}")
    if opts.interval > 0:
        flags.append(f"--interval {opts.interval:g}")
    return " ".join(flags)


def step_ranges(steps: Sequence[int]) -> str:
    """Step numbers as a reader counts them: ``#3–#16``, ``#2, #5–#7`` (sorted, runs joined)."""
    out: list[str] = []
    ordered = sorted(set(steps))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(f"#{ordered[i]}" if i == j else f"#{ordered[i]}\u2013#{ordered[j]}")
        i = j + 1
    return ", ".join(out)


class ApplyRun:
    """One run of a plan (module docstring)."""

    def __init__(self, client: AdminClient, plan: PlanFile, opts: ApplyOptions, ui: UI, *,
                 stop: threading.Event | None = None, history: RunHistory | None = None,
                 clock: Callable[[], float] = time.time, live: LiveView | None = None,
                 arm: Callable[[], None] | None = None,
                 prelude: Sequence[Mutation] = (), on_start: Callable[[Executor], None] | None = None,
                 locked: bool = False):
        """``prelude``: requests shown (and confirmed) with the plan's, sent by ``on_start`` once
        the run has started (a drain's balancer pause); ``locked``: the caller holds the cluster's
        lock already."""
        self.client = client
        self.plan = plan
        self.opts = opts
        self.ui = ui
        self.stop = stop or threading.Event()
        self.history = history
        self.clock = clock
        self.live = live
        self.arm = arm or (lambda: None)
        self.prelude = list(prelude)
        self.on_start = on_start
        self.locked = locked
        self._sent: list[int] = []  # steps whose request this run sent (or tried to)
        self.journal = opts.journal or default_journal()
        self.executor = Executor(
            client, dry_run=False, yes=opts.yes, interactive=ui.interactive, confirm=ui.confirm,
            show=ui.show, journal=self.journal, clock=clock, force=opts.force, warn=ui.warn)

    # ---- the run ------------------------------------------------------------------------------
    def run(self) -> ApplyReport:
        self._check_age()
        live = self.live or read_live(self.client)
        self.live = live
        if (speed := self.client.cluster_speed()) != 1:
            self._check_age(speed)  # cluster time (a sandbox's faster clock)
        for line in live.failures:
            self.ui.warn(line)
        if live.cluster != self.plan.cluster:
            raise UsageError(f"{self.plan.path} is a plan of cluster {self.plan.cluster}, but the "
                             f"admin URL serves cluster {live.cluster}: nothing was sent")
        steps = self._validate(live)
        report = ApplyReport(self.plan, live.cluster, self.executor.run_id, steps,
                             journal=self.journal,
                             resumed=list(self.history.runs) if self.history else [],
                             kind=self.opts.kind, pace=pace_flags(self.opts))
        self._resume(steps, live)
        self._caps(steps, live)
        todo = [s for s in steps if s.state == "pending"]
        mutations = {s.action.step: self._mutation(s.action) for s in todo}
        for s in todo:
            s.request = mutations[s.action.step].call.describe(self.client.admin_url)
        dry = self.opts.dry_run or (not self.opts.yes and not self.ui.interactive)
        self._show(steps, todo, mutations, dry)
        if not todo:
            report.result = "nothing"
            report.why = "no action of the plan is valid now: nothing was sent"
            self.ui.show(report.why)
            return report
        if dry:
            for line in self.executor.repeats(list(mutations.values())):
                self.ui.warn(line)
            for s in todo:
                s.state = "dry-run"
            report.result = "dry-run"
            report.why = ("dry run: nothing was sent" if self.opts.dry_run else
                          "dry run (no terminal and no --yes): nothing was sent; pass --yes to "
                          "apply")
            # said once, by the report's line with its counts (ApplyView): walk18 found "dry
            # run: nothing was sent" here and "dry-run: 6 would be sent" under it
            return report
        self.executor.refuse_repeats(self.executor.repeats(list(mutations.values())))
        from lbctl.apply.lock import ClusterLock

        what = f"lbctl {self.opts.kind} {Path(self.plan.path).name}"
        with contextlib.nullcontext() if self.locked else ClusterLock(
                live.cluster, what=what, journal=self.journal):
            if not self.opts.confirm_each:
                self.executor.ask(
                    f"Apply {len(todo)} action(s) of {Path(self.plan.path).name} to cluster "
                    f"{live.cluster} ({self.client.redact(self.client.admin_url)})?")
            self.executor.open_journal()
            self.arm()  # from here a signal lets the action in flight finish
            report.rollback = rollback_path(self.journal, self.executor.run_id)
            rollback = Rollback(report.rollback, self.plan, live)
            self._note({"state": "apply-start", "cluster": live.cluster,
                        "adminUrl": self.client.redact(self.client.admin_url),
                        "actions": len(self.plan.actions),
                        "steps": [s.action.step for s in todo],
                        "resumes": report.resumed or None, "kind": self.opts.kind})
            if self.on_start is not None:
                self.on_start(self.executor)
            for s in steps:
                if s.state != "pending":
                    self._note({"state": "skipped", **self._what(s.action),
                                "outcome": s.state, "why": s.why or None})
            try:
                self._execute(todo, mutations, rollback, report, live)
            except (Interrupted, NotJournaled) as e:  # their own exit codes; journaled partial
                self._aborted(report, e)
                raise
            except (LbctlError, OSError) as e:
                self._aborted(report, e)  # a partial run (exit 13), not an error: some was sent
            finally:
                # only a file that exists, and say when it lacks moves it could not record
                report.rollback = rollback.path if rollback.written else None
                if rollback.error:
                    report.result = "partial"
                    missing = len(rollback.actions) - rollback.written
                    report.why = "; ".join(x for x in (report.why, (
                        f"the rollback plan {rollback.path} lacks the last {missing} move(s)"
                        if rollback.written else "no rollback plan could be written")
                        + f" ({rollback.error})") if x)
                self._finish(report)
        return report

    def _aborted(self, report: ApplyReport, e: BaseException) -> None:
        """The run broke off mid-way (an error, not a stop): what was sent stays sent — in doubt
        when its verification did not finish — and what was not sent is said, never "complete"."""
        why = f"aborted: {e}"
        for s in report.steps:
            if s.state == "sent":
                s.state = "in-doubt"
                s.why = "sent; the run aborted before its move was verified"
            elif s.state == "pending":
                s.state = "not-sent"
                s.why = why
        report.result = "partial"
        counts = [f"{k} {state}" for state in (FAILED, NOT_REASSIGNED, NOT_MOVED, "in-doubt",
                                               "not-sent")
                  if (k := sum(1 for s in report.steps if s.state == state))]
        report.why = "; ".join([why, *counts])

    # ---- pieces -----------------------------------------------------------------------------
    def _check_age(self, speed: float = 1.0) -> None:
        """``--max-age`` against the plan's ``capturedAt``, in cluster seconds: ``speed`` is the
        cluster's (``AdminClient.cluster_speed``), known once it has answered, so :meth:`run`
        checks again after its first read when a sandbox's clock runs faster than the wall's."""
        if self.opts.max_age is None or self.opts.force_stale:
            return
        age = (self.clock() - self.plan.captured_at / 1000) * speed
        if age < -self.opts.max_age:
            # a plan "from the future" is no fresher than a stale one: a skewed clock or an edited
            # capturedAt says nothing about the cluster now
            raise StalePlan(f"{self.plan.path}: capturedAt is {_ago(-age)} in the future of this "
                            f"machine's clock, more than --max-age {self.opts.max_age:g} s: its "
                            "age cannot be trusted; compute a new plan, or pass --force-stale "
                            "to apply it after re-validation anyway")
        if age > self.opts.max_age:
            raise StalePlan(f"{self.plan.path} was computed {_ago(age)} ago (capturedAt), more "
                            f"than --max-age {self.opts.max_age:g} s: the cluster has moved on; "
                            "compute a new plan, or pass --force-stale to apply it after "
                            "re-validation anyway")

    def _validate(self, live: LiveView) -> list[Step]:
        grace = float(live.settings["loadBalancerSheddingGracePeriodMinutes"]) * 60
        now = self.clock()
        recent = unloads_in_grace(self.client, self.journal, grace, now, self.ui.warn)
        verdicts = V.validate(self.plan.actions, live, recent_unloads=recent, now=now,
                              force=self.opts.force,
                              exempt_grace=self.opts.rollback or self.opts.kind == "drain",
                              rollback=self.opts.rollback)
        steps = []
        for v in verdicts:
            st = Step(v.action, v.status, v.why, owner=v.owner)
            if v.status == V.VALID and v.why:
                self.ui.warn(f"#{v.action.step}: {v.why}")
            if v.status != V.VALID:
                st.state = "skipped"
            steps.append(st)
        return steps

    def _resume(self, steps: list[Step], live: LiveView) -> None:
        h = self.history
        if h is None:
            return
        doubt = set(h.in_doubt())
        for s in steps:
            past = h.steps.get(s.action.step)
            if past is None or not past.sent:
                continue
            a = s.action
            owner = live.owners.get(a.bundle)
            if past.confirmed:
                s.state = "already-done"
                s.why = (f"sent by run {'/'.join(h.runs)} and confirmed"
                         + (f"; verified {past.outcome}" if past.outcome else ""))
                s.owner = owner
                continue
            moved = owner != a.broker if a.is_move else False
            if s.action.step in doubt:
                if moved:
                    # off its source: on another broker, or on none (Pulsar leaves an unloaded
                    # bundle unowned until the next lookup assigns it)
                    s.state = "already-done"
                    s.why = (f"sent before the earlier run stopped; {a.bundle} is on {owner} now"
                             if owner is not None else
                             f"sent before the earlier run stopped; {a.bundle} has left "
                             f"{a.broker} and is on no broker now (the next lookup assigns it)")
                    s.owner = owner
                elif not self.opts.force:
                    s.state = "in-doubt"
                    s.why = (f"sent before the earlier run stopped, never confirmed; still on "
                             f"{owner or 'no broker'}: --force sends it again")
                continue
            if past.failed is not None and not self.opts.force:
                s.state = "skipped"
                s.why = f"sent before and failed ({past.failed}); --force sends it again"

    def _caps(self, steps: list[Step], live: LiveView) -> None:
        o = self.opts
        moves = 0
        per: dict[str, int] = {}
        moved_tp = 0.0
        for s in steps:
            if s.state != "pending" or not s.action.is_move:
                continue
            a = s.action
            why = ""
            tp = a.throughput if a.throughput is not None else bundle_throughput(live.state, a.bundle)
            touched = [b for b in (a.broker, a.destination) if b]
            if o.max_moves is not None and moves >= o.max_moves:
                why = f"--max-moves {o.max_moves} reached"
            elif o.max_per_broker is not None and any(per.get(b, 0) >= o.max_per_broker
                                                      for b in touched):
                full = next(b for b in touched if per.get(b, 0) >= o.max_per_broker)
                why = f"--max-per-broker {o.max_per_broker} reached for {full}"
            elif o.max_throughput is not None and moved_tp + (tp or 0.0) > o.max_throughput * MB:
                why = (f"--max-throughput {o.max_throughput:g} MB/s would be exceeded "
                       f"({(moved_tp + (tp or 0.0)) / MB:.2f} MB/s)")
            if why:
                s.state = "deferred"
                s.why = why
                continue
            moves += 1
            moved_tp += tp or 0.0
            for b in touched:
                per[b] = per.get(b, 0) + 1

    def _mutation(self, a: PlannedAction) -> Mutation:
        if a.is_move:
            m = unload_mutation(a.namespace, a.range, a.destination)
        else:
            m = split_mutation(a.namespace, a.range, unload=a.unload,
                               algorithm=V.SPECIFIED, boundaries=list(a.boundaries))
        return Mutation(m.call, f"#{a.step} {m.summary}")

    def _show(self, steps: Sequence[Step], todo: Sequence[Step], mutations: dict[int, Mutation],
              dry: bool) -> None:
        age = self.clock() - self.plan.captured_at / 1000
        c = {k: sum(1 for s in steps if s.verdict == k)
             for k in (V.VALID, V.CHANGED, V.GONE, V.SKIPPED)}
        # a resumed run's confirmed moves read "changed" (their owner is the destination now):
        # the rows say already-done, and so must the line that counts them
        done = sum(1 for s in steps if s.state == "already-done")
        self._show_fit(f"plan {self.plan.path}: {len(steps)} action(s), computed {_ago(age)} "
                       f"ago; against cluster {self.plan.cluster} now: {c[V.VALID]} still "
                       f"valid, {c[V.CHANGED]} changed, {c[V.GONE]} gone, {c[V.SKIPPED]} "
                       "skipped by the plan"
                       + (f" ({done} of them already done, the journal says)" if done else ""))
        for s in steps:
            label = s.verdict if s.state in ("pending", "skipped") else s.state
            lead = f"  #{s.action.step:<3} {label:<13} "
            line = lead + s.action.describe()
            if s.why:
                line += f": {s.why}"
            self._show_fit(line, hang=len(lead))  # continued under the description
        verb = "would send" if dry else "will send"
        items = [(m.call.describe(self.client.admin_url), m.summary) for m in self.prelude]
        items += [(s.request or "", mutations[s.action.step].summary) for s in todo]
        heading = (f"lbctl {verb} {len(todo) + len(self.prelude)} request(s)"
                   + _pace(len(todo), self.opts.concurrency, self.opts.interval))
        # the UI's width (walk21): a log (the watcher's apply, width None) keeps each request
        # and its summary on one line, one record, as the plan line and the rows already were
        for line in request_lines(heading, self.client.admin_url, items, self.ui.width):
            self.ui.show(line)

    def _show_fit(self, line: str, hang: int = 4) -> None:
        for part in fit_line(line, self.ui.width, hang):
            self.ui.show(part)

    def _note(self, record: dict[str, Any]) -> None:
        base: dict[str, Any] = {"plan": self.plan.path, "planDigest": self.plan.digest}
        if self.opts.reason:
            base["reason"] = self.opts.reason
        self.executor.note({**record, **base})

    def _what(self, a: PlannedAction) -> dict[str, Any]:
        """What a skipped action's journal line names: its step and bundle, and the action in
        the words its request would have carried (``#4 unload … to …``) with its destination,
        so that ``lbctl journal`` names it as it names the actions sent."""
        out: dict[str, Any] = {"step": a.step, "bundle": a.bundle,
                               "action": self._mutation(a).summary}
        if a.destination:
            out["destination"] = a.destination
        return out

    def _extra(self, a: PlannedAction) -> dict[str, Any]:
        e: dict[str, Any] = {"plan": self.plan.path, "planDigest": self.plan.digest,
                             "step": a.step, "bundle": a.bundle, "source": a.broker,
                             "destination": a.destination, "kind": self.opts.kind}
        if self.opts.reason:
            e["reason"] = self.opts.reason
        return e

    def _execute(self, todo: list[Step], mutations: dict[int, Mutation], rollback: Rollback,
                 report: ApplyReport, live: LiveView) -> None:
        verifier = Verifier(self.client, timeout=self.opts.verify_timeout, cluster=live.cluster,
                            brokers=lambda: list(self.live.brokers) if self.live else [])
        n = max(1, self.opts.concurrency)
        start_overloaded = set(live.overloaded())
        sent = 0
        i = 0
        stop_why = ""
        while i < len(todo) and not stop_why:
            if self.stop.is_set():
                stop_why = "stopped by a signal"
                break
            batch = todo[i:i + n]
            i += len(batch)
            in_flight: list[Step] = []
            for s in batch:
                if self.stop.is_set():
                    stop_why = "stopped by a signal"
                    break
                declined = self.opts.confirm_each and not self._ask_one(s)
                if self.stop.is_set():  # a signal at the prompt: stop before sending
                    stop_why = "stopped by a signal"
                    break
                if declined:
                    s.state = "declined"
                    self._note({"state": "skipped", **self._what(s.action),
                                "why": "declined"})
                    continue
                if s.action.is_move:
                    moved, stop_why = self._still_on_source(s, live.cluster)
                    if stop_why:
                        break
                    if moved:
                        continue
                self._sent.append(s.action.step)  # from here the request may have gone out
                out = self.executor.send(mutations[s.action.step], earlier=sent,
                                         extra=self._extra(s.action), raise_errors=False)
                sent += 1
                s.state = "sent"
                if out.state == "failed":
                    s.state = FAILED
                    s.error = out.error
                    self._verified(s)
                    if out.status not in CONTINUE_ON:
                        stop_why = f"step #{s.action.step} failed: {out.error}"
                        break
                    continue
                in_flight.append(s)
            self._verify(in_flight, verifier, rollback)
            if stop_why or self.stop.is_set():
                stop_why = stop_why or "stopped by a signal"
                break
            rest = todo[i:]
            if rest:
                stop_why = self._between(rest, start_overloaded)
                if not stop_why and self.opts.interval > 0:
                    self.stop.wait(self.opts.interval)
        for s in todo:
            if s.state == "pending":
                s.state = "not-sent"
                s.why = stop_why
        bad = [s for s in report.steps if s.state in (FAILED, NOT_REASSIGNED, NOT_MOVED,
                                                        "not-sent", "in-doubt")]
        if stop_why or bad:
            report.result = "partial"
            parts = [stop_why] if stop_why else []
            for state in (FAILED, NOT_REASSIGNED, NOT_MOVED, "in-doubt", "not-sent"):
                k = sum(1 for s in bad if s.state == state)
                if k:
                    parts.append(f"{k} {state}")
            report.why = "; ".join(parts)

    def _still_on_source(self, s: Step, cluster: str) -> tuple[bool, str]:
        """Ownership re-checked immediately before the send (the source's own
        ``ownedNamespaces``, which assigns nothing, unlike a lookup): a bundle the cluster moved
        since validation is not unloaded from its new owner. Returns (skipped, why the run
        stops): a source that cannot be asked stops the run — nothing is sent blind."""
        from lbctl.admin.errors import AdminError
        from lbctl.apply.verify import owned_by

        a = s.action
        try:
            owned = owned_by(self.client, cluster, a.broker)
        except AdminError as e:
            return False, f"the owner of {a.bundle} cannot be re-checked before sending: {e}"
        if a.bundle in owned:
            s.origin = a.broker
            return False, ""
        s.state = "skipped"
        s.verdict = V.CHANGED
        s.why = (f"no longer owned by {a.broker} when it was to be sent (moved since "
                 "validation): not sent")
        self._note({"state": "skipped", **self._what(a), "why": s.why})
        self._show_fit(f"#{a.step} skipped: {a.describe()} — {s.why}")
        return True, ""

    def _ask_one(self, s: Step) -> bool:
        if self.opts.yes:
            return True
        if self.ui.confirm is None or not self.ui.interactive:
            from lbctl.errors import MutationRefused

            raise MutationRefused("--confirm-each needs a terminal to ask on")
        return bool(self.ui.confirm(f"Send #{s.action.step}: {s.request}?"))

    def _verify(self, in_flight: list[Step], verifier: Verifier, rollback: Rollback) -> None:
        moves = [s for s in in_flight if s.action.is_move]
        if moves:
            topics = []
            for s in moves:
                known = self.live.topics_of(s.action.bundle) if self.live else []
                topics.append((s.action, topic_in(s.action.bundle, known)))
            results = verifier.moves(topics)
            for s in moves:
                r = results[s.action.step]
                s.state, s.owner, s.seconds = r.outcome, r.owner, r.seconds
                s.why = r.why
                self._verified(s)
                if r.outcome in (DONE, ELSEWHERE) and r.owner:
                    rollback.moved(s.action, r.owner, s.origin or s.action.broker)
        for s in in_flight:
            if s.action.is_move:
                continue
            r = verifier.split(s.action)
            s.state, s.seconds, s.why = r.outcome, r.seconds, r.why
            self._verified(s)
            if r.outcome == DONE:
                rollback.split(s.action)

    def _verified(self, s: Step) -> None:
        self._note({"state": "verified", "step": s.action.step, "bundle": s.action.bundle,
                    "outcome": s.state, "owner": s.owner, "seconds": s.seconds,
                    "why": s.why or s.error or None})
        line = f"#{s.action.step} {s.state}: {s.action.describe()}"
        if s.owner and s.action.is_move:
            line += f" (owner {s.owner}"
            line += f", after {s.seconds:g} s)" if s.seconds is not None else ")"
        if s.why or s.error:
            line += f" — {s.why or s.error}"
        self._show_fit(line)

    def _between(self, rest: list[Step], start_overloaded: set[str]) -> str:
        """Read the brokers again: a broker of the remaining actions gone stops the run; a
        destination turned overloaded pauses it (up to ``--pause-timeout``)."""
        from lbctl.admin.errors import AdminError

        waited = 0.0
        while True:
            try:
                now = read_live(self.client, topics=False, namespaces=False)
            except AdminError as e:
                return f"the cluster cannot be read between actions: {e}"
            if self.live is not None:
                self.live.brokers = now.brokers
                self.live.usage = now.usage
            involved = {b for s in rest for b in (s.action.broker, s.action.destination) if b}
            gone = sorted(b for b in involved if b not in now.brokers)
            if gone:
                return (f"broker {', '.join(gone)} left the cluster mid-run; the remaining "
                        "actions were not sent")
            over = {b: u for b, u in now.overloaded().items() if b not in start_overloaded}
            dests = {s.action.destination for s in rest if s.action.is_move}
            hot = {b: u for b, u in over.items() if b in dests or None in dests}
            if not hot:
                if waited:
                    self.ui.show("resumed: no destination is overloaded any more")
                return ""
            if waited >= self.opts.pause_timeout:
                return (f"paused {waited:.0f} s for overloaded broker(s) "
                        f"{', '.join(sorted(hot))} (--pause-timeout)")
            # --pause-timeout is cluster time (how long the cluster has to cool down): a sandbox
            # whose clock runs N times as fast has it in 1/N of the wall's
            speed = self.client.cluster_speed()
            if not waited:
                # what happens next, so that a quiet terminal does not read as a hang (walk21)
                wall = (f" ({self.opts.pause_timeout / speed:.3g} s of wall time at the "
                        f"sandbox's {speed:g}x)" if speed != 1 else "")
                self._show_fit("paused: " + ", ".join(f"{b} turned overloaded ({pct(u)} >= "
                                                       f"{pct(now.overload_threshold, 0)}"
                                                       f"{now.threshold_note})"
                                                       for b, u in sorted(hot.items()))
                               + f"; waiting up to {self.opts.pause_timeout:g} s{wall} "
                               "(--pause-timeout) for it to fall below before the next action")
                self._note({"state": "paused", "overloaded": sorted(hot)})
            step = min(5.0, max(0.5, self.opts.pause_timeout / 10))
            if self.stop.wait(max(0.05, step / speed)):
                return "stopped by a signal"
            waited += step

    def _finish(self, report: ApplyReport) -> None:
        record: dict[str, Any] = {
            "state": "apply-end", "result": report.result, "why": report.why or None,
            "rollback": str(report.rollback) if report.rollback else None,
            "outcomes": report.counts()}
        if report.result == "partial":  # which requests went out, which did not
            record["sent"] = list(self._sent)
            record["notSent"] = [s.action.step for s in report.steps
                                 if s.state == "not-sent"]
        try:
            self._note(record)
        except Exception as e:  # the report is still printed; say why it was not journaled
            self.ui.warn(f"the end of the run could not be journaled: {e}")


def unloads_in_grace(client: AdminClient, journal: Path | str, grace: float, now: float,
                     warn: Callable[[str], None]) -> dict[str, float]:
    """The journal's unloads within ``grace`` *cluster* seconds of ``now``
    (``loadBalancerSheddingGracePeriodMinutes`` is the leader's time), each dated on the
    cluster's time scale: the journal is wall time, so on a sandbox whose clock runs ``speed``
    times as fast the window is ``grace / speed`` wall seconds (:func:`in_cluster_time`). The
    one reading of the journal for a grace check: apply's re-validation, drain's fill,
    ``rebalance-after`` and ``propose``'s held bundles."""
    return in_cluster_time(client, now, journal_unloads(
        journal, now - grace / client.cluster_speed(), warn))


def in_cluster_time(client: AdminClient, now: float, times: dict[str, float]) -> dict[str, float]:
    """``times`` (wall epoch seconds, as the journal stamps them) moved to the cluster's time
    scale about ``now``: a request sent ``w`` wall seconds ago is ``w × speed`` cluster seconds
    old on a sandbox whose clock runs ``speed`` times as fast (``AdminClient.cluster_speed``; 1,
    and ``times`` unchanged, on a real cluster)."""
    speed = client.cluster_speed()
    if speed == 1:
        return times
    return {k: now - (now - t) * speed for k, t in times.items()}


def _ago(seconds: float) -> str:
    s = max(0.0, seconds)
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def _pace(todo: int, concurrency: int, interval: float) -> str:
    """How the requests go out, for the line before them: ``--interval`` parts the batches of
    ``--concurrency`` moves, so it is said only when there is more than one batch ("all at once,
    60 s apart" read as a contradiction), and never for one request (nothing to part)."""
    if todo <= 1:
        return ""
    if concurrency <= 1:
        return f", {interval:g} s apart" if interval else ""
    if concurrency >= todo:
        return ", all at once"
    return f", {concurrency} at a time" + (f", {interval:g} s between batches" if interval else "")
