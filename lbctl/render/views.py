"""Result objects of the commands, each able to show itself as data, rows or text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from msgspec import Struct

from lbctl.explain.paging import DEFAULT_LIMIT, Pager
from lbctl.loadmanager.base import CycleResult
from lbctl.loadmanager.observed import ObservedComparison
from lbctl.loadmanager.observed import compare as compare_observed
from lbctl.plan import Plan
from lbctl.records import replace
from lbctl.render import table
from lbctl.render.display import current, decision_style, paint, paint_decisions
from lbctl.render.names import BrokerNames, escape_names
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.safe.text import name_safe
from lbctl.units import mb, pct, rate

RECOMMEND_SCHEMA = Schema("recommend", "action of the plan (of every cycle with --all-cycles)", (
    col("cycle", "integer", "the cycle in the sequence, from 1 (the last one without --all-cycles)"),
    col("capturedAt", "time", "when the cycle's snapshot was captured"),
    col("action", "string", "unload, transfer (extensible load manager) or split"),
    col("bundle", "string", "the bundle, tenant/namespace/0xLOWER_0xUPPER"),
    col("broker", "string", "the broker that owns the bundle"),
    col("destinationBroker", "string", "where placement sends it (empty: the next lookup decides)"),
    col("reason", "string", "Pulsar's reason (Overloaded, Underloaded, Balanced, MsgRate, …)"),
    col("msgRate", "number", "the bundle's message rate in + out, msg/s"),
    col("throughput", "number", "the bundle's throughput in + out, bytes/s"),
    col("skipped", "string", "why the action is not carried out (empty when it is)"),
    col("algorithm", "string", "split only: the split algorithm"),
    col("boundaries", "list", "split only: the split positions, 0x%08x"),
    col("children", "list", "split only: the new bundles"),
    col("unload", "boolean", "split only: whether the new bundles are unloaded"),
    col("detail", "string", "split only: the figure that fired the split"),
))

EXPLAIN_SCHEMA = Schema("explain", "broker (of every cycle with --all-cycles)", (
    col("cycle", "integer", "the cycle in the sequence, from 1"),
    col("capturedAt", "time", "when the cycle's snapshot was captured"),
    col("broker", "string", "the broker id"),
    col("usage", "number", "weighted max resource usage, fraction"),
    col("score", "number", "the usage the strategy compared (history-smoothed), fraction"),
    col("usageAfter", "number", "estimated usage after the plan, fraction"),
    col("label", "string", "Success, Skip or Failure (Pulsar's Label)"),
    col("reason", "string", "Pulsar's Reason"),
    col("why", "string", "the decision in words"),
    col("cpu", "number", "CPU usage, fraction"),
    col("memory", "number", "JVM heap usage, fraction"),
    col("directMemory", "number", "direct memory usage, fraction"),
    col("bandwidthIn", "number", "inbound bandwidth usage, fraction"),
    col("bandwidthOut", "number", "outbound bandwidth usage, fraction"),
))

VALIDATE_SCHEMA = Schema("snapshot validate", "snapshot (a sequence file gives one per line)", (
    col("file", "string", "the file"),
    col("cluster", "string", "the cluster name"),
    col("capturedAt", "time", "when the snapshot was captured"),
    col("brokers", "integer", "brokers in the snapshot"),
    col("bundles", "integer", "bundles in the snapshot"),
    col("loadManager", "string", "modular, extensible or simple"),
))

RESOURCES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")
#: what gives way, in order, when a bundle or broker name would not fit whole (tables.py)
ACTION_OPTIONAL = ("MB/s", "msg/s", "reason", "action")
BROKER_OPTIONAL = ("score", "MB/s", "msg/s", "after")


def plan_names(plan: Plan) -> BrokerNames:
    names = [b.broker for b in plan.brokers]
    for a in plan.actions:
        names += [a.broker] + ([a.destinationBroker] if a.destinationBroker else [])
    return BrokerNames.of(names, wide=current().wide)


def _decision_style(text: str) -> str | None:
    return decision_style(text)


def plan_text(plan: Plan, *, title: str | None = None) -> str:
    names = plan_names(plan)
    # rebalance-after's plan is lbctl's fill rule for both halves: "fill + fill" read as a slip
    how = ("lbctl's fill rule" if plan.shedding == plan.placement == "fill"
           else f"{plan.shedding} + {plan.placement}")
    head = title or f"{name_safe(plan.cluster)} at {plan.captured_at}: {how}"
    parts = [head, f"Modelled as {plan.settings.profile.name}", ""]
    if plan.decision is not None:
        d = plan.decision
        parts += [wrap_prose(f"Decision: {d.label}/{d.reason} — {names.text(d.detail)}"), ""]
    elif plan.gate:
        parts.append(wrap_prose(f"No load shedding: {plan.gate}."))
    actions = [
        {
            "action": a.action,
            "bundle": a.bundle,
            "from": names(a.broker),
            "to": names(a.destinationBroker) if a.destinationBroker else "-",
            "reason": a.reason,
            "msg/s": rate(a.msgRate),
            "MB/s": mb(a.throughput),
            "skipped": a.skipped or "",
        }
        for a in plan.actions
    ]
    if actions:
        # "action" gives way only when every row's is the same (said once, above the table): a
        # row of a mixed plan without it does not say whether it is an unload or a split
        mixed = len({a["action"] for a in actions}) > 1
        parts += ["Actions:", table(actions, optional=ACTION_OPTIONAL[:-1] if mixed
                                    else ACTION_OPTIONAL), ""]
    elif not plan.gate:
        parts += ["Actions: none", ""]
    brokers = [
        {
            "broker": names(b.broker),
            "usage": pct(b.usage),
            "score": pct(b.score),
            "after": pct(b.usage_after),
            "msg/s": rate(b.msg_rate),
            "MB/s": mb(b.throughput),
            "bundles": str(b.bundles),
            "decision": f"{b.label}/{b.reason}" if b.label else "",
        }
        for b in plan.brokers
    ]
    parts += ["Brokers:", table(brokers, styles={"decision": _decision_style},
                                optional=BROKER_OPTIONAL)]
    s = plan.summary()
    parts += [
        "",
        wrap_prose(f"{s['unloads']} unload(s), {s['skipped']} skipped; usage spread (std) "
                   f"{pct(s['before']['std'])} -> {pct(s['after']['std'])}, max "
                   f"{pct(s['before']['max'])} -> {pct(s['after']['max'])} (after = estimate)"),
    ]
    warnings = plan.all_warnings()
    if warnings:
        parts += ["", "Warnings:"]
        parts += [paint(wrap_prose(f"  ! {names.text(w.message)}"), "warn") for w in warnings]
    note = names.note()
    if note:
        parts += ["", wrap_prose(note)]
    return "\n".join(parts)


class RecommendView(Struct, frozen=True):
    plans: Sequence[Plan]
    all_cycles: bool = False
    #: how many cycles ran when ``plans`` holds only the last one's plan (a long streamed
    #: replay keeps no other); ``None``: ``plans`` holds every cycle's
    cycles: int | None = None
    schema: ClassVar[Schema] = RECOMMEND_SCHEMA

    @property
    def _count(self) -> int:
        return len(self.plans) if self.cycles is None else self.cycles

    def _shown(self) -> list[tuple[int, Plan]]:
        if not self.all_cycles:
            return [(self._count, self.plans[-1])] if self.plans else []
        return list(enumerate(self.plans, start=1))

    def to_data(self) -> Any:
        if self.all_cycles:
            return {"cycles": [p.to_dict() for p in self.plans]}
        return self.plans[-1].to_dict()

    def to_rows(self) -> list[dict[str, Any]]:
        rows = []
        for i, p in self._shown():
            for a in p.actions:
                row: dict[str, Any] = {"cycle": i, "capturedAt": p.captured_at}
                row.update(a.to_dict())
                rows.append(row)
        return rows

    def to_text(self) -> str:
        out = []
        n = self._count
        for i, p in self._shown():
            out.append(plan_text(p, title=cycle_title(p, i, n)))
        return "\n\n".join(out)


def cycle_title(plan: Plan, i: int, count: int) -> str | None:
    """The title of cycle ``i`` of ``count`` in a replay's text (none for a single cycle)."""
    if count <= 1:
        return None
    return (f"Cycle {i}/{count} — {name_safe(plan.cluster)} at {plan.captured_at}: "
            f"{plan.shedding} + {plan.placement}")


