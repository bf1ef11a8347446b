"""``assign-preview``: where each unowned bundle would be assigned, as data, rows or a table.

JSON/YAML is one object (``format`` ``lbctl/assign-preview@1``): the cluster, the request, the
load manager and placement that answer it, the Pulsar release modelled, and one entry per lookup
in the order it is made. CSV/JSONL rows are the lookups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.loadmanager.assign import AssignPreview
from lbctl.render import table
from lbctl.render.display import current
from lbctl.render.names import BrokerNames
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.safe.text import name_safe
from lbctl.units import rounded

FORMAT = "lbctl/assign-preview@1"

ASSIGN_SCHEMA = Schema("assign-preview", "lookup (one per bundle, in the order they are made)", (
    col("bundle", "string", "the bundle looked up, tenant/namespace/0xLOWER_0xUPPER"),
    col("broker", "string", "the broker that would own it (empty: none found)"),
    col("owned", "boolean", "whether it is owned already (the lookup returns its owner)"),
    col("candidates", "list", "the brokers left after the filters, as the strategy saw them"),
    col("score", "number", "the chosen broker's score in the placement strategy (its own unit)"),
    col("why", "string", "the choice, or why there is none, in words"),
))


@dataclass(frozen=True)
class AssignView:
    preview: AssignPreview
    schema: ClassVar[Schema] = ASSIGN_SCHEMA

    def to_data(self) -> dict[str, Any]:
        p = self.preview
        st = p.state
        counts: dict[str, int] = {}
        for a in p.assignments:
            if a.broker is not None and a.owner is None:
                counts[a.broker] = counts.get(a.broker, 0) + 1
        return {
            "format": FORMAT,
            "cluster": st.cluster,
            "capturedAt": st.captured_at_iso,
            "request": {"kind": p.kind, "subject": p.subject},
            "loadManager": st.load_manager,
            "placement": p.placement,
            "pulsarVersion": str(p.settings.profile.version),
            "stoppedBroker": p.stopped,
            "assignments": [
                {"bundle": a.bundle, "broker": a.broker, "owned": a.owner is not None,
                 "candidates": list(a.candidates), "score": rounded(a.score), "why": a.why}
                for a in p.assignments
            ],
            "perBroker": counts,
            "warnings": list(p.warnings),
        }

    def to_rows(self) -> list[dict[str, Any]]:
        return [{"bundle": a.bundle, "broker": a.broker, "owned": a.owner is not None,
                 "candidates": list(a.candidates), "score": rounded(a.score), "why": a.why}
                for a in self.preview.assignments]

    def to_text(self) -> str:
        p = self.preview
        st = p.state
        names = BrokerNames.of([*st.brokers, *([p.stopped] if p.stopped else [])],
                               wide=current().wide)
        head = (f"{name_safe(st.cluster)} at {st.captured_at_iso}: where {_subject(p)} would be assigned "
                f"({st.load_manager} load manager, {p.placement})")
        # the release and where it came from, on its own line as recommend and propose say it
        lines = [wrap_prose(head, hang=4), f"Modelled as {p.settings.profile.name}"]
        for w in p.warnings:
            lines.append(wrap_prose(f"warning: {w}", hang=4))
        rows = [{
            "bundle": a.bundle,
            "broker": ("-" if a.broker is None else names(a.broker))
            + (" (owner)" if a.owner is not None else ""),
            "candidates": str(len(a.candidates)) if a.owner is None else "-",
            "why": names.text(a.why),  # as the broker column, so that the note holds for both
        } for a in p.assignments]
        lines += ["", table(rows) if rows else "no bundle to look up", ""]
        new = [a for a in p.assignments if a.owner is None]
        placed = sum(1 for a in new if a.broker is not None)
        lines.append(wrap_prose(
            f"{placed} of {len(new)} unowned bundle(s) placed, each lookup seeing the ones "
            "before it. Preview only: nothing was changed."))
        note = names.note()
        if note:
            lines += ["", wrap_prose(note)]
        return "\n".join(lines)


def _subject(p: AssignPreview) -> str:
    if p.kind == "broker-stopped":
        return f"the bundles of {p.subject} (stopped)"
    if p.kind == "topic":
        return f"the bundle of {p.subject}"
    return f"the bundles of namespace {p.subject}"
