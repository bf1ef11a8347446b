"""The split preview as a plan v1 object, CSV rows (one per child) or a table.

JSON/YAML is a plan (``lbctl/plan@1``) with one ``split`` action, reason ``Admin``, and a
``preview`` object with the parent and every child: range, topics, message rate and throughput,
and the broker that keeps it. ``apply`` can later execute the action as it stands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.explain.words import text
from lbctl.loadmanager.split_preview import SplitPreview, Unattributed, is_live, read_from
from lbctl.model.bundle import format_position
from lbctl.plan import Action, BrokerRow, Plan
from lbctl.render import table
from lbctl.render.display import current
from lbctl.render.names import BrokerNames
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.safe.text import name_safe
from lbctl.units import MB, rounded

SPLIT_SCHEMA = Schema("split-bundle", "new bundle (child of the split)", (
    col("parent", "string", "the bundle split"),
    col("bundle", "string", "the child bundle"),
    col("lower", "string", "its lower boundary, 0x%08x"),
    col("upper", "string", "its upper boundary, 0x%08x"),
    col("topics", "integer", "topics of the parent that hash into it"),
    col("msgRate", "number", "its share of the parent's message rate, msg/s"),
    col("throughput", "number", "its share of the parent's throughput, bytes/s"),
    col("broker", "string", "the broker that keeps it"),
    col("unload", "boolean", "whether it is unloaded right after the split (-u)"),
    col("algorithm", "string", "the split algorithm"),
))


@dataclass(frozen=True)
class SplitView:
    preview: SplitPreview
    schema: ClassVar[Schema] = SPLIT_SCHEMA

    def action(self) -> Action:
        p = self.preview
        return Action(
            action="split",
            bundle=p.bundle,
            broker=p.owner or "",
            reason="Admin",
            msgRate=rounded(p.stats.msg_rate) if p.stats else None,
            throughput=rounded(p.stats.throughput) if p.stats else None,
            algorithm=p.algorithm,
            boundaries=tuple(format_position(b) for b in p.boundaries),
            children=tuple(c.bundle for c in p.children),
            unload=p.unload,
            detail=text(p.selection_why) or "split-bundle",
        )

    def plan(self) -> Plan:
        """The preview as a plan: the split action, and each broker's usage (unchanged)."""
        p = self.preview
        st = p.state
        weights = p.settings.weights4()
        rows = []
        for name, local in st.brokers.items():
            usage = local.max_resource_usage_with_weight(*weights)
            rows.append(BrokerRow(broker=name, usage=usage, usage_after=usage, score=None,
                                  msg_rate=local.msg_rate, throughput=local.throughput,
                                  bundles=len(local.lastStats) or local.numBundles))
        return Plan(st.cluster, st.captured_at_iso, st.load_manager, p.shedding, p.placement,
                    p.settings, (self.action(),), tuple(rows), st.bundle_count())

    def to_data(self) -> dict[str, Any]:
        data = self.plan().to_dict()
        data["preview"] = self._preview()
        return data

    def _preview(self) -> dict[str, Any]:
        p = self.preview
        return {
            "namespace": p.namespace,
            "bundle": p.bundle,
            "owner": p.owner,
            "selectedBy": p.selected_by,
            "selection": text(p.selection_why) or None,
            "algorithm": p.algorithm,
            "algorithmFrom": text(p.algorithm_note),
            "why": text(p.result.why),
            "boundaries": [format_position(b) for b in p.boundaries],
            "namespaceBundles": {"before": p.bundles_before, "after": p.bundles_after},
            "parent": {
                "topics": len(p.topics),
                "reportedTopics": p.stats.topics if p.stats else None,
                "msgRate": rounded(p.stats.msg_rate) if p.stats else None,
                "throughput": rounded(p.stats.throughput) if p.stats else None,
                "notAttributed": _rest_data(p),
            },
            "children": [
                {"bundle": c.bundle, "range": str(c.range), "lower": format_position(c.range.lower),
                 "upper": format_position(c.range.upper), "topics": list(c.topics),
                 "msgRate": rounded(c.msg_rate), "throughput": rounded(c.throughput), "broker": c.broker,
                 "unloaded": p.unload, "topicsWithoutStats": c.without_stats}
                for c in p.children
            ],
        }

    def to_rows(self) -> list[dict[str, Any]]:
        p = self.preview
        return [
            {"parent": p.bundle, "bundle": c.bundle, "lower": format_position(c.range.lower),
             "upper": format_position(c.range.upper), "topics": len(c.topics),
             "msgRate": rounded(c.msg_rate), "throughput": rounded(c.throughput), "broker": c.broker,
             "unload": p.unload, "algorithm": p.algorithm}
            for c in p.children
        ]

    def to_text(self) -> str:
        p = self.preview
        st = p.state
        names = BrokerNames.of(st.brokers, wide=current().wide)
        owner = names(p.owner) if p.owner else "no broker (unowned)"
        lines = [f"{name_safe(st.cluster)} at {st.captured_at_iso}: split {p.bundle} (owner {owner})"]
        if p.selected_by:
            lines.append(f"  bundle:     {text(p.selection_why)}")
        lines.append(f"  algorithm:  {p.algorithm} ({text(p.algorithm_note)})")
        lines.append(f"  why:        {text(p.result.why)}")
        lines.append(f"  boundaries: {', '.join(format_position(b) for b in p.boundaries)}")
        lines.append(f"  modelled:   {p.settings.profile.name}")
        if p.stats:
            lines.append(f"  parent:     {p.stats.topics} topics reported, "
                         f"{p.stats.msg_rate:,.1f} msg/s, {p.stats.throughput / MB:,.2f} MB/s "
                         "(latest load report)")
        rest = p.unattributed()
        unknown = not p.topics and rest is not None and rest.topics > 0  # none listed
        rows = [{
            "bundle": c.bundle,
            "topics": "?" if unknown else str(len(c.topics)),
            "msg/s": "?" if c.msg_rate is None else f"{c.msg_rate:,.1f}",
            "MB/s": "?" if c.throughput is None else f"{c.throughput / MB:,.2f}",
            "broker": names(c.broker) + (" (unloaded)" if p.unload else ""),
        } for c in p.children]
        if rest is not None and p.stats is not None:
            if not rest.nothing:
                rows.append({"bundle": "not attributed (below)",
                             "topics": str(rest.topics) if rest.topics else "",
                             "msg/s": f"{rest.msg_rate:,.1f}",
                             "MB/s": f"{rest.throughput / MB:,.2f}", "broker": ""})
            rows.append({"bundle": "= parent (load report)", "topics": str(p.stats.topics),
                         "msg/s": f"{p.stats.msg_rate:,.1f}",
                         "MB/s": f"{p.stats.throughput / MB:,.2f}", "broker": ""})
        lines = [wrap_prose(line, hang=4 if i == 0 else 14) for i, line in enumerate(lines)]
        lines += ["", "Children:", table(rows), ""]
        if rest is not None and not rest.nothing:
            lines += [wrap_prose(x, hang=2) for x in _unattributed_lines(p, rest)] + [""]
        keep = ("the owner takes them, then unloads them: the next lookup places each one"
                if p.unload else "the owner keeps them")
        lines.append(wrap_prose(f"{p.namespace}: {p.bundles_before} -> {p.bundles_after} "
                                f"bundles; {keep}. Preview only: nothing was changed."))
        note = names.note()
        if note:
            lines += ["", wrap_prose(note)]
        return "\n".join(lines)


