"""Healing, off by default, switched on per anomaly kind: ``approve`` (a plan queued for review)
or ``apply`` (carried out at once through ``lbctl apply``'s runner, under a cap per hour).

The plan is the configured strategy's own decision on the capture (what the leader should have
done: ``recommend``'s plan) when it moves something, else lbctl's planner (``propose``) for load
out of the band. An applied plan is re-validated against the cluster, journaled with the anomaly
as its reason, and never runs while another apply holds the lock (the runner refuses; the next
raise of the anomaly tries again). Cruise Control's self-healing goals, Strimzi's
``KafkaRebalance`` approval.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from lbctl.errors import LbctlError, UsageError
from lbctl.model.cluster import ClusterState
from lbctl.watch.anomalies import Event
from lbctl.watch.plans import PlanMeta, PlanQueue

MODES = ("off", "approve", "apply")
#: the kinds a plan can heal
HEALABLE = ("out-of-band", "leader-divergence", "idle-broker", "broker-down")


def parse_heal(items: Sequence[str]) -> dict[str, str]:
    """``KIND=MODE`` items (``out-of-band=approve``); one line on a bad one."""
    out: dict[str, str] = {}
    for item in items:
        kind, sep, mode = item.partition("=")
        if not sep or mode not in MODES:
            raise UsageError(f"--heal {item!r}: give KIND=MODE, MODE one of {', '.join(MODES)}")
        if kind not in HEALABLE:
            raise UsageError(f"--heal {item!r}: {kind!r} is not healable by a plan "
                             f"(one of {', '.join(HEALABLE)})")
        out[kind] = mode
    return out


def document(plan: Any) -> tuple[bytes, int]:
    """A plan as plan@1 bytes, and how many actions it would carry out."""
    doc = plan.to_wire()
    n = sum(1 for a in plan.actions if not a.skipped)
    return msgspec.json.encode(doc) + b"\n", n


class Healer:
    def __init__(self, modes: Mapping[str, str], queue: PlanQueue, *, max_per_hour: int = 2,
                 apply: Callable[[PlanMeta], str] | None = None,
                 say: Callable[[str], None] = lambda _m: None,
                 clock: Callable[[], float] = time.time,
                 inform: Callable[[str], None] | None = None):
        self.modes = {k: v for k, v in modes.items() if v != "off"}
        self.queue = queue
        self.max_per_hour = max_per_hour
        self.apply = apply
        self.say = say
        #: what is information, not a warning: a plan queued and waiting for review (walk18),
        #: nothing to queue, a plan applied whole (walk19). ``say`` keeps what needs someone: a
        #: planner's refusal, a plan applied in part or failed
        self.inform = inform or say
        self.clock = clock

    def plan_for(self, state: ClusterState, settings: Any, cycle_plan: Any) -> tuple[Any, str]:
        if cycle_plan is not None and any(not a.skipped for a in cycle_plan.actions):
            return cycle_plan, "recommend"
        from lbctl.planner.propose import propose

        return propose(state, settings).plan(), "propose"

    def on_events(self, events: Sequence[Event], state: ClusterState, settings: Any,
                  cycle_plan: Any) -> list[PlanMeta]:
        made: list[PlanMeta] = []
        for e in events:
            mode = self.modes.get(e.anomaly.kind)
            if e.event != "raised" or mode is None:
                continue
            if self.queue.pending_for(e.anomaly.id) is not None:
                continue
            try:
                plan, source = self.plan_for(state, settings, cycle_plan)
            except LbctlError as err:  # the planner refuses this state (a usage that is not a
                # finite percentage): said, and the watcher keeps watching
                self.say(f"healing {e.anomaly.id}: no plan: {err}")
                continue
            data, n = document(plan)
            if n == 0:
                self.inform(f"healing {e.anomaly.id}: no plan moves anything; nothing queued")
                continue
            meta = self.queue.add(data, created_ms=state.captured_at,
                                  created=state.captured_at_iso, anomaly=e.anomaly.id,
                                  source=source, actions=n)
            if meta.anomaly != e.anomaly.id:  # one capture, one plan: queued for another already
                self.inform(f"healing {e.anomaly.id}: plan {meta.id} ({meta.status}, for "
                         f"{meta.anomaly}) is the plan for this capture too; nothing new queued")
                continue
            made.append(meta)
            if mode == "approve":
                self.inform(f"healing {e.anomaly.id}: plan {meta.id} ({n} action(s), {source}) "
                            f"waits for review: lbctl plans show {meta.id}; "
                            f"lbctl plans approve {meta.id}")
                continue
            now = self.clock()
            # counted from the queue, not memory: a watcher restarted (crash loop, redeploy)
            # within the hour keeps to the cap its predecessor used up
            done = self.queue.auto_applied_since(now - 3600 + 1e-3)
            if done >= self.max_per_hour or self.apply is None:
                self.inform(f"healing {e.anomaly.id}: {done} plan(s) applied in the "
                            f"last hour (cap {self.max_per_hour}): plan {meta.id} waits for "
                            "review")
                continue
            self.queue.decide(meta.id, "approved", when=state.captured_at_iso,
                              note="applied by lbctl watch (--heal … =apply)", auto_at=now)
            result = self.apply(meta)
            # apply_queued's line starts with the plan's status: applied, partial or failed
            told = self.inform if result.startswith("applied") else self.say
            told(f"healing {e.anomaly.id}: plan {meta.id} {result}")
        return made
