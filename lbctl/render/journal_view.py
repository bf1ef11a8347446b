"""``lbctl journal``: the changes lbctl sent, oldest first — an audit trail.

The journal holds one line per *step* of a request (``sending`` before it, ``done``/``failed``
after; an apply or drain run adds ``verified`` or ``skipped`` per action and lines of its own).
An operator reading it asks per *action*: what was done to which bundle, why (``--reason``), and
how it ended. So the table shows, per run, a header (when, what kind, the reason, the result) and
one row per action with its final outcome and the steps it went through (``--steps``: every line
instead). ``-o json`` has both (``actions`` and ``entries``); ``-o csv|jsonl`` stay one row per
line (the raw trail).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.render import table
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.sources.journal import JournalEntry, iso

JOURNAL_SCHEMA = Schema("journal", "journal line (one step of one request)", (
    col("time", "time", "when the step was written"),
    col("run", "string", "the lbctl invocation it belongs to"),
    col("state", "string", "sending (before the request), done or failed; verified or skipped "
                           "(an apply or drain action's end)"),
    col("action", "string", "what the request does, in words"),
    col("method", "string", "the HTTP method"),
    col("url", "string", "the URL (credentials redacted)"),
    col("body", "string", "the JSON body, if any, as sent"),
    col("status", "integer", "the HTTP status (done/failed)"),
    col("error", "string", "the error (failed)"),
    col("reason", "string", "the operator's --reason (apply, drain)"),
    col("bundle", "string", "the bundle of an apply or drain action"),
    col("step", "integer", "the action's step in its plan (apply, drain)"),
    col("outcome", "string", "an action's verified outcome (done, done-elsewhere, "
                             "not-reassigned, failed) or why it was skipped"),
))

#: the lines of a request, in the order they happen: (state, letter in the steps column)
STEPS = (("sending", "s"), ("done", "d"), ("verified", "v"))
LEGEND = ("steps: s sent, d done (answered 2xx), v verified (owner found); "
          "F failed, I interrupted, - not reached")


def _body(v: Any) -> str | None:
    return None if v is None else json.dumps(v, separators=(",", ":"))


def _state_style(text: str) -> str | None:
    return {"done": "success", "failed": "failure"}.get(text)


def _outcome_style(text: str) -> str | None:
    word = text.split(" ", 1)[0]
    if word in ("done", "done-elsewhere"):
        return "success"
    if word in ("failed", "not-reassigned", "interrupted", "in-flight?"):
        return "failure"
    return None


@dataclass
class Action:
    """One request (or apply/drain action) and the lines that followed it."""

    run: str
    key: tuple[Any, ...]
    first: JournalEntry
    lines: list[JournalEntry]

    @property
    def verb_and_target(self) -> tuple[str, str]:
        text = next((e.action for e in self.lines if e.action), "")
        if text.startswith("#"):  # apply's "#3 unload …"
            text = text.split(" ", 1)[1] if " " in text else text
        verb, _, rest = text.partition(" ")
        bundle = next((e.bundle for e in self.lines if e.bundle), None)
        if bundle and (verb in ("unload", "split", "transfer") or not text):
            dest = next((e.destination for e in self.lines if e.destination), None)
            return verb, bundle + (f" → {dest}" if dest else "")
        return verb, rest

    @property
    def outcome(self) -> str:
        end = next((e for e in reversed(self.lines) if e.state in ("verified", "skipped")), None)
        if end is not None:
            word = end.outcome or end.state
            return word + (f": {end.why}" if end.why and end.why != word and word != "done"
                           else "")
        answer = next((e for e in reversed(self.lines)
                       if e.state in ("done", "failed", "interrupted")), None)
        if answer is None:
            return "in-flight? (sent, no answer journaled)"
        if answer.state == "failed":
            return "failed" + (f" {answer.status}" if answer.status else "") \
                + (f": {answer.error}" if answer.error else "")
        return answer.state

    @property
    def steps(self) -> str:
        states = {e.state for e in self.lines}
        out = []
        for state, letter in STEPS:
            if state in states:
                out.append(letter)
            elif state == "done" and "failed" in states:
                out.append("F")
            elif state == "done" and "interrupted" in states:
                out.append("I")
            else:
                out.append("-")
        if "sending" not in states and "skipped" in states:
            return "---"
        return "".join(out)

    def to_dict(self) -> dict[str, Any]:
        verb, target = self.verb_and_target
        return {"time": iso(self.first.time), "run": self.run, "action": verb, "target": target,
                "bundle": next((e.bundle for e in self.lines if e.bundle), None),
                "step": self.first.step, "outcome": self.outcome, "steps": self.steps,
                "states": [e.state for e in self.lines]}


@dataclass
class Run:
    """One lbctl invocation: its actions and what its own lines say (kind, reason, result)."""

    run: str
    first: JournalEntry
    actions: list[Action]
    notes: list[JournalEntry]

    @property
    def reason(self) -> str | None:
        return next((e.reason for e in [*self.notes, *(x for a in self.actions for x in a.lines)]
                     if e.reason), None)

    @property
    def kind(self) -> str:
        kind = next((e.kind for e in self.notes if e.kind), None)
        if kind:
            return kind
        if any(e.state == "balancer-restored" for e in self.notes):
            # drain --restore writes no apply-start: its verbs (delete, set) name no command
            return "drain --restore"
        verbs = dict.fromkeys(a.verb_and_target[0] for a in self.actions)
        return ", ".join(verbs) or "notes"

    @property
    def result(self) -> str | None:
        end = next((e for e in reversed(self.notes) if e.state == "apply-end"), None)
        return end.result if end is not None else None

    def header(self) -> str:
        parts = [f"run {self.run}", self.kind,
                 self.first.time.strftime("%Y-%m-%d %H:%M:%S UTC")]
        if self.reason:
            parts.append(f"reason: {self.reason}")
        if self.result:
            parts.append(f"result: {self.result}")
        extra = [e.state for e in self.notes if e.state.startswith("balancer-")
                 or e.state == "paused"]
        if extra:
            parts.append(", ".join(dict.fromkeys(extra)))
        return " · ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "time": iso(self.first.time), "kind": self.kind,
                "reason": self.reason, "result": self.result,
                "actions": [a.to_dict() for a in self.actions]}


def _key(e: JournalEntry) -> tuple[Any, ...] | None:
    """Which action a line belongs to (None: a line of the run itself)."""
    if e.step is not None:
        return ("step", e.plan, e.step)
    if e.method:
        return ("request", e.method, e.url, _body(e.body))
    return None


def runs_of(entries: tuple[JournalEntry, ...]) -> list[Run]:
    """The entries grouped into runs (by first appearance) and each run's actions."""
    runs: dict[str, Run] = {}
    actions: dict[tuple[Any, ...], Action] = {}
    for e in entries:
        run = runs.get(e.run)
        if run is None:
            run = runs[e.run] = Run(e.run, e, [], [])
        key = _key(e)
        if key is None:
            run.notes.append(e)
            continue
        full = (e.run, *key)
        a = actions.get(full)
        if a is None or (e.state == "sending" and "sending" in {x.state for x in a.lines}
                         and a.first.step is None):
            a = actions[full] = Action(e.run, full, e, [])  # the same request sent again
            run.actions.append(a)
        a.lines.append(e)
    for run in runs.values():
        run.actions = _in_step_order(run.actions)
    return list(runs.values())