class ExplainView(Struct, frozen=True):
    """The plan and the reasoning of each cycle: JSON/YAML are plans with an ``explanation``.

    ``page``/``limit`` (``--page``/``--limit``, :mod:`lbctl.explain.paging`): the long lists —
    the plan's actions and brokers, the explanation's candidates, unloads, rounds… — a page of
    ``limit`` items at a time (0: every item); JSON and text alike, CSV rows whole."""

    results: Sequence[CycleResult]
    broker: str | None = None
    bundle: str | None = None
    all_cycles: bool = False
    page: int = 1
    limit: int = DEFAULT_LIMIT
    #: ``--profile``: the text lists every way the release modelled differs from the newest
    full_profile: bool = False
    #: the snapshot files explained, shell-quoted, which the hints' commands name ("": a live
    #: read, which a hint reads again)
    snapshots: str = ""
    schema: ClassVar[Schema] = EXPLAIN_SCHEMA

    def _shown(self) -> list[tuple[int, CycleResult]]:
        numbered = list(enumerate(self.results, start=1))
        return numbered if self.all_cycles else numbered[-1:]

    def _explained(self, r: CycleResult, pager: Pager) -> dict[str, Any]:
        plan = r.plan()
        if pager.limit and max(len(plan.actions), len(plan.brokers)) > pager.limit:
            # the page's rows explained (a broker's reason in words costs: 10,000 brokers),
            # what speaks of the whole plan — its settings, summary, warnings — from all of it
            whole = plan.to_dict()
            data = replace(plan, actions=tuple(pager.take("actions", plan.actions)),
                           brokers=tuple(pager.take("brokers", plan.brokers))
                           ).to_dict(explained=True)
            for key in ("settings", "summary", "warnings"):
                if key in whole:
                    data[key] = whole[key]
        else:
            data = plan.to_dict(explained=True)
        from lbctl.explain import pointed_data

        data["explanation"] = pointed_data(
            r.explanation(self.broker, self.bundle).to_dict(pager), self.snapshots)
        if r.state.observed is not None:  # a sequence rebuilt from Prometheus
            data["observed"] = _observed(r).to_dict()
        return data

    def to_data(self) -> Any:
        from lbctl.render.explain_more import cycles_summary, top_topics_data

        pager = Pager(self.page, self.limit)
        if self.all_cycles:
            data: dict[str, Any] = {"cycles": [self._explained(r, pager) for r in self.results],
                                    "summary": cycles_summary(self.results)}
        else:
            data = self._explained(self.results[-1], pager)
        if self.bundle:
            data["topTopics"] = top_topics_data(self.results[-1].state, self.bundle)
        pager.check()
        paged = pager.to_dict()
        if paged is not None:
            data["page"] = paged
        return data

    def to_rows(self) -> list[dict[str, Any]]:
        rows = []
        for i, r in self._shown():
            p = r.plan()
            for b in p.brokers:
                if self.broker and b.broker != self.broker:
                    continue
                row: dict[str, Any] = {
                    "cycle": i,
                    "capturedAt": p.captured_at,
                    "broker": b.broker,
                    "usage": b.usage,
                    "score": b.score,
                    "usageAfter": b.usage_after,
                    "label": b.label,
                    "reason": b.reason,
                    "why": b.why_text(),
                }
                # the plan's resources are percentages; the CSV keeps one unit: fractions
                row.update({k: b.resources[k] / 100 for k in RESOURCES if k in b.resources})
                rows.append(row)
        return rows

    def to_text(self) -> str:
        from lbctl.explain import pointed

        shown = self._shown()
        texts = []
        pager = Pager(self.page, self.limit, self.full_profile)
        for i, r in shown:
            text = pointed(r.explanation(self.broker, self.bundle).to_text(pager), self.snapshots)
            if r.state.observed is not None:
                text += "\n\n" + _observed(r).to_text()
            if len(shown) > 1:
                text = f"=== Cycle {i}/{len(self.results)} ===\n" + text
            texts.append(text)
        from lbctl.render.explain_more import cycles_summary_text, top_topics_text

        if self.bundle:  # what an operator asks next about a hot bundle (explain_more)
            texts.append(top_topics_text(self.results[-1].state, self.bundle))
        if self.all_cycles and len(self.results) > 1:
            texts.append(cycles_summary_text(self.results))
        pager.check()
        paged = pager.text()
        if paged is not None:
            texts.append(paged)
        plan = self.results[-1].plan()
        names = plan_names(plan)
        said = {n for _, r in shown for n in (r.state.cluster, *r.state.namespaces,
                                              *r.state.topics)}  # in the reasoning's prose
        text = wrap_prose(names.text(escape_names("\n\n".join(texts), said)))
        note = names.note()
        if note:
            text += "\n\n" + wrap_prose(note)
        return paint_decisions(text)


