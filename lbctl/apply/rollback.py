"""The reverse plan of a run: every bundle it moved, back to its original owner.

Written next to the journal (``rollback-<run id>.json``) after every verified move, atomically, so
that an interrupted run has one too. It is an ordinary plan@1 — ``lbctl apply ROLLBACK.json``
carries it out through the same path (re-validated, confirmed, paced, journaled, verified) — with
``"shedding": "rollback"``, one ``unload`` per moved bundle from where the verification found it to
the broker the plan took it from, in reverse order, reason ``Admin``. Splits cannot be undone
(Pulsar has no merge): they are listed as skipped actions so the plan says so. A rollback plan is
exempt from the grace-period check (it returns bundles moved moments ago, on purpose), not from
anything else — when the operator applies it with ``apply --rollback`` (the plan's own
``"shedding": "rollback"`` exempts nothing: a file cannot vouch for itself).
"""

from __future__ import annotations

import time
from pathlib import Path

from lbctl.apply.live import LiveView
from lbctl.apply.planfile import PlanFile, PlannedAction
from lbctl.config import Settings
from lbctl.model.cluster import iso_time
from lbctl.plan import Action, BrokerRow, Plan
from lbctl.units import rounded

ROLLBACK = "rollback"


def rollback_path(journal: Path, run_id: str) -> Path:
    return journal.parent / f"rollback-{run_id}.json"


class Rollback:
    """Collects the reverse actions of a run and keeps the file current."""

    def __init__(self, path: Path, plan: PlanFile, live: LiveView):
        self.path = path
        self.plan = plan
        self.live = live
        self.actions: list[Action] = []
        self.written = 0  # actions in the file on disk (0: no file)
        self.error: str | None = None  # why the last write failed

    def moved(self, a: PlannedAction, owner: str, origin: str) -> None:
        """``a`` moved its bundle from ``origin`` (the owner observed just before the send) to
        ``owner``: add the way back, and rewrite the file."""
        if owner == origin:
            return
        self.actions.append(Action(
            action="unload", bundle=a.bundle, broker=owner, reason="Admin",
            destinationBroker=origin, msgRate=rounded(a.msg_rate),
            throughput=rounded(a.throughput)))
        self.write()

    def split(self, a: PlannedAction) -> None:
        self.actions.append(Action(
            action="split", bundle=a.bundle, broker="", reason="Admin",
            skipped="a split cannot be undone (Pulsar has no bundle merge)",
            algorithm="specified_positions_divide",
            boundaries=tuple(f"0x{b:08x}" for b in a.boundaries), children=(), unload=a.unload))
        self.write()

    def to_plan(self) -> Plan:
        st = self.live.state
        names = list(self.live.brokers)
        for act in self.actions:
            for b in (act.broker, act.destinationBroker):
                if b and b not in names:
                    names.append(b)
        rows = []
        for b in names:
            local = st.brokers.get(b)
            rows.append(BrokerRow(
                broker=b, usage=self.live.usage.get(b, float("nan")),
                usage_after=self.live.usage.get(b, float("nan")), score=None,
                msg_rate=local.msg_rate if local else 0.0,
                throughput=local.throughput if local else 0.0,
                bundles=len(local.lastStats) if local else 0))
        return Plan(self.plan.cluster, iso_time(int(time.time() * 1000)), self.plan.load_manager,
                    ROLLBACK, self.plan.placement or "none", Settings({}),
                    tuple(reversed(self.actions)), tuple(rows), st.bundle_count())

    def write(self) -> None:
        import orjson

        from lbctl.errors import ConfigError
        from lbctl.safe.files import atomic_write

        data = orjson.dumps(self.to_plan().to_dict(), option=orjson.OPT_INDENT_2) + b"\n"
        try:
            atomic_write(str(self.path), data, error=ConfigError)
        except ConfigError as e:
            self.error = str(e)
            raise
        self.written = len(self.actions)
        self.error = None