def _in_step_order(actions: list[Action]) -> list[Action]:
    """A run's plan actions in the order of their steps, in the places plan actions hold.

    An apply run journals every action it will not send (deferred by a cap, already done, gone)
    as soon as it has validated the plan, before it sends the first request; listed by first
    line, ``#4 deferred`` came before the ``#1`` it sent. The runner walks the plan in step
    order, sending or passing over each action, so that is the order things happened in. The
    run's own requests (a balancer paused before the first move) keep their places."""
    slots = [i for i, a in enumerate(actions) if a.first.step is not None]
    plans: dict[Any, int] = {}
    for i in slots:
        plans.setdefault(actions[i].first.plan, len(plans))
    ordered = sorted((actions[i] for i in slots),
                     key=lambda a: (plans[a.first.plan], a.first.step))
    out = list(actions)
    for i, a in zip(slots, ordered, strict=True):
        out[i] = a
    return out


@dataclass(frozen=True)
class JournalView:
    path: str
    entries: tuple[JournalEntry, ...]
    since: str | None = None
    steps: bool = False
    schema: ClassVar[Schema] = JOURNAL_SCHEMA

    def to_data(self) -> Any:
        return {"journal": self.path, "runs": [r.to_dict() for r in runs_of(self.entries)],
                "entries": [e.to_dict() for e in self.entries]}

    def to_rows(self) -> list[dict[str, Any]]:
        return [{**e.to_dict(), "body": _body(e.body)} for e in self.entries]

    def to_text(self) -> str:
        since = f" since {self.since}" if self.since else ""
        if not self.entries:
            return f"{self.path}: no change recorded{since}"
        runs = runs_of(self.entries)
        if self.steps:
            head = f"{self.path}: {len(self.entries)} line(s) in {len(runs)} run(s){since}"
        else:
            n = sum(len(r.actions) for r in runs)
            head = (f"{self.path}: {n} action(s) in {len(runs)} run(s){since} "
                    "(--steps: every line)")
        out = [wrap_prose(head)] + ([] if self.steps else [wrap_prose(LEGEND)])
        for r in runs:
            out += ["", wrap_prose(r.header())]
            if self.steps:
                out.append(table(_step_rows(r), styles={"state": _state_style}))
                continue
            if not r.actions:
                continue
            rows = []
            for a in r.actions:
                verb, target = a.verb_and_target
                rows.append({"time": a.first.time.strftime("%H:%M:%S"),
                             "#": "" if a.first.step is None else str(a.first.step),
                             "action": f"{verb} {target}".strip(), "steps": a.steps,
                             "outcome": a.outcome})
            out.append(table(rows, styles={"outcome": _outcome_style}))
        return "\n".join(out)


def _step_rows(run: Run) -> list[dict[str, Any]]:
    """``--steps``: every line of a run, in the order written."""
    lines = sorted([*run.notes, *(e for a in run.actions for e in a.lines)],
                   key=lambda e: e.time)
    return [{"time": e.time.strftime("%H:%M:%S.%f")[:12], "state": e.state,
             "action": (e.action or e.bundle or "").removeprefix(f"#{e.step} "),
             "status": "" if e.status is None else str(e.status),
             "error": e.error or e.why or e.outcome or e.result or ""}
            for e in lines]