def _observed(r: CycleResult) -> ObservedComparison:
    """The prediction of ``r`` against what the leader did next (``observed`` is set)."""
    assert r.state.observed is not None
    return compare_observed(r.plan(), r.state.observed)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


class ValidateView(Struct, frozen=True):
    summaries: Sequence[dict[str, Any]]
    schema: ClassVar[Schema] = VALIDATE_SCHEMA

    def to_data(self) -> Any:
        return list(self.summaries)

    def to_rows(self) -> list[dict[str, Any]]:
        return list(self.summaries)

    def to_text(self) -> str:
        return "\n".join(
            f"{name_safe(str(s['file']))}: OK — cluster {name_safe(str(s['cluster']))}, "
            f"{s['capturedAt']}, {_count(s['brokers'], 'broker')}, "
            f"{_count(s['bundles'], 'bundle')} ({s['loadManager']})"
            for s in self.summaries
        )


EXAMPLES_SCHEMA = Schema("examples", "bundled example file (one per snapshot file)", (
    col("file", "string", "the path, relative to the examples directory"),
    col("kind", "string", "snapshot (one moment) or sequence (several, replayed as cycles)"),
    col("cluster", "string", "the cluster name"),
    col("snapshots", "integer", "snapshots in the file"),
    col("brokers", "integer", "brokers in its last snapshot"),
    col("bundles", "integer", "bundles in its last snapshot"),
    col("loadManager", "string", "modular, extensible or simple"),
))


class ExamplesView(Struct, frozen=True):
    """The example snapshots shipped with lbctl (``lbctl examples``)."""

    directory: str
    files: Sequence[dict[str, Any]]
    schema: ClassVar[Schema] = EXAMPLES_SCHEMA

    def to_data(self) -> Any:
        return {"directory": self.directory, "files": list(self.files)}

    def to_rows(self) -> list[dict[str, Any]]:
        return list(self.files)

    def to_text(self) -> str:
        rows = [{"file": f["file"], "kind": f["kind"], "brokers": str(f["brokers"]),
                 "bundles": str(f["bundles"]), "load manager": f["loadManager"]}
                for f in self.files]
        return "\n".join([
            # walk21: "(what each shows: README.md there)" read as a fragment, and "sequence"
            # was not explained where a newcomer first meets it
            wrap_prose(f"Example snapshots in {self.directory} (its README.md says what each "
                       "shows; a sequence is snapshots over time, replayed cycle by cycle):"),
            "", table(rows), "",
            wrap_prose("Copy them next to you with `lbctl examples --copy examples`, then e.g. "
                       "`lbctl recommend examples/hot-broker.json`.")])