def _rest_data(p: SplitPreview) -> dict[str, Any] | None:
    """The parent's figures no child accounts for (None without a load report)."""
    rest = p.unattributed()
    if rest is None:
        return None
    return {"topics": rest.topics, "msgRate": rounded(rest.msg_rate),
            "throughput": rounded(rest.throughput), "topicsWithoutStats": rest.without_stats,
            "listedNotLoaded": rest.unloaded}


def _unattributed_lines(p: SplitPreview, rest: Unattributed) -> list[str]:
    """Why the children do not add up to the parent, one reason a line."""
    assert p.stats is not None  # a remainder exists only against a load report
    ns = p.namespace
    where = read_from(p.state)
    listing = ("the brokers' topic stats" if is_live(p.state)
               else f"its 'topics' or 'namespaceTopics' for {ns}")
    out = []
    if rest.topics and not p.topics:
        out.append(f"Not attributed: {where} lists none of the parent's {p.stats.topics} "
                   f"topics ({listing}), so which child each topic and its traffic go to is not "
                   "known; the split still cuts the range as shown.")
    elif rest.topics:
        out.append(f"Not attributed: {rest.topics} of the parent's {p.stats.topics} topics are "
                   f"not listed in {where}; their traffic is in the row above.")
    if rest.without_stats:
        out.append(f"Topics without stats: {rest.without_stats} listed topic(s) have no stats in "
                   f"{where}: counted in their child's topics, not in its traffic.")
    if rest.unloaded:
        out.append(f"Listed, not loaded: the children count {rest.unloaded} topic(s) more than "
                   "the load report (the namespace's metadata lists topics no broker has "
                   "loaded).")
    if p.topics and not rest.topics and (rest.msg_rate or rest.throughput):
        out.append("Traffic not attributed: the topics' stats and the load report were sampled "
                   "apart; the difference is in the row above.")
    return out
